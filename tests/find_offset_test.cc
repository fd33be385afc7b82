// FindOffset against the free byte ranges of a byte map, and SortByOffset
// against std::sort, on both sides of its switch to a radix sort.

#include "placement/find_offset.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "base/arith.h"
#include "gtest/gtest.h"

namespace memplan {
namespace {

using internal::FindOffset;
using internal::Fit;
using internal::Obstacle;
using internal::SortByOffset;

std::vector<Obstacle> Sorted(std::vector<Obstacle> obstacles) {
  std::vector<Obstacle> scratch;
  SortByOffset(obstacles, scratch);
  return obstacles;
}

// The example of the header: a [0, 10), b [40, 60), c [80, 90); x is 20
// bytes.
TEST(FindOffsetTest, TheHeaderExample) {
  const std::vector<Obstacle> obstacles =
      Sorted({{80, 90, 2}, {0, 10, 0}, {40, 60, 1}});
  EXPECT_EQ(FindOffset(obstacles, 20, 1, 0, Fit::kFirst), 10);
  EXPECT_EQ(FindOffset(obstacles, 20, 1, 0, Fit::kBest), 60);
  // 31 bytes fit no gap: on top.
  EXPECT_EQ(FindOffset(obstacles, 31, 1, 0, Fit::kBest), 90);
  // Aligned to 16, the gap [10, 40) starts at 16 and holds 24 bytes: best
  // fit still prefers [64, 80) for 16 bytes (16 bytes of room, not 24).
  EXPECT_EQ(FindOffset(obstacles, 16, 16, 0, Fit::kBest), 64);
  EXPECT_EQ(FindOffset(obstacles, 16, 16, 0, Fit::kFirst), 16);
  // Under a capacity of 100 the top holds 10 bytes; 31 fit nowhere.
  EXPECT_EQ(FindOffset(obstacles, 10, 1, 100, Fit::kFirst), 10);
  EXPECT_EQ(FindOffset(obstacles, 31, 1, 100, Fit::kBest), std::nullopt);
  // Nothing in the way: offset 0.
  EXPECT_EQ(FindOffset({}, 5, 8, 0, Fit::kBest), 0);
}

// The rule from the free ranges of a byte map (offsets below kSpan).
std::optional<Offset> Reference(const std::vector<Obstacle>& obstacles,
                                Bytes size, Bytes alignment, Bytes capacity,
                                Fit fit) {
  constexpr Offset kSpan = 600;
  std::vector<bool> taken(kSpan, false);
  Offset top = 0;
  for (const Obstacle& o : obstacles) {
    for (Offset b = o.begin; b < o.end; ++b) taken[b] = true;
    top = std::max(top, o.end);
  }
  auto fits_capacity = [&](Offset at) {
    return capacity <= 0 || at + size <= capacity;
  };
  std::optional<Offset> best;
  Bytes best_gap = 0;
  // The maximal free ranges below the top, lowest first.
  for (Offset begin = 0; begin < top;) {
    if (taken[begin]) {
      ++begin;
      continue;
    }
    Offset end = begin;
    while (end < top && !taken[end]) ++end;
    const Offset at = internal::RoundUp(begin, alignment);
    if (at + size <= end && fits_capacity(at)) {
      if (fit == Fit::kFirst) return at;
      if (!best.has_value() || end - at < best_gap) {
        best = at;
        best_gap = end - at;
      }
    }
    begin = end;
  }
  if (best.has_value()) return best;
  const Offset at = internal::RoundUp(top, alignment);
  if (fits_capacity(at)) return at;
  return std::nullopt;
}

TEST(FindOffsetTest, MatchesTheFreeRangesOfAByteMap) {
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Obstacle> obstacles(rng() % 12);
    for (Obstacle& o : obstacles) {
      o.begin = static_cast<Offset>(rng() % 400);
      o.end = o.begin + 1 + static_cast<Offset>(rng() % 60);
      o.buffer = static_cast<BufferId>(rng() % 100);
    }
    obstacles = Sorted(obstacles);
    const Bytes size = 1 + static_cast<Bytes>(rng() % 40);
    const Bytes alignment = Bytes{1} << (rng() % 5);
    const Bytes capacity = rng() % 2 == 0 ? 0 : static_cast<Bytes>(rng() % 500);
    for (Fit fit : {Fit::kBest, Fit::kFirst}) {
      ASSERT_EQ(FindOffset(obstacles, size, alignment, capacity, fit),
                Reference(obstacles, size, alignment, capacity, fit))
          << "seed " << seed << " fit " << static_cast<int>(fit);
    }
  }
}

// Below 256 obstacles a comparison sort, from 256 on a radix sort with the
// caller's scratch space, reused between calls.
TEST(FindOffsetTest, SortByOffsetSortsByBeginOnBothPaths) {
  std::vector<Obstacle> scratch;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    const size_t n = std::vector<size_t>{0, 1, 255, 256, 257, 5000}[seed % 6];
    // Narrow or wide offsets: the radix sort skips bytes shared by all.
    const uint64_t range = seed % 3 == 0 ? 50 : uint64_t{1} << (20 + seed % 40);
    std::vector<Obstacle> obstacles(n);
    for (size_t i = 0; i < n; ++i) {
      obstacles[i].begin = static_cast<Offset>(rng() % range);
      obstacles[i].end = obstacles[i].begin + 1;
      obstacles[i].buffer = static_cast<BufferId>(i);
    }
    std::vector<Obstacle> want = obstacles;
    std::stable_sort(
        want.begin(), want.end(),
        [](const Obstacle& a, const Obstacle& b) { return a.begin < b.begin; });
    SortByOffset(obstacles, scratch);
    ASSERT_EQ(obstacles.size(), want.size());
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(obstacles[i].begin, want[i].begin) << "seed " << seed;
      ASSERT_EQ(obstacles[i].end, obstacles[i].begin + 1) << "seed " << seed;
    }
    // Each obstacle once: the ids are a permutation.
    std::vector<bool> seen(n, false);
    for (const Obstacle& o : obstacles) {
      ASSERT_FALSE(seen[o.buffer]);
      seen[o.buffer] = true;
    }
  }
}

}  // namespace
}  // namespace memplan
