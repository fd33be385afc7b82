// RunSet and AddRun: the runs are the union of the ranges added, merged
// where they overlap or touch, and the gaps by length follow every merge.

#include "placement/run_set.h"

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/gaps_by_length.h"
#include "placement/node_pool.h"

namespace memplan {
namespace {

using internal::AddRun;
using internal::GapsByLength;
using internal::NodePool;
using internal::RunSet;

std::map<Offset, Offset> RunsOf(const RunSet& set) {
  return {set.runs.begin(), set.runs.end()};
}

// The gaps of `set` as GapsByLength lists them: owner -> length.
std::map<Offset, Bytes> IndexedGaps(const GapsByLength& gaps) {
  std::map<Offset, Bytes> out;
  for (int c = gaps.NextClass(0); c < GapsByLength::kClasses;
       c = gaps.NextClass(c + 1)) {
    for (const GapsByLength::Gap& gap : gaps.Class(c))
      out[gap.owner] = gap.length;
  }
  return out;
}

// The gaps below each run, from the runs themselves.
std::map<Offset, Bytes> GapsBelowRuns(const RunSet& set) {
  std::map<Offset, Bytes> out;
  Offset below = 0;
  for (const auto& [begin, end] : set.runs) {
    if (begin > below) out[begin] = begin - below;
    below = end;
  }
  return out;
}

TEST(RunSetTest, MergesOverlappingAndTouchingRanges) {
  NodePool pool;
  RunSet set(&pool);
  EXPECT_TRUE(AddRun(set, 10, 20));
  EXPECT_TRUE(AddRun(set, 30, 50));
  EXPECT_EQ(RunsOf(set), (std::map<Offset, Offset>{{10, 20}, {30, 50}}));
  // Bridges the two runs.
  EXPECT_TRUE(AddRun(set, 18, 34));
  EXPECT_EQ(RunsOf(set), (std::map<Offset, Offset>{{10, 50}}));
  // Touches the run's end: one run, not two.
  EXPECT_TRUE(AddRun(set, 50, 55));
  EXPECT_EQ(RunsOf(set), (std::map<Offset, Offset>{{10, 55}}));
  // Touches its begin from below.
  EXPECT_TRUE(AddRun(set, 0, 10));
  EXPECT_EQ(RunsOf(set), (std::map<Offset, Offset>{{0, 55}}));
  // Already held: nothing changes.
  EXPECT_FALSE(AddRun(set, 20, 40));
  EXPECT_FALSE(AddRun(set, 0, 55));
  // Swallows several runs at once.
  EXPECT_TRUE(AddRun(set, 60, 70));
  EXPECT_TRUE(AddRun(set, 80, 90));
  EXPECT_TRUE(AddRun(set, 100, 110));
  EXPECT_TRUE(AddRun(set, 58, 105));
  EXPECT_EQ(RunsOf(set), (std::map<Offset, Offset>{{0, 55}, {58, 110}}));
}

TEST(RunSetTest, GapsFollowTheRuns) {
  NodePool pool;
  RunSet set(&pool);
  AddRun(set, 10, 20);
  AddRun(set, 30, 35);
  AddRun(set, 60, 80);
  // Indexed on first use: [0, 10), [20, 30), [35, 60).
  EXPECT_EQ(IndexedGaps(set.Gaps()),
            (std::map<Offset, Bytes>{{10, 10}, {30, 10}, {60, 25}}));
  AddRun(set, 20, 25);  // the run below grows: gap [25, 30), same owner
  AddRun(set, 0, 5);    // a new run below: gap [5, 10) owned by 10
  AddRun(set, 33, 61);  // swallows the gap owned by 60
  EXPECT_EQ(IndexedGaps(set.Gaps()),
            (std::map<Offset, Bytes>{{10, 5}, {30, 5}}));
  set.Clear();
  EXPECT_TRUE(set.runs.empty());
  EXPECT_TRUE(IndexedGaps(set.Gaps()).empty());
}

// Random ranges at several scales against a byte map; the gaps are indexed
// part way through and must match the runs from then on.
TEST(RunSetTest, MatchesAByteMapOnRandomRanges) {
  constexpr Offset kSpan = 4000;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(seed);
    NodePool pool;
    RunSet set(&pool);
    std::vector<bool> taken(kSpan, false);
    const int adds = 1 + static_cast<int>(rng() % 300);
    const int index_at = static_cast<int>(rng() % adds);
    for (int k = 0; k < adds; ++k) {
      const Offset begin = static_cast<Offset>(rng() % (kSpan - 1));
      const Offset max_length = Offset{1} << (rng() % 10);
      const Offset end = std::min<Offset>(
          kSpan, begin + 1 + static_cast<Offset>(rng() % max_length));
      bool all_taken = true;
      for (Offset o = begin; o < end; ++o) all_taken &= taken[o];
      ASSERT_EQ(AddRun(set, begin, end), !all_taken)
          << "seed " << seed << " add " << k;
      for (Offset o = begin; o < end; ++o) taken[o] = true;
      // The maximal runs of the byte map: disjoint and not touching.
      std::map<Offset, Offset> want;
      for (Offset o = 0; o < kSpan; ++o) {
        if (!taken[o]) continue;
        const Offset from = o;
        while (o < kSpan && taken[o]) ++o;
        want[from] = o;
      }
      ASSERT_EQ(RunsOf(set), want) << "seed " << seed << " add " << k;
      if (k == index_at) set.Gaps();
      if (k >= index_at) {
        ASSERT_EQ(IndexedGaps(set.Gaps()), GapsBelowRuns(set))
            << "seed " << seed << " add " << k;
      }
    }
  }
}

}  // namespace
}  // namespace memplan
