// exact: a branch-and-bound planner that proves what it returns.
//
// Two modes, decided by the (single) pool:
//   * capacity > 0: find a plan whose peak fits the capacity, or prove that
//     none exists (ResourceExhausted). Out of time with neither:
//     DeadlineExceeded.
//   * capacity 0: minimise the peak. The upper bound starts from the
//     incumbent (the registered planner's: best's plan), the lower bound
//     from max-live. Every round of the node limit probes the lower bound
//     (see ExactOptions::lower_bound_probed), then one below the best plan
//     for as long as plans come (a plan found under a loose height often
//     lies well below it), then bisects in between with at most two probes
//     that run out of nodes; the limit then grows. So no single probe eats
//     the budget and a plan once found is never lost. proven_optimal is set
//     only when the two bounds meet.
// With ExactOptions::lower_bound_only, either mode probes max-live alone, in
// rounds as under a capacity: a plan there, or NotFound when the node limit
// (DeadlineExceeded: the deadline) comes first; a capacity below max-live is
// ResourceExhausted as in the capacity mode. A plan at max-live is the
// smallest there is, so where one exists and is easy to find (real traces
// such as somas_resnet50: 5 searches of static orders, 23k nodes) this finds
// it before any longer search.
//
// The search (one per independent part, see below) places buffers in
// "canonical" form: every buffer sits at offset 0 or directly on a buffer it
// conflicts with. Time is cut into sections (between consecutive lifetime
// ends); each section has a floor. At every node one cell is decided: a
// section of a valley (a run R of equal floor f whose neighbours are higher),
// the one with the least slack under the height. Either a buffer inside R
// that crosses the cell is put on f, or nothing will ever sit on (cell, f)
// and the cell is raised to the lowest place a buffer crossing it can still
// take (f plus the smallest buffer inside R, or the lower neighbour's floor;
// the whole run when nothing fits inside it):
//
//   offset ^        +------+
//          |  +---+ |  c   |          R = a valley at floor f; branches at
//          |  | a | +------+          its tightest section: each buffer in R
//          |  +---+ ....R.... +--+    over that section on f, or the section
//          |  |  b          | |d |    raised.
//          +--------------------------> time
//
// In a probe of one height (a capacity, lower_bound_only) a cell that no
// buffer inside its run crosses is not a node: every buffer crossing it
// reaches into a live neighbour, so it and every other such section of the
// run rise to the lower neighbour's floor at once, and the search goes on to
// the next cell (tiny_bert's first descent: 1821 nodes instead of 35530).
// So does the minimising mode in parts of 1000 buffers or more (bert_base's
// first descent: 5620 nodes instead of 250521). In smaller parts it raises
// such a cell alone, one node per raise, as before: its plans of
// MiniMalloc's D and J, found by chance within the node limits, moved both
// ways under every variant tried (bench/NOTES.md).
//
// Pruning, each switchable so its effect can be measured:
//   * section_inference: a section's floor plus the sizes still to place
//     there must fit under the height being probed (marked on a segment
//     tree, O(items log sections) a node);
//   * section_inference also uses each buffer's candidate (the highest
//     floor over its lifetime): in a section, the lowest candidate of the
//     buffers crossing it plus their sizes must fit;
//   * symmetry: buffers with the same lifetime, size, alignment and explicit
//     conflicts are interchangeable (the definition cp uses too); only one
//     of them is tried at a cell;
//   * decomposition: where no buffer crosses a point in time the problem
//     splits; each part is solved (and proven) on its own;
//   * failure_cache: states (floors, buffers left) whose whole subtree failed
//     are remembered and cut when reached again by another path;
//   * sizes, offsets and alignments are counted in their greatest common
//     divisor (MiniMalloc's instances: 1024 bytes).
// Several static orders of the buffers (size, area, lifetime, start), each
// also with "buffers that fill the whole run first", are tried in turn, each
// with the node limit of the round; then random orders (size times a random
// power of the length, randomly perturbed; seeded from PlanOptions::seed),
// as many nodes in all as the static orders, in short searches. The failure
// cache is shared by all of them. Restarts are what solve tight parts where
// every static order commits early to a wrong choice (bench/NOTES.md).
//
// Several pools (with across_pools): which buffers go to which pool is
// searched so that the fewest bytes spill out of the faster pools
// (lexicographically, the last pool first: SpillsLess in memplan/problem.h),
// each pool with a capacity packed by the search above; exact_pools.h.
// proven_optimal then says that no plan spills fewer bytes.
//
// Proofs (infeasible, optimal) are claimed only where the search is complete:
// a single pool, no fixed placements, no explicit conflicts between buffers
// and one alignment (after the common unit). Otherwise the search is a
// heuristic and says so: nothing is claimed but what the plan shows (a peak
// equal to max-live is optimal in any case).
//
// Effort: the search nodes are counted against the work limit of the
// PlanOptions (WorkLimit(): a node costs a quarter of a unit per buffer,
// plus 32), within the time limit or deadline when one is set.
// Determinism: the search is driven by node counts, so without a time limit
// (the default) the same input gives the same plan on any machine. When a
// time limit cuts the search, the result depends on the machine's speed.

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
  // and after the heights below the plan: the first rounds go to the heights
  // where a plan can still be found (MiniMalloc's J reaches 1.0424x the
  // bound in half the time).
  bool lower_bound_probed = false;
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
