// Placement machinery shared by the offset-placing planners (not public API).
//
// A greedy planner places buffers one at a time: a buffer goes to the first of
// its allowed pools (preference order) where a free byte range fits it, given
// the buffers already placed there that it conflicts with. The pieces:
//
//   * PlacementIndex: built once per Problem. The time slices (between
//     consecutive distinct starts and ends) every lifetime covers, and where
//     the listing search files each buffer: buckets of slices at a few
//     levels of width, a buffer at the finest level where it touches at
//     most a few buckets. Cheap to share between many placement runs.
//   * PlacementState: who is placed where. Fixed placements go in first and
//     are never moved; buffers can be placed and taken out again (the hill
//     climb re-places a suffix of its order). The placed buffers are filed
//     in their time buckets with their byte ranges, so listing a buffer's
//     obstacles reads the few buckets its lifetime touches per level, all
//     placed and in order in memory, never every buffer alive at the time
//     (O(levels + k + the near misses of those buckets)).
//   * FindOffset: the gap search among a buffer's obstacles (best fit or
//     first fit), aligned and under the pool's capacity.
//   * The gap index (inside PlacementState, for problems where buffers
//     overlap many others): while buffers are only added, PlaceGreedily
//     finds the same offset as FindOffset without listing the obstacles. A
//     segment tree over time keeps unions of placed byte ranges as merged
//     runs, so the bytes taken during a buffer's lifetime are the union of
//     O(log n) run sets, instead of every buffer alive at the same time
//     (k log k per buffer to sort: quadratic on training steps, where half
//     the buffers stay alive for most of the program). First fit (and any
//     pool with a capacity) sweeps the sets together by offset up to the
//     first gap that fits. Best fit avoids visiting every gap: when one
//     set taken throughout the lifetime (the pivot) has few gaps long
//     enough, only those and the space above it are examined against the
//     other sets; otherwise the largest set is kept out of the sweep, and
//     its gaps that the others leave untouched come from an index of its
//     gaps by length, shortest first. Not a worst-case bound: a sweep still
//     visits the runs of the smaller sets.
//   * PlaceInOrder: fixed buffers, then an order, with one Fit: a whole plan.
//
//   offset ^
//          |   [  c  ]              obstacles of x: the placed buffers in the
//          |        [    b    ]     same pool alive during x's lifetime
//          | [ a ]                  (here a, b, c). Gaps are the byte ranges
//          +-----|=====x=====|--->  between them; x takes one of those gaps
//                               time   or goes above the highest.

#ifndef MEMPLAN_PLACEMENT_PLACEMENT_H_
#define MEMPLAN_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/budget.h"
#include "memplan/placement.h"
#include "memplan/planner.h"
#include "memplan/types.h"

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

// A byte range [begin, end) of a pool that a placed buffer holds while the
// buffer being placed is alive.
struct Obstacle {
  Offset begin = 0;
  Offset end = 0;
  BufferId buffer = 0;
};

// Sorts obstacles by begin, as FindOffset wants (ties in no particular but
// deterministic order).
void SortByOffset(std::vector<Obstacle>& obstacles);

// The offset `fit` chooses for `size` bytes among `sorted` obstacles (sorted
// by SortByOffset): a multiple of `alignment` such that [offset, offset+size)
// overlaps no obstacle and, when `capacity` > 0, ends within it. nullopt when
// no such offset exists under the capacity. O(#obstacles).
std::optional<Offset> FindOffset(std::span<const Obstacle> sorted, Bytes size,
                                 Bytes alignment, Bytes capacity, Fit fit);

// How PlaceGreedily finds its gaps; both ways give the same offsets.
enum class GapSearch {
  kAuto,     // the gap index when buffers overlap many others on average
  kIndexed,  // the gap index (see the top of the file)
  kListed,   // collect, sort and scan the obstacles of each buffer
};

// What placement needs to know about a Problem, built once in O(n log n + m)
// (m explicit conflicts) and shared by any number of PlacementStates. Holds a
// reference to the problem, which must outlive it.
class PlacementIndex {
 public:
  explicit PlacementIndex(const Problem& problem,
                          GapSearch search = GapSearch::kAuto);

  // Whether PlacementStates of this index start with the gap index.
  bool indexed_search() const { return indexed_search_; }

  const Problem& problem() const { return *problem_; }

  // Explicit-conflict partners of `buffer` (sorted, unique).
  std::span<const BufferId> explicit_conflicts(BufferId buffer) const {
    // Most problems have none: no look-up (a cache miss per buffer).
    if (explicit_.empty()) return {};
    return {explicit_.data() + explicit_begin_[buffer],
            static_cast<size_t>(explicit_begin_[buffer + 1] -
                                explicit_begin_[buffer])};
  }

  // The distinct starts and ends of the lifetimes of non-empty buffers,
  // sorted: consecutive ones bound the time slices.
  std::span<const Step> steps() const { return steps_; }

