// memplan: static memory planning for compiled ML programs.
//
//   memplan::Graph graph = ...;  // ops in execution order
//   absl::StatusOr<memplan::Plan> plan = memplan::PlanMemory(graph, {});
//
// PlanMemory builds the problem, runs the planner and verifies the plan; a plan
// the verifier rejects is InternalError and is never returned.

#ifndef MEMPLAN_MEMPLAN_H_
#define MEMPLAN_MEMPLAN_H_

#include <string>

#include "absl/status/statusor.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"
#include "memplan/verify.h"

namespace memplan {

struct PlanMemoryOptions {
  BuildOptions build;
  std::string planner;  // empty = DefaultPlannerName()
  PlanOptions plan;
  // Graphs only: an op ordering of memplan/reorder.h ("longest_path",
  // "memory") applied before building the problem; empty = the graph's own
  // order. The plan is then the plan of ReorderGraph(graph, reorder): call
  // ReorderGraph() yourself to learn the order (and the buffers' steps).
  std::string reorder;
};

absl::StatusOr<Plan> PlanMemory(const Graph& graph,
                                const PlanMemoryOptions& options = {});
absl::StatusOr<Plan> PlanMemory(const Problem& problem,
                                const PlanMemoryOptions& options = {});

// The same with a planner built by the caller, e.g. one with options of its
// own (memplan/planners/exact.h: MakeExactPlanner(ExactOptions{...})): the
// problem is validated and the plan verified all the same.
absl::StatusOr<Plan> PlanMemory(const Problem& problem, const Planner& planner,
                                const PlanOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_MEMPLAN_H_
