// best: the smallest valid plan of several greedy placements and hill_climb
// (see best.cc for the algorithm).

#ifndef MEMPLAN_PLANNERS_BEST_H_
#define MEMPLAN_PLANNERS_BEST_H_

#include <memory>

#include "hill_climb.h"
#include "memplan/planner.h"

namespace memplan {

struct BestOptions {
  // The hill climb best runs last, and through its work_per_second the
  // counted budget of the whole run (time limit x work_per_second).
  HillClimbOptions hill_climb;
};

// A best planner with explicit options (the registry's uses the defaults).
std::unique_ptr<Planner> NewBestPlanner(const BestOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_BEST_H_
