// PlacementIndex: what placement needs to know about a Problem, computed
// once and shared by any number of placement runs (not public API).
//
//   steps    0       2   3           6       8   time: distinct starts, ends
//   slices   |   0   | 1 |     2     |   3   |
//   a        [===========)                       slices [0, 2)
//   b                [===============)           slices [1, 3)
//   c                    [===================)   slices [2, 4)
//   buckets  |     0     |         1         |   level 0: 2 slices each
//            |               0               |   level 1: 8 slices each
//
// For each non-empty buffer it keeps:
//   * the time slices its lifetime covers (LifetimeKeys::first_slice,
//     last_slice): the gap index's segment tree has a leaf per slice;
//   * its rank by start and by end, and how many buffers start before its
//     end or end by its start: the gap index counts the placed buffers
//     alive with it from these, and every search counts the same work;
//   * where the listing search files it (filing()): in the time buckets of
//     the finest level where its slices touch at most kMaxBuckets buckets;
//   * its explicit-conflict partners, sorted and unique.
// And for the problem: whether the gap index answers the searches
// (GapSearch::kAuto: from 128 overlapping pairs per buffer on).
//
// How it is built, O(n log n + m) for n buffers and m explicit conflicts:
//   1. (start, id) and (end, id) pairs of the non-empty buffers are radix
//      sorted: ranks, the sorted starts and ends, and their merge without
//      duplicates, the steps.
//   2. One merge-like pass over each sorted list gives every buffer's keys
//      (slices and counts are monotone in start and end order).
//   3. The finest buckets are about as wide as the median lifetime; each
//      level's are four times wider, up to a level of at most kMaxBuckets
//      buckets. A counting pass sizes every bucket.
//   4. The explicit conflicts become one sorted, unique list per buffer.
// Limits: holds a reference to the problem, which must outlive it; buffers
// of size 0 get no keys and are filed nowhere (they hold no byte).

#ifndef MEMPLAN_PLACEMENT_PLACEMENT_INDEX_H_
#define MEMPLAN_PLACEMENT_PLACEMENT_INDEX_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan::internal {

// How PlacementState::PlaceGreedily finds its gaps; both ways give the same
// offsets.
enum class GapSearch {
  kAuto,     // the gap index when buffers overlap many others on average
  kIndexed,  // the gap index (gap_index.h)
  kListed,   // collect, sort and scan the obstacles of each buffer
};

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
  // Inline: the listing search files a buffer at every placement.
  Filing filing(BufferId buffer) const {
    const LifetimeKeys& keys = keys_[buffer];
    const int top = num_bucket_levels() - 1;
    for (int level = 0;; ++level) {
      const int shift = bucket_shift(level);
      const int64_t first = int64_t{keys.first_slice} >> shift;
      const int64_t last = (int64_t{keys.last_slice} - 1) >> shift;
      if (last - first < kMaxBuckets || level == top)
        return {.level = level, .first = first, .last = last};
    }
  }
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

  // Steps 1 and 2 of the header: ranks, sorted lists, steps and keys.
  void IndexLifetimes(const Problem& problem);
  void ComputeKeys(std::span<const BufferId> by_start,
                   std::span<const std::pair<Step, BufferId>> end_keys);
  // Whether the non-empty buffers overlap many others on average.
  bool ManyOverlaps() const;
  void SizeBuckets();
  void IndexExplicitConflicts(const Problem& problem);

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

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_PLACEMENT_INDEX_H_
