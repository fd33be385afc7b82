// PlacementIndex: built once per problem (see the header for the steps).

#include "placement/placement_index.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "base/sort.h"

namespace memplan::internal {

namespace {

// GapSearch::kAuto takes the gap index from this many overlapping pairs per
// buffer on (S_1, a 28526-buffer trace, has 1515; MiniMalloc's set 10-70;
// random short intervals about 20, where the index is slower).
constexpr int64_t kIndexedFromPairsPerBuffer = 128;

// The finest buckets are about as wide as the median lifetime (in slices):
// 2^k slices where 2^(k-1) <= median < 2^k, so that most buffers touch
// one or two buckets there and a search does not wade through many short
// buffers in a bucket much longer than itself.
int FinestBucketShift(std::span<const PlacementIndex::LifetimeKeys> keys,
                      int64_t nonempty) {
  std::array<int64_t, 33> by_width{};  // buffers by bit_width(length)
  for (const PlacementIndex::LifetimeKeys& k : keys) {
    // An empty buffer's keys are all 0; a lifetime covers a slice at least.
    if (k.last_slice == 0) continue;
    ++by_width[std::bit_width(
        static_cast<uint32_t>(k.last_slice - k.first_slice))];
  }
  int64_t below = 0;
  for (int width = 0; width < static_cast<int>(by_width.size()); ++width) {
    below += by_width[width];
    if (2 * below >= nonempty) return width;
  }
  return 0;
}

}  // namespace

PlacementIndex::PlacementIndex(const Problem& problem, GapSearch search)
    : problem_(&problem) {
  IndexLifetimes(problem);
  indexed_search_ = search == GapSearch::kAuto ? ManyOverlaps()
                                               : search == GapSearch::kIndexed;
  SizeBuckets();
  IndexExplicitConflicts(problem);
}

void PlacementIndex::IndexLifetimes(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  // Zero-size buffers hold no byte: they are never anyone's obstacle.
  // (step, id) pairs sort without looking buffers up (cache misses at
  // 10^6 buffers). Both lists are made in one read of the buffers, in order
  // of id, and sorted stably by step: ties stay by id.
  std::vector<std::pair<Step, BufferId>> start_keys;
  std::vector<std::pair<Step, BufferId>> end_keys;
  std::vector<std::pair<Step, BufferId>> scratch;
  auto step_of = [](const std::pair<Step, BufferId>& k) {
    return static_cast<uint64_t>(k.first);  // steps are not negative
  };
  start_keys.reserve(n);
  end_keys.reserve(n);
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size == 0) continue;
    start_keys.emplace_back(buffer.lifetime.start, b);
    end_keys.emplace_back(buffer.lifetime.end, b);
  }
  RadixSortBy(start_keys, scratch, step_of);
  const int m = static_cast<int>(start_keys.size());
  std::vector<BufferId> by_start(m);
  sorted_starts_.reserve(m);
  start_rank_.assign(n, -1);
  end_rank_.assign(n, -1);
  for (int i = 0; i < m; ++i) {
    by_start[i] = start_keys[i].second;
    start_rank_[start_keys[i].second] = i;
    sorted_starts_.push_back(start_keys[i].first);
  }
  start_keys.clear();
  start_keys.shrink_to_fit();
  RadixSortBy(end_keys, scratch, step_of);
  scratch.clear();
  scratch.shrink_to_fit();
  sorted_ends_.reserve(m);
  for (int i = 0; i < m; ++i) {
    end_rank_[end_keys[i].second] = i;
    sorted_ends_.push_back(end_keys[i].first);
  }
  steps_.reserve(2 * m);
  std::merge(sorted_starts_.begin(), sorted_starts_.end(), sorted_ends_.begin(),
             sorted_ends_.end(), std::back_inserter(steps_));
  steps_.erase(std::unique(steps_.begin(), steps_.end()), steps_.end());
  keys_.resize(n);
  ComputeKeys(by_start, end_keys);
}

