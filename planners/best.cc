// best: runs several planners and keeps the smallest valid plan.
//
//   * The greedy placements: greedy_by_size, first_fit, position_greedy and
//     the area and lifetime orders with best and first fit (each one pass,
//     O(n log n + sum of k log k)).
//   * Then hill_climb, which starts from the smallest of those and improves
//     the order around the peak, with the same counted (not timed) effort as
//     on its own (see hill_climb.h); the time limit stays a safety cap for
//     the whole of best. Skipped when a greedy plan is at the lower bound.
//   * Then, in a single pool and unless a plan is at the lower bound
//     already, the exact planner's search below the best peak so far, with
//     as many nodes as the counted budget pays for (a node costs about eight
//     units a buffer) and no warm start of its own. It is what fits
//     MiniMalloc's challenging instances at their lower bound: A-C, E-I and
//     K in under half a second each with a 2 s time limit, where the greedy
//     placements and the hill climb end 16-33 % above it.
//   * Dense problems, where one greedy run costs more than a sixteenth of the
//     counted budget (WorkLimit(PlanOptions)), run
//     fewer greedy placements (greedy_by_size always) and no searches.
//   * The time limit: the first greedy run (greedy_by_size) always
//     completes; a later run still going at the deadline is abandoned and
//     nothing more is started, the best complete plan wins. Below the
//     limit the counted budget alone decides, so the plan does not depend
//     on the clock.
//   * Every candidate goes through VerifyPlan; the smallest peak wins (ties:
//     the earlier candidate). When none succeeds, the first error (for
//     instance greedy_by_size's ResourceExhausted) is returned.
//
// Deterministic as its parts are; never worse than any of them. Not
// guaranteed optimal.

#include "best.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "exact.h"
#include "greedy_by_size.h"
#include "hill_climb.h"
#include "memplan/internal/planners.h"
#include "memplan/verify.h"

namespace memplan {
namespace {

using internal::Fit;
using internal::PlacementOrder;

class BestPlanner : public Planner {
 public:
  explicit BestPlanner(const BestOptions& options) : options_(options) {}

  std::string_view name() const override { return "best"; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    Budget budget(options);
    // greedy_by_size, first_fit, position_greedy, then the area and
    // lifetime orders. The first run always completes; the others are
    // abandoned when still going at the deadline.
    std::vector<std::unique_ptr<Planner>> planners;
    planners.push_back(internal::NewGreedyBySizePlanner());
    planners.push_back(
        NewGreedyPlanner({.order = PlacementOrder::kSize, .fit = Fit::kFirst}));
    planners.push_back(NewGreedyPlanner(
        {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst}));
    for (PlacementOrder order :
         {PlacementOrder::kArea, PlacementOrder::kLifetime}) {
      for (Fit fit : {Fit::kBest, Fit::kFirst}) {
        planners.push_back(NewGreedyPlanner({.order = order, .fit = fit}));
      }
    }
    PlanOptions first = options;
    first.deadline = absl::InfiniteFuture();
    PlanOptions later = options;
    later.deadline = budget.deadline();
    // Budget in counted work, decided up front so that the plan does not
    // depend on the clock: one greedy run examines about twice the
    // overlapping pairs. Dense problems (a long trace) get fewer greedy runs
    // and no search; greedy_by_size always runs.
    const double work = static_cast<double>(budget.work_limit());
    const double run_cost =
        2.0 * static_cast<double>(internal::CountOverlappingPairs(problem)) +
        static_cast<double>(problem.buffers.size());
    bool searched = false;  // not a dense problem: the searches run
    const int affordable =
        static_cast<int>(std::min(work / std::max(run_cost, 1.0), 1e6));
    if (affordable < 4 * static_cast<int>(planners.size())) {
      planners.resize(
          std::clamp(affordable / 2, 1, static_cast<int>(planners.size())));
    } else {
      searched = true;
      // The hill climb gets the same counted budget as on its own (so best
      // is never worse than it), but must stop by best's own deadline.
      planners.push_back(NewHillClimbPlanner(options_.hill_climb));
    }

    std::optional<Plan> best;
    std::optional<absl::Status> first_error;
    for (const std::unique_ptr<Planner>& planner : planners) {
      const bool is_first = planner == planners.front();
      const bool is_hill_climb = planner->name() == "hill_climb";
      // A plan at the lower bound cannot be beaten; skip the search.
      if (is_hill_climb && best.has_value() && best->peak <= best->lower_bound)
        break;
      // Out of time: keep the best complete plan.
      if (best.has_value() && budget.OutOfTimeNow()) break;
      absl::StatusOr<Plan> plan =
          planner->Solve(problem, is_first ? first : later);
      if (plan.ok()) {
        if (absl::Status status = VerifyPlan(problem, *plan); !status.ok()) {
          plan = absl::InternalError(
              absl::StrCat(std::string(planner->name()),
                           " produced an invalid plan: ", status.message()));
        }
      }
      if (!plan.ok()) {
        if (absl::IsDeadlineExceeded(plan.status())) break;  // abandoned
        if (!first_error.has_value()) first_error = plan.status();
        continue;
      }
      if (!best.has_value() || plan->peak < best->peak) best = *std::move(plan);
    }
    if (searched && options_.exact_search && problem.pools.size() == 1 &&
        (!best.has_value() || best->peak > best->lower_bound) &&
        !budget.OutOfTimeNow()) {
      absl::StatusOr<Plan> plan = ExactSearch(problem, later, work, best);
      if (plan.ok() && VerifyPlan(problem, *plan).ok() &&
          (!best.has_value() || plan->peak < best->peak)) {
        best = *std::move(plan);
      }
    }
    if (!best.has_value()) return *first_error;
    best->planner = std::string(name());
    return *std::move(best);
  }

  // The exact planner's search as one more heuristic, below the best plan so
  // far: without its own warm start (which would be this planner), with a
  // the counted budget as its node limit (a node costs about the items plus
  // the time sections it looks at) and best's deadline as a cap.
  static absl::StatusOr<Plan> ExactSearch(const Problem& problem,
                                          const PlanOptions& options,
                                          double work,
                                          const std::optional<Plan>& best) {
    ExactOptions exact;
    exact.heuristic_warm_start = false;
    if (best.has_value()) exact.upper_bound = best->peak;
    const double node_cost =
        8.0 * static_cast<double>(problem.buffers.size()) + 64.0;
    exact.node_limit =
        static_cast<int64_t>(std::clamp(work / node_cost, 1.0, 1e12));
    return MakeExactPlanner(exact)->Solve(problem, options);
  }

 private:
  BestOptions options_;
};

}  // namespace

std::unique_ptr<Planner> NewBestPlanner(const BestOptions& options) {
  return std::make_unique<BestPlanner>(options);
}

namespace internal {

std::unique_ptr<Planner> NewBestPlanner() {
  return std::make_unique<BestPlanner>(BestOptions{});
}

}  // namespace internal
}  // namespace memplan
