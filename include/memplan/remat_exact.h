// Exact rematerialization: the least added cost that fits a graph into a
// budget in bytes, proven by a branch and bound search (DESIGN.md, "Op
// costs and recomputation"; the greedy heuristic is memplan/remat.h).
//
// The model (Checkmate's stages over the graph's own op order). Stage t
// runs op t of the graph, preceded by the recomputations chosen for it:
// ops i < t run again, in the graph's order, each making new versions of
// its outputs that every reader from there on reads (until the next
// recomputation of i). A version lives from the step that makes it to its
// last reader, as BuildProblem counts lifetimes; the inputs of a
// recomputed op stay alive up to it (or are recomputed in the same stage,
// which the model chooses as well). The search chooses, for each op that
// may be recomputed, the stages at which it runs again, and minimises the
// sum of the recomputed ops' costs subject to the most live bytes at any
// step being at most the budget. An op i runs again at stage b only when
// its outputs are read at stage b and not at stage b - 1 (something runs
// while they are dropped).
//
// What may run again is what the greedy allows (remat/eligible.h): a
// recomputable op without writes, scratch tensors, alias or in-place
// hints, not pinned, whose outputs are activations that are no graph
// output, not fixed, in no explicit conflict, not written, and sharing
// bytes only with their views (pure ops with alias or in-place hints
// reading and making only tensors sharing those bytes, as traced steps
// read saved activations through); and only while no op between the two
// runs writes the bytes of one of its inputs. An op runs again with the
// views of its outputs made before the stage (each view's copy reading its
// copy; its cost and theirs), and a read of a view is a read of the op's
// outputs. An input merged in place into the output of its last reader is
// not read after that reader (the merge would no longer hold). When some
// op runs again with views, the model without those ops is searched first:
// its least cost bounds the search of the whole model, which proves it
// least or finds a cheaper rewrite.
//
// Live bytes are a lower bound of any placement. The rewrite the search
// finds is placed with PlanMemory; when its placed peak is above the
// budget, that rewrite is excluded and the search runs again (the next
// least cost), up to kRematExactRetries times, and after that the bound
// on live bytes is lowered by the excess and the search runs again
// (no longer proven). The rewrite returned always meets the budget as
// placed. Its cost is proven least when every search finished within the
// limits and no bound was lowered: then no rewrite of the model has a
// smaller cost and a live peak within the budget, so none places within
// it either.
//
// The model leaves out some rewrites: an op runs again only at a stage
// whose step before does not read its outputs, so a chain's second
// recomputation of an op (Rematerialize's "f1.recompute_2" after
// "f1.recompute" fed "f2.recompute") is not in it. So the heuristic
// (Rematerialize, with `plan`) runs too when the search recomputes
// anything or finds no fit: when its rewrite fits at a smaller cost, or
// fits where the search found none, that rewrite is returned, not proven.
// The cost returned is never above the heuristic's.
//
// Names: the k-th recomputation of an op (counted in stage order) is
// named after it with kRecomputeSuffix (k = 1) or kRecomputeSuffix + "_k"
// (k >= 2), and so are its outputs, the next free index on a clash with a
// name of the graph.

#ifndef MEMPLAN_REMAT_EXACT_H_
#define MEMPLAN_REMAT_EXACT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "memplan/memplan.h"
#include "memplan/remat.h"
#include "memplan/types.h"

namespace memplan {

// Rewrites excluded after placing above the budget before the bound on
// live bytes is lowered instead.
inline constexpr int kRematExactRetries = 4;

struct RematExactOptions {
  // How the graph and each rewrite are built and placed; `plan.reorder`
  // must be empty (the graph's own order is the model's).
  PlanMemoryOptions plan;
  // The search's effort in work units (memplan/planner.h: about
  // kWorkPerSecond a second): 0 = kDefaultWorkLimit, about 10 s of CPU
  // (the MLP training step of 61 ops, bench/data/training, every pure op
  // recomputable, is proven at 0.9, 0.8 and 0.7 of its peak in about 10^6
  // units each; not at 0.6 and 0.5, even in 4x10^9). Counted, so the same
  // graph gives the same result on any machine.
  int64_t work_limit = 0;
  // An optional wall-clock end (results then depend on the machine).
  absl::Time deadline = absl::InfiniteFuture();
};

// The exact mode's options for the planning's: `options` to build and
// place, the search's work limit the planning's (WorkLimit: its own, the
// default, or its time limit's share) and, with a time limit, a deadline
// that long after `now`. What the tool's --exact and Python's exact=True
// run with.
RematExactOptions RematExactOptionsFor(const PlanMemoryOptions& options,
                                       absl::Time now = absl::Now());

struct RematExactResult {
  // The rewritten graph, its verified plan, the cost; `recomputed` lists
  // the inserted ops in the rewritten graph's order.
  RematResult remat;
  // No rewrite in the model fits the budget at a smaller added cost.
  bool proven = false;
  // The rewrite is the heuristic's (Rematerialize), outside the model:
  // cheaper than the search's, or fitting where the search found none.
  bool heuristic = false;
  // The most bytes live at one step of the rewritten graph.
  Bytes live_peak = 0;
  // Work units the searches counted, and how many searches ran.
  int64_t work = 0;
  int searches = 0;
};

// The rewrite of `graph` of the least added cost (within the limits) whose
// placed peak is at most `budget`. The graph as given when it fits already
// (cost 0, proven). Errors: InvalidArgument for a budget <= 0, a reorder,
// several pools, or a budget no rewrite reaches (giving the smallest peak
// found); ResourceExhausted when the limits ran out before any rewrite
// fitting the budget was found.
absl::StatusOr<RematExactResult> RematerializeExact(
    const Graph& graph, Bytes budget, const RematExactOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_REMAT_EXACT_H_
