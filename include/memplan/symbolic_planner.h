// The planners of symbolic problems (memplan/symbolic.h), and their registry.
//
//   * SymbolicPlanner: Solve(problem, options) -> SymbolicPlan, one plan
//     valid at every value of the dims, deterministic and verified.
//   * The registry: symbolic_search (the default), symbolic_greedy and
//     upper_bound by name, each with its options declared as the planner
//     registry's are (memplan/planner.h):
//       CreateSymbolicPlanner("symbolic_search", {{"seed", "2"}})
//   * Effort in work units against the same budget as every planner
//     (PlanOptions::work_limit, time_limit, deadline): a candidate offset
//     tried or a pair checked costs 390625 / 2048 work units
//     (SymbolicCandidateWork()).
//
// The problem and plan types are those of memplan/symbolic.h, which callers
// include for them.

#ifndef MEMPLAN_SYMBOLIC_PLANNER_H_
#define MEMPLAN_SYMBOLIC_PLANNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/dim_expr.h"
#include "memplan/planner.h"

namespace memplan {

struct SymbolicProblem;
struct SymbolicPlan;
struct SymbolicBucket;

// The work units one candidate offset tried or one pair checked costs:
// 390625 / 2048 (about 190, a few microseconds on a typical core), the
// rate at which kDefaultWorkLimit buys the search's 2^21 candidates.
inline constexpr int64_t kSymbolicCandidateWorkNum = 390625;
inline constexpr int64_t kSymbolicCandidateWorkDen = 2048;

// The work units of `candidates` candidate offsets, rounded down.
constexpr int64_t SymbolicCandidateWork(int64_t candidates) {
  return candidates / kSymbolicCandidateWorkDen * kSymbolicCandidateWorkNum +
         candidates % kSymbolicCandidateWorkDen * kSymbolicCandidateWorkNum /
             kSymbolicCandidateWorkDen;
}

struct SymbolicGreedyOptions {
  // Dim values the candidates are compared at (besides the ranges' ends);
  // empty: a few spread over each range.
  std::vector<DimValues> samples;
  // Past it, the greedy stops placing and returns the best of the orders
  // it finished, or DeadlineExceeded before the first.
  absl::Time deadline = absl::InfiniteFuture();
};

// Greedy by size (at the dims' maxima; ties by id): each buffer goes to the
// candidate offset (0, the top of a placed conflicting buffer, or the
// envelope of all their tops) that the pairwise check proves valid against
// every placed conflicting buffer, the one whose resulting peak relative to
// the lower bound is smallest over the sample values. Verified before it
// is returned. Not guaranteed close to the bound at every value.
absl::StatusOr<SymbolicPlan> PlanSymbolicGreedy(
    const SymbolicProblem& problem, const SymbolicGreedyOptions& options = {});

// What the search counted, for a caller that asks (SymbolicSearchOptions::
// stats).
struct SymbolicSearchStats {
  int64_t work_limit = 0;    // the work units granted
  int64_t work_done = 0;     // the work units counted, the greedy's excluded
  int64_t steps = 0;         // moves of the hill climb tried
  int64_t largest_step = 0;  // the most work units one move cost
  // The plan's score: its worst (peak / LB - 1) / (target - 1) over the
  // search's samples, the end target at the maxima.
  double score = 0;
};

struct SymbolicSearchOptions {
  // The greedy's options; its samples are the search's too.
  SymbolicGreedyOptions greedy;
  // Counted work in work units, not time, so that the same problem and
  // options give the same plan on any machine: the hill climb moves while
  // it lasts (the placement orders and rules before it are always tried).
  // 0: as PlanOptions::work_limit (kWorkPerSecond per second of a finite
  // time limit, kDefaultWorkLimit without one).
  int64_t work_limit = 0;
  // A wall-clock limit from the start and an absolute deadline (the earlier
  // applies; greedy.deadline too): past it the search returns its best plan
  // so far, and DeadlineExceeded before the greedy's plan. Infinite: the
  // clock is not read.
  absl::Duration time_limit = absl::InfiniteDuration();
  absl::Time deadline = absl::InfiniteFuture();
  // The search aims at peak / lower bound <= target_ratio at every sample
  // and <= end_target_ratio at the dims' maxima: a sample's ratio counts as
  // (ratio - 1) / (target - 1), and the worst such is minimised first.
  double target_ratio = 1.05;
  double end_target_ratio = 1.02;
  uint64_t seed = 1;  // of the hill climb's moves
  // When set, told what the search counted; it cannot change the plan.
  SymbolicSearchStats* stats = nullptr;
};

// The work limit `options` grants (SymbolicSearchOptions::work_limit).
int64_t SymbolicWorkLimit(const SymbolicSearchOptions& options);

// `options` with the clock started now, for several plans that share one
// time limit: the deadline (greedy's too) the earliest of the deadlines and
// now + time_limit, which becomes infinite; the work limit fixed at
// SymbolicWorkLimit(options).
SymbolicSearchOptions StartClock(const SymbolicSearchOptions& options);

// Improves on PlanSymbolicGreedy: five placement orders (the greedy's three,
// by size at the maxima times lifetime, by size at the middle of the box)
// under three placement rules (the greedy's; candidates that add the
// envelope of each top with the highest placed top at the minima and at
// the maxima, compared by their sum or by their worst weighted sample
// first), four peak expressions each (from the highest top at the maxima
// or at the minima, raised by an envelope or by a proven constant), then a
// hill climb over the best order (move the buffer at the peak of the worst
// sample earlier, swap two, move one) within the work limit. Scored at more
// samples than the greedy (the smallest values, and fractions 2^-j, 3*2^-j
// of the ranges). Never worse than PlanSymbolicGreedy by WorstSampledRatio
// (it keeps the greedy's plan when it finds nothing better), deterministic
// without a deadline, verified before it is returned; planner
// "symbolic_search".
absl::StatusOr<SymbolicPlan> PlanSymbolicSearch(
    const SymbolicProblem& problem, const SymbolicSearchOptions& options = {});

struct SymbolicBucketOptions {
  int max_buckets = 4;
  std::string dim;  // the dim to cut; empty: the one of largest max/min
  // Its deadline bounds the whole cut (DeadlineExceeded before a cover is
  // planned; the buckets as planned so far after).
  SymbolicGreedyOptions greedy;
  // When set, each candidate bucket is planned by PlanSymbolicSearch with
  // 1/64 of its work limit, the cuts may also fall at 3 * 2^k, and they
  // minimise the search's score instead (the worst (peak / LB - 1) /
  // (target - 1) over the search's samples, end_target_ratio at the maxima
  // of the whole range); each chosen bucket is then planned again with the
  // whole work limit, and while fewer than max_buckets are chosen, the
  // worst is cut at the last candidate end below its worst sample when both
  // parts, planned with the whole work limit, score better. Its deadline
  // (not greedy's) bounds the cut then.
  std::optional<SymbolicSearchOptions> search;
  // Told the number of candidate buckets planned so far and their total,
  // after each; it cannot change the plan.
  std::function<void(int done, int total)> progress;
};

// Up to options.max_buckets buckets covering the dim's range, each planned
// by PlanSymbolicGreedy on problem.Narrowed(bucket's dims) (so verified over
// its own range, with sizes reserved over it). The cuts are chosen among
// powers of two inside the range, by dynamic programming, to minimise the
// largest peak/lower bound over the buckets' sample values (each dim at 0,
// 1/1024, ..., 1/2 and all of its bucket's range), then the sum of the
// buckets' ratios; fewer buckets win ties.
absl::StatusOr<std::vector<SymbolicBucket>> PlanSymbolicBuckets(
    const SymbolicProblem& problem, const SymbolicBucketOptions& options = {});

// The upper-bound baseline: greedy_by_size planned at the dims' maxima,
// its constant offsets used at every value. Verified.
absl::StatusOr<SymbolicPlan> PlanSymbolicUpperBound(
    const SymbolicProblem& problem);

// ---------------------------------------------------------------------------
// The interface and the registry.

// A planner of symbolic problems.
//   * Deterministic without a deadline: the same problem and options give
//     the same plan.
//   * Honours the budget of its options (SymbolicSearchOptions: work limit,
//     time limit, deadline): out of time before a plan of its own, it
//     returns the upper-bound baseline, as a planner's one pass returns the
//     naive plan.
//   * Never returns a plan VerifySymbolicPlan rejects.
class SymbolicPlanner {
 public:
  virtual ~SymbolicPlanner() = default;
  virtual std::string_view name() const = 0;
  // One plan over the problem's whole ranges.
  virtual absl::StatusOr<SymbolicPlan> Solve(
      const SymbolicProblem& problem,
      const SymbolicSearchOptions& options) const = 0;
  // At most cut.max_buckets buckets covering the ranges, each planned by
  // this planner (PlanSymbolicBuckets, with `options`); none when the
  // planner does not cut ranges (Solve's one plan is then the answer).
  virtual absl::StatusOr<std::vector<SymbolicBucket>> SolveBuckets(
      const SymbolicProblem& problem, const SymbolicSearchOptions& options,
      SymbolicBucketOptions cut) const;
};

// Builds a symbolic planner from its checked options.
using SymbolicPlannerFactory =
    std::unique_ptr<SymbolicPlanner> (*)(const OptionValues&);

struct SymbolicPlannerInfo {
  std::string_view name;
  std::string_view description;  // one line: what it does
  PlannerKind kind = PlannerKind::kHeuristic;
  std::vector<PlannerOption> options;  // its own options, in display order
};

// Every symbolic planner, in the registry's order (the default first).
std::vector<SymbolicPlannerInfo> RegisteredSymbolicPlanners();

// The symbolic planner `name` with `options` (NAME=VALUE of its declared
// options, as CreatePlanner's). NotFound listing the valid names when
// `name` is not one; InvalidArgument naming an option it does not declare
// or a value that does not parse.
absl::StatusOr<std::unique_ptr<SymbolicPlanner>> CreateSymbolicPlanner(
    std::string_view name, const PlannerOptions& options = {});

// The planner PlanSymbolicMemory() and the tool use when none is named.
std::string_view DefaultSymbolicPlannerName();

}  // namespace memplan

#endif  // MEMPLAN_SYMBOLIC_PLANNER_H_
