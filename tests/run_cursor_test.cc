// RunCursor: over a run set or an array of ranges, it walks the runs in
// order and seeks to the first run that ends above a point.

#include "placement/run_cursor.h"

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "placement/node_pool.h"
#include "placement/run_set.h"

namespace memplan {
namespace {

using internal::AddRun;
using internal::NodePool;
using internal::RunCursor;
using internal::RunSet;

using Ranges = std::vector<std::pair<Offset, Offset>>;

Ranges Walk(RunCursor& c) {
  Ranges out;
  for (c.Start(); !c.done(); c.Next()) out.push_back({c.begin(), c.end()});
  return out;
}

// The index in `runs` of the first run that ends above `reached`.
size_t FirstEndingAbove(const Ranges& runs, Offset reached) {
  size_t i = 0;
  while (i < runs.size() && runs[i].second <= reached) ++i;
  return i;
}

TEST(RunCursorTest, WalksAndSeeksTheHeaderExample) {
  NodePool pool;
  RunSet a(&pool);
  AddRun(a, 10, 20);
  AddRun(a, 40, 50);
  RunCursor over_set(&a);
  EXPECT_EQ(Walk(over_set), (Ranges{{10, 20}, {40, 50}}));
  EXPECT_EQ(over_set.size(), 2);
  EXPECT_EQ(over_set.last_end(), 50);
  EXPECT_EQ(over_set.set(), &a);
  over_set.Seek(45);  // inside [40, 50)
  EXPECT_EQ(over_set.begin(), 40);
  over_set.Seek(20);  // [10, 20) ends at 20, not above
  EXPECT_EQ(over_set.begin(), 40);
  over_set.Seek(5);  // back down: a run set seeks both ways
  EXPECT_EQ(over_set.begin(), 10);
  over_set.Seek(50);
  EXPECT_TRUE(over_set.done());

  const Ranges extra = {{52, 56}, {60, 61}};
  RunCursor over_array(extra.data(), extra.data() + extra.size());
  EXPECT_EQ(over_array.set(), nullptr);
  EXPECT_EQ(Walk(over_array), extra);
  EXPECT_EQ(over_array.size(), 2);
  EXPECT_EQ(over_array.last_end(), 61);
  over_array.Start();
  over_array.Seek(56);
  EXPECT_EQ(over_array.begin(), 60);
}

// Random run sets and arrays: Seek lands where a scan does, and
// SeekForward from a started cursor lands where Seek does.
TEST(RunCursorTest, SeeksMatchAScanOnRandomRuns) {
  for (uint64_t seed = 0; seed < 30; ++seed) {
    std::mt19937_64 rng(seed);
    NodePool pool;
    RunSet set(&pool);
    const int adds = 1 + static_cast<int>(rng() % 200);
    for (int k = 0; k < adds; ++k) {
      const Offset begin = static_cast<Offset>(rng() % 10000);
      AddRun(set, begin, begin + 1 + static_cast<Offset>(rng() % 60));
    }
    const Ranges runs(set.runs.begin(), set.runs.end());
    RunCursor over_set(&set);
    RunCursor over_array(runs.data(), runs.data() + runs.size());
    ASSERT_EQ(Walk(over_set), runs);
    ASSERT_EQ(Walk(over_array), runs);
    for (RunCursor* c : {&over_set, &over_array}) {
      // Seeks at rising points, as the sweeps make them.
      c->Start();
      Offset reached = 0;
      for (int k = 0; k < 300; ++k) {
        reached += static_cast<Offset>(rng() % 80);
        const size_t want = FirstEndingAbove(runs, reached);
        if (k % 2 == 0) {
          c->Seek(reached);
        } else if (!c->done() && c->end() <= reached) {
          c->SeekForward(reached);
        } else {
          continue;  // SeekForward is only asked to skip runs
        }
        if (want == runs.size()) {
          ASSERT_TRUE(c->done()) << "seed " << seed << " at " << reached;
          break;
        }
        ASSERT_FALSE(c->done()) << "seed " << seed << " at " << reached;
        ASSERT_EQ(c->begin(), runs[want].first) << "seed " << seed;
        ASSERT_EQ(c->end(), runs[want].second) << "seed " << seed;
      }
    }
  }
}

}  // namespace
}  // namespace memplan
