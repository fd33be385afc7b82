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
//   * "reverse_postorder": the reverse postorder of a depth-first search
//     from the sources, successors in the graph's order: the baseline the
//     scheduling literature (Serenity, HMCOS) compares with. Each branch runs
//     to its join before the next starts, the last listed first. Like
//     longest_path it may raise the lower bound.
//   * "memory": a list scheduler that, among the ready ops, runs the one that
//     leaves the fewest bytes alive (then the smallest transient peak, then
//     the original order). It tries this and a peak-first variant and keeps
//     whichever has the lowest lower bound, the original order included, so
//     it never raises the lower bound of BuildProblem(graph, options) (the
//     options decide alignment, planned constants, inputs and outputs).
//   * "optimal": an exact search for the order of the smallest lower bound
//     (ComputeOptimalOpOrder() below), starting from the best of the
//     graph's order, "memory"'s and "window"'s and never worse than any.
//     Within its default work (kOptimalOrderWork) it proves the optimum on
//     graphs whose ops run a few branches wide at a time between
//     articulation ops (cell and stage boundaries); beyond it, a beam over the same model may still
//     improve the order, and the best order known is returned.
//   * "window": for graphs of 10^3-10^5 ops, where "optimal" cannot search
//     the whole graph. Starting from "memory"'s order, it re-orders the
//     segments of the order around the steps at the peak by a beam, and
//     keeps the new order when every such step comes down; then again,
//     while the peak drops. It also moves the ops that make graph outputs
//     (a training step's gradients) to the end, where they no longer stand
//     beside the activations, and searches again from there
//     (ComputeWindowOpOrder() below). Never worse than the graph's order or
//     "memory"'s; linear in the ops, whatever the graph's width.
//
// All keep every data dependency (an op runs after the producers of its
// inputs), every in-place opportunity of the original order (an op that
// may write its input in place still reads it last), every write
// (Op::writes): a reader of the written bytes (the tensor and everything
// sharing its buffer through alias hints or applied in-place merges) that
// ran before the writer still does, one that ran after still does, and the
// writers of the same bytes keep their order; and the relative order of
// the pinned ops (Op::pinned: side effects). Ops, tensors, pools and
// conflicts are unchanged; only the order of Graph::ops differs. Buffer ids of
// BuildProblem() follow the tensor order, which does not change, but buffer
// lifetimes are in the new steps.

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
PlanOptions SplitOrderingEffort(std::string_view ordering, PlanOptions& plan);

// `graph` with its ops in `order` (as ComputeOpOrder() gives it: order[k] is
// the index of the op that runs at step k, a permutation of the op indices).
Graph PermuteOps(const Graph& graph, const std::vector<int>& order);

// The graph with its ops in the order ComputeOpOrder() gives.
absl::StatusOr<Graph> ReorderGraph(const Graph& graph,
                                   std::string_view ordering,
                                   const BuildOptions& options = {},
                                   const PlanOptions& effort = {});

