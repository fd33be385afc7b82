// A whole greedy pass: the order, and placing it (see the header).

#include "placement/placement.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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

namespace {
// How many buffers ahead of the one being placed PlaceAll prefetches.
constexpr size_t kPrefetchAhead = 4;
}  // namespace

absl::Status PlaceAll(PlacementState& state, std::span<const BufferId> order,
                      Fit fit, Budget* budget, int64_t cost_limit) {
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
    // A pass that placed its last buffer is kept whatever it cost.
    if (state.cost() >= cost_limit && i + 1 < order.size()) {
      return absl::AbortedError(
          absl::StrCat("the placement pass reached its cost limit of ",
                       cost_limit, " work units after placing ", placed, " of ",
                       order.size(), " buffers"));
    }
    if (budget == nullptr) continue;
    // The pass's cost, which bounds it: on dense problems the indexed
    // searches examine far fewer obstacles than work() counts.
    budget->Tick(state.cost() - ticked);
    ticked = state.cost();
    if (budget->OutOfTime()) {
      return absl::DeadlineExceededError(
          absl::StrCat("the placement pass ran out of time after placing ",
                       placed, " of ", order.size(), " buffers"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> PlaceInOrder(const PlacementIndex& index,
                                  std::span<const BufferId> order, Fit fit,
                                  Budget* budget, int64_t cost_limit) {
  PlacementState state(index);
  if (absl::Status status = PlaceAll(state, order, fit, budget, cost_limit);
      !status.ok())
    return status;
  return state.ToPlan();
}

}  // namespace memplan::internal
