// PlacementState: placing, taking out and the two searches.

#include "placement/placement_state.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "memplan/problem.h"
#include "model/problem_util.h"
#include "placement/gap_index.h"
#include "placement/time_buckets.h"

namespace memplan::internal {

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
  // The work is that of listing and sorting the obstacles, counted the same
  // on both paths: budgets built on it must not depend on the path.
  if (use_gaps_ && !placed(buffer)) {
    const int64_t ops = gaps(p).ops();
    std::optional<Offset> offset = SearchIndexed(buffer, p, fit);
    cost_ += 1 + gaps(p).ops() - ops + static_cast<int64_t>(extra_.size());
    return offset;
  }
  const Problem& problem = index_->problem();
  const int64_t work = work_;
  CollectObstacles(buffer, p, scratch_);
  work_ +=
      static_cast<int64_t>(scratch_.size()) * std::bit_width(scratch_.size());
  cost_ += 1 + work_ - work;
  SortByOffset(scratch_, sort_scratch_);
  return FindOffset(scratch_, problem.buffers[buffer].size,
                    EffectiveAlignment(problem, buffer, p),
                    problem.pools[p].capacity, fit);
}

std::optional<Offset> PlacementState::SearchIndexed(BufferId buffer, PoolId p,
                                                    Fit fit) {
  const Problem& problem = index_->problem();
  const Buffer& b = problem.buffers[buffer];
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
  return index.Find(buffer, extra_, b.size,
                    EffectiveAlignment(problem, buffer, p),
                    problem.pools[p].capacity, fit);
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

}  // namespace memplan::internal
