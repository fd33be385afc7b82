// Placement machinery shared by the offset-placing planners.

#include "placement/placement.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/planner_util.h"
#include "memplan/problem.h"

namespace memplan::internal {

namespace {

// floor(log4(size)), 0 for sizes 0 to 3 (PlacementOrder::kSizeClass).
int SizeClass(Bytes size) {
  const int bits =
      static_cast<int>(std::bit_width(static_cast<uint64_t>(size)));
  return std::max(0, bits - 1) / 2;
}

// The non-fixed buffers sorted by key(buffer) descending, then by start
// (when `by_start`), then by id. Sorted as (key, start, id) records rather
// than ids with a comparator that looks the keys up: at 10^6 buffers the
// look-ups' cache misses cost more than the sort itself.
template <typename Key, typename KeyOf>
std::vector<BufferId> SortedByKey(const Problem& problem, bool by_start,
                                  KeyOf&& key_of) {
  struct Record {
    Key key;
    Step start;
    BufferId id;
  };
  std::vector<Record> records;
  records.reserve(problem.buffers.size());
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value()) continue;
    records.push_back(
        {key_of(buffer), by_start ? buffer.lifetime.start : Step{0}, b});
  }
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) {
              if (a.key != b.key) return a.key > b.key;
              if (a.start != b.start) return a.start < b.start;
              return a.id < b.id;
            });
  std::vector<BufferId> ids(records.size());
  for (size_t i = 0; i < records.size(); ++i) ids[i] = records[i].id;
  return ids;
}

}  // namespace

std::vector<BufferId> SortedBuffers(const Problem& problem,
                                    PlacementOrder order) {
  auto length = [](const Buffer& b) {
    return b.lifetime.end - b.lifetime.start;
  };
  // Sizes and lengths fit in 64 bits (records a third the size of 128-bit
  // ones sort faster); size x lifetime can exceed int64.
  switch (order) {
    case PlacementOrder::kSize:
    case PlacementOrder::kSizeThenId:
      return SortedByKey<int64_t>(problem, order != PlacementOrder::kSizeThenId,
                                  [](const Buffer& b) { return b.size; });
    case PlacementOrder::kArea:
      return SortedByKey<__int128>(problem, true, [&](const Buffer& b) {
        return static_cast<__int128>(b.size) * length(b);
      });
    case PlacementOrder::kLifetime:
      return SortedByKey<int64_t>(problem, true, length);
    case PlacementOrder::kSizeClass:
      // floor(log4(size)) above the length (below 2^63).
      return SortedByKey<__int128>(problem, true, [&](const Buffer& b) {
        return (static_cast<__int128>(SizeClass(b.size)) << 64) + length(b);
      });
  }
  return {};
}

void SortByOffset(std::vector<Obstacle>& obstacles) {
  // By begin alone: FindOffset's result does not depend on the order of
  // obstacles with equal begins (after the first of them, the highest byte
  // reached is above their begin), and the one-key sort is the hot spot of
  // dense problems. Small sets: std::sort. Large ones (the live sets of
  // training-like problems): a stable LSD radix sort on the bytes of begin
  // that differ between obstacles, a few linear passes instead of k log k
  // comparisons. Both are deterministic.
  constexpr size_t kRadixFrom = 256;
  if (obstacles.size() < kRadixFrom) {
    std::sort(
        obstacles.begin(), obstacles.end(),
        [](const Obstacle& a, const Obstacle& b) { return a.begin < b.begin; });
    return;
  }
  thread_local std::vector<Obstacle> scratch;
  // Signed order as unsigned: the sign bit flipped.
  RadixSortBy(obstacles, scratch, [](const Obstacle& o) {
    return static_cast<uint64_t>(o.begin) ^ (uint64_t{1} << 63);
  });
}

std::optional<Offset> FindOffset(std::span<const Obstacle> sorted, Bytes size,
                                 Bytes alignment, Bytes capacity, Fit fit) {
  auto fits_capacity = [&](Offset offset) {
    return capacity <= 0 || offset + size <= capacity;
  };
  // `reached` is the highest byte held by the obstacles seen so far; the
  // range from it to the next obstacle's begin is free. Starting at 0 keeps
  // the gap below the lowest obstacle.
  Offset reached = 0;
  std::optional<Offset> best;
  Bytes best_gap = 0;
  for (const Obstacle& o : sorted) {
    const Offset candidate = RoundUp(reached, alignment);
    if (o.begin >= candidate + size && fits_capacity(candidate)) {
      if (fit == Fit::kFirst) return candidate;
      const Bytes gap = o.begin - candidate;
      // Strictly smaller: among equal gaps the lowest wins.
      if (!best.has_value() || gap < best_gap) {
        best = candidate;
        best_gap = gap;
      }
    }
    reached = std::max(reached, o.end);
  }
  if (best.has_value()) return best;
  const Offset top = RoundUp(reached, alignment);
  if (fits_capacity(top)) return top;
  return std::nullopt;
}

