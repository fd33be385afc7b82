// TimeBuckets: making the buckets and taking buffers out.

#include "placement/time_buckets.h"

#include <span>

namespace memplan::internal {

TimeBuckets::TimeBuckets(const PlacementIndex& index)
    : index_(index), levels_(index.num_bucket_levels()) {
  for (int l = 0; l < static_cast<int>(levels_.size()); ++l) {
    const std::span<const int64_t> begins = index.bucket_begins(l);
    levels_[l].entries.resize(begins.back());
    levels_[l].buckets.resize(begins.size() - 1);
    for (size_t q = 0; q + 1 < begins.size(); ++q)
      levels_[l].buckets[q].begin = begins[q];
  }
}

void TimeBuckets::Remove(BufferId buffer) {
  const PlacementIndex::Filing f = index_.filing(buffer);
  Level& level = levels_[f.level];
  for (int64_t q = f.first; q <= f.last; ++q) {
    Bucket& bucket = level.buckets[q];
    Entry* entries = level.entries.data() + bucket.begin;
    for (int64_t i = 0; i < bucket.size; ++i) {
      if (entries[i].buffer == buffer) {
        entries[i] = entries[--bucket.size];
        break;
      }
    }
  }
  --level.filed;
}

}  // namespace memplan::internal
