// exact: a branch-and-bound planner that proves what it returns.
//
// Modes, decided by the (single) pool:
//   * capacity > 0: a plan whose peak fits the capacity, or a proof that
//     none exists (ResourceExhausted); out of budget with neither:
//     DeadlineExceeded.
//   * capacity 0: minimise the peak, between the incumbent's peak (best's
//     plan for the registered planner) and max-live. Each round of the node
//     limit probes the lower bound (ExactOptions::lower_bound_probed), then
//     one below the best plan while plans come, then bisects with at most
//     two probes that run out of nodes; the limit then grows. No probe eats
//     the budget and a plan once found is kept. Past the default budget's
//     work (ExactOptions::creep_work), sweeps of probes of one height each,
//     every height below the best plan in turn with a growing work limit.
//     proven_optimal only when the bounds meet.
//   * ExactOptions::lower_bound_only, in either mode: max-live alone, in
//     rounds: a plan there, or NotFound when the node limit comes first
//     (DeadlineExceeded: the deadline); a capacity below max-live is
//     ResourceExhausted. Cheap where a plan at max-live is easy to find.
//
// The search (one per independent part) places buffers in canonical form:
// each at offset 0 or directly on a buffer it conflicts with.
//   * Time is cut into sections between consecutive lifetime ends; each
//     section has a floor.
//   * A node decides one cell: the tightest section (least slack under the
//     height) of a valley, a run R of equal floor f with higher neighbours.
//   * Either a buffer inside R that crosses the cell goes on f, or the cell
//     is raised to the lowest place a crossing buffer can still take (f plus
//     the smallest buffer inside R, or the lower neighbour's floor; the
//     whole run when nothing fits inside it):
//
//   offset ^        +------+
//          |  +---+ |  c   |          R = a valley at floor f; branches at
//          |  | a | +------+          its tightest section: each buffer in R
//          |  +---+ ....R.... +--+    over that section on f, or the section
//          |  |  b          | |d |    raised.
//          +--------------------------> time
//
//   * A cell that no buffer inside its run crosses is no node: every buffer
//     crossing it reaches into a live neighbour, so all such sections of the
//     run rise to the lower neighbour's floor at once. Always in a probe of
//     one height (a capacity, lower_bound_only); when minimising, in parts
//     of 1000 buffers or more, smaller parts raising such a cell alone.
//
// Pruning, each switchable (ExactOptions):
//   * section_inference: a section's floor plus the sizes still to place
//     there fits under the height (a segment tree, O(items log sections) a
//     node); also, in a section, the lowest candidate (highest floor over
//     its lifetime) of the buffers crossing it plus their sizes fits;
//   * symmetry: buffers of equal lifetime, size, alignment and explicit
//     conflicts are interchangeable (as in cp); one of them is tried a cell;
//   * decomposition: where no buffer crosses a point in time the problem
//     splits; each part is solved and proven on its own;
//   * failure_cache: states (floors, buffers left) whose subtree failed are
//     cut when reached again;
//   * sizes, offsets and alignments are counted in their greatest common
//     divisor.
// Orders: several static orders (size, area, lifetime, start; each also
// with "buffers that fill the whole run first") with the round's node
// limit, then as many nodes of short searches under random orders (size
// times a random power of the length, perturbed; seeded from
// PlanOptions::seed), all sharing the failure cache.
//
// Several pools (with across_pools): the pool of every buffer is searched
// so that the fewest bytes spill out of the faster pools (SpillsLess in
// memplan/problem.h), each pool packed by the search above; exact_pools.h.
// proven_optimal: no plan spills fewer bytes.
//
// Proofs (infeasible, optimal) only where the search is complete: a single
// pool, no fixed placements, no explicit conflicts, one alignment (after the
// common unit). Elsewhere it is a heuristic and claims only what the plan
// shows (a peak at max-live is optimal in any case).
//
// Cost: search nodes against the work limit of PlanOptions (WorkLimit(): a
// node costs a quarter of a unit per buffer, plus 32), within the time
// limit or deadline when one is set. Deterministic without a time limit
// (the default): the search is driven by node counts. A time limit makes
// the result depend on the machine's speed.
//
// Measurements and the history of these choices: bench/NOTES.md.

#ifndef MEMPLAN_PLANNERS_EXACT_H_
#define MEMPLAN_PLANNERS_EXACT_H_

#include <cstdint>
#include <memory>

#include "memplan/compose.h"
#include "memplan/planner.h"

namespace memplan {

struct ExactOptions {
  // (The whole solve's effort is the work limit of PlanOptions, as for every
  // planner: a search node costs a quarter of a unit per buffer of the
  // problem, plus 32.)
  // Node limit of one search (one order, one height) in the first round; it
  // is multiplied by `node_limit_growth` after every round. A part gets at
  // least 2 nodes per buffer (minimising) or 4 (one height: a capacity, or
  // lower_bound_only), so that a first round can reach a plan at all.
  int64_t first_node_limit = 1000;
  int64_t node_limit_growth = 4;
  // Random orders tried after the static ones in every round (at least
  // this many; more in later rounds, so that they get as many nodes as the
  // static orders), each with sqrt(round limit * first_node_limit) nodes.
  // 0: none.
  int restarts_per_round = 16;
  // Look only for a plan at the lower bound (max-live), in either mode:
  // best's quick try before its longer searches.
  bool lower_bound_only = false;
  // Minimising: the caller has just probed the lower bound with short
  // searches (best's quick try does, before its search below the plan). The
  // rounds then probe it only once their searches are longer than those,
  // and after the heights below the plan, where a plan can still be found.
  bool lower_bound_probed = false;
  // Minimising: the work units (of PlanOptions' work limit) that the
  // creep down from the best plan and the bisection may take; the rest of a
  // longer budget goes to sweeps of one-height probes below the best plan
  // (exact.cc, SweepBelow). The default budget's creep is as before.
  int64_t creep_work = kDefaultWorkLimit;
  // Several pools: search the pool of every buffer (the registered `exact`
  // does). false: Unimplemented, as best's members keep it, so that best
  // still compares plans of several pools by their peak alone.
  bool across_pools = false;
  bool section_inference = true;
  // section_inference checks only the sections that changed since its last
  // check, with each buffer's candidate kept as floors rise. false: every
  // section, every candidate read afresh, at every node: the same pruning
  // (the same nodes and plans), slower; the reference the tests compare
  // with.
  bool incremental_inference = true;
  bool symmetry = true;
  bool decomposition = true;
  bool failure_cache = true;
  int64_t failure_cache_entries = 1 << 20;  // per part
};

// The plan's counters (Plan::counters) say what the search did: "nodes",
// "parts", "searches" and "restarts" (searches under a random order).
//
// The exact search with explicit options. Its incumbent
// (memplan/compose.h) is the start of the minimising mode (only heights
// below it are probed; the better of the two is returned) and, under a
// capacity, the plan returned when the search finds none and proves
// nothing. The registered `exact` is this search started from `best`'s
// plan; its registry options are these (`memplan planners exact`), plus
// warm_start=false for the search alone.
std::unique_ptr<SearchPlanner> MakeExactPlanner(const ExactOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_EXACT_H_