int64_t CountOverlappingPairs(const Problem& problem) {
  // Ends sort before starts at the same step: lifetimes are half-open.
  std::vector<std::pair<Step, int>> events;
  events.reserve(2 * problem.buffers.size());
  for (const Buffer& b : problem.buffers) {
    if (b.size == 0) continue;
    events.emplace_back(b.lifetime.start, 1);
    events.emplace_back(b.lifetime.end, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  int64_t pairs = 0;
  for (const auto& [step, delta] : events) {
    if (delta > 0) pairs += live;
    live += delta;
  }
  return pairs;
}

// ---------------------------------------------------------------------------
// PlacementIndex

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
  // What the gap index and the work counts need: time slices and ranks.
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
  sorted_ends_.reserve(m);
  for (int i = 0; i < m; ++i) {
    end_rank_[end_keys[i].second] = i;
    sorted_ends_.push_back(end_keys[i].first);
  }
  steps_.reserve(2 * m);
  std::merge(sorted_starts_.begin(), sorted_starts_.end(),
             sorted_ends_.begin(), sorted_ends_.end(),
             std::back_inserter(steps_));
  steps_.erase(std::unique(steps_.begin(), steps_.end()), steps_.end());
  if (search == GapSearch::kAuto) {
    // Overlapping pairs, from the two sorted lists (ends first at a tie:
    // lifetimes are half-open). Where a buffer meets fewer than about 256
    // others, listing them is cheaper than the index's upkeep.
    int64_t pairs = 0;
    for (int i = 0, j = 0; i < m; ++i) {
      while (j < m && sorted_ends_[j] <= sorted_starts_[i]) ++j;
      pairs += i - j;
    }
    indexed_search_ = pairs >= kIndexedFromPairsPerBuffer * int64_t{m};
  } else {
    indexed_search_ = search == GapSearch::kIndexed;
  }
  // Each key is monotone in the start or the end order: merges, no
  // searches.
  keys_.resize(n);
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
  end_keys.clear();
  end_keys.shrink_to_fit();
  scratch.clear();
  scratch.shrink_to_fit();

  // The time buckets: levels up to one of at most kMaxBuckets buckets,
  // where every buffer fits. Each bucket's room is the number of buffers
  // filed there.
  const int64_t slices = std::max<int64_t>(1, std::ssize(steps_) - 1);
  bucket_shift0_ = FinestBucketShift(keys_, m);
  int levels = 1;
  while (((slices - 1) >> bucket_shift(levels - 1)) >= kMaxBuckets) ++levels;
  bucket_begins_.resize(levels);
  for (int l = 0; l < levels; ++l)
    bucket_begins_[l].assign(((slices - 1) >> bucket_shift(l)) + 2, 0);
  // By id, the keys in order (an empty buffer's are all 0).
  for (BufferId b = 0; b < n; ++b) {
    if (keys_[b].last_slice == 0) continue;
    const Filing f = filing(b);
    for (int64_t q = f.first; q <= f.last; ++q)
      ++bucket_begins_[f.level][q + 1];
  }
  for (std::vector<int64_t>& begins : bucket_begins_)
    std::partial_sum(begins.begin(), begins.end(), begins.begin());

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

PlacementIndex::Filing PlacementIndex::filing(BufferId buffer) const {
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

// ---------------------------------------------------------------------------
// GapIndex

namespace {

// Counts of marked positions (each marked once) with prefix sums, O(log n)
// each: a bit per position, and a Fenwick tree of the counts per word of 64
// bits. The tree is 64 times smaller than one over the positions, so its
// walks stay in cache; a count reads one word of bits besides.
class Counter {
 public:
  explicit Counter(int32_t size)
      : bits_(size / 64 + 1, 0), words_(bits_.size() + 1, 0) {}
  void Mark(int32_t position) {
    bits_[position / 64] |= uint64_t{1} << (position % 64);
    for (int32_t i = position / 64 + 1; i < static_cast<int32_t>(words_.size());
         i += i & -i) {
      ++words_[i];
    }
  }
  // Marked positions in [0, end).
  int64_t Before(int32_t end) const {
    int64_t total =
        std::popcount(bits_[end / 64] & ((uint64_t{1} << (end % 64)) - 1));
    for (int32_t i = end / 64; i > 0; i -= i & -i) total += words_[i];
    return total;
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<int32_t> words_;  // Fenwick tree over the words of bits_
};

// The tree nodes of one GapIndex's run sets: carved from large blocks and
// kept on a free list per node size when released, all returned at once
// with the index. The sets' many small trees (a few nodes of one or two
// sizes each) would otherwise go through malloc one node at a time.
class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  void* Allocate(size_t bytes) {
    bytes = RoundUp(bytes);
    for (FreeList& list : free_) {
      if (list.bytes == bytes && list.head != nullptr) {
        void* node = list.head;
        list.head = *static_cast<void**>(node);
        return node;
      }
    }
    if (bytes > left_) {
      const size_t block = std::max(bytes, kBlockBytes);
      blocks_.push_back(std::make_unique<std::byte[]>(block));
      next_ = blocks_.back().get();
      left_ = block;
    }
    void* node = next_;
    next_ += bytes;
    left_ -= bytes;
    return node;
  }
  void Deallocate(void* node, size_t bytes) {
    bytes = RoundUp(bytes);
    FreeList* list = nullptr;
    for (FreeList& l : free_) {
      if (l.bytes == bytes) list = &l;
    }
    if (list == nullptr) list = &free_.emplace_back(FreeList{bytes, nullptr});
    *static_cast<void**>(node) = list->head;
    list->head = node;
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kAlign = alignof(std::max_align_t);
    return (std::max(bytes, sizeof(void*)) + kAlign - 1) / kAlign * kAlign;
  }
  struct FreeList {
    size_t bytes;
    void* head;
  };
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte* next_ = nullptr;
  size_t left_ = 0;
  std::vector<FreeList> free_;  // a few node sizes
};

template <typename T>
class PoolAllocator {
 public:
  using value_type = T;
  explicit PoolAllocator(NodePool* pool) : pool_(pool) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other) : pool_(other.pool()) {}
  T* allocate(size_t n) {
    return static_cast<T*>(pool_->Allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { pool_->Deallocate(p, n * sizeof(T)); }
  NodePool* pool() const { return pool_; }
  friend bool operator==(const PoolAllocator& a, const PoolAllocator& b) {
    return a.pool_ == b.pool_;
  }

 private:
  NodePool* pool_;
};

// Disjoint, non-adjacent byte ranges [begin, end) keyed by begin.
using Runs = absl::btree_map<Offset, Offset, std::less<Offset>,
                             PoolAllocator<std::pair<const Offset, Offset>>>;

// Free gaps between runs: [0, first begin) when not empty and the gaps
// between consecutive runs, not the space above the last. A gap is keyed by
// its owner, the begin of the run above it, which stays put while the run
// below grows into it. Gaps are grouped by length in classes of four per
// power of two (a class's lengths are within 25 % of each other), in no
// order within a class: changing a gap's length within its class is one
// hash lookup, where an ordered set took an erase and an insertion. The
// searches take every gap of a class at once and prune by class.
class GapsByLength {
 public:
  struct Gap {
    Offset owner;  // the begin of the run above
    Bytes length;
    Offset begin() const { return owner - length; }
  };
  static constexpr int kClasses = 256;

  static int ClassOf(Bytes length) {
    const int bits = std::bit_width(static_cast<uint64_t>(length));
    if (bits < 3) return bits << 2;
    return (bits << 2) |
           static_cast<int>((static_cast<uint64_t>(length) >> (bits - 3)) & 3);
  }
  // The shortest length of class `c`.
  static Bytes ClassMin(int c) {
    const int bits = c >> 2;
    if (bits < 3) return Bytes{1} << (bits - 1);
    return Bytes{4 | (c & 3)} << (bits - 3);
  }

  void Add(Offset owner, Bytes length) {
    where_[owner] = Append({owner, length});
  }
  void Remove(Offset owner) {
    auto it = where_.find(owner);
    const uint64_t at = it->second;
    where_.erase(it);
    RemoveAt(static_cast<int>(at >> 32), static_cast<uint32_t>(at));
  }
  void Resize(Offset owner, Bytes length) {
    auto it = where_.find(owner);
    const int c = static_cast<int>(it->second >> 32);
    const auto i = static_cast<uint32_t>(it->second);
    const int to = ClassOf(length);
    if (to == c) {
      buckets_[c][i].length = length;
      return;
    }
    it->second = Append({owner, length});
    RemoveAt(c, i);
  }
  void Clear() {
    for (int c = NextClass(0); c < kClasses; c = NextClass(c + 1))
      buckets_[c].clear();
    where_.clear();
    for (uint64_t& word : nonempty_) word = 0;
  }

  // The first class at or after `c` that holds a gap, kClasses when none.
  int NextClass(int c) const {
    for (; c < kClasses; c = (c | 63) + 1) {
      const uint64_t word = nonempty_[c >> 6] >> (c & 63);
      if (word != 0) return c + std::countr_zero(word);
    }
    return kClasses;
  }
  std::span<const Gap> Class(int c) const { return buckets_[c]; }

  // How many gaps are `size` bytes or longer, counted up to `limit` + 1.
  int32_t CountAtLeast(Bytes size, int32_t limit) const {
    const int first = ClassOf(size);
    int64_t count = 0;
    for (const Gap& gap : buckets_[first]) count += gap.length >= size;
    for (int c = NextClass(first + 1); c < kClasses && count <= limit;
         c = NextClass(c + 1)) {
      count += static_cast<int64_t>(buckets_[c].size());
    }
    return static_cast<int32_t>(std::min<int64_t>(count, limit + 1));
  }

 private:
  static uint64_t Pack(int c, size_t i) {
    return (static_cast<uint64_t>(c) << 32) | static_cast<uint32_t>(i);
  }
  // Puts `gap` at the end of its class; returns where (for where_).
  uint64_t Append(const Gap& gap) {
    const int c = ClassOf(gap.length);
    buckets_[c].push_back(gap);
    nonempty_[c >> 6] |= uint64_t{1} << (c & 63);
    return Pack(c, buckets_[c].size() - 1);
  }
  void RemoveAt(int c, uint32_t i) {
    std::vector<Gap>& bucket = buckets_[c];
    if (i + 1 != bucket.size()) {
      bucket[i] = bucket.back();
      where_[bucket[i].owner] = Pack(c, i);
    }
    bucket.pop_back();
    if (bucket.empty()) nonempty_[c >> 6] &= ~(uint64_t{1} << (c & 63));
  }

  std::array<std::vector<Gap>, kClasses> buckets_;
  std::array<uint64_t, kClasses / 64> nonempty_ = {};
  absl::flat_hash_map<Offset, uint64_t> where_;  // owner -> (class, index)
};

// A run set, with its gaps by length once a best-fit search has asked for
// them (then kept up to date).
struct RunSet {
  explicit RunSet(NodePool* pool)
      : runs(PoolAllocator<std::pair<const Offset, Offset>>(pool)) {}

  Runs runs;
  std::unique_ptr<GapsByLength> gaps;

  const GapsByLength& Gaps() {
    if (gaps == nullptr) {
      gaps = std::make_unique<GapsByLength>();
      Offset below = 0;
      for (const auto& [begin, end] : runs) {
        if (begin > below) gaps->Add(begin, begin - below);
        below = end;
      }
    }
    return *gaps;
  }
  void Clear() {
    runs.clear();
    if (gaps != nullptr) gaps->Clear();
  }
};

// Adds [begin, end) to `set`, merging it with the runs it overlaps or
// touches (a zero-length gap can hold nothing, so touching runs are one).
// False when one run already held it.
bool AddRun(RunSet& set, Offset begin, Offset end) {
  Runs& runs = set.runs;
  GapsByLength* gaps = set.gaps.get();
  auto it = runs.upper_bound(begin);
  if (it != runs.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) {
      // The common cases change one run in place: the range is inside it,
      // or extends it without reaching the next run.
      if (prev->second >= end) return false;
      if (it == runs.end() || it->first > end) {
        if (gaps != nullptr && it != runs.end())
          gaps->Resize(it->first, it->first - end);
        prev->second = end;
        return true;
      }
      begin = prev->first;
      it = prev;
    }
  }
  // Each run owns the gap below it, from the end of the run before (or 0).
  const Offset below = it == runs.begin() ? 0 : std::prev(it)->second;
  Offset prev_end = below;
  while (it != runs.end() && it->first <= end) {
    if (gaps != nullptr && it->first > prev_end) gaps->Remove(it->first);
    prev_end = it->second;
    end = std::max(end, it->second);
    it = runs.erase(it);
  }
  if (gaps != nullptr) {
    if (it != runs.end()) gaps->Resize(it->first, it->first - end);
    if (begin > below) gaps->Add(begin, begin - below);
  }
  runs.emplace_hint(it, begin, end);
  return true;
}

// One sorted list of runs in the sweep of GapIndex::Find: a run set or the
// (sorted, merged) ranges of explicit-conflict partners.
class RunCursor {
 public:
  // Start() or Seek() before reading: a search around a pivot seeks
  // straight to its regions and never needs the lowest run.
  explicit RunCursor(RunSet* set) : set_(set), runs_(&set->runs) {}
  RunCursor(const std::pair<Offset, Offset>* begin,
            const std::pair<Offset, Offset>* end)
      : first_(begin), at_(begin), end_(end) {}

  void Start() {
    if (runs_) {
      it_ = runs_->begin();
    } else {
      at_ = first_;
    }
  }
  // The number of runs, and the end of the highest one (not done()).
  int64_t size() const { return runs_ ? runs_->size() : end_ - first_; }
  Offset last_end() const {
    return runs_ ? runs_->rbegin()->second : (end_ - 1)->second;
  }
  // The run set, or null for the explicit-conflict ranges.
  RunSet* set() const { return set_; }
  bool done() const { return runs_ ? it_ == runs_->end() : at_ == end_; }
  Offset begin() const { return runs_ ? it_->first : at_->first; }
  Offset end() const { return runs_ ? it_->second : at_->second; }
  void Next() {
    if (runs_) {
      ++it_;
    } else {
      ++at_;
    }
  }
  // Seek(reached) from a started cursor: a few steps before a lookup.
  void SeekForward(Offset reached) {
    for (int steps = 0; steps < 2; ++steps) {
      Next();
      if (done() || end() > reached) return;
    }
    Seek(reached);
  }
  // Moves to the first run that ends above `reached`.
  void Seek(Offset reached) {
    if (runs_) {
      it_ = runs_->upper_bound(reached);
      if (it_ != runs_->begin() && std::prev(it_)->second > reached) --it_;
    } else {
      at_ = std::upper_bound(
          at_, end_, reached,
          [](Offset r, const std::pair<Offset, Offset>& run) {
            return r < run.second;
          });
    }
  }

 private:
  RunSet* set_ = nullptr;
  const Runs* runs_ = nullptr;
  Runs::const_iterator it_;
  const std::pair<Offset, Offset>* first_ = nullptr;
  const std::pair<Offset, Offset>* at_ = nullptr;
  const std::pair<Offset, Offset>* end_ = nullptr;
};

}  // namespace

// One pool's placed buffers over a segment tree of time slices (a perfect
// binary tree; node 1 the root, node v's children 2v and 2v+1; a node's
// level is its height above the leaves). A buffer is stored at its
// canonical nodes: the largest nodes whose slices lie inside its lifetime.
//   * sub(v): the union of the byte ranges stored in v's subtree.
//   * whole(v), for the nodes of level kWholeLevel: the union of the ranges
//     stored at v and at its ancestors, the bytes taken throughout v's
//     slices. Kept lazily: a range stored at a higher node waits in
//     pending(node) until a search passes there and pushes it one level
//     down, into both children's pending() (whole() at kWholeLevel).
//   * cover(v), for lower nodes: the ranges stored at v.
// A buffer alive during a window W is stored in the subtree of one of W's
// canonical nodes w (so in sub(w)), or above one, at a node that straddles
// W's boundary. The straddling nodes are on the two paths from the root to
// the first and the last slice of W; on each path, whole() of the node of
// level kWholeLevel holds every range stored at it and above (some of them
// in sub() of a canonical node too when that node lies inside W, which does
// no harm: they are taken during W all the same). So the bytes taken during
// W are the union of O(log n) run sets: sub() of W's canonical nodes,
// whole() of two nodes and cover() of the low straddling nodes (the
// cursors of a search).
//
// The searches, each giving what FindOffset gives on the listed obstacles:
//   * First fit, or a pool with a capacity: one sweep of all cursors
//     together by offset, gap by gap, up to the first that fits.
//   * Best fit around a pivot: a set whose bytes are all taken during W and
//     that has few gaps long enough for the buffer (whole() of the node of
//     level kWholeLevel at W's middle, when inside W, or of the two at W's
//     ends). A gap of the union lies in a gap of the pivot or above its
//     top, so only those regions are searched, each cut by the cursors'
//     runs while a piece could still hold the buffer. Nested lifetimes
//     (training steps) all cover the middle: there the pivot holds them.
//   * Best fit by sweep: the largest set stays out of the sweep of the
//     others, which steps over its runs with lookups; its gaps that no other
//     run touches are whole gaps of the union, taken from its gaps by length
//     (kept for large sets that a search has asked for), the shortest
//     length classes first.
//
// Why whole(): the buffers alive at one time are stored at many nodes of a
// path, so their ranges, packed side by side, interleave between the
// nodes' sets and the sweep would step through each of them; in whole()
// they are merged into a few runs. Only at kWholeLevel, where a node spans
// 2^kWholeLevel slices: pushing pending ranges down every level would copy
// each long-lived buffer into most of the tree, and a whole() at every
// level above would take each range pushed once more per level.
class GapIndex {
 public:
  explicit GapIndex(const PlacementIndex& index)
      : index_(index),
        leaves_(static_cast<int32_t>(
            std::bit_ceil(std::max<size_t>(index.steps().size(), 2) - 1))),
        cover_(2 * leaves_, nullptr),
        whole_(2 * leaves_, nullptr),
        pending_(2 * leaves_, nullptr),
        sub_(2 * leaves_, nullptr),
        searches_(2 * leaves_, 0),
        starts_(index.num_nonempty()),
        ends_(index.num_nonempty()) {
    const std::vector<Buffer>& buffers = index.problem().buffers;
    for (BufferId b = 0; b < static_cast<BufferId>(buffers.size()); ++b) {
      if (buffers[b].size > 0)
        ForEachCanonical(b, [&](int32_t node) { ++searches_[node]; });
    }
  }

  // `buffer` (non-empty) now holds [begin, end).
  void Insert(BufferId buffer, Offset begin, Offset end) {
    starts_.Mark(index_.start_rank(buffer));
    ends_.Mark(index_.end_rank(buffer));
    const int32_t first = index_.keys(buffer).first_slice;
    const int32_t last = index_.keys(buffer).last_slice;
    // sub() is read by the searches of the buffers stored at the node (see
    // searches_), this one's no more: once none is left, the node's sub()
    // is not kept up.
    ForEachCanonical(buffer, [&](int32_t node) {
      --searches_[node];
      const int level = Level(node);
      if (level > kWholeLevel) {
        AddRun(Set(pending_, node), begin, end);
      } else if (level == kWholeLevel) {
        AddRun(Set(whole_, node), begin, end);
      } else if (level > 0) {
        // A leaf never straddles a window: its cover() would go unread.
        AddRun(Set(cover_, node), begin, end);
      }
      if (searches_[node] > 0) AddRun(Set(sub_, node), begin, end);
    });
    // The straddling nodes, up the paths from the first and the last slice:
    // an ancestor's sub() holds its descendants', so once one of them
    // already held the range (it was taken by buffers alive elsewhere in
    // its slices), none above on that path needs it.
    bool held_left = false, held_right = false;
    ForEachStraddling(first, last, [&](int32_t node, bool left, bool right) {
      if ((left && held_left) || (right && held_right)) return;
      if (searches_[node] == 0) return;
      if (!AddRun(Set(sub_, node), begin, end)) {
        held_left |= left;
        held_right |= right;
      }
    });
  }

  // `buffer` (non-empty) is placed, here or in another pool: it will not
  // search this index.
  void Release(BufferId buffer) {
    ForEachCanonical(buffer, [&](int32_t node) { --searches_[node]; });
  }

  // Placed buffers of the pool whose lifetime overlaps that of `buffer`
  // (non-empty).
  int64_t CountOverlapping(BufferId buffer) const {
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    return starts_.Before(keys.starts_before_end) -
           ends_.Before(keys.ends_by_start);
  }

  // What FindOffset returns on the obstacles of `buffer` (non-empty) plus
  // `extra` (sorted, merged byte ranges).
  std::optional<Offset> Find(BufferId buffer,
                             std::span<const std::pair<Offset, Offset>> extra,
                             Bytes size, Bytes alignment, Bytes capacity,
                             Fit fit) {
    const int32_t first = index_.keys(buffer).first_slice;
    const int32_t last = index_.keys(buffer).last_slice;
    // The whole() nodes at both ends first: pushing pending ranges down may
    // create run sets, which must exist before cursors point into sets_.
    int32_t lowest[2] = {WholeNode(first), WholeNode(last - 1)};
    for (int32_t node : lowest) {
      if (node > 0) PushDownTo(node);
    }
    const bool best_fit = fit == Fit::kBest && capacity <= 0;
    pivots_.clear();
    if (best_fit) {
      auto add_pivot = [&](int32_t node) {
        if (node <= 0) return;
        PushDownTo(node);
        if (whole_[node] != nullptr && !whole_[node]->runs.empty())
          pivots_.push_back(whole_[node]);
      };
      // The node of level kWholeLevel at the middle of the window, when it
      // lies inside: nested lifetimes all cover the middle.
      const int32_t middle = WholeNode((first + last) / 2);
      const int64_t lo = (int64_t{middle} << kWholeLevel) - leaves_;
      const int64_t hi = (int64_t{middle + 1} << kWholeLevel) - leaves_;
      if (middle > 0 && lo >= first && hi <= last) add_pivot(middle);
      add_pivot(lowest[0]);
      if (lowest[1] != lowest[0]) add_pivot(lowest[1]);
    }
    cursors_.clear();
    ForEachStraddling(first, last, [&](int32_t node, bool, bool) {
      if (Level(node) < kWholeLevel) AddCursor(cover_[node]);
    });
    ForEachCanonical(buffer, [&](int32_t node) { AddCursor(sub_[node]); });
    if (lowest[0] > 0) AddCursor(whole_[lowest[0]]);
    if (lowest[1] > 0 && lowest[1] != lowest[0]) AddCursor(whole_[lowest[1]]);
    if (!extra.empty())
      cursors_.emplace_back(extra.data(), extra.data() + extra.size());

    if (best_fit) {
      RunSet* pivot = nullptr;
      int32_t pivot_gaps = kPivotGapsUpTo + 1;
      for (RunSet* set : pivots_) {
        const int32_t count = set->Gaps().CountAtLeast(size, kPivotGapsUpTo);
        if (count > kPivotGapsUpTo) continue;
        if (pivot == nullptr || count < pivot_gaps ||
            (count == pivot_gaps &&
             set->runs.rbegin()->second > pivot->runs.rbegin()->second)) {
          pivot = set;
          pivot_gaps = count;
        }
      }
      if (pivot != nullptr) return FindBestAround(*pivot, size, alignment);
      int32_t largest = -1;
      size_t largest_runs = kGapsByLengthFrom - 1;
      for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
        const RunSet* set = cursors_[i].set();
        if (set != nullptr && set->runs.size() > largest_runs) {
          largest = i;
          largest_runs = set->runs.size();
        }
      }
      if (largest >= 0) return FindBest(largest, size, alignment);
    }

    // A sweep upwards from offset 0 through the runs of every cursor in
    // order of begin: `reached` is the top of the bytes taken so far; a run
    // that begins above it closes the free gap [reached, begin).
    using Head = std::pair<Offset, int32_t>;  // (begin, cursor)
    heap_.clear();
    for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
      cursors_[i].Start();
      heap_.push_back({cursors_[i].begin(), i});
    }
    const auto later = std::greater<Head>();
    std::make_heap(heap_.begin(), heap_.end(), later);
    Offset reached = 0;
    std::optional<Offset> best;
    Bytes best_gap = 0;
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      RunCursor& c = cursors_[heap_.back().second];
      heap_.pop_back();
      if (c.end() <= reached) {
        c.SeekForward(reached);  // skip every run below `reached`
      } else {
        if (c.begin() > reached) {
          const Offset candidate = RoundUp(reached, alignment);
          // Later gaps and the top start higher still.
          if (capacity > 0 && candidate + size > capacity) return best;
          if (c.begin() >= candidate + size) {
            if (fit == Fit::kFirst) return candidate;
            const Bytes gap = c.begin() - candidate;
            if (!best.has_value() || gap < best_gap) {
              best = candidate;
              best_gap = gap;
              if (gap == size) return best;  // no gap can be tighter
            }
          }
        }
        reached = c.end();
        c.Next();
      }
      if (!c.done()) {
        heap_.push_back({c.begin(), static_cast<int32_t>(&c - &cursors_[0])});
        std::push_heap(heap_.begin(), heap_.end(), later);
      }
    }
    if (best.has_value()) return best;
    const Offset top = RoundUp(reached, alignment);
    if (capacity <= 0 || top + size <= capacity) return top;
    return std::nullopt;
  }

 private:
  // Best fit without capacity, given `pivot`: a run set whose bytes are
  // taken during the whole window of the search, with few gaps of `size`
  // bytes or more. A free gap of the union lies in a gap of the pivot or
  // above its top, so only those regions are searched: each is cut by the
  // runs of every cursor in turn, keeping the pieces that can still hold
  // `size` bytes, and what survives all cursors is a gap of the union.
  std::optional<Offset> FindBestAround(RunSet& pivot, Bytes size,
                                       Bytes alignment) {
    auto fits = [&](Offset begin, Offset end) {
      return RoundUp(begin, alignment) + size <= end;
    };
    regions_.clear();
    const GapsByLength& gaps = pivot.Gaps();
    for (int c = gaps.NextClass(GapsByLength::ClassOf(size));
         c < GapsByLength::kClasses; c = gaps.NextClass(c + 1)) {
      for (const GapsByLength::Gap& gap : gaps.Class(c)) {
        if (gap.length >= size && fits(gap.begin(), gap.owner))
          regions_.push_back({gap.begin(), gap.owner});
      }
    }
    Offset top = pivot.runs.rbegin()->second;
    const Offset pivot_top = top;
    for (const RunCursor& c : cursors_) top = std::max(top, c.last_end());
    if (fits(pivot_top, top)) regions_.push_back({pivot_top, top});
    std::sort(regions_.begin(), regions_.end());
    // Largest sets first: they are the likeliest to cover a region.
    order_.resize(cursors_.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      const int64_t na = cursors_[a].size();
      const int64_t nb = cursors_[b].size();
      return na != nb ? na > nb : a < b;
    });

    std::optional<Offset> best;
    Bytes best_gap = 0;
    for (const auto& region : regions_) {
      pieces_.assign(1, region);
      for (int32_t i : order_) {
        RunCursor& c = cursors_[i];
        cut_.clear();
        auto keep = [&](Offset begin, Offset end) {
          if (fits(begin, end)) cut_.push_back({begin, end});
        };
        for (const auto& [begin, end] : pieces_) {
          c.Seek(begin);
          Offset from = begin;
          while (!c.done() && c.begin() < end) {
            if (c.begin() > from) keep(from, c.begin());
            from = std::max(from, c.end());
            if (from >= end) break;
            c.Next();
          }
          if (from < end) keep(from, end);
        }
        pieces_.swap(cut_);
        if (pieces_.empty()) break;
      }
      // Survivors are gaps of the union; among equal gaps the lowest wins,
      // as in FindOffset, and regions come in offset order.
      for (const auto& [begin, end] : pieces_) {
        const Offset candidate = RoundUp(begin, alignment);
        const Bytes gap = end - candidate;
        if (!best.has_value() || gap < best_gap) {
          best = candidate;
          best_gap = gap;
        }
      }
    }
    if (best.has_value()) return best;
    return RoundUp(top, alignment);
  }

  // Best fit without capacity, where cursor `large` holds many runs: the
  // other cursors are swept as in Find, stepping over the large set's runs
  // and gaps with lookups instead of visiting them. The union gaps met on
  // the way are the gaps of the large set that the other runs touch, cut
  // by them. Every other union gap is a gap of the large set that no other
  // run touches; those are taken from its gaps by length, the shortest
  // classes first, until no longer gap can be tighter than the best found.
  std::optional<Offset> FindBest(int32_t large, Bytes size, Bytes alignment) {
    RunSet& set = *cursors_[large].set();
    const Runs& runs = set.runs;
    constexpr Offset kNone = std::numeric_limits<Offset>::max();
    std::optional<Offset> best;
    Bytes best_gap = 0;
    // The free range [begin, end) of the union: the smallest gap wins, then
    // the lowest offset (FindOffset meets gaps in offset order and keeps
    // the first of equal ones).
    auto consider = [&](Offset begin, Offset end) {
      const Offset candidate = RoundUp(begin, alignment);
      if (candidate + size > end) return;
      const Bytes gap = end - candidate;
      if (!best.has_value() || gap < best_gap ||
          (gap == best_gap && candidate < *best)) {
        best = candidate;
        best_gap = gap;
      }
    };
    // Moves `reached` over a run of the large set that holds it or starts
    // there and returns where the large set's next run begins (kNone when
    // there is none): [reached, that) is free in the large set.
    // `above` is the first run that begins above `reached`; most moves are
    // to the next run or two, a lookup takes the longer ones.
    Offset reached = 0;
    auto above = runs.begin();
    auto settle = [&]() {
      for (int steps = 0; above != runs.end() && above->first <= reached;
           ++steps) {
        if (steps == kSteps) {
          above = runs.upper_bound(reached);
          reached = std::max(reached, std::prev(above)->second);
          break;
        }
        reached = std::max(reached, above->second);
        ++above;
      }
      return above == runs.end() ? kNone : above->first;
    };

    using Head = std::pair<Offset, int32_t>;  // (begin, cursor)
    heap_.clear();
    for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
      if (i == large) continue;
      cursors_[i].Start();
      heap_.push_back({cursors_[i].begin(), i});
    }
    const auto later = std::greater<Head>();
    std::make_heap(heap_.begin(), heap_.end(), later);
    // Offset ranges, ascending, that no run of the other cursors meets:
    // the gaps of the large set inside one are gaps of the union.
    windows_.clear();
    Offset next = settle();
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      RunCursor& c = cursors_[heap_.back().second];
      heap_.pop_back();
      if (c.end() <= reached) {
        c.SeekForward(reached);
      } else {
        const Offset begin = c.begin();
        if (begin > reached) {
          if (begin <= next) {
            consider(reached, begin);
          } else {
            // The gaps of the large set in between are untouched so far:
            // left to the search by length, but for the one `begin` is in.
            consider(reached, next);
            windows_.push_back({next, begin});
            // The last run of the large set that begins at or below `begin`.
            auto under = above;
            for (int steps = 0; std::next(under) != runs.end() &&
                                std::next(under)->first <= begin;
                 ++steps) {
              if (steps == kSteps) {
                under = std::prev(runs.upper_bound(begin));
                break;
              }
              ++under;
            }
            if (under->second < begin) consider(under->second, begin);
          }
        }
        reached = std::max(reached, c.end());
        c.Next();
        next = settle();
      }
      if (!c.done()) {
        heap_.push_back({c.begin(), static_cast<int32_t>(&c - &cursors_[0])});
        std::push_heap(heap_.begin(), heap_.end(), later);
      }
    }
    if (next != kNone) {
      consider(reached, next);
      windows_.push_back({next, kNone});
    }
    const Offset top = std::max(reached, runs.rbegin()->second);

    const GapsByLength& gaps = set.Gaps();
    // Rounding up a begin loses at most alignment - 1 bytes: a longer gap
    // can still tie with the best (and win by its lower offset) up to
    // best_gap + alignment - 1 bytes. Classes come by length, and the best
    // is the smallest (gap, offset) whatever the order within one.
    auto beyond = [&](Bytes length) {
      return best.has_value() && length - (alignment - 1) > best_gap;
    };
    for (int c = gaps.NextClass(GapsByLength::ClassOf(size));
         c < GapsByLength::kClasses && !windows_.empty();
         c = gaps.NextClass(c + 1)) {
      if (beyond(GapsByLength::ClassMin(c))) break;
      for (const GapsByLength::Gap& gap : gaps.Class(c)) {
        if (gap.length < size || beyond(gap.length)) continue;
        const Offset begin = gap.begin();
        const Offset end = gap.owner;
        auto w =
            std::upper_bound(windows_.begin(), windows_.end(), begin,
                             [](Offset o, const std::pair<Offset, Offset>& r) {
                               return o < r.first;
                             });
        if (w == windows_.begin() || std::prev(w)->second < end) continue;
        consider(begin, end);
      }
    }
    if (best.has_value()) return best;
    return RoundUp(top, alignment);
  }

  RunSet& Set(std::vector<RunSet*>& slot, int32_t node) {
    if (slot[node] == nullptr) slot[node] = &sets_.emplace_back(&pool_);
    return *slot[node];
  }
  // The node of level kWholeLevel above `slice`; 0 when the tree is lower.
  int32_t WholeNode(int32_t slice) const {
    return Level(1) >= kWholeLevel ? (slice + leaves_) >> kWholeLevel : 0;
  }
  int Level(int32_t node) const {
    return std::bit_width(static_cast<uint32_t>(leaves_)) -
           std::bit_width(static_cast<uint32_t>(node));
  }
  // Lower levels fill more whole() sets, higher ones leave longer cover()
  // sets to sweep (bench/NOTES.md).
  static constexpr int kWholeLevel = 8;
  // Best fit indexes the gaps of the largest run set by length from this
  // many runs on.
  static constexpr size_t kGapsByLengthFrom = 32;
  // Steps along a run set before a lookup instead.
  static constexpr int kSteps = 4;
  // Best fit searches around a pivot with at most this many gaps that are
  // long enough.
  static constexpr int32_t kPivotGapsUpTo = 16;
  // Pushes the pending ranges of `node`'s ancestors down, from the root, so
  // that whole(node) is complete.
  void PushDownTo(int32_t node) {
    for (int shift = std::bit_width(static_cast<uint32_t>(node)) - 1;
         shift > 0; --shift) {
      const int32_t a = node >> shift;
      if (Level(a) <= kWholeLevel) break;
      if (pending_[a] == nullptr || pending_[a]->runs.empty()) continue;
      RunSet& pending = *pending_[a];  // a deque: Set() keeps it valid
      for (int32_t child : {2 * a, 2 * a + 1}) {
        RunSet& to = Level(child) > kWholeLevel ? Set(pending_, child)
                                                : Set(whole_, child);
        for (const auto& [b, e] : pending.runs) AddRun(to, b, e);
      }
      pending.Clear();
    }
  }
  void AddCursor(RunSet* set) {
    if (set != nullptr && !set->runs.empty()) cursors_.emplace_back(set);
  }
  // Calls visit(node) for each canonical node of `buffer` (non-empty).
  template <typename Visit>
  void ForEachCanonical(BufferId buffer, Visit&& visit) const {
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    ForEachCoverNode(leaves_, keys.first_slice, keys.last_slice, visit);
  }
  // Calls visit(node, left, right) for every node whose slices overlap
  // [first, last) without lying inside it: the ancestors of the canonical
  // nodes, all on the paths from the leaves `first` (left) and `last - 1`
  // (right) to the root, bottom up; a node on both paths is visited once.
  template <typename Visit>
  void ForEachStraddling(int32_t first, int32_t last, Visit&& visit) const {
    auto straddles = [&](int32_t node, int level) {
      const int64_t lo = (int64_t{node} << level) - leaves_;
      const int64_t hi = (int64_t{node + 1} << level) - leaves_;
      return lo < last && hi > first && (lo < first || hi > last);
    };
    int level = 1;
    int32_t a = (first + leaves_) >> 1;
    int32_t b = (last - 1 + leaves_) >> 1;
    for (; a >= 1; a >>= 1, b >>= 1, ++level) {
      if (straddles(a, level)) visit(a, true, a == b);
      if (b != a && straddles(b, level)) visit(b, false, true);
    }
  }

  const PlacementIndex& index_;
  int32_t leaves_;
  NodePool pool_;  // before sets_: destroyed after them
  // Per node: its run set (in sets_), or null.
  std::vector<RunSet*> cover_;
  std::vector<RunSet*> whole_;
  std::vector<RunSet*> pending_;
  std::vector<RunSet*> sub_;
  // Per node: the buffers not placed yet that have it among their
  // canonical nodes. Only their searches read the node's sub(): at 0 it
  // will never be read again (about half the additions to sub() at 10^5
  // dense training-like buffers went to such nodes).
  std::vector<int32_t> searches_;
  std::deque<RunSet> sets_;  // a deque: the sets never move
  Counter starts_;  // placed buffers by start rank
  Counter ends_;    // by end rank
  std::vector<RunCursor> cursors_;
  std::vector<std::pair<Offset, int32_t>> heap_;
  std::vector<std::pair<Offset, Offset>> windows_;
  std::vector<RunSet*> pivots_;
  std::vector<std::pair<Offset, Offset>> regions_;
  std::vector<std::pair<Offset, Offset>> pieces_;
  std::vector<std::pair<Offset, Offset>> cut_;
  std::vector<int32_t> order_;
};