void PlacementIndex::ComputeKeys(
    std::span<const BufferId> by_start,
    std::span<const std::pair<Step, BufferId>> end_keys) {
  // Each key is monotone in the start or the end order: merges, no
  // searches.
  const int m = static_cast<int>(by_start.size());
  for (int i = 0, slice = 0, ends = 0; i < m; ++i) {
    const Step start = sorted_starts_[i];
    while (steps_[slice] < start) ++slice;
    while (ends < m && sorted_ends_[ends] <= start) ++ends;
    keys_[by_start[i]].first_slice = slice;
    keys_[by_start[i]].ends_by_start = ends;
  }
  for (int i = 0, slice = 0, starts = 0; i < m; ++i) {
    const Step end = end_keys[i].first;
    while (steps_[slice] < end) ++slice;
    while (starts < m && sorted_starts_[starts] < end) ++starts;
    keys_[end_keys[i].second].last_slice = slice;
    keys_[end_keys[i].second].starts_before_end = starts;
  }
}

bool PlacementIndex::ManyOverlaps() const {
  // Overlapping pairs, from the two sorted lists (ends first at a tie:
  // lifetimes are half-open). Where a buffer meets fewer than about 256
  // others, listing them is cheaper than the index's upkeep.
  const int m = num_nonempty();
  int64_t pairs = 0;
  for (int i = 0, j = 0; i < m; ++i) {
    while (j < m && sorted_ends_[j] <= sorted_starts_[i]) ++j;
    pairs += i - j;
  }
  return pairs >= kIndexedFromPairsPerBuffer * int64_t{m};
}

void PlacementIndex::SizeBuckets() {
  // Levels up to one of at most kMaxBuckets buckets, where every buffer
  // fits. Each bucket's room is the number of buffers filed there.
  const int64_t slices = std::max<int64_t>(1, std::ssize(steps_) - 1);
  bucket_shift0_ = FinestBucketShift(keys_, num_nonempty());
  int levels = 1;
  while (((slices - 1) >> bucket_shift(levels - 1)) >= kMaxBuckets) ++levels;
  bucket_begins_.resize(levels);
  for (int l = 0; l < levels; ++l)
    bucket_begins_[l].assign(((slices - 1) >> bucket_shift(l)) + 2, 0);
  // By id, the keys in order (an empty buffer's are all 0).
  const int n = static_cast<int>(keys_.size());
  for (BufferId b = 0; b < n; ++b) {
    if (keys_[b].last_slice == 0) continue;
    const Filing f = filing(b);
    for (int64_t q = f.first; q <= f.last; ++q)
      ++bucket_begins_[f.level][q + 1];
  }
  for (std::vector<int64_t>& begins : bucket_begins_)
    std::partial_sum(begins.begin(), begins.end(), begins.begin());
}

void PlacementIndex::IndexExplicitConflicts(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  explicit_begin_.assign(n + 1, 0);
  for (const BufferConflict& c : problem.conflicts) {
    ++explicit_begin_[c.a + 1];
    ++explicit_begin_[c.b + 1];
  }
  for (int i = 0; i < n; ++i) explicit_begin_[i + 1] += explicit_begin_[i];
  explicit_.resize(explicit_begin_[n]);
  std::vector<int64_t> fill(explicit_begin_.begin(), explicit_begin_.end() - 1);
  for (const BufferConflict& c : problem.conflicts) {
    explicit_[fill[c.a]++] = c.b;
    explicit_[fill[c.b]++] = c.a;
  }
  // Sort and deduplicate each list, compacting in place.
  int64_t write = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t lo = explicit_begin_[i];
    const int64_t hi = explicit_begin_[i + 1];
    std::sort(explicit_.begin() + lo, explicit_.begin() + hi);
    explicit_begin_[i] = write;
    for (int64_t k = lo; k < hi; ++k) {
      if (k > lo && explicit_[k] == explicit_[k - 1]) continue;
      explicit_[write++] = explicit_[k];
    }
  }
  explicit_begin_[n] = write;
  explicit_.resize(write);
}

int64_t PlacementIndex::CountOverlapping(Lifetime lifetime) const {
  const auto starts_before_end =
      std::lower_bound(sorted_starts_.begin(), sorted_starts_.end(),
                       lifetime.end) -
      sorted_starts_.begin();
  const auto ends_by_start =
      std::upper_bound(sorted_ends_.begin(), sorted_ends_.end(),
                       lifetime.start) -
      sorted_ends_.begin();
  return starts_before_end - ends_by_start;
}

}  // namespace memplan::internal
