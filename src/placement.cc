// Placement machinery shared by the offset-placing planners.

#include "memplan/internal/placement.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "memplan/internal/planner_util.h"
#include "memplan/problem.h"

namespace memplan::internal {

std::vector<BufferId> SortedBuffers(const Problem& problem,
                                    PlacementOrder order) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<BufferId> ids;
  ids.reserve(n);
  // The key as a 128-bit integer: size x lifetime can exceed int64.
  std::vector<__int128> key(n);
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value()) continue;
    ids.push_back(b);
    const __int128 length = buffer.lifetime.end - buffer.lifetime.start;
    switch (order) {
      case PlacementOrder::kSize:
        key[b] = buffer.size;
        break;
      case PlacementOrder::kArea:
        key[b] = static_cast<__int128>(buffer.size) * length;
        break;
      case PlacementOrder::kLifetime:
        key[b] = length;
        break;
      case PlacementOrder::kSizeThenId:
        key[b] = buffer.size;
        break;
    }
  }
  const bool by_start = order != PlacementOrder::kSizeThenId;
  std::sort(ids.begin(), ids.end(), [&](BufferId a, BufferId b) {
    if (key[a] != key[b]) return key[a] > key[b];
    if (!by_start) return a < b;
    const Step sa = problem.buffers[a].lifetime.start;
    const Step sb = problem.buffers[b].lifetime.start;
    if (sa != sb) return sa < sb;
    return a < b;
  });
  return ids;
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
  // Signed order as unsigned: the sign bit flipped.
  auto Key = [](const Obstacle& o) {
    return static_cast<uint64_t>(o.begin) ^ (uint64_t{1} << 63);
  };
  uint64_t all_or = 0;
  uint64_t all_and = ~uint64_t{0};
  for (const Obstacle& o : obstacles) {
    all_or |= Key(o);
    all_and &= Key(o);
  }
  const uint64_t varying = all_or ^ all_and;  // bits not shared by all
  thread_local std::vector<Obstacle> buffer;
  buffer.resize(obstacles.size());
  std::vector<Obstacle>* from = &obstacles;
  std::vector<Obstacle>* to = &buffer;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;
    size_t count[257] = {};
    for (const Obstacle& o : *from) ++count[((Key(o) >> shift) & 0xff) + 1];
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (const Obstacle& o : *from)
      (*to)[count[(Key(o) >> shift) & 0xff]++] = o;
    std::swap(from, to);
  }
  if (from != &obstacles) obstacles.swap(buffer);
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

PlacementIndex::PlacementIndex(const Problem& problem) : problem_(&problem) {
  const int n = static_cast<int>(problem.buffers.size());
  // Zero-size buffers hold no byte: they are never anyone's obstacle.
  std::vector<BufferId> by_start;
  by_start.reserve(n);
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].size > 0) by_start.push_back(b);
  }
  std::sort(by_start.begin(), by_start.end(), [&](BufferId a, BufferId b) {
    const Step sa = problem.buffers[a].lifetime.start;
    const Step sb = problem.buffers[b].lifetime.start;
    return sa != sb ? sa < sb : a < b;
  });
  by_start_.reserve(by_start.size());
  by_end_.reserve(by_start.size());
  root_ = Build(by_start);

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

int32_t PlacementIndex::Build(std::vector<BufferId>& by_start) {
  if (by_start.empty()) return -1;
  const std::vector<Buffer>& buffers = problem_->buffers;
  // The median start is the centre: its own lifetime contains it, so no
  // node is empty, and each side keeps at most half of the lifetimes.
  const Step center = buffers[by_start[by_start.size() / 2]].lifetime.start;
  std::vector<BufferId> left;
  std::vector<BufferId> right;
  std::vector<BufferId> here;
  for (BufferId b : by_start) {
    const Lifetime& l = buffers[b].lifetime;
    if (l.end <= center) {
      left.push_back(b);
    } else if (l.start > center) {
      right.push_back(b);
    } else {
      here.push_back(b);
    }
  }
  by_start.clear();
  by_start.shrink_to_fit();
  const int32_t id = static_cast<int32_t>(nodes_.size());
  nodes_.push_back(
      Node{.center = center,
           .begin = static_cast<int64_t>(by_start_.size()),
           .end = static_cast<int64_t>(by_start_.size() + here.size())});
  for (BufferId b : here) by_start_.push_back({buffers[b].lifetime.start, b});
  std::sort(here.begin(), here.end(), [&](BufferId a, BufferId b) {
    const Step ea = buffers[a].lifetime.end;
    const Step eb = buffers[b].lifetime.end;
    return ea != eb ? ea > eb : a < b;
  });
  for (BufferId b : here) by_end_.push_back({buffers[b].lifetime.end, b});
  here.clear();
  here.shrink_to_fit();
  const int32_t l = Build(left);
  const int32_t r = Build(right);
  nodes_[id].left = l;
  nodes_[id].right = r;
  return id;
}

