// FindOffset and the sort of obstacles it reads.

#include "placement/find_offset.h"

#include <algorithm>
#include <cstdint>

#include "base/arith.h"
#include "base/sort.h"

namespace memplan::internal {

void SortByOffset(std::vector<Obstacle>& obstacles,
                  std::vector<Obstacle>& scratch) {
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

}  // namespace memplan::internal
