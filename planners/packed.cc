// The cheap pass: buffers packed by size class (see packed.h).

#include "packed.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "base/arith.h"
#include "memplan/problem.h"
#include "model/problem_util.h"
#include "planners.h"

namespace memplan::internal {
namespace {

// A buffer to pack, keyed by where it goes.
struct Record {
  PoolId pool;
  bool own;  // explicit conflicts: bytes of its own, never reused
  Step start;
  Step end;
  Bytes size;
  Bytes alignment;
  BufferId id;
};

// What PackRest packs: the buffers not yet placed, in buffer order, and the
// highest byte each pool holds under the buffers already placed (fixed ones
// included), both found in one pass over the buffers.
struct ToPack {
  std::vector<Record> rest;
  std::vector<Offset> top;
};

ToPack RestToPack(const Problem& problem, std::vector<Assignment>& assignments,
                  const std::vector<bool>& placed) {
  std::vector<bool> own(problem.buffers.size(), false);
  for (const BufferConflict& c : problem.conflicts) own[c.a] = own[c.b] = true;
  ToPack out;
  out.rest.reserve(problem.buffers.size());
  out.top.assign(problem.pools.size(), 0);
  auto raise_top = [&](BufferId b, Bytes size) {
    Offset& t = out.top[assignments[b].pool];
    t = std::max(t, assignments[b].offset + size);
  };
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (placed[b]) {
      if (buffer.size != 0) raise_top(b, buffer.size);
      continue;
    }
    assignments[b].buffer = b;
    if (buffer.fixed.has_value()) {
      assignments[b].pool = buffer.fixed->pool;
      assignments[b].offset = buffer.fixed->offset;
      if (buffer.size != 0) raise_top(b, buffer.size);
      continue;
    }
    const PoolId pool = buffer.pools.empty() ? 0 : buffer.pools.front();
    assignments[b].pool = pool;
    assignments[b].offset = 0;
    if (buffer.size == 0) continue;
    out.rest.push_back({pool, own[b], buffer.lifetime.start,
                        buffer.lifetime.end, buffer.size,
                        EffectiveAlignment(problem, b, pool), b});
  }
  return out;
}

// The free byte ranges of one pool's packed region, as an allocator keeps
// them: disjoint and merged with their neighbours; a buffer takes the best
// fit, the smallest (length, offset) of the ranges it fits in, trying the
// kTries smallest ranges at least as long as it. Few ranges are free at a
// time in most plans, and while at most kMaxFlat are, a vector of them by
// offset, scanned whole, is several times faster than two B-trees; past
// that they move to B-trees, by offset (to merge neighbours) and by length
// (best fit), where every operation stays logarithmic, until they empty.
// Both give the same ranges (10^6 short intervals: the B-trees were most
// of the packing's time).
class FreeRanges {
 public:
  // The best-fitting free range for `size` bytes at `alignment`, taken out
  // (what it leaves stays free); none: nullopt.
  std::optional<Offset> Take(Bytes size, Bytes alignment) {
    if (!by_offset_.empty()) return TakeFromTrees(size, alignment);
    const std::optional<size_t> i = FlatBestFit(size, alignment);
    if (!i.has_value()) return std::nullopt;
    const Range r = flat_[*i];
    const Offset at = RoundUp(r.offset, alignment);
    const Offset end = r.offset + r.length;
    // What the range leaves, before and after the buffer, stays in its
    // place in the order by offset.
    if (at > r.offset && at + size < end) {
      flat_[*i].length = at - r.offset;
      InsertFlat(*i + 1, {at + size, end - at - size});
    } else if (at > r.offset) {
      flat_[*i].length = at - r.offset;
    } else if (at + size < end) {
      flat_[*i] = {at + size, end - at - size};
    } else {
      flat_.erase(flat_.begin() + static_cast<std::ptrdiff_t>(*i));
    }
    return at;
  }

  // Frees [offset, offset + size), merged with free neighbours; a range
  // that reaches `frontier` lowers it instead.
  void Free(Offset offset, Bytes size, Offset& frontier) {
    if (!by_offset_.empty()) {
      FreeInTrees(offset, size, frontier);
      return;
    }
    Offset end = offset + size;
    size_t next = 0;  // the first range at or after `offset`
    for (const Range& r : flat_) next += r.offset < offset;
    if (next < flat_.size() && flat_[next].offset == end) {
      end += flat_[next].length;
      flat_.erase(flat_.begin() + static_cast<std::ptrdiff_t>(next));
    }
    if (next > 0 && flat_[next - 1].offset + flat_[next - 1].length == offset) {
      --next;
      offset = flat_[next].offset;
      flat_.erase(flat_.begin() + static_cast<std::ptrdiff_t>(next));
    }
    if (end >= frontier) {
      frontier = offset;
    } else {
      InsertFlat(next, {offset, end - offset});
    }
  }