  // Rank of a non-empty buffer among the non-empty buffers sorted by start
  // (by end), ties by id: positions in the placed-buffer counters.
  int32_t start_rank(BufferId buffer) const { return start_rank_[buffer]; }
  int32_t end_rank(BufferId buffer) const { return end_rank_[buffer]; }
  int32_t num_nonempty() const {
    return static_cast<int32_t>(sorted_starts_.size());
  }

  // Where the lifetime of a non-empty buffer falls in the sorted steps and
  // lists (looked up by the searches and insertions, never searched again).
  struct LifetimeKeys {
    int32_t first_slice = 0;  // the slices [first, last) it covers
    int32_t last_slice = 0;
    // Non-empty buffers that start before its end / end by its start.
    int32_t starts_before_end = 0;
    int32_t ends_by_start = 0;
  };
  const LifetimeKeys& keys(BufferId buffer) const { return keys_[buffer]; }
  // The number of non-empty buffers whose lifetime overlaps that of
  // `buffer` (non-empty), its own included: a lifetime ending by its start
  // also starts before its end, so the second count is part of the first.
  int64_t CountOverlapping(BufferId buffer) const {
    return keys_[buffer].starts_before_end - keys_[buffer].ends_by_start;
  }
  // The same for any lifetime, by binary searches.
  int64_t CountOverlapping(Lifetime lifetime) const;

  // The time buckets of the listing search. Level l cuts the slices into
  // buckets of 2^bucket_shift(l) slices; a non-empty buffer is filed at the
  // finest level where its slices touch at most kMaxBuckets buckets, in
  // each of them. Bucket q of level l holds at most
  // bucket_begins(l)[q + 1] - bucket_begins(l)[q] buffers.
  static constexpr int kMaxBuckets = 4;
  struct Filing {
    int level = 0;
    int64_t first = 0;  // the buckets [first, last] of that level
    int64_t last = 0;
  };
  Filing filing(BufferId buffer) const;
  int num_bucket_levels() const {
    return static_cast<int>(bucket_begins_.size());
  }
  int bucket_shift(int level) const {
    return bucket_shift0_ + kBucketLevelBits * level;
  }
  std::span<const int64_t> bucket_begins(int level) const {
    return bucket_begins_[level];
  }

 private:
  // Each level's buckets are 2^kBucketLevelBits times as wide as the last.
  static constexpr int kBucketLevelBits = 2;

  const Problem* problem_;
  std::vector<int64_t> explicit_begin_;
  std::vector<BufferId> explicit_;
  std::vector<Step> steps_;
  std::vector<Step> sorted_starts_;
  std::vector<Step> sorted_ends_;
  std::vector<int32_t> start_rank_;  // -1 for empty buffers
  std::vector<int32_t> end_rank_;
  std::vector<LifetimeKeys> keys_;  // by buffer id (non-empty buffers)
  int bucket_shift0_ = 0;
  std::vector<std::vector<int64_t>> bucket_begins_;  // by level
  bool indexed_search_ = false;
};

class GapIndex;
class TimeBuckets;

// The placement under construction: for every buffer, its pool and offset
// once placed.
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
  // few buffers ahead, as the placement order jumps through memory.
  void Prefetch(BufferId buffer) const;
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
  const PlacementIndex* index_;
  std::vector<Slot> slots_;  // by buffer id
  // The offset `fit` chooses for `buffer` in pool `p` (as FindOffset on
  // the collected obstacles would), counting the same work.
  std::optional<Offset> SearchPool(BufferId buffer, PoolId p, Fit fit);
  GapIndex& gaps(PoolId pool);
  // The placed buffers by time, filed on first use.
  TimeBuckets& buckets();

  std::vector<Obstacle> scratch_;
  std::vector<std::pair<Offset, Offset>> extra_;
  mutable int64_t work_ = 0;
  bool use_gaps_;  // the gap index answers; false after an Unplace
  std::vector<std::unique_ptr<GapIndex>> gaps_;  // per pool, made on use
  std::unique_ptr<TimeBuckets> buckets_;
};

// Places into `state` (nothing placed yet) the fixed buffers, then every
// buffer of `order` (all non-fixed buffers, each once) with
// PlaceGreedily(fit). With a `budget`, the run ticks its work there and is
// abandoned (DeadlineExceeded, saying how far it got) when still going at
// the budget's deadline; the counted work never cuts it, so a run that
// finishes places as without.
absl::Status PlaceAll(PlacementState& state, std::span<const BufferId> order,
                      Fit fit, Budget* budget = nullptr);

// PlaceAll into a new state, as a whole plan. The plan's planner name is
// left empty.
absl::StatusOr<Plan> PlaceInOrder(const PlacementIndex& index,
                                  std::span<const BufferId> order, Fit fit,
                                  Budget* budget = nullptr);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_PLACEMENT_H_
