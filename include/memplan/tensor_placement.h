// Where each tensor of a graph lives under a plan of the problem built from
// it: the tensor table that plan files, reports and GraphPlan share. Data
// only: nothing here plans.

#ifndef MEMPLAN_TENSOR_PLACEMENT_H_
#define MEMPLAN_TENSOR_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/types.h"

namespace memplan {

// The BufferId of a tensor that is not planned.
inline constexpr BufferId kNotPlanned = -1;

// Where one tensor of the graph lives.
struct TensorPlacement {
  std::string name;
  TensorKind kind = TensorKind::kActivation;
  Bytes size = 0;  // the tensor's own bytes (its buffer may be larger)
  // The buffer it lives in (an index into GraphPlan::problem.buffers), shared
  // with the tensors merged into it by in-place and alias hints; kNotPlanned
  // for constants (unless BuildOptions::plan_constants) and for graph inputs
  // and outputs left to the caller (BuildOptions::plan_inputs/plan_outputs).
  BufferId buffer = kNotPlanned;
  PoolId pool = 0;    // when planned
  Offset offset = 0;  // when planned: bytes from the pool's base
  bool planned() const { return buffer != kNotPlanned; }
  bool operator==(const TensorPlacement&) const = default;
};

// The tensor table of a plan of `problem`, which BuildProblem() built from
// `graph` (in any op order): every tensor of the graph with its buffer, pool
// and offset, or not planned. InvalidArgument when the plan does not cover
// the problem's buffers or a buffer names a tensor the graph lacks.
absl::StatusOr<std::vector<TensorPlacement>> PlaceTensors(
    const Graph& graph, const Problem& problem, const Plan& plan);

// A graph's plan by tensor name, with the problem it was solved on, so that
// nobody needs to rebuild the problem to read it.
struct GraphPlan {
  Plan plan;        // plan.assignments index problem.buffers
  Problem problem;  // the buffers (lifetimes in steps), pools and conflicts
  // op_order[step] is the index in the caller's graph.ops of the op that runs
  // at that step: the identity unless PlanMemoryOptions::reorder was set.
  std::vector<int> op_order;
  // The ordering that gave op_order: PlanMemoryOptions::reorder, or for
  // kPlacedOrdering the one chosen ("" = the graph's own).
  std::string reorder;
  // One per tensor of the graph, in the graph's order.
  std::vector<TensorPlacement> tensors;
  // Indices into `tensors` sorted by name, for Find().
  std::vector<int32_t> tensors_by_name;

  // The tensor named `name`, or nullptr when the graph has none.
  const TensorPlacement* Find(std::string_view name) const;
  // Fills tensors_by_name from tensors.
  void IndexTensors();
  bool operator==(const GraphPlan&) const = default;
};

}  // namespace memplan

#endif  // MEMPLAN_TENSOR_PLACEMENT_H_
