// cpsat: the seed notebook's model, solved with OR-tools' CP-SAT.
//
//   offset ^          +------+
//          |  [  b2  ]|  b3  |      every buffer: a box, its lifetime in
//          |  [ b0 ][  b1    ]      time by its offset in bytes; no two
//          +--------------------->  boxes of one pool overlap; minimise
//                         time      the sum of the pools' tops
//
// The model, in units of u = gcd of every size, fixed offset and
// effective alignment (a plan can always be pushed down until every offset
// is a multiple of u, without raising any pool's top):
//   * per buffer with bytes, a fixed interval in time [start, end);
//   * per buffer and pool it may use (its allowed pools; a fixed buffer its
//     own), an offset interval [a * s, a * s + size) of a slot variable s
//     (a: the effective alignment in units; fixed buffers: s fixed), below
//     the pool's capacity when it has one; optional, with a presence
//     literal, when the buffer may use several pools, exactly one present;
//   * per pool, a 2-D no-overlap of the (time, offset) boxes present there,
//     and its top, above every end present there;
//   * per explicit conflict whose lifetimes do not overlap, a no-overlap
//     of the two offset intervals in each pool both may use;
//   * minimise the sum of the tops (Plan::peak of several pools).
// Zero-size buffers stay out of the model, at offset 0 of their first
// pool (or at their fixed placement).
// Warm start: the registered `cpsat` starts from best's plan (else
// greedy_by_size's, else naive's) with half of the work limit; the plan is
// CP-SAT's solution hint, returned when CP-SAT finds nothing better. A
// start at the lower bound is returned at once, proven optimal.
// Under a capacity, from a warm start (which fits): CP-SAT searches in
// slices (an eighth of its deterministic budget, at most 0.1 deterministic
// seconds each), each from the last solution, and stops at the first slice
// that finds no lower top, at an optimum, or when the budget is spent: a
// start no short search improves costs a slice, not the whole budget.
// Counter "slices".
// Cost and determinism:
//   * CP-SAT's deterministic time limit (max_deterministic_time) is the
//     work limit over 8 * kWorkPerSecond, so that the work limit keeps
//     meaning about kWorkPerSecond per core-second;
//   * one worker and random_seed from PlanOptions::seed by default: the same
//     problem and options give the same plan on any machine; threads > 1
//     runs CP-SAT's portfolio, which is not deterministic;
//   * several pools share that one deterministic budget across their
//     stages (each stage gets what the ones before left);
//   * no model is built when it is too large for the budget
//     (CpsatOptions::max_pairs_per_second): deterministic time hardly
//     counts the no-overlap propagation, which grows with the buffers alive
//     together. The start is returned, with the counter "model_too_large";
//   * a wall-clock limit (max_time_in_seconds) only when the caller sets a
//     time limit or deadline.
// Results:
//   * proven_optimal: CP-SAT's OPTIMAL status, or its objective bound
//     reaching the plan's peak; counters "objective_bound" (bytes),
//     "conflicts" and "branches";
//   * INFEASIBLE under capacities is ResourceExhausted;
//   * CP-SAT's plan goes through the verifier; one it rejects is dropped for
//     the warm start (or an InternalError without one).
// OR-tools is reached through the C entry point of the library the ortools
// Python package carries (no C++ headers there): ortools_library.h, and the
// messages' wire format, wire.h.
// Measurements behind the constants: bench/NOTES.md.

#ifndef MEMPLAN_PLANNERS_CPSAT_H_
#define MEMPLAN_PLANNERS_CPSAT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan {

struct CpsatOptions {
  // CP-SAT's worker threads (num_workers); 0 = PlanOptions::threads. More
  // than 1 is not deterministic.
  int threads = 0;
  // Bound on the model: above this many buffers with bytes no model is
  // built and the warm start plan is returned, not proven optimal (proven
  // when it meets the lower bound). 0: no bound.
  int64_t max_buffers = 20000;
  // Bound on the model by the budget: above this many pairs of boxes the
  // 2-D no-overlaps keep apart (per pool, the buffers that fit there alive
  // together) per deterministic second of the budget, no model is built and
  // the warm start plan is returned, unproven (proven when it meets the
  // lower bound, or spills nothing), with the counters "model_too_large"
  // (1) and "pairs". 0: no bound.
  int64_t max_pairs_per_second = 262144;
  // The OR-tools library; empty: the one found when memplan was configured
  // (CpsatDefaultLibrary()).
  std::string library;
};

// What the last solve did (for tests and measurements).
struct CpsatStats {
  bool used_warm_start = false;
  bool model_built = false;
  int status = 0;  // CpSolverStatus: 0 unknown, 2 feasible, 3 infeasible,
                   // 4 optimal
  int64_t variables = 0;
  int64_t constraints = 0;
  double deterministic_time = 0;
};

// The cpsat search with explicit options, without a warm start of its own
// (the registered `cpsat` is this search from best's plan; its registry
// options are these but the library, plus warm_start=false for the search
// alone). `stats`, when set, receives each solve's statistics (the planner
// must then not be shared).
std::unique_ptr<SearchPlanner> MakeCpsatPlanner(const CpsatOptions& options,
                                                CpsatStats* stats = nullptr);

// The OR-tools library found when memplan was configured
// (MEMPLAN_ORTOOLS_DIR: <ortools package>/.libs/libortools.so.9); in a
// build configured without one (a wheel's), the library of the ortools
// package installed beside this program or extension module, looked for
// once; empty when there is none.
std::string CpsatDefaultLibrary();

// Adds "cpsat" to the registry (memplan/planner.h), after the core's
// planners, with its options (`memplan planners cpsat`). A program linking
// memplan::cpsat calls it once, before it looks planners up by name; linking
// alone registers nothing. Calling it again is harmless: every call returns
// the first call's status. Nothing is registered (OK) when there is no
// OR-tools library to load (CpsatDefaultLibrary() empty).
absl::Status RegisterCpsatPlanner();

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_CPSAT_H_