// ---------------------------------------------------------------------------
// PlacementState

PlacementState::PlacementState(const PlacementIndex& index)
    : index_(&index),
      pool_(index.problem().buffers.size(), -1),
      offset_(index.problem().buffers.size(), 0) {}

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
  return absl::OkStatus();
}

void PlacementState::CollectObstacles(BufferId buffer, PoolId pool,
                                      std::vector<Obstacle>& out) const {
  out.clear();
  const Problem& problem = index_->problem();
  const Lifetime lifetime = problem.buffers[buffer].lifetime;
  index_->ForEachOverlapping(lifetime, [&](BufferId other) {
    ++work_;
    if (other == buffer || pool_[other] != pool) return;
    out.push_back(
        {offset_[other], offset_[other] + problem.buffers[other].size, other});
  });
  for (BufferId other : index_->explicit_conflicts(buffer)) {
    const Buffer& o = problem.buffers[other];
    // Partners alive at the same time were reported by the index already.
    if (pool_[other] != pool || o.size == 0 || Overlaps(o.lifetime, lifetime))
      continue;
    out.push_back({offset_[other], offset_[other] + o.size, other});
  }
}

void PlacementState::Place(BufferId buffer, PoolId pool, Offset offset) {
  pool_[buffer] = pool;
  offset_[buffer] = offset;
}

void PlacementState::Unplace(BufferId buffer) {
  pool_[buffer] = -1;
  offset_[buffer] = 0;
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
    CollectObstacles(buffer, p, scratch_);
    // The sort dominates on dense problems: count it in the work too.
    work_ +=
        static_cast<int64_t>(scratch_.size()) * std::bit_width(scratch_.size());
    SortByOffset(scratch_);
    const std::optional<Offset> offset =
        FindOffset(scratch_, b.size, EffectiveAlignment(problem, buffer, p),
                   problem.pools[p].capacity, fit);
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
  for (BufferId b = 0; b < static_cast<BufferId>(pool_.size()); ++b) {
    const Bytes size = problem.buffers[b].size;
    if (pool_[b] < 0 || size == 0) continue;
    used[pool_[b]] = std::max(used[pool_[b]], offset_[b] + size);
  }
  return used;
}

Plan PlacementState::ToPlan() const {
  const Problem& problem = index_->problem();
  Plan plan;
  const int n = static_cast<int>(problem.buffers.size());
  plan.assignments.resize(n);
  for (BufferId b = 0; b < n; ++b) {
    plan.assignments[b] = {.buffer = b, .pool = pool_[b], .offset = offset_[b]};
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

absl::StatusOr<Plan> PlaceInOrder(const PlacementIndex& index,
                                  std::span<const BufferId> order, Fit fit,
                                  Budget* budget) {
  PlacementState state(index);
  if (absl::Status status = state.PlaceFixed(); !status.ok()) return status;
  int64_t ticked = 0;
  for (BufferId b : order) {
    if (absl::Status status = state.PlaceGreedily(b, fit); !status.ok())
      return status;
    if (budget == nullptr) continue;
    budget->Tick(state.work() - ticked);
    ticked = state.work();
    if (budget->OutOfTime()) {
      return absl::DeadlineExceededError(
          "the placement run was abandoned at its deadline");
    }
  }
  return state.ToPlan();
}

}  // namespace memplan::internal