// ---------------------------------------------------------------------------
// TimeBuckets

// The placed buffers of every pool, each in the time buckets the
// PlacementIndex files it in, with its placement inline: listing the
// obstacles of a buffer reads a few runs of entries in order, never a
// buffer that is not placed or a record elsewhere in memory.
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

  explicit TimeBuckets(const PlacementIndex& index)
      : index_(index), levels_(index.num_bucket_levels()) {
    for (int l = 0; l < static_cast<int>(levels_.size()); ++l) {
      const std::span<const int64_t> begins = index.bucket_begins(l);
      levels_[l].entries.resize(begins.back());
      levels_[l].buckets.resize(begins.size() - 1);
      for (size_t q = 0; q + 1 < begins.size(); ++q)
        levels_[l].buckets[q].begin = begins[q];
    }
  }

  // `buffer` (non-empty, not filed) holds [offset, end) of `pool`.
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
  void Remove(BufferId buffer) {
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

// ---------------------------------------------------------------------------
// PlacementState

PlacementState::PlacementState(const PlacementIndex& index)
    : index_(&index),
      slots_(index.problem().buffers.size()),
      use_gaps_(index.indexed_search()) {}
PlacementState::PlacementState(PlacementState&&) = default;
PlacementState& PlacementState::operator=(PlacementState&&) = default;
PlacementState::~PlacementState() = default;

GapIndex& PlacementState::gaps(PoolId pool) {
  if (gaps_.empty()) gaps_.resize(index_->problem().pools.size());
  if (gaps_[pool] == nullptr) {
    gaps_[pool] = std::make_unique<GapIndex>(*index_);
    const Problem& problem = index_->problem();
    for (BufferId b = 0; b < static_cast<BufferId>(slots_.size()); ++b) {
      const Slot& slot = slots_[b];
      if (slot.pool < 0 || problem.buffers[b].size == 0) continue;
      if (slot.pool == pool) {
        gaps_[pool]->Insert(b, slot.offset, slot.end);
      } else {
        gaps_[pool]->Release(b);
      }
    }
  }
  return *gaps_[pool];
}

TimeBuckets& PlacementState::buckets() {
  if (buckets_ == nullptr) {
    buckets_ = std::make_unique<TimeBuckets>(*index_);
    const Problem& problem = index_->problem();
    for (BufferId b = 0; b < static_cast<BufferId>(slots_.size()); ++b) {
      const Slot& slot = slots_[b];
      if (slot.pool >= 0 && problem.buffers[b].size > 0)
        buckets_->Add(b, slot.pool, slot.offset, slot.end);
    }
  }
  return *buckets_;
}

absl::Status PlacementState::PlaceFixed() {
  const Problem& problem = index_->problem();
  const int n = static_cast<int>(problem.buffers.size());
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (!buffer.fixed.has_value()) continue;
    CollectObstacles(b, buffer.fixed->pool, scratch_);
    const Offset begin = buffer.fixed->offset;
    const Offset end = begin + buffer.size;
    for (const Obstacle& o : scratch_) {
      if (buffer.size > 0 && o.begin < end && begin < o.end) {
        const Buffer& other = problem.buffers[o.buffer];
        return absl::InvalidArgumentError(absl::StrCat(
            "fixed placements collide: ", DescribeBuffer(problem, o.buffer),
            " at [", o.begin, ", ", o.end, ") and ", DescribeBuffer(problem, b),
            " at [", begin, ", ", end, ") in pool \"",
            problem.pools[other.fixed->pool].name, "\""));
      }
    }
    Place(b, buffer.fixed->pool, buffer.fixed->offset);
  }
  // Where the gap index answers the searches, the buckets filled for the
  // check above would be kept up for nothing: made again if ever needed.
  if (use_gaps_) buckets_.reset();
  return absl::OkStatus();
}

