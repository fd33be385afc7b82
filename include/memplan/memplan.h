// memplan: static memory planning for compiled ML programs.
//
//   memplan::Graph graph = ...;  // ops in execution order
//   absl::StatusOr<memplan::GraphPlan> result = memplan::PlanMemory(graph);
//   const memplan::TensorPlacement* t = result->Find("conv1_out");
//   // t->planned(), t->pool, t->offset; result->plan.peak
//
// PlanMemory builds the problem, runs the planner and verifies the plan; a plan
// the verifier rejects is InternalError and is never returned.

#ifndef MEMPLAN_MEMPLAN_H_
#define MEMPLAN_MEMPLAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/tensor_placement.h"
#include "memplan/types.h"
#include "memplan/verify.h"

namespace memplan {

struct PlanMemoryOptions {
  BuildOptions build;
  std::string planner;  // empty = DefaultPlannerName()
  // The planner's own options, NAME -> VALUE as text (memplan/planner.h:
  // RegisteredPlanners() lists each planner's); checked by CreatePlanner().
  PlannerOptions planner_options;
  PlanOptions plan;
  // Graphs only: an op ordering of memplan/reorder.h (OrderingNames():
  // "longest_path", "memory", "optimal", "window", "reverse_postorder")
  // applied before building the problem; empty = the graph's own order. Or
  // kPlacedOrdering: the order of the smallest placed peak among several
  // (see below). GraphPlan::op_order tells the order planned,
  // GraphPlan::reorder the ordering that gave it.
  std::string reorder;
};

// PlanMemoryOptions::reorder that plans the graph in several orders and
// keeps the plan of the smallest peak (then the first): the graph's own,
// "memory"'s, "window"'s and, for graphs of at most kPlacedOptimalOps ops,
// "optimal"'s. An order of a lower bound than another's can still place
// higher (placement does not always reach an order's bound): the planner
// decides. Orders equal to an earlier candidate's are not planned again.
inline constexpr char kPlacedOrdering[] = "placed";
inline constexpr int kPlacedOptimalOps = 500;

// Builds the problem of `graph` (after the op ordering, if any), plans and
// verifies it, and places every tensor.
absl::StatusOr<GraphPlan> PlanMemory(const Graph& graph,
                                     const PlanMemoryOptions& options = {});
absl::StatusOr<Plan> PlanMemory(const Problem& problem,
                                const PlanMemoryOptions& options = {});

// The same with a planner built by the caller, e.g. a composition of its own
// (memplan/compose.h) or a search with options in C++ types
// (memplan/planners/exact.h: MakeExactPlanner(ExactOptions{...})): the
// problem is validated and the plan verified all the same.
absl::StatusOr<Plan> PlanMemory(const Problem& problem, const Planner& planner,
                                const PlanOptions& options = {});

// When a limit, not the problem, decided `plan` (planned with `options`):
// one line saying which limit cut what, how far the plan is from the
// lower bound, and what a whole greedy pass needs (work units, or time
// on a typical core: the limit that gives one to best); empty
// otherwise. From the plan's counters: cut_by_work_limit or
// cut_by_time_limit, pass_placed (buffers a cut greedy pass kept),
// packed (buffers packed above them), naive_plan and pass_estimate (about
// what a whole pass costs, in work units). The tool prints it on stderr,
// the Python module warns with it (memplan.LimitWarning).
std::string LimitNote(const Plan& plan, const PlanOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_MEMPLAN_H_
