// The registry of symbolic planners: one table of their names, options and
// factories (memplan/symbolic_planner.h). Options are declared and parsed
// as the planner registry's are (registry_options.h); a registry of its
// own, since a symbolic planner solves a SymbolicProblem, not a Problem,
// and `memplan plan` of a concrete graph must not find one.

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/planner.h"
#include "memplan/spelling.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "registry_options.h"

namespace memplan {
namespace {

// `plan`, or the upper-bound baseline when it ran out of time first.
absl::StatusOr<SymbolicPlan> OrUpperBound(const SymbolicProblem& problem,
                                          absl::StatusOr<SymbolicPlan> plan) {
  if (absl::IsDeadlineExceeded(plan.status())) {
    return PlanSymbolicUpperBound(problem);
  }
  return plan;
}

// Buckets cut by PlanSymbolicBuckets; none once out of time.
absl::StatusOr<std::vector<SymbolicBucket>> OrNone(
    absl::StatusOr<std::vector<SymbolicBucket>> buckets) {
  if (absl::IsDeadlineExceeded(buckets.status())) {
    return std::vector<SymbolicBucket>();
  }
  return buckets;
}

class SearchPlanner : public SymbolicPlanner {
 public:
  explicit SearchPlanner(uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "symbolic_search"; }

  absl::StatusOr<SymbolicPlan> Solve(
      const SymbolicProblem& problem,
      const SymbolicSearchOptions& options) const override {
    return OrUpperBound(problem, PlanSymbolicSearch(problem, Seeded(options)));
  }

  absl::StatusOr<std::vector<SymbolicBucket>> SolveBuckets(
      const SymbolicProblem& problem, const SymbolicSearchOptions& options,
      SymbolicBucketOptions cut) const override {
    cut.greedy = options.greedy;
    cut.search = Seeded(options);
    return OrNone(PlanSymbolicBuckets(problem, cut));
  }

 private:
  SymbolicSearchOptions Seeded(const SymbolicSearchOptions& options) const {
    SymbolicSearchOptions seeded = options;
    seeded.seed = seed_;
    return seeded;
  }

  uint64_t seed_;
};

class GreedyPlanner : public SymbolicPlanner {
 public:
  std::string_view name() const override { return "symbolic_greedy"; }

  absl::StatusOr<SymbolicPlan> Solve(
      const SymbolicProblem& problem,
      const SymbolicSearchOptions& options) const override {
    return OrUpperBound(problem, PlanSymbolicGreedy(problem, Greedy(options)));
  }

  absl::StatusOr<std::vector<SymbolicBucket>> SolveBuckets(
      const SymbolicProblem& problem, const SymbolicSearchOptions& options,
      SymbolicBucketOptions cut) const override {
    cut.greedy = Greedy(options);
    cut.search.reset();
    return OrNone(PlanSymbolicBuckets(problem, cut));
  }

 private:
  static SymbolicGreedyOptions Greedy(const SymbolicSearchOptions& options) {
    SymbolicGreedyOptions greedy = options.greedy;
    greedy.deadline = StartClock(options).deadline;
    return greedy;
  }
};

class UpperBoundPlanner : public SymbolicPlanner {
 public:
  std::string_view name() const override { return "upper_bound"; }

  absl::StatusOr<SymbolicPlan> Solve(
      const SymbolicProblem& problem,
      const SymbolicSearchOptions& /*options*/) const override {
    return PlanSymbolicUpperBound(problem);
  }
};

struct Entry {
  SymbolicPlannerInfo info;
  SymbolicPlannerFactory make;
};

// The one table: every symbolic planner, the default first.
const std::vector<Entry>& Table() {
  static const auto* const kTable = new std::vector<Entry>{
      {{.name = "symbolic_search",
        .description = "the greedy improved by placement orders and rules, "
                       "then a hill climb within the work limit; buckets",
        .kind = PlannerKind::kSearch,
        .options = {IntOption("seed", 1, "seed of the hill climb's moves", 0,
                              9007199254740992.0)}},
       [](const OptionValues& values) -> std::unique_ptr<SymbolicPlanner> {
         return std::make_unique<SearchPlanner>(
             static_cast<uint64_t>(values.Int("seed")));
       }},
      {{.name = "symbolic_greedy",
        .description = "greedy by size with offsets that are expressions, "
                       "proven pair by pair; buckets",
        .kind = PlannerKind::kHeuristic,
        .options = {}},
       [](const OptionValues&) -> std::unique_ptr<SymbolicPlanner> {
         return std::make_unique<GreedyPlanner>();
       }},
      {{.name = "upper_bound",
        .description = "the baseline: greedy_by_size at the dims' maxima, "
                       "its constant offsets at every value",
        .kind = PlannerKind::kHeuristic,
        .options = {}},
       [](const OptionValues&) -> std::unique_ptr<SymbolicPlanner> {
         return std::make_unique<UpperBoundPlanner>();
       }},
  };
  return *kTable;
}

std::string ValidNames() {
  std::vector<std::string> names;
  for (const Entry& e : Table()) names.emplace_back(e.info.name);
  return absl::StrJoin(names, ", ");
}

}  // namespace

absl::StatusOr<std::vector<SymbolicBucket>> SymbolicPlanner::SolveBuckets(
    const SymbolicProblem& /*problem*/,
    const SymbolicSearchOptions& /*options*/,
    SymbolicBucketOptions /*cut*/) const {
  return std::vector<SymbolicBucket>();
}

std::vector<SymbolicPlannerInfo> RegisteredSymbolicPlanners() {
  std::vector<SymbolicPlannerInfo> infos;
  for (const Entry& e : Table()) infos.push_back(e.info);
  return infos;
}

absl::StatusOr<std::unique_ptr<SymbolicPlanner>> CreateSymbolicPlanner(
    std::string_view name, const PlannerOptions& options) {
  for (const Entry& e : Table()) {
    if (e.info.name != name) continue;
    MEMPLAN_ASSIGN_OR_RETURN(
        OptionValues values,
        internal::ParseOptions(name, e.info.options, options));
    return e.make(values);
  }
  std::vector<std::string> names;
  for (const Entry& e : Table()) names.emplace_back(e.info.name);
  return absl::NotFoundError(absl::StrCat(
      "unknown symbolic planner \"", std::string(name), "\"",
      DidYouMean(name, names), "; valid symbolic planners: ", ValidNames()));
}

std::string_view DefaultSymbolicPlannerName() {
  return Table().front().info.name;
}

}  // namespace memplan
