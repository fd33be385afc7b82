// cp: constraint programming (Gecode), the seed notebook's CP-SAT model.
//
//   offset ^          +------+
//          |  [  b2  ]|  b3  |      every buffer: one offset variable x_b
//          |  [ b0 ][  b1    ]      conflicting b, c: x_b + s_b <= x_c
//          +--------------------->                  or x_c + s_c <= x_b
//                         time      minimise peak >= x_b + s_b for all b
//
// The model, in units of u = gcd of every size, effective alignment and
// fixed offset (so an offset of alignment a is a multiple of a / u):
//   * an offset variable per buffer (fixed placements: fixed variables;
//     zero-size buffers stay at offset 0 outside the model), the peak
//     variable with the lower bound (max live bytes, the end of every fixed
//     buffer) below it and the capacity, when given, above it;
//   * no overlap for every conflicting pair (lifetime overlaps and explicit
//     conflicts): a reified disjunction per pair, or Gecode's nooverlap of
//     rectangles (offset x lifetime) plus disjunctions for explicit pairs;
//   * redundant: for each maximal set of buffers alive at one step, a unary
//     resource (edge finding) over [0, peak).
// Warm start: the incumbent (memplan/compose.h; the registered `cp` starts
// from best's plan, else greedy_by_size's, else naive's, with half of the
// budget); the search only looks for strictly smaller plans, so cp never
// returns anything worse. When the incumbent meets the lower bound it is
// returned at once, proven optimal.
// Search: branch and bound on the peak, proven optimal when the search
// space is exhausted.
//   * The brancher takes the largest buffer (ties: lowest offset, then id)
//     and places it at its lowest feasible offset or postpones it.
//   * A postponed buffer is chosen again only once propagation raises its
//     lowest offset; a node where every open buffer is postponed fails.
//     Sound: any plan can be pushed down until each buffer rests on 0 or on
//     a conflicting buffer, without raising the peak.
//   * Symmetry: buffers of equal size, alignment and conflicts are
//     interchangeable; postponing one postpones its twins at that offset.
// Cost and limits:
//   * one pool only (several pools: Unimplemented);
//   * CpOptions::max_conflicting_pairs (default 100000) bounds the model:
//     above it, the warm start plan is returned unproven, no model built;
//   * the budget (PlanOptions): the work limit as search nodes (a node costs
//     8 units per buffer plus one per conflicting pair); a time limit, when
//     set, bounds model building and search. Out of budget, the best plan
//     found is returned, not proven optimal;
//   * with threads = 1 and no time limit the search is deterministic; a run
//     cut short by a time limit stops wherever the clock says. threads > 1
//     uses Gecode's parallel branch and bound, which is not deterministic.

#ifndef MEMPLAN_PLANNERS_CP_H_
#define MEMPLAN_PLANNERS_CP_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan {

struct CpOptions {
  // Worker threads; 0 = PlanOptions::threads.
  int threads = 0;
  // Non-overlap as Gecode's nooverlap of (offset x lifetime) rectangles
  // instead of one reified disjunction per conflicting pair. Both prune the
  // same; the default stays with the disjunctions, which explicit conflicts
  // need anyway (measurements: bench/NOTES.md).
  bool use_nooverlap = false;
  // One unary-resource constraint (edge finding) per maximal set of buffers
  // alive together. What makes proofs above the lower bound possible, at a
  // much higher cost per node (bench/NOTES.md).
  bool redundant_cliques = true;
  // The postpone rule and symmetry breaking of the brancher (off: plain
  // "lowest offset or above it" branching; for measurements).
  bool dominance = true;
  // Branch on the open buffer with the lowest feasible offset (ties: the
  // largest) instead of the largest (ties: the lowest offset).
  bool lowest_offset_first = false;
  // Bound on the model, checked before anything is built: the conflicting
  // pairs (lifetime overlaps between buffers with bytes, counted by a sweep
  // in O(n log n), plus the explicit conflicts).
  //   * Memory grows with the pairs: each is an entry of the conflict graph
  //     and a reified disjunction in every Gecode space the search keeps
  //     (measurements: bench/NOTES.md).
  //   * Above the bound no model is built: the warm start plan is returned,
  //     not proven optimal (proven when it meets the lower bound); without
  //     one, the warm start's error or Unimplemented.
  // 0: no bound.
  int64_t max_conflicting_pairs = 100000;
  // Bound on the redundant cliques: the sum of their sizes. Cliques past it
  // are left out (the model stays exact, it only propagates less).
  int64_t max_clique_members = 200000;
};

// Statistics of the last search (for tests and measurements).
struct CpStats {
  int64_t nodes = 0;
  int64_t failures = 0;
  int64_t solutions = 0;  // improving solutions found by the search
  bool used_warm_start = false;
  Bytes warm_start_peak = 0;
  int64_t conflicting_pairs = 0;   // the estimate checked against the bound
  bool model_too_large = false;    // above max_conflicting_pairs: no model
  bool model_out_of_time = false;  // the time limit ran out while building
};

// The cp search with explicit options, without a warm start of its own
// (the registered `cp` is this search from best's plan; its registry options
// are these, `memplan planners cp`, plus warm_start=false for the search
// alone). A plan's counters (Plan::counters) are the search's "nodes",
// "failures" and "solutions". `stats`, when set, receives the statistics of
// each search (the planner must then not be shared).
std::unique_ptr<SearchPlanner> MakeCpPlanner(const CpOptions& options,
                                             CpStats* stats = nullptr);

// Adds "cp" to the registry (memplan/planner.h), after the core's planners,
// with its options (`memplan planners cp`). A program linking memplan::cp
// calls it once, before it looks planners up by name; linking alone
// registers nothing. Calling it again is harmless: every call returns the
// first call's status (OK, or AlreadyExists when the program had registered
// a planner of its own named "cp" before).
absl::Status RegisterCpPlanner();

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_CP_H_