 private:
  struct Range {
    Offset offset;
    Bytes length;
  };
  // Ranges tried past the best fit when alignment pads it out.
  static constexpr int kTries = 8;
  static constexpr size_t kMaxFlat = 64;

  // The index in flat_ of the range Take takes: of the ranges at least
  // `size` long, the smallest by (length, offset) that holds `size` bytes
  // at `alignment`, when fewer than kTries smaller ones come before it.
  std::optional<size_t> FlatBestFit(Bytes size, Bytes alignment) const {
    std::optional<size_t> best;
    auto before = [this](size_t a, size_t b) {
      return std::pair(flat_[a].length, flat_[a].offset) <
             std::pair(flat_[b].length, flat_[b].offset);
    };
    for (size_t i = 0; i < flat_.size(); ++i) {
      const Range& r = flat_[i];
      if (r.length < size ||
          RoundUp(r.offset, alignment) + size > r.offset + r.length) {
        continue;
      }
      if (!best.has_value() || before(i, *best)) best = i;
    }
    if (!best.has_value()) return std::nullopt;
    int smaller = 0;  // ranges tried before it, too short once aligned
    for (size_t i = 0; i < flat_.size(); ++i) {
      smaller += flat_[i].length >= size && before(i, *best);
    }
    if (smaller >= kTries) return std::nullopt;
    return best;
  }

  // Inserts `r` at `i` (its place by offset); past kMaxFlat ranges, they
  // all move to the B-trees.
  void InsertFlat(size_t i, Range r) {
    flat_.insert(flat_.begin() + static_cast<std::ptrdiff_t>(i), r);
    if (flat_.size() <= kMaxFlat) return;
    for (const Range& f : flat_) Insert(f.offset, f.length);
    flat_.clear();
  }

  std::optional<Offset> TakeFromTrees(Bytes size, Bytes alignment) {
    auto it = by_length_.lower_bound({size, 0});
    for (int tries = 0; it != by_length_.end() && tries < kTries;
         ++it, ++tries) {
      const auto [length, offset] = *it;
      const Offset at = RoundUp(offset, alignment);
      if (at + size > offset + length) continue;
      Erase(offset, length);
      if (at > offset) Insert(offset, at - offset);
      if (at + size < offset + length)
        Insert(at + size, offset + length - at - size);
      return at;
    }
    return std::nullopt;
  }

  void FreeInTrees(Offset offset, Bytes size, Offset& frontier) {
    Offset end = offset + size;
    if (auto next = by_offset_.find(end); next != by_offset_.end()) {
      end += next->second;
      Erase(next->first, next->second);
    }
    if (auto prev = by_offset_.lower_bound(offset);
        prev != by_offset_.begin()) {
      --prev;
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        Erase(prev->first, prev->second);
      }
    }
    if (end >= frontier) {
      frontier = offset;
    } else {
      Insert(offset, end - offset);
    }
  }

  void Insert(Offset offset, Bytes length) {
    by_offset_.emplace(offset, length);
    by_length_.insert({length, offset});
  }
  void Erase(Offset offset, Bytes length) {
    by_offset_.erase(offset);
    by_length_.erase({length, offset});
  }

  std::vector<Range> flat_;  // by offset, while the B-trees are empty
  absl::btree_map<Offset, Bytes> by_offset_;
  absl::btree_set<std::pair<Bytes, Offset>> by_length_;
};

// Sorts `rest` (in buffer order) by pool, then start, then size from the
// largest, then buffer. Where the (pool, start) pairs span a range not much
// larger than the buffers, a counting sort on them, which keeps buffer order
// within a pair, and a sort of each run of equal pairs by size (one buffer
// a run at 10^6 short intervals: linear, where std::sort took a good part
// of the packing); else std::sort.
void SortToPack(std::vector<Record>& rest, int pools) {
  auto by_size = [](const Record& a, const Record& b) {
    return a.size != b.size ? a.size > b.size : a.id < b.id;
  };
  Step first = std::numeric_limits<Step>::max();
  Step last = std::numeric_limits<Step>::min();
  bool in_pools = true;
  for (const Record& r : rest) {
    first = std::min(first, r.start);
    last = std::max(last, r.start);
    in_pools = in_pools && r.pool >= 0 && r.pool < pools;
  }
  // Unsigned, the distance between two int64 is exact (and compared
  // before it is counted in steps, which could wrap).
  const uint64_t span =
      static_cast<uint64_t>(last) - static_cast<uint64_t>(first);
  const uint64_t most = 4 * rest.size() + 1024;
  const uint64_t steps = span + 1;
  if (rest.empty() || !in_pools || span >= most ||
      static_cast<uint64_t>(pools) > most / steps) {
    std::sort(rest.begin(), rest.end(), [&](const Record& a, const Record& b) {
      if (a.pool != b.pool) return a.pool < b.pool;
      if (a.start != b.start) return a.start < b.start;
      return by_size(a, b);
    });
    return;
  }
  auto slot = [&](const Record& r) {
    return static_cast<uint64_t>(r.pool) * steps +
           (static_cast<uint64_t>(r.start) - static_cast<uint64_t>(first));
  };
  std::vector<uint32_t> next(steps * static_cast<uint64_t>(pools) + 1, 0);
  for (const Record& r : rest) ++next[slot(r) + 1];
  for (size_t i = 1; i < next.size(); ++i) next[i] += next[i - 1];
  std::vector<Record> sorted(rest.size());
  for (const Record& r : rest) sorted[next[slot(r)]++] = r;
  for (size_t i = 0, j = 0; i < sorted.size(); i = j) {
    for (j = i + 1; j < sorted.size() && sorted[j].pool == sorted[i].pool &&
                    sorted[j].start == sorted[i].start;
         ++j) {
    }
    if (j - i > 1) std::sort(sorted.begin() + i, sorted.begin() + j, by_size);
  }
  rest.swap(sorted);
}

