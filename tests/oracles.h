// Brute-force oracles for the smallest peak of a small single-pool problem,
// shared by the tests of the exact planners. Each is exponential and
// written from the rules alone (conflicts, alignment, fixed placements), so
// that a planner's canonical forms and prunings are checked against
// something that has none of them. Every buffer is placed in pool 0.

#ifndef MEMPLAN_TESTS_ORACLES_H_
#define MEMPLAN_TESTS_ORACLES_H_

#include <vector>

#include "memplan/types.h"

namespace memplan::testing {

// Whether `a` and `b` may not share a byte: their lifetimes meet or an
// explicit conflict lists them.
bool Conflicting(const Problem& problem, BufferId a, BufferId b);

// Tries every height from max-live upwards and, at each, every offset of
// every buffer (multiples of its alignment; fixed buffers at theirs). No
// canonical form at all: for a handful of buffers and bytes.
Bytes OptimumByEveryOffset(const Problem& problem);

// Every order of the free buffers, each at the lowest aligned offset that
// clears the fixed buffers and the buffers before it. Some optimal plan is
// such an order: pushing a buffer down never makes room for a conflict.
// For up to about 8 free buffers.
Bytes OptimumByEveryOrder(const Problem& problem);

// Every plan in which each free buffer rests on 0 or on a conflicting
// buffer (its end rounded up to the alignment), placed in order of
// (offset, id): some optimal plan is one, since every plan can be pushed
// down into one. For up to about 8 free buffers.
Bytes OptimumByRestingPlacements(const Problem& problem);

// The least spill of a small problem of several pools (SpillsLess in
// memplan/problem.h): every assignment of the buffers to their allowed
// pools (fixed buffers to theirs), each pool's share solved by
// OptimumByRestingPlacements against its capacity. `bytes` (per pool, as
// PoolBytes) of the lexicographically least assignment that fits, `peak`
// the least sum of the pools' peaks among those; `fits` false when none
// fits. For up to about 7 buffers.
struct PoolsOptimum {
  bool fits = false;
  std::vector<Bytes> bytes;
  Bytes peak = 0;
};
PoolsOptimum OptimumAcrossPools(const Problem& problem);

}  // namespace memplan::testing

#endif  // MEMPLAN_TESTS_ORACLES_H_
