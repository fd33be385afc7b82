// Where each tensor of a graph lives under a plan of the problem built from
// it: the tensor table that plan files, reports and GraphPlan share. Data
// only: nothing here plans.

#ifndef MEMPLAN_TENSOR_PLACEMENT_H_
#define MEMPLAN_TENSOR_PLACEMENT_H_

#include <string>
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

}  // namespace memplan

#endif  // MEMPLAN_TENSOR_PLACEMENT_H_
