// Op ordering: another valid topological order of a graph's ops, chosen so
// that tensors live shorter and the most bytes alive at one step (the lower
// bound of every plan) drops. Nothing reorders unless asked.
//
//   absl::StatusOr<memplan::Graph> g = memplan::ReorderGraph(graph, "memory");
//   // g->ops is the new order; plan g (or set PlanMemoryOptions::reorder).
//
// Orderings:
//   * "longest_path" (Caffe2 memonger's idea): depth-first, the successor
//     with the longest path to a sink first. May raise the lower bound.
//   * "reverse_postorder": the reverse postorder of a depth-first search,
//     the scheduling literature's baseline. May raise the lower bound.
//   * "memory": a list scheduler running the ready op that leaves the
//     fewest bytes alive; never raises the lower bound of
//     BuildProblem(graph, options).
//   * "optimal": an exact search for the order of the smallest lower bound
//     (ComputeOptimalOpOrder()), never worse than the graph's, "memory"'s
//     or "window"'s order; it proves the optimum where it finishes.
//   * "window": for 10^3-10^5 ops, a search around the peak steps of
//     "memory"'s order (ComputeWindowOpOrder()); linear in the ops.
//
// Contract: every ordering keeps every data dependency, every in-place
// opportunity of the original order, every write (Op::writes: readers
// before and after a writer stay so, writers of the same bytes keep their
// order) and the relative order of pinned ops (Op::pinned). Ops, tensors,
// pools and conflicts are unchanged; only the order of Graph::ops differs.
//
// Cost: the searches count work units against one budget (see `effort`
// below). Measurements and history: bench/NOTES.md, "Op orders".

#ifndef MEMPLAN_REORDER_H_
#define MEMPLAN_REORDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan {

// Effort: "optimal", "window" and LowerBoundOverOrders() count their work
// in work units (memplan/planner.h: kWorkPerSecond a second) against one
// budget of `effort`, a PlanOptions of which they read work_limit,
// time_limit and deadline (WorkLimit() and the clock, as planners do).
// With none of them set each has a default work (no clock: the same graph
// gets the same order on any machine); a search cut short by the work or
// the clock returns the best order it knows, a bound nullopt. The other
// orderings are linear and ignore it.

// The valid ordering names.
std::vector<std::string> OrderingNames();

// order[k] = the index in graph.ops of the op that runs at step k.
// InvalidArgument when the graph is malformed (as BuildProblem reports it),
// NotFound listing the valid names when `ordering` is unknown.
absl::StatusOr<std::vector<int>> ComputeOpOrder(
    const Graph& graph, std::string_view ordering,
    const BuildOptions& options = {}, const PlanOptions& effort = {});

// One limit for ordering a graph and planning it: when `plan` sets a work
// limit, time limit or deadline and `ordering` searches ("optimal",
// "window"), the effort for ComputeOpOrder() (half of each limit, and the
// deadline) and `plan` keeps the other half; else {}, `plan` unchanged.
// An order cut short by such a limit is not the one the ordering's name
// gives by default, which is what a plan file records (see `memplan
// verify`).
PlanOptions SplitOrderingEffort(std::string_view ordering, PlanOptions& plan);

// OK when `order` (as ComputeOpOrder() gives it) is a permutation of the
// ops of `graph` that keeps what every ordering keeps (dependencies,
// in-place merges, writes, pinned ops); else InvalidArgument naming an op
// that runs before one it must follow. For an order read from a file.
absl::Status CheckOpOrder(const Graph& graph, const std::vector<int>& order,
                          const BuildOptions& options = {});

// `graph` with its ops in `order` (as ComputeOpOrder() gives it: order[k] is
// the index of the op that runs at step k, a permutation of the op indices).
Graph PermuteOps(const Graph& graph, const std::vector<int>& order);

// The graph with its ops in the order ComputeOpOrder() gives.
absl::StatusOr<Graph> ReorderGraph(const Graph& graph,
                                   std::string_view ordering,
                                   const BuildOptions& options = {},
                                   const PlanOptions& effort = {});

