// The cut refinement of the bound over op orders (memplan/reorder.h,
// LowerBoundOverOrders): per op, the fewest bytes any order can hold while
// it runs, found as a minimum cut.

#ifndef MEMPLAN_ORDER_CUT_BOUND_H_
#define MEMPLAN_ORDER_CUT_BOUND_H_

#include <cstdint>
#include <vector>

#include "memplan/problem.h"
#include "order/op_dag.h"

namespace memplan::internal {

// The largest ops a graph may have for the refinement: it keeps a bitset
// of the ops per op (8 MB at this size).
inline constexpr int kCutBoundOps = 8192;
// The work LowerBoundOverOrders() gives it at most: about 0.01-0.04 s. On
// every bundled graph (bench/data order, training_steps, training, models,
// up to 6093 ops) the bound is the one found with no limit, which each
// has found by 1.05 x 10^7 (order/mobilenet_v2_step; order/randwire_seed2
// by 8.5 x 10^6, the others by 2.8 x 10^6).
inline constexpr int64_t kCutBoundWork = 15'000'000;
// Then each pair of the ops of the largest footprints, this many of them.
inline constexpr int kCutBoundPairOps = 16;

// The bytes alive while op u runs in an order depend only on the set D of
// ops before it, a set closed under the DAG's predecessors that holds
// every ancestor of u and no descendant. CutBound() finds, for each op u,
// the smallest such footprint over every such D: a group counts when an op
// of D (or u) starts it and not every op that ends it is in D. "Started
// minus ended" undercounts that (by the group's size, when every end is in
// D but no start is) and is a sum of terms "some op of a set in D" (a
// cost) and "every op of a set in D" (a gain) over sets closed under
// predecessors: a minimum-weight closure, which a minimum cut finds.
//
// Of each in-place merge set only its largest group counts (its bytes are
// alive whenever that group is, merged or not). `ops_first` lists the ops
// to try, most promising first; an op whose footprint cannot exceed
// `best` (the largest known) is skipped. Returns the largest footprint
// found above `best` and its op in `best` and `op`. Then each pair u, w of
// the kCutBoundPairOps ops of the largest footprints that do not depend on
// each other: an order that runs u first holds at least the larger of the
// footprint at w with u run and that at u with w not run; every order
// holds the smaller of that and the same with u and w swapped. Stops once
// `work` would pass `max_work`, which it counts (about the edges the cuts
// look at), keeping what it found.
void CutBound(const Dag& dag, const std::vector<ViewGroup>& groups,
              const std::vector<int>& ops_first, int64_t max_work,
              int64_t& work, Bytes& best, int& op);

}  // namespace memplan::internal

#endif  // MEMPLAN_ORDER_CUT_BOUND_H_
