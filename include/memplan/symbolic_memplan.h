// The entry point of symbolic planning: a symbolic graph planned once for
// every value of its dims, in buckets (the symbolic counterpart of
// PlanMemory(), memplan/memplan.h). The symbolic problem and its plans:
// memplan/symbolic.h; the symbolic planners: memplan/symbolic_planner.h.

#ifndef MEMPLAN_SYMBOLIC_MEMPLAN_H_
#define MEMPLAN_SYMBOLIC_MEMPLAN_H_

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "memplan/types.h"

namespace memplan {

struct SymbolicPlanMemoryOptions {
  BuildOptions build;
  // At most this many buckets (1: one plan over the whole range).
  int max_buckets = 4;
  // One plan is kept when its peak / lower bound is at most target_ratio at
  // every sample value (the ranges' ends, and values spread over them) and
  // at most end_target_ratio at the dims' maxima; otherwise the range is cut
  // into buckets when they meet these targets, or lower the worst ratio.
  double target_ratio = 1.05;
  double end_target_ratio = 1.02;
  // A symbolic planner's registry name (memplan/symbolic_planner.h) and
  // its options as NAME=VALUE text.
  std::string planner = "symbolic_search";
  PlannerOptions planner_options;
  SymbolicGreedyOptions greedy;
  // The options every planner is solved with; its `greedy` and targets
  // are the ones above, its seed the planner's option. Its budget bounds
  // the whole planning: each plan gets the work limit (a candidate bucket
  // 1/64 of it), and the time limit or deadline ends it all.
  SymbolicSearchOptions search;
  // Told what the planning has done, a line at a time (the plan of the
  // whole range, every tenth of the candidate buckets, the buckets kept),
  // for a person waiting on it; it cannot change the plan.
  std::function<void(std::string_view line)> progress;
};

// Builds the symbolic problem of `graph` (BuildSymbolicProblem), plans it
// with the symbolic planner options.planner names (CreateSymbolicPlanner;
// symbolic_search by default) and, where one plan misses the targets, cuts
// the range into buckets (each bucket planned again by that planner), and
// verifies every bucket over its ranges. `planner` of the result names the
// planner. A graph without dims is refused: plan it with PlanMemory().
absl::StatusOr<SymbolicGraphPlan> PlanSymbolicMemory(
    const Graph& graph, const SymbolicPlanMemoryOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_SYMBOLIC_MEMPLAN_H_
