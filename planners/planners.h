// Factories of the built-in planners that have no options of their own, one
// per planners/<name>.cc; the registry (planners/registry.cc) lists them with the
// planners whose factories are public (memplan/planners/<name>.h).

#ifndef MEMPLAN_PLANNERS_PLANNERS_H_
#define MEMPLAN_PLANNERS_PLANNERS_H_

#include <memory>

#include "memplan/planner.h"

namespace memplan::internal {

std::unique_ptr<Planner> MakeNaivePlanner();
std::unique_ptr<Planner> MakeFirstFitPlanner();
std::unique_ptr<Planner> MakePositionGreedyPlanner();

// The search planners' warm start, as the registry writes it for exact and
// for the optional cp component: best's plan, else greedy_by_size's, else
// naive's.
std::unique_ptr<Planner> MakeHeuristicStart();

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_PLANNERS_H_