void PlacementState::CollectObstacles(BufferId buffer, PoolId pool,
                                      std::vector<Obstacle>& out) {
  out.clear();
  const Problem& problem = index_->problem();
  const Lifetime lifetime = problem.buffers[buffer].lifetime;
  if (problem.buffers[buffer].size > 0) {
    work_ += index_->CountOverlapping(buffer);
    buckets().ForEachOverlapping(buffer, pool,
                                 [&](const TimeBuckets::Entry& e) {
                                   out.push_back({e.offset, e.end, e.buffer});
                                 });
  } else {
    // It holds no byte, so nothing is in its way; the work counts the
    // buffers alive with it all the same.
    work_ += index_->CountOverlapping(lifetime);
    return;
  }
  for (BufferId other : index_->explicit_conflicts(buffer)) {
    const Buffer& o = problem.buffers[other];
    // Partners alive at the same time were listed already.
    if (slots_[other].pool != pool || o.size == 0 ||
        Overlaps(o.lifetime, lifetime))
      continue;
    out.push_back({slots_[other].offset, slots_[other].end, other});
  }
}

void PlacementState::Prefetch(BufferId buffer) const {
  const Buffer& b = index_->problem().buffers[buffer];
  __builtin_prefetch(&b.size);
  __builtin_prefetch(&b.pools);
  __builtin_prefetch(&slots_[buffer]);
  __builtin_prefetch(&index_->keys(buffer));
}