// Packs `records` (one pool's, by start) from `base` up as a best-fit
// allocator would, freeing each buffer at its end; the buffers with
// explicit conflicts go above, each in bytes of its own. Writes each
// record's offset to `offsets` (in record order: written in buffer order
// as they are found, the scattered stores held up the loop). Returns the
// highest byte used.
Offset PackPool(std::span<const Record> records, Offset base,
                std::span<Offset> offsets) {
  using Live = std::tuple<Step, Offset, Bytes>;  // (end, offset, size)
  std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
  FreeRanges free;
  Offset frontier = base;
  Offset high = base;
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (r.own) continue;
    while (!live.empty() && std::get<0>(live.top()) <= r.start) {
      free.Free(std::get<1>(live.top()), std::get<2>(live.top()), frontier);
      live.pop();
    }
    const Bytes alignment = r.alignment;
    std::optional<Offset> at = free.Take(r.size, alignment);
    if (!at.has_value()) {
      at = RoundUp(frontier, alignment);  // the padding is not reused
      frontier = *at + r.size;
    }
    high = std::max(high, frontier);
    offsets[i] = *at;
    live.push({r.end, *at, r.size});
  }
  for (size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (!r.own) continue;
    offsets[i] = RoundUp(high, r.alignment);
    high = offsets[i] + r.size;
  }
  return high;
}

class PackedPlanner : public Planner {
 public:
  std::string_view name() const override { return "packed"; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    (void)options;
    return PackRest(problem, std::vector<Assignment>(problem.buffers.size()),
                    std::vector<bool>(problem.buffers.size(), false));
  }
};

}  // namespace

int64_t PackingWork(int64_t buffers) {
  return std::max<int64_t>(
      1, buffers * std::bit_width(static_cast<uint64_t>(buffers)) /
             kPackingWorkDivisor);
}

absl::StatusOr<Plan> PackRest(const Problem& problem,
                              std::vector<Assignment> assignments,
                              const std::vector<bool>& placed) {
  assignments.resize(problem.buffers.size());
  auto [rest, top] = RestToPack(problem, assignments, placed);
  SortToPack(rest, static_cast<int>(problem.pools.size()));
  std::vector<Offset> offsets(rest.size());
  for (size_t i = 0, j = 0; i < rest.size(); i = j) {
    while (j < rest.size() && rest[j].pool == rest[i].pool) ++j;
    const PoolId pool = rest[i].pool;
    top[pool] =
        PackPool(std::span<const Record>(rest).subspan(i, j - i), top[pool],
                 std::span<Offset>(offsets).subspan(i, j - i));
  }
  for (size_t i = 0; i < rest.size(); ++i)
    assignments[rest[i].id].offset = offsets[i];
  bool fits = true;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    const Bytes capacity = problem.pools[p].capacity;
    fits = fits && (capacity == 0 || top[p] <= capacity);
  }
  Plan plan;
  if (fits) {
    plan.assignments = std::move(assignments);
    ComputePlanStatistics(problem, plan);
  }
  // Naive's peak is at least the naive total unless fixed buffers share
  // bytes: it is made only when it could be smaller.
  if (!fits || plan.peak >= plan.naive_total) {
    absl::StatusOr<Plan> naive = MakeNaivePlanner()->Solve(problem, {});
    if (naive.ok()) naive->counters["naive_plan"] = 1;
    if (!fits || (naive.ok() && naive->peak <= plan.peak)) return naive;
  }
  plan.planner = "packed";
  plan.counters["packed"] = static_cast<int64_t>(rest.size());
  return plan;
}

std::unique_ptr<Planner> MakePackedPlanner() {
  return std::make_unique<PackedPlanner>();
}

}  // namespace memplan::internal
