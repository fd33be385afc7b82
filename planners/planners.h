// Factories of the built-in planners that have no options of their own, one
// per planners/<name>.cc; the registry (planners/registry.cc) lists them with
// the planners whose factories are public (memplan/planners/<name>.h).

#ifndef MEMPLAN_PLANNERS_PLANNERS_H_
#define MEMPLAN_PLANNERS_PLANNERS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/compose.h"
#include "memplan/planner.h"

namespace memplan::internal {

class PlacementState;

std::unique_ptr<Planner> MakeNaivePlanner();

// What a pass cut short by its budget returns (`why`: Aborted for the
// work limit, DeadlineExceeded for the deadline, with the work it did):
// the buffers of `partial` (a greedy pass's state, or none) where it
// placed them and the rest packed by size class above them (PackRest,
// packed.h), or the naive plan when smaller; so that the work limit
// bounds every planner at any size and density with a plan that reuses
// memory. Counters: cut_by_work_limit or cut_by_time_limit = 1,
// pass_work, pass_placed (buffers of the pass kept), packed or
// naive_plan, and without a partial pass under the work limit
// pass_estimate (about what a whole pass costs); when neither plan fits,
// the error with `why`.
absl::StatusOr<Plan> PlanAfterSpentPass(
    const Problem& problem, const absl::Status& why, int64_t pass_work,
    const PlacementState* partial = nullptr);
std::unique_ptr<Planner> MakeFirstFitPlanner();
std::unique_ptr<Planner> MakePositionGreedyPlanner();

// The search planners' warm start, as the registry writes it for exact and
// for the optional cp and cpsat components: best's plan, else
// greedy_by_size's, else naive's; its members share its work limit as
// `member_work` says (cp and cpsat: kShared, so that start and search
// count within the limit; exact: kWhole, the start whose plans exact's
// were measured from).
std::unique_ptr<Planner> MakeHeuristicStart(MemberWork member_work);

// The plans of the heuristics (the greedy orders and fits, caffe2_greedy,
// caffe2_dp, hill_climb), verified and with their statistics, each with
// the whole budget of `options` (within one deadline), as best's members:
// the starts of exact and cpsat across pools, which keep the one that
// spills least (SpillsLess), since best keeps the smallest peak. Failures
// are left out.
std::vector<Plan> HeuristicPlans(const Problem& problem,
                                 const PlanOptions& options);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_PLANNERS_H_
