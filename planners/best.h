// best: the smallest valid plan of several greedy placements, hill_climb and
// the exact planner's search with a node budget (see best.cc).

#ifndef MEMPLAN_PLANNERS_BEST_H_
#define MEMPLAN_PLANNERS_BEST_H_

#include <memory>

#include "hill_climb.h"
#include "memplan/planner.h"

namespace memplan {

struct BestOptions {
  // The hill climb best runs after the greedy placements.
  HillClimbOptions hill_climb;
  // Last, in a single pool: the exact planner's search below the best plan,
  // with as many nodes as the counted budget pays for.
  bool exact_search = true;
};

// A best planner with explicit options (the registry's uses the defaults).
std::unique_ptr<Planner> NewBestPlanner(const BestOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_BEST_H_