void PlacementState::Place(BufferId buffer, PoolId pool, Offset offset) {
  const Bytes size = index_->problem().buffers[buffer].size;
  slots_[buffer] = {.offset = offset, .end = offset + size, .pool = pool};
  if (size == 0) return;
  if (buckets_ != nullptr) buckets_->Add(buffer, pool, offset, offset + size);
  if (!use_gaps_) return;
  for (PoolId p = 0; p < static_cast<PoolId>(gaps_.size()); ++p) {
    if (gaps_[p] == nullptr) continue;
    if (p == pool) {
      gaps_[p]->Insert(buffer, offset, offset + size);
    } else {
      gaps_[p]->Release(buffer);
    }
  }
}

void PlacementState::Unplace(BufferId buffer) {
  if (buckets_ != nullptr && placed(buffer) &&
      index_->problem().buffers[buffer].size > 0) {
    buckets_->Remove(buffer);
  }
  slots_[buffer] = Slot{};
  use_gaps_ = false;
  gaps_.clear();
}

std::optional<Offset> PlacementState::SearchPool(BufferId buffer, PoolId p,
                                                 Fit fit) {
  const Problem& problem = index_->problem();
  const Buffer& b = problem.buffers[buffer];
  const Bytes alignment = EffectiveAlignment(problem, buffer, p);
  const Bytes capacity = problem.pools[p].capacity;
  // The work is that of listing and sorting the obstacles, counted the same
  // on both paths: budgets built on it must not depend on the path.
  if (!use_gaps_ || placed(buffer)) {
    CollectObstacles(buffer, p, scratch_);
    work_ += static_cast<int64_t>(scratch_.size()) *
             std::bit_width(scratch_.size());
    SortByOffset(scratch_);
    return FindOffset(scratch_, b.size, alignment, capacity, fit);
  }
  GapIndex& index = gaps(p);
  work_ += index_->CountOverlapping(buffer);
  extra_.clear();
  for (BufferId other : index_->explicit_conflicts(buffer)) {
    const Buffer& o = problem.buffers[other];
    if (slots_[other].pool != p || o.size == 0 ||
        Overlaps(o.lifetime, b.lifetime))
      continue;
    extra_.push_back({slots_[other].offset, slots_[other].end});
  }
  const auto k = static_cast<uint64_t>(index.CountOverlapping(buffer) +
                                       static_cast<int64_t>(extra_.size()));
  work_ += static_cast<int64_t>(k) * std::bit_width(k);
  if (!extra_.empty()) {
    std::sort(extra_.begin(), extra_.end());
    size_t merged = 0;
    for (const auto& run : extra_) {
      if (merged > 0 && run.first <= extra_[merged - 1].second) {
        extra_[merged - 1].second =
            std::max(extra_[merged - 1].second, run.second);
      } else {
        extra_[merged++] = run;
      }
    }
    extra_.resize(merged);
  }
  return index.Find(buffer, extra_, b.size, alignment, capacity, fit);
}

