// The model of the bytes alive that the op orderings "optimal"
// (optimal_order.cc) and "window" (window_order.cc) search on, and the
// measure both judge their orders by. See memplan/reorder.h.
//
// Per view group (order/op_dag.h), bytes are alive from the first op that
// starts it (graph inputs from the start) to the last op that ends it
// (graph outputs to the end); an in-place merge is counted as if it
// happened wherever the order allows it.

#ifndef MEMPLAN_ORDER_ORDER_MODEL_H_
#define MEMPLAN_ORDER_ORDER_MODEL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "memplan/problem.h"
#include "memplan/types.h"
#include "order/op_dag.h"

namespace memplan::internal {

// A graph's ops and groups as the orderings see them: tensor indices by
// name, the DAG every ordering keeps and the planned view groups, with
// each tensor's group (-1 when unplanned).
struct OrderGraph {
  absl::flat_hash_map<std::string, int> index;
  Dag dag;
  std::vector<int> group_of;
  std::vector<ViewGroup> groups;
};

// OrderGraph of `graph`, which BuildProblem built into `problem` with
// `options`.
OrderGraph BuildOrderGraph(const Graph& graph, const Problem& problem,
                           const BuildOptions& options);

// How each op changes the bytes alive, by op index.
struct LiveModel {
  Bytes initial = 0;     // graph inputs, alive until their last reader
  Bytes first_only = 0;  // graph inputs nobody reads: the first step's
  std::vector<std::vector<int>> starts;  // per op: groups it may start
  std::vector<std::vector<int>> ends;    // per op: groups it may end
  std::vector<std::vector<int>> pred;    // per op: its DAG predecessors
  // Per op: the (input, output) groups of the in-place hints BuildProblem
  // may apply in some order, in the op's hint order.
  std::vector<std::vector<std::pair<int, int>>> inplace;
};

// LiveModel of `graph` with its view `groups`, each tensor's group in
// `group_of` (-1 when unplanned), and its BuildDag() `dag`.
LiveModel BuildLiveModel(const Graph& graph,
                         const std::vector<ViewGroup>& groups,
                         const std::vector<int>& group_of, const Dag& dag);

// The real measure of an order of `graph`'s ops: the lower bound of the
// problem BuildProblem builds from the graph with its ops in that order.
absl::StatusOr<Bytes> OrderPeak(const Graph& graph,
                                const std::vector<int>& order,
                                const BuildOptions& options);

}  // namespace memplan::internal

#endif  // MEMPLAN_ORDER_ORDER_MODEL_H_