// A lower bound on the peak of every op ordering of a graph (of the orders
// that keep what the orderings keep), single-pool like LowerBound():
//   * per op v, the buffers alive at v in every such order, summed (views
//     with their base, in-place groups as their largest); or the graph
//     outputs, all alive at the last step, when larger;
//   * on graphs of up to 8192 ops, tightened by a minimum cut per op (the
//     fewest bytes any order holds while v runs), then by pairs of the 16
//     ops of the largest cuts (every order runs one of two first);
//   * at most LowerBound(BuildProblem(graph)), the graph's own order's.
struct OrderLowerBound {
  Bytes bytes = 0;  // no order of those has a smaller LowerBound()
  // An op (index in graph.ops) where it is reached; -1 when it is the
  // graph outputs at the last step, whichever op runs there.
  int op = -1;
  bool cut = false;  // the cuts stopped for want of work or time
  int64_t work = 0;  // the work units counted
};

// Cost: about 2 * ops * (ops + edges) / 1600 work units, then the cuts';
// by default at most 10^7 units (a quarter of a second).
// nullopt when the computation would pass the work or time of `effort`;
// the errors of BuildProblem(graph, options) for a malformed graph.
absl::StatusOr<std::optional<OrderLowerBound>> LowerBoundOverOrders(
    const Graph& graph, const BuildOptions& options = {},
    const PlanOptions& effort = {});

// The order ComputeOpOrder(graph, "optimal", options) gives, with what is
// known of it. `peak` is LowerBound(BuildProblem(PermuteOps(graph, order),
// options)); no valid order (one keeping what every ordering keeps) has a
// lower bound below `bound`; `proven` when the two meet.
//   * The graph is split after every articulation op; each segment is
//     searched best-first over sets of executed ops, on a model of the
//     bytes alive that never exceeds the lower bound, pruned at the best
//     order known, the segment of the highest peak first.
//   * A segment whose search does not finish is tried by beams over the
//     same model. Counted, not timed without a time limit or deadline: the
//     same graph gets the same order.
struct OptimalOrder {
  std::vector<int> order;  // as ComputeOpOrder() gives it
  Bytes peak = 0;
  Bytes bound = 0;
  bool proven = false;
  bool cut = false;  // a segment's search stopped for want of work or time
  int64_t work = 0;  // the work units counted (bound, "window", search)
};

// Default work: 10^8 units, half for the search, half for the beams, plus
// the bound's and "window"'s defaults. With a limit, the bound gets a tenth
// of it, "window" a quarter of the rest, the search half of what is left
// and the beams the remainder. Errors: those of BuildProblem(graph,
// options) for a malformed graph.
absl::StatusOr<OptimalOrder> ComputeOptimalOpOrder(
    const Graph& graph, const BuildOptions& options = {},
    const PlanOptions& effort = {});

// The order ComputeOpOrder(graph, "window", options) gives. `peak` is
// LowerBound(BuildProblem(PermuteOps(graph, order), options)), at most that
// of the graph's order and of "memory"'s.
//
//   * Rounds re-order the segments around the model's peak steps by a beam
//     (states: the first f positions run, and some of the next 64), kept
//     when every peak step comes down, until a round fails or the work is
//     spent.
//   * Then the ops making graph outputs (a training step's gradients) move
//     to the end where that lowers the model's peak, and rounds run again;
//     the lowest real peak of the orders found and "memory"'s is kept.
struct WindowOrder {
  std::vector<int> order;  // as ComputeOpOrder() gives it
  Bytes peak = 0;
  int passes = 0;    // rounds that lowered the model's peak, and the
                     // outputs deferred (one)
  bool cut = false;  // the rounds stopped for want of work or time
  int64_t work = 0;  // the work units counted (the bound's and the rounds')
};

// Default work: 2,500 units per op, at least 5 x 10^7, plus the bound's
// default. With a limit, the bound gets a tenth of it. Errors: those of
// BuildProblem(graph, options) for a malformed graph.
absl::StatusOr<WindowOrder> ComputeWindowOpOrder(
    const Graph& graph, const BuildOptions& options = {},
    const PlanOptions& effort = {});

}  // namespace memplan

#endif  // MEMPLAN_REORDER_H_
