// The cheap pass: buffers packed by size class (see packed.h).

#include "packed.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
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

std::vector<Record> RestToPack(const Problem& problem,
                               std::vector<Assignment>& assignments,
                               const std::vector<bool>& placed) {
  std::vector<bool> own(problem.buffers.size(), false);
  for (const BufferConflict& c : problem.conflicts) own[c.a] = own[c.b] = true;
  std::vector<Record> rest;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    if (placed[b]) continue;
    const Buffer& buffer = problem.buffers[b];
    assignments[b].buffer = b;
    if (buffer.fixed.has_value()) {
      assignments[b].pool = buffer.fixed->pool;
      assignments[b].offset = buffer.fixed->offset;
      continue;
    }
    const PoolId pool = buffer.pools.empty() ? 0 : buffer.pools.front();
    assignments[b].pool = pool;
    assignments[b].offset = 0;
    if (buffer.size == 0) continue;
    rest.push_back({pool, own[b], buffer.lifetime.start, buffer.lifetime.end,
                    buffer.size, EffectiveAlignment(problem, b, pool), b});
  }
  return rest;
}

// The free byte ranges of one pool's packed region, as an allocator keeps
// them: by offset (to merge neighbours) and by length (best fit).
class FreeRanges {
 public:
  // The best-fitting free range for `size` bytes at `alignment`, taken out
  // (what it leaves stays free); none: nullopt.
  std::optional<Offset> Take(Bytes size, Bytes alignment) {
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

  // Frees [offset, offset + size), merged with free neighbours; a range
  // that reaches `frontier` lowers it instead.
  void Free(Offset offset, Bytes size, Offset& frontier) {
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

 private:
  // Ranges tried past the best fit when alignment pads it out.
  static constexpr int kTries = 8;

  void Insert(Offset offset, Bytes length) {
    by_offset_.emplace(offset, length);
    by_length_.insert({length, offset});
  }
  void Erase(Offset offset, Bytes length) {
    by_offset_.erase(offset);
    by_length_.erase({length, offset});
  }

  absl::btree_map<Offset, Bytes> by_offset_;
  absl::btree_set<std::pair<Bytes, Offset>> by_length_;
};

// Packs `records` (one pool's, by start) from `base` up as a best-fit
// allocator would, freeing each buffer at its end; the buffers with
// explicit conflicts go above, each in bytes of its own. Returns the
// highest byte used.
Offset PackPool(std::span<const Record> records, Offset base,
                std::vector<Assignment>& assignments) {
  using Live = std::tuple<Step, Offset, Bytes>;  // (end, offset, size)
  std::priority_queue<Live, std::vector<Live>, std::greater<>> live;
  FreeRanges free;
  Offset frontier = base;
  Offset high = base;
  for (const Record& r : records) {
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
    assignments[r.id].offset = *at;
    live.push({r.end, *at, r.size});
  }
  for (const Record& r : records) {
    if (!r.own) continue;
    const Offset at = RoundUp(high, r.alignment);
    assignments[r.id].offset = at;
    high = at + r.size;
  }
  return high;
}

// The highest byte each pool holds under the buffers already placed
// (fixed ones included).
std::vector<Offset> Tops(const Problem& problem,
                         const std::vector<Assignment>& assignments,
                         const std::vector<bool>& placed) {
  std::vector<Offset> top(problem.pools.size(), 0);
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size == 0 || (!placed[b] && !buffer.fixed.has_value())) continue;
    Offset& t = top[assignments[b].pool];
    t = std::max(t, assignments[b].offset + buffer.size);
  }
  return top;
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
  std::vector<Record> rest = RestToPack(problem, assignments, placed);
  std::vector<Offset> top = Tops(problem, assignments, placed);
  std::sort(rest.begin(), rest.end(), [](const Record& a, const Record& b) {
    if (a.pool != b.pool) return a.pool < b.pool;
    if (a.start != b.start) return a.start < b.start;
    if (a.size != b.size) return a.size > b.size;
    return a.id < b.id;
  });
  for (size_t i = 0, j = 0; i < rest.size(); i = j) {
    while (j < rest.size() && rest[j].pool == rest[i].pool) ++j;
    const PoolId pool = rest[i].pool;
    top[pool] = PackPool(std::span<const Record>(rest).subspan(i, j - i),
                         top[pool], assignments);
  }
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
  if (!fits || plan.peak >= NaiveTotal(problem)) {
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
