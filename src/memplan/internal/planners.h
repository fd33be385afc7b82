// Factories of the built-in planners, one per planners/<name>.cc; the
// registry (src/registry.cc) lists them.

#ifndef MEMPLAN_INTERNAL_PLANNERS_H_
#define MEMPLAN_INTERNAL_PLANNERS_H_

#include <memory>

#include "memplan/planner.h"

namespace memplan::internal {

std::unique_ptr<Planner> NewNaivePlanner();

}  // namespace memplan::internal

#endif  // MEMPLAN_INTERNAL_PLANNERS_H_
