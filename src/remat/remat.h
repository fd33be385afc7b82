// Rematerialization: a training step fitted into a budget in bytes by
// running chosen ops again (DESIGN.md, "Op costs and recomputation").
//
// A recomputable op (Op::recomputable) whose outputs are read, then unread
// for a stretch of steps, then read again (an activation of the forward
// pass that the backward pass needs) may have its outputs dropped after
// the read before the stretch and made again just before the read after
// it: the op appears a second time, named after the original with
// kRecomputeSuffix, reading the same tensors (each still holding the same
// bytes: no op between the two runs writes them), and producing new
// tensors (the outputs' names with the suffix) that the later readers read
// instead. The rewritten graph is planned with PlanMemory and its plan
// verified like any other.

#ifndef MEMPLAN_REMAT_REMAT_H_
#define MEMPLAN_REMAT_REMAT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/memplan.h"
#include "memplan/types.h"

namespace memplan {

inline constexpr char kRecomputeSuffix[] = ".recompute";

struct RematResult {
  Graph graph;     // the rewritten graph: the recomputed ops inserted
  GraphPlan plan;  // the plan of `graph`, verified
  // The sum of the recomputed ops' costs (an op without a cost adds 0).
  double added_cost = 0;
  // The placed peak of the graph as given, planned with the same options.
  Bytes peak_without = 0;
  // The names of the inserted ops, in the order they were chosen.
  std::vector<std::string> recomputed;
};

// A rewritten graph whose plan's peak is at most `budget` bytes, found by a
// greedy heuristic: while the plan's peak is above the budget, among the
// recomputations that free bytes at the step of the most live bytes, it
// takes the one of the most bytes freed per unit of cost whose rewritten
// graph has fewer live bytes at its peak (or fewer steps at that peak).
// The graph as given when its peak already fits (added cost 0). Ops whose
// outputs share bytes with another tensor (alias or in-place hints, a
// write), have scratch tensors, are pinned, or make a graph output are
// never recomputed. `options.reorder` must be empty: the graph's own order
// is planned. A budget no rewrite found reaches is InvalidArgument giving
// the smallest peak found.
absl::StatusOr<RematResult> Rematerialize(
    const Graph& graph, Bytes budget, const PlanMemoryOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_REMAT_REMAT_H_