absl::Status PlacementState::PlaceGreedily(BufferId buffer, Fit fit) {
  const Problem& problem = index_->problem();
  const Buffer& b = problem.buffers[buffer];
  // AllowedPools() without its allocation: this runs once per buffer.
  const int num_pools =
      static_cast<int>(b.pools.empty() ? problem.pools.size() : b.pools.size());
  auto pool_at = [&](int i) {
    return b.pools.empty() ? PoolId{i} : b.pools[i];
  };
  if (b.size == 0 && num_pools > 0) {
    Place(buffer, pool_at(0), 0);
    return absl::OkStatus();
  }
  for (int i = 0; i < num_pools; ++i) {
    const PoolId p = pool_at(i);
    const std::optional<Offset> offset = SearchPool(buffer, p, fit);
    if (offset.has_value()) {
      Place(buffer, p, *offset);
      return absl::OkStatus();
    }
  }
  std::vector<Bytes> usage(problem.pools.size(), 0);
  for (int i = 0; i < num_pools; ++i) {
    const PoolId p = pool_at(i);
    CollectObstacles(buffer, p, scratch_);
    for (const Obstacle& o : scratch_) usage[p] = std::max(usage[p], o.end);
  }
  return NoFitError(problem, buffer, usage);
}

std::vector<Bytes> PlacementState::PoolUsed() const {
  const Problem& problem = index_->problem();
  std::vector<Bytes> used(problem.pools.size(), 0);
  for (BufferId b = 0; b < static_cast<BufferId>(slots_.size()); ++b) {
    const Slot& slot = slots_[b];
    if (slot.pool < 0 || problem.buffers[b].size == 0) continue;
    used[slot.pool] = std::max(used[slot.pool], slot.end);
  }
  return used;
}

