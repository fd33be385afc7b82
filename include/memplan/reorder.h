// Op ordering: another valid topological order of a graph's ops, chosen so
// that tensors live shorter and the most bytes alive at one step (the lower
// bound of every plan) drops. The compiler's order stays the default: nothing
// reorders unless asked.
//
//   absl::StatusOr<memplan::Graph> g = memplan::ReorderGraph(graph, "memory");
//   // g->ops is the new execution order; plan g (or set
//   // PlanMemoryOptions::reorder, which plans exactly this graph).
//
// Orderings:
//   * "longest_path" (Caffe2 memonger's idea): a depth-first topological sort
//     in which, at every branch, the successor with the longest path to a
//     sink comes first, so long chains run first and branches run one after
//     another instead of interleaved. Ties keep the original order.
//   * "memory": a list scheduler that, among the ready ops, runs the one that
//     leaves the fewest bytes alive (then the smallest transient peak, then
//     the original order). It tries this and a peak-first variant and keeps
//     whichever has the lowest lower bound, the original order included, so
//     it never raises the lower bound of BuildProblem(graph, options) (the
//     options decide alignment, planned constants, inputs and outputs).
//
// Both keep every data dependency (an op runs after the producers of its
// inputs), every in-place opportunity of the original order (an op that
// may write its input in place still reads it last) and every write
// (Op::writes): a reader of the written bytes (the tensor and everything
// sharing its buffer through alias hints or applied in-place merges) that
// ran before the writer still does, one that ran after still does, and the
// writers of the same bytes keep their order. Ops, tensors, pools and
// conflicts are unchanged; only the order of Graph::ops differs. Buffer ids of
// BuildProblem() follow the tensor order, which does not change, but buffer
// lifetimes are in the new steps.

#ifndef MEMPLAN_REORDER_H_
#define MEMPLAN_REORDER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan {

// The valid ordering names.
std::vector<std::string> OrderingNames();

// order[k] = the index in graph.ops of the op that runs at step k.
// InvalidArgument when the graph is malformed (as BuildProblem reports it),
// NotFound listing the valid names when `ordering` is unknown.
absl::StatusOr<std::vector<int>> ComputeOpOrder(
    const Graph& graph, std::string_view ordering,
    const BuildOptions& options = {});

// `graph` with its ops in `order` (as ComputeOpOrder() gives it: order[k] is
// the index of the op that runs at step k, a permutation of the op indices).
Graph PermuteOps(const Graph& graph, const std::vector<int>& order);

// The graph with its ops in the order ComputeOpOrder() gives.
absl::StatusOr<Graph> ReorderGraph(const Graph& graph,
                                   std::string_view ordering,
                                   const BuildOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_REORDER_H_
