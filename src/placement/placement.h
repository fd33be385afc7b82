// The greedy placement engine shared by the offset-placing planners (not
// public API): a whole pass, and the map of its layers.
//
//   offset ^
//          |   [  c  ]              obstacles of x: the placed buffers in the
//          |        [    b    ]     same pool alive during x's lifetime
//          | [ a ]                  (here a, b, c). Gaps are the byte ranges
//          +-----|=====x=====|--->  between them; x takes one of those gaps
//                               time   or goes above the highest.
//
// A greedy planner places buffers one at a time: a buffer goes to the first
// of its allowed pools (preference order) where a free byte range fits it,
// given the buffers already placed there that it conflicts with. A pass:
//   1. SortedBuffers: the order (by size, area, lifetime, ...; ties by id).
//   2. PlacementIndex: what placement needs to know about the problem, once.
//   3. PlaceAll: the fixed buffers, then every buffer of the order with
//      PlacementState::PlaceGreedily.
// Limits: greedy, one buffer at a time: not optimal, and an order that
// fits may exist where the pass runs out of room.
//
// The layers, each in its own file, top down:
//   placement_state.h   who is placed where; places a buffer greedily
//   placement_index.h   per problem: time slices, ranks, buckets, conflicts
//   find_offset.h       the gap search among listed obstacles
//   time_buckets.h      placed buffers by time, for listing obstacles
//   gap_index.h         placed buffers over a segment tree of time, for
//                       finding gaps without listing (dense problems)
//   run_cursor.h        a position in a sorted list of runs, for the sweeps
//   run_set.h           a union of byte ranges as disjoint runs
//   gaps_by_length.h    the gaps between runs, by length
//   counter.h           marked positions with prefix counts
//   pool_allocator.h    a standard allocator over a node pool
//   node_pool.h         memory for many small trees' nodes

#ifndef MEMPLAN_PLACEMENT_PLACEMENT_H_
#define MEMPLAN_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "effort/budget.h"
#include "memplan/placement.h"
#include "memplan/planner.h"
#include "memplan/types.h"
#include "placement/find_offset.h"
#include "placement/placement_index.h"
#include "placement/placement_state.h"

namespace memplan::internal {

using ::memplan::Fit;
using ::memplan::PlacementOrder;

// Every non-fixed buffer, sorted for `order`.
std::vector<BufferId> SortedBuffers(const Problem& problem,
                                    PlacementOrder order);

// The number of pairs of non-empty buffers whose lifetimes overlap, counted
// (not listed) by a sweep in O(n log n): a placement run examines about
// twice as many obstacles, so compositions can budget runs up front.
int64_t CountOverlappingPairs(const Problem& problem);

// No bound on a placement run's cost (PlacementState::cost()).
inline constexpr int64_t kNoCostLimit = std::numeric_limits<int64_t>::max();

// Places into `state` (nothing placed yet) the fixed buffers, then every
// buffer of `order` (all non-fixed buffers, each once) with
// PlaceGreedily(fit). With a `budget`, the run ticks its cost there and is
// abandoned (DeadlineExceeded, saying how far it got) when still going at
// the budget's deadline; and (Aborted, saying how far it got) once its
// cost (PlacementState::cost()) reaches `cost_limit` with buffers still to
// place. A run that finishes places as without a budget.
absl::Status PlaceAll(PlacementState& state, std::span<const BufferId> order,
                      Fit fit, Budget* budget = nullptr,
                      int64_t cost_limit = kNoCostLimit);

// A planner that is one greedy placement pass (planners/greedy_by_size.h):
// its plan, and the work it counts, depend on the problem, its order of
// the buffers and its fit alone, wherever its limits do not stop it. A
// composition may skip a pass that would place the order of one that
// just ran (RepeatedPasses in compose.cc).
class GreedyPass {
 public:
  virtual ~GreedyPass() = default;
  virtual PlacementOrder pass_order() const = 0;
  virtual Fit pass_fit() const = 0;
  // Whether the pass, run on `problem` with `options`, places every
  // buffer when it counts `work` units in all: no deadline, and that work
  // under its cost limit.
  virtual bool Finishes(const Problem& problem, const PlanOptions& options,
                        int64_t work) const = 0;
};

// PlaceAll into a new state, as a whole plan. The plan's planner name is
// left empty.
absl::StatusOr<Plan> PlaceInOrder(const PlacementIndex& index,
                                  std::span<const BufferId> order, Fit fit,
                                  Budget* budget = nullptr,
                                  int64_t cost_limit = kNoCostLimit);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_PLACEMENT_H_