Plan PlacementState::ToPlan() const {
  const Problem& problem = index_->problem();
  Plan plan;
  const int n = static_cast<int>(problem.buffers.size());
  plan.assignments.resize(n);
  for (BufferId b = 0; b < n; ++b) {
    plan.assignments[b] = {
        .buffer = b, .pool = slots_[b].pool, .offset = slots_[b].offset};
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

namespace {
// How many buffers ahead of the one being placed PlaceAll prefetches.
constexpr size_t kPrefetchAhead = 4;
}  // namespace

absl::Status PlaceAll(PlacementState& state, std::span<const BufferId> order,
                      Fit fit, Budget* budget) {
  if (absl::Status status = state.PlaceFixed(); !status.ok()) return status;
  int64_t ticked = 0;
  int64_t placed = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const BufferId b = order[i];
    if (i + kPrefetchAhead < order.size())
      state.Prefetch(order[i + kPrefetchAhead]);
    if (absl::Status status = state.PlaceGreedily(b, fit); !status.ok())
      return status;
    ++placed;
    if (budget == nullptr) continue;
    budget->Tick(state.work() - ticked);
    ticked = state.work();
    if (budget->OutOfTime()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the placement pass ran out of time after placing ", placed,
          " of ", order.size(), " buffers"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> PlaceInOrder(const PlacementIndex& index,
                                  std::span<const BufferId> order, Fit fit,
                                  Budget* budget) {
  PlacementState state(index);
  if (absl::Status status = PlaceAll(state, order, fit, budget); !status.ok())
    return status;
  return state.ToPlan();
}

}  // namespace memplan::internal
