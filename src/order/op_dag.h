// The dependency DAG of a graph's ops: what every op ordering keeps (data
// dependencies, in-place opportunities of the given order, writes, pinned
// ops). Shared
// by the orderings (reorder.cc) and the lower bound over all orders
// (order_bound.cc).

#ifndef MEMPLAN_ORDER_OP_DAG_H_
#define MEMPLAN_ORDER_OP_DAG_H_

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan::internal {

// The dependency DAG of a graph that BuildProblem accepts. Every edge points
// forward in the graph's order.
struct Dag {
  std::vector<std::vector<int>> succ;  // sorted, unique
  std::vector<int> indegree;
};

// The index of a tensor name BuildProblem checked.
inline int TensorIndex(const absl::flat_hash_map<std::string, int>& index,
                       const std::string& name) {
  return index.at(name);
}

// Per tensor: the representative of the bytes it lives in. Alias hints
// always share; an in-place merge BuildProblem applied shows as one buffer
// of `problem` holding both tensors. Unplanned tensors (constants by
// default) share through their alias hints only.
std::vector<int> ByteGroups(const Graph& graph, const Problem& problem,
                            const absl::flat_hash_map<std::string, int>& index);

// The DAG every ordering keeps: an op after the producers of its inputs; an
// op that may write its input in place (and reads it last in the graph's
// order) after the input's other readers; and the order Op::writes asks for
// per written group of bytes (`group`, ByteGroups()); the pinned ops
// (Op::pinned) in their order.
Dag BuildDag(const Graph& graph,
             const absl::flat_hash_map<std::string, int>& index,
             const std::vector<int>& group);

// Bytes that share one buffer in every order: a tensor with its views.
struct ViewGroup {
  Bytes size = 0;           // aligned as BuildProblem aligns its buffer
  bool from_start = false;  // alive from the first step (a graph input)
  bool to_end = false;      // alive to the last (a graph output)
  std::vector<int> starts;  // ops that start it
  std::vector<int> ends;    // ops that may end it
  Step first = std::numeric_limits<Step>::max();  // in the graph's order
  Step last = 0;                                  // exclusive
  int merge_set = -1;  // the groups its in-place hints may join
};

// The planned view groups of `graph`, which BuildProblem built into
// `problem` with `options`: sizes aligned as its buffers, starts and ends
// sorted. Per tensor its group (-1 when unplanned) in `group_of` when given.
std::vector<ViewGroup> ViewGroups(
    const Graph& graph, const Problem& problem, const BuildOptions& options,
    const absl::flat_hash_map<std::string, int>& index,
    std::vector<int>* group_of = nullptr);

// The "memory" ordering (memplan/reorder.h) of `graph`, whose own order's
// lower bound with `options` is `original_bound`, and the lower bound of
// the order it returns. `dag` is BuildDag()'s.
absl::StatusOr<std::pair<std::vector<int>, Bytes>> MemoryOrder(
    const Graph& graph, const BuildOptions& options, Bytes original_bound,
    const absl::flat_hash_map<std::string, int>& index, const Dag& dag);

}  // namespace memplan::internal

#endif  // MEMPLAN_ORDER_OP_DAG_H_
