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
// instead; the views of its outputs that are read later run again with it.
// An op whose inputs are dropped too is run again after theirs (a chain). The
// rewritten graph is planned with PlanMemory and its plan verified like any
// other.
//
//   absl::StatusOr<memplan::RematResult> fitted =
//       memplan::Rematerialize(graph, /*budget=*/1.5 * (1 << 30));
//   // fitted->graph: the op list to run; fitted->plan: where each tensor
//   // lives; fitted->added_cost: what the recomputation costs.

#ifndef MEMPLAN_REMAT_H_
#define MEMPLAN_REMAT_H_

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
  // The names of the inserted ops, in the rewritten graph's order.
  std::vector<std::string> recomputed;
};

// A rewritten graph whose plan's peak is at most `budget` bytes, found by a
// greedy heuristic over the live bytes of the graph's own order: while the
// most live bytes exceed the target (at first the budget), it takes, among
// the recomputations that free bytes at the step of the most, the one of
// the most bytes freed there per unit of cost that raises no other step as
// high (with the other readers of an input it would keep alive, when that
// alone frees nothing), and updates the live bytes of the steps it
// changes. Then it places the rewritten graph; when the placed peak is
// still above the budget it lowers the target by the difference and goes
// on. Last, it takes back rewrites that later ones made unneeded (letting
// the live bytes rise by the room the placement left, when that still
// fits). The graph as given when its peak already fits (added cost 0).
// An op whose
// outputs are read through views (pure ops with alias or in-place hints
// reading and making only tensors that share those bytes) runs again with
// the views made before that point, their copies aliasing its copy. Ops
// with alias or in-place hints of their own, writes or scratch tensors,
// pinned ops, ops making a graph output or a tensor sharing bytes with
// anything but such views are never recomputed, nor ops whose inputs are
// written between the two runs.
// The search counts its work against options.plan's work limit (and
// deadline, when set), as the planners do: the same graph, budget and
// options give the same rewrite on any machine. `options.reorder` must be
// empty: the graph's own order is planned. A budget no rewrite found
// reaches is InvalidArgument giving the smallest peak found.
absl::StatusOr<RematResult> Rematerialize(
    const Graph& graph, Bytes budget, const PlanMemoryOptions& options = {});

// One budget of a sweep and what Rematerialize reached there.
struct RematSweepPoint {
  Bytes budget = 0;
  Bytes peak = 0;  // the placed peak of the rewritten graph (<= budget)
  double added_cost = 0;
  int recomputed = 0;  // ops inserted
  bool operator==(const RematSweepPoint&) const = default;
};

// The cost of recomputation against the budget: `points` budgets (at least
// 2) evenly spaced from the placed peak without recomputation down to the
// smallest peak Rematerialize reaches, each fitted and its plan verified.
// Fewer points when the range holds fewer bytes; one when nothing can be
// recomputed to any gain.
absl::StatusOr<std::vector<RematSweepPoint>> RematSweep(
    const Graph& graph, int points, const PlanMemoryOptions& options = {});

}  // namespace memplan

#endif  // MEMPLAN_REMAT_H_