// A lower bound on the peak of every op ordering of a graph: the orders that
// keep what the orderings above keep (data dependencies, the in-place
// opportunities of the graph's order, Op::writes, pinned ops). At each op v
// it sums the buffers alive at v in every such order (those started by an
// op that precedes v, or is v, and ended by one that follows it, or is v;
// views with their base; the groups an in-place hint may join counted as
// their largest), and takes the largest sum; or, when larger, the sum of
// the graph outputs (the largest of each in-place merge set), all alive at
// the last step of every order (on a training step, its gradients). So it
// is at least the largest footprint of one op (its inputs, outputs and
// scratch) plus what must stay alive across it, and at most
// LowerBound(BuildProblem(graph)), the bound of the graph's own order.
// Like that bound it is a single-pool figure.
//
// On graphs of up to 8192 ops it then tightens that by a cut per op, the
// ops of the largest sums first, within a work of its own (2 x 10^7
// operations, about 0.05 s): the fewest bytes any order can hold while op
// v runs, over every choice of which ops neither before nor after v in
// every order have run (a buffer counts when one of its starts has run, or
// is v, and not all of its ends have; of the groups an in-place hint may
// join only the largest). That choice is a minimum-weight closure, found by
// a minimum cut. Then pairs of the 16 ops of the largest cuts: of two ops
// neither of which precedes the other, every order runs one first, so it
// holds the smaller of the two orientations' cuts (at the second op with the
// first run, at the first with the second not). It counts what one of two
// orders holds either way: on mobilenet_v2_train it reaches the best order's
// peak (448447328 without it), on RandWire-style graphs it doubles or
// triples the bound.
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
//
// The graph is first split after every articulation op (one that every
// other op precedes or follows in what every ordering keeps, such as a
// stage's output): every order runs the segments in turn, the bytes alive
// where one starts are the same in every order, and the peak is the
// largest segment's, so each segment is searched on its own and the best
// orders put together are the best order. The search of a segment is
// best-first over sets of executed ops, on a model of the bytes alive that
// never exceeds that lower bound (in-place merges counted as if they always
// happened), memoised on the set (two paths to one set keep the smaller
// running peak), pruned at the best order known (the graph's own,
// "memory"'s or, where the graph's and "memory"'s are above
// LowerBoundOverOrders(), "window"'s: whichever is lowest; "window"'s work
// is its own, not counted in `work`). The segment of the highest peak is
// searched first; below the largest minimum known so far (at first
// LowerBoundOverOrders()) peaks no longer matter, so the other segments
// only look for an order under it, diving to the deepest states first. An
// op that frees at least what it allocates without raising the running
// peak runs at once (no order is better for waiting with it). When every
// segment's search finishes, the largest minimum bounds every order;
// otherwise the queue's least running peak bounds the unfinished segment,
// and beams over it are tried (16 states of the smallest running peak per
// step, then 4 times as many while the work lasts: as much work again in
// all). Within one running peak the search goes depth-first, the state
// leaving the fewest bytes alive first. Its work counts the ops looked at
// and 64 plus three per word of a set (a bit per op of the segment) per
// state kept (states take some 40 bytes each plus three words of a set):
// no clock, so the same graph gets the same order. A segment of m ops is
// not searched when m^2 exceeds the work left (it could not reach a
// complete order: a fan of 2 x 10^4 branches costs "memory"'s order and
// LowerBoundOverOrders()), nor beamed when 16 m^2 exceeds the beams' work.
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
// Large-neighbourhood search over the order, on the model of "optimal"
// (in-place merges counted wherever an order allows them). A round finds
// the steps at the model's peak and, for each (steps within reach share
// one), re-orders the segment of `radius` positions each side by a beam:
// its states are "the order's first f positions run, and some of the next
// 64" (two words, whatever the graph's size); a step tries, from each of
// `beam` states, every ready op within `width` positions of its f; of the
// new states (one per set: the bytes alive after a set are the set's, the
// smaller running peak is kept) the `beam` of the least (running peak
// above the lower bound over all orders, bytes alive, running peak) go on,
// and states reaching the peak are dropped. The ops outside the segment
// keep their steps and their bytes alive. A segment that finds nothing is
// tried with (width, beam, radius) = (32, 8, 128), then (64, 32, 256),
// (64, 128, 256), (64, 256, 512); a round in which every peak step came
// down is kept, and the next starts from it, until a round fails or
// `max_work` is spent. A segment costs about its length x beam x width
// tries.
//
// Then, from the order the rounds leave, outputs are deferred: an op that
// starts a group alive to the end (a graph output: on a training step, a
// gradient) and has at most 8 descendants moves to the end of the order
// with them (what follows it in every order moves with it, so the order
// stays valid). Its output no longer stands beside what is alive in
// between; its inputs stay alive instead. A move is kept when it lowers
// the model's peak, or keeps it and lowers the bytes alive summed over the
// steps; ops are tried from the last to the first, in passes while one
// moves, each try costing a look at the whole order. Rounds then start
// again from the deferred order. A gradient whose inputs are small (the
// last stages of a network have the most weights and the smallest
// activations) is made where the backward pass reaches it, beside every
// activation still saved, and the rounds cannot move it past a peak
// hundreds of ops later: on swin_t's training step at 224x224 the rounds
// alone lower the peak 3.8 %, with the outputs deferred 20 %.
//
// The work counts the positions and lists looked at: no clock, so the same
// graph gets the same order. The orders with and without the outputs
// deferred are judged at the end by their real peak, and the lowest of
// them and "memory"'s is kept.
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
