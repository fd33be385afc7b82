// TimeBuckets: the placed buffers of every pool, filed by time, for the
// listing search (not public API).
//
//   slice          0   1   2   3   4   5   6   7
//   bucket       |   0   |   1   |   2   |   3   |  level 0: 2 slices each
//   a            [=======)                       slices [0, 2): bucket 0
//   b                [===============)           slices [1, 5): buckets 0-2
//   x                    [===)                   slices [2, 3): bucket 1
//   Listing x's obstacles reads bucket 1 of level 0 (and the buckets of
//   coarser levels over slice 2): it meets b, never a.
//
// Each level cuts the time slices into buckets of 2^bucket_shift(level)
// slices; the PlacementIndex files every non-empty buffer at the finest
// level where it touches at most kMaxBuckets buckets, and sizes every
// bucket for all the buffers that may be filed there. An entry carries the
// buffer's slices and placement inline, so a listing reads runs of entries
// in order and nothing else.
//
// How it works:
//   1. Add writes an entry into each bucket of the buffer's filing; Remove
//      finds it in each and fills its place with the bucket's last entry.
//   2. ForEachOverlapping(x) reads, at each level that holds any buffer,
//      the buckets over x's slices, and keeps the entries of the pool whose
//      slices meet x's. A buffer filed in several of those buckets is met
//      in the first of them only.
// Cost of a listing: O(levels + k + the near misses of the buckets read),
// k the buffers listed. Limits: the near misses are not bounded: a bucket
// of the finest level may hold many short buffers that end before x
// starts; Remove scans its buckets.

#ifndef MEMPLAN_PLACEMENT_TIME_BUCKETS_H_
#define MEMPLAN_PLACEMENT_TIME_BUCKETS_H_

#include <cstdint>
#include <vector>

#include "memplan/types.h"
#include "placement/placement_index.h"

namespace memplan::internal {

class TimeBuckets {
 public:
  struct Entry {
    int32_t first_slice = 0;
    int32_t last_slice = 0;
    BufferId buffer = 0;
    PoolId pool = 0;
    Offset offset = 0;
    Offset end = 0;
  };

  // Nothing filed. `index` must outlive the buckets.
  explicit TimeBuckets(const PlacementIndex& index);

  // `buffer` (non-empty, not filed) holds [offset, end) of `pool`. Inline:
  // it runs once per placement of the listing search.
  void Add(BufferId buffer, PoolId pool, Offset offset, Offset end) {
    const PlacementIndex::Filing f = index_.filing(buffer);
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    Level& level = levels_[f.level];
    for (int64_t q = f.first; q <= f.last; ++q) {
      Bucket& bucket = level.buckets[q];
      level.entries[bucket.begin + bucket.size++] = {
          .first_slice = keys.first_slice,
          .last_slice = keys.last_slice,
          .buffer = buffer,
          .pool = pool,
          .offset = offset,
          .end = end};
    }
    ++level.filed;
  }

  // Takes `buffer` (filed) out.
  void Remove(BufferId buffer);

  // Calls visit(entry) once for every filed buffer of `pool` but `buffer`
  // (non-empty) alive during some slice of the lifetime of `buffer`.
  template <typename Visit>
  void ForEachOverlapping(BufferId buffer, PoolId pool, Visit&& visit) const {
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    const int64_t first = keys.first_slice;
    const int64_t last = keys.last_slice;
    for (int l = 0; l < static_cast<int>(levels_.size()); ++l) {
      const Level& level = levels_[l];
      if (level.filed == 0) continue;
      const int shift = index_.bucket_shift(l);
      const int64_t q0 = first >> shift;
      const int64_t q1 = (last - 1) >> shift;
      for (int64_t q = q0; q <= q1; ++q) {
        const Bucket& bucket = level.buckets[q];
        const Entry* e = level.entries.data() + bucket.begin;
        for (const Entry* end = e + bucket.size; e < end; ++e) {
          if (e->pool != pool || e->first_slice >= last ||
              e->last_slice <= first || e->buffer == buffer) {
            continue;
          }
          // A buffer filed in several of the buckets is met in the first.
          if (q != q0 && (int64_t{e->first_slice} >> shift) != q) continue;
          visit(*e);
        }
      }
    }
  }

 private:
  struct Bucket {
    int64_t begin = 0;  // its entries are [begin, begin + size)
    int64_t size = 0;
  };
  struct Level {
    std::vector<Entry> entries;
    std::vector<Bucket> buckets;
    int64_t filed = 0;  // buffers
  };
  const PlacementIndex& index_;
  std::vector<Level> levels_;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_TIME_BUCKETS_H_
