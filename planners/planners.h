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
#include "memplan/planner.h"

namespace memplan::internal {

std::unique_ptr<Planner> MakeNaivePlanner();

// What a one-pass heuristic returns when its pass spent the whole work
// limit before it finished (`why`, with the work it did): the naive plan,
// linear in the buffers and valid wherever the buffers fit stacked, so
// that the work limit bounds every planner at any size and density. The
// plan is named "naive" (the planner that made it) and counts
// `pass_abandoned` = 1 and the pass's `pass_work`; when naive fails too,
// its error, with `why`.
absl::StatusOr<Plan> NaiveAfterSpentPass(const Problem& problem,
                                         const PlanOptions& options,
                                         const absl::Status& why,
                                         int64_t pass_work);
std::unique_ptr<Planner> MakeFirstFitPlanner();
std::unique_ptr<Planner> MakePositionGreedyPlanner();

// The search planners' warm start, as the registry writes it for exact and
// for the optional cp component: best's plan, else greedy_by_size's, else
// naive's.
std::unique_ptr<Planner> MakeHeuristicStart();

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
