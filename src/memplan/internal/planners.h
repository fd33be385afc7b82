// Factories of the built-in planners, one per planners/<name>.cc; the
// registry (src/registry.cc) lists them.

#ifndef MEMPLAN_INTERNAL_PLANNERS_H_
#define MEMPLAN_INTERNAL_PLANNERS_H_

#include <memory>

#include "memplan/planner.h"

namespace memplan::internal {

std::unique_ptr<Planner> NewNaivePlanner();
std::unique_ptr<Planner> NewGreedyBySizePlanner();
std::unique_ptr<Planner> NewFirstFitPlanner();
std::unique_ptr<Planner> NewPositionGreedyPlanner();
std::unique_ptr<Planner> NewHillClimbPlanner();
std::unique_ptr<Planner> NewBestPlanner();
std::unique_ptr<Planner> NewCaffe2GreedyPlanner();
std::unique_ptr<Planner> NewCaffe2DpPlanner();
std::unique_ptr<Planner> NewCpPlanner();
std::unique_ptr<Planner> NewExactPlanner();

}  // namespace memplan::internal

#endif  // MEMPLAN_INTERNAL_PLANNERS_H_
