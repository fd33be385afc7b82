// PlacementState: a placement under construction, who is placed where
// (not public API).
//
//   pool 0, capacity 64                pool 1, no capacity
//   32..64 |  bbbbbbbbbbbb
//   16..32 |
//    0..16 |     aaaaaaa               (nothing placed alive with x)
//          +---s=======e--> time              +---s=======e--> time
//   x (24 bytes, alive over [s, e), pools 0 then 1): in pool 0 the gap
//   [16, 32) is too short and the top, 64, leaves no room under the
//   capacity; x goes to pool 1, at offset 0.
//
// Fixed placements go in first (PlaceFixed) and are never moved; other
// buffers are placed one at a time (PlaceGreedily, Place) and can be taken
// out again (Unplace: the hill climb re-places a suffix of its order).
//
// How PlaceGreedily(x, fit) works:
//   1. A buffer of size 0 goes to offset 0 of its first pool.
//   2. For each allowed pool in preference order, the offset `fit` finds
//      among x's obstacles (the placed buffers of the pool alive with x,
//      and its explicit-conflict partners there), aligned and under the
//      capacity; the first pool with one takes x.
//   3. The offset comes from one of two searches, with the same result:
//      * listed: the obstacles are read from the time buckets
//        (time_buckets.h), sorted by offset and scanned (find_offset.h),
//        O(k log k) for k obstacles;
//      * indexed: a gap index per pool (gap_index.h) answers without
//        listing them, for problems where buffers overlap many others.
//        It only grows: after the first Unplace, the listed search.
//   4. No pool with room: ResourceExhausted naming x, with each pool's
//      highest byte in use during x's lifetime.
// Every search counts the same work whichever way it is answered (work()),
// so budgets built on it do not depend on the way. Limits: greedy; the
// state holds references to its PlacementIndex, which must outlive it.

#ifndef MEMPLAN_PLACEMENT_PLACEMENT_STATE_H_
#define MEMPLAN_PLACEMENT_PLACEMENT_STATE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "memplan/placement.h"
#include "memplan/planner.h"
#include "memplan/types.h"
#include "placement/find_offset.h"
#include "placement/placement_index.h"

namespace memplan::internal {

using ::memplan::Fit;

class GapIndex;
class TimeBuckets;

class PlacementState {
 public:
  // Nothing placed yet. `index` must outlive the state.
  explicit PlacementState(const PlacementIndex& index);
  PlacementState(PlacementState&&);
  PlacementState& operator=(PlacementState&&);
  ~PlacementState();

  // Places every buffer with a fixed placement. InvalidArgument naming both
  // buffers when two fixed buffers that conflict share a byte.
  absl::Status PlaceFixed();

  bool placed(BufferId buffer) const { return slots_[buffer].pool >= 0; }
  PoolId pool(BufferId buffer) const { return slots_[buffer].pool; }
  Offset offset(BufferId buffer) const { return slots_[buffer].offset; }

  // Appends to `out` (cleared first) the placed buffers of non-zero size in
  // `pool` that conflict with `buffer` (overlapping lifetime or an explicit
  // conflict), each once, in no particular (but deterministic) order.
  // Nothing for a buffer of size 0, which holds no byte.
  void CollectObstacles(BufferId buffer, PoolId pool,
                        std::vector<Obstacle>& out);

  void Place(BufferId buffer, PoolId pool, Offset offset);
  // Starts loading what placing `buffer` reads by its id: a pass calls it a
  // few buffers ahead, as the placement order jumps through memory. Inline,
  // as a call would cost about what it saves.
  void Prefetch(BufferId buffer) const {
    const Buffer& b = index_->problem().buffers[buffer];
    __builtin_prefetch(&b.size);
    __builtin_prefetch(&b.pools);
    __builtin_prefetch(&slots_[buffer]);
    __builtin_prefetch(&index_->keys(buffer));
  }
  // Takes `buffer` out. The gap index only grows: after the first Unplace
  // the searches list obstacles (same offsets, at O(k log k) per buffer).
  void Unplace(BufferId buffer);

  // Places `buffer` in the first allowed pool where `fit` finds an offset
  // under the capacity. A buffer of size 0 goes to offset 0 of its first
  // pool. ResourceExhausted (NoFitError, with each pool's highest byte in use
  // during the buffer's lifetime) when no pool has room.
  absl::Status PlaceGreedily(BufferId buffer, Fit fit);

  // The non-empty buffers alive with each buffer CollectObstacles lists for
  // (placed or not), plus k log k per gap search sorting k obstacles: a
  // deterministic measure of the work done so far, for budgets that must
  // not depend on the clock. Counted the same whichever search answers.
  int64_t work() const { return work_; }
  // What the searches cost: work() on the listed way; on the indexed way
  // the gap index's operations (GapIndex::ops()), fewer than the
  // obstacles where it pays. Counted until the first Unplace. A pass
  // bounds its cost with it: on dense problems work() grows as the square
  // of the buffers while the indexed searches do not.
  int64_t cost() const { return cost_; }

  // Per pool: the highest byte in use (offset + size) over placed buffers.
  // O(n).
  std::vector<Bytes> PoolUsed() const;

  // The plan of the current placement, with statistics. Every buffer must be
  // placed.
  Plan ToPlan() const;

 private:
  // Where a buffer is, with its end.
  struct Slot {
    Offset offset = 0;
    Offset end = 0;    // offset + size
    PoolId pool = -1;  // -1: not placed
  };
  // The offset `fit` chooses for `buffer` in pool `p` (as FindOffset on
  // the collected obstacles would), counting the same work.
  std::optional<Offset> SearchPool(BufferId buffer, PoolId p, Fit fit);
  // SearchPool by the gap index.
  std::optional<Offset> SearchIndexed(BufferId buffer, PoolId p, Fit fit);
  GapIndex& gaps(PoolId pool);
  // The placed buffers by time, filed on first use.
  TimeBuckets& buckets();

  const PlacementIndex* index_;
  std::vector<Slot> slots_;  // by buffer id
  std::vector<Obstacle> scratch_;
  std::vector<Obstacle> sort_scratch_;  // SortByOffset's working space
  std::vector<std::pair<Offset, Offset>> extra_;
  mutable int64_t work_ = 0;
  int64_t cost_ = 0;
  bool use_gaps_;  // the gap index answers; false after an Unplace
  std::vector<std::unique_ptr<GapIndex>> gaps_;  // per pool, made on use
  std::unique_ptr<TimeBuckets> buckets_;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_PLACEMENT_STATE_H_
