// Counter: prefix counts of marked positions against a plain array.

#include "placement/counter.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace memplan {
namespace {

using internal::Counter;

TEST(CounterTest, CountsTheMarkedPositionsBelowAPoint) {
  Counter counter(10);
  for (int32_t p : {1, 3, 4, 7}) counter.Mark(p);
  EXPECT_EQ(counter.Before(0), 0);
  EXPECT_EQ(counter.Before(1), 0);
  EXPECT_EQ(counter.Before(2), 1);
  EXPECT_EQ(counter.Before(5), 3);
  EXPECT_EQ(counter.Before(8), 4);
  EXPECT_EQ(counter.Before(10), 4);
}

// Sizes around multiples of the 64-bit words, marks in random order, and a
// count at every point after every few marks.
TEST(CounterTest, MatchesABruteForceCountOnRandomMarks) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    const int32_t sizes[] = {1, 63, 64, 65, 128, 129, 1000, 4097};
    const int32_t size = sizes[seed % 8];
    std::vector<int32_t> positions(size);
    for (int32_t i = 0; i < size; ++i) positions[i] = i;
    std::shuffle(positions.begin(), positions.end(), rng);
    positions.resize(rng() % (size + 1));
    Counter counter(size);
    std::vector<bool> marked(size, false);
    for (size_t k = 0; k < positions.size(); ++k) {
      counter.Mark(positions[k]);
      marked[positions[k]] = true;
      if (k % 7 != 0 && k + 1 != positions.size()) continue;
      int64_t below = 0;
      for (int32_t end = 0; end <= size; ++end) {
        ASSERT_EQ(counter.Before(end), below)
            << "seed " << seed << " size " << size << " end " << end;
        if (end < size) below += marked[end];
      }
    }
  }
}

}  // namespace
}  // namespace memplan
