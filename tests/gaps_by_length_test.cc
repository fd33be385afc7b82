// GapsByLength: its classes order lengths, and after any sequence of
// additions, resizes and removals it holds exactly the gaps of a plain map.

#include "placement/gaps_by_length.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace memplan {
namespace {

using internal::GapsByLength;

TEST(GapsByLengthTest, ClassesAreInOrderOfLength) {
  int previous = GapsByLength::ClassOf(1);
  for (Bytes length = 1; length < (Bytes{1} << 20); length += 1 + length / 64) {
    const int c = GapsByLength::ClassOf(length);
    ASSERT_GE(c, previous) << length;
    ASSERT_LT(c, GapsByLength::kClasses);
    // The class's shortest length, and from 4 on within 25 % of it.
    ASSERT_LE(GapsByLength::ClassMin(c), length) << length;
    if (length >= 4)
      ASSERT_LT(length, GapsByLength::ClassMin(c) * 5 / 4 + 1) << length;
    previous = c;
  }
  // Four classes per power of two from 4 on.
  EXPECT_EQ(GapsByLength::ClassOf(4) + 1, GapsByLength::ClassOf(5));
  EXPECT_EQ(GapsByLength::ClassOf(4) + 4, GapsByLength::ClassOf(8));
  EXPECT_EQ(GapsByLength::ClassOf(1023), GapsByLength::ClassOf(896));
  EXPECT_NE(GapsByLength::ClassOf(1023), GapsByLength::ClassOf(895));
  EXPECT_LT(GapsByLength::ClassOf(Bytes{1} << 62), GapsByLength::kClasses);
}

// Every gap, class by class, with NextClass and Class.
std::map<Offset, Bytes> Contents(const GapsByLength& gaps) {
  std::map<Offset, Bytes> out;
  for (int c = gaps.NextClass(0); c < GapsByLength::kClasses;
       c = gaps.NextClass(c + 1)) {
    EXPECT_FALSE(gaps.Class(c).empty()) << c;
    for (const GapsByLength::Gap& gap : gaps.Class(c)) {
      EXPECT_EQ(GapsByLength::ClassOf(gap.length), c);
      EXPECT_EQ(gap.begin(), gap.owner - gap.length);
      EXPECT_TRUE(out.emplace(gap.owner, gap.length).second) << gap.owner;
    }
  }
  return out;
}

TEST(GapsByLengthTest, MatchesAPlainMapUnderRandomChanges) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    // Lengths of a few scales, so that gaps move between distant classes.
    auto length = [&]() {
      return static_cast<Bytes>(1 + rng() % (Bytes{1} << (rng() % 30)));
    };
    GapsByLength gaps;
    std::map<Offset, Bytes> want;
    for (int step = 0; step < 3000; ++step) {
      const uint64_t op = rng() % 4;
      if (want.empty() || op == 0) {
        const Offset owner = static_cast<Offset>(rng() % 100000);
        if (want.count(owner) != 0) continue;
        const Bytes l = length();
        gaps.Add(owner, l);
        want[owner] = l;
      } else {
        auto it = want.begin();
        std::advance(it, rng() % want.size());
        if (op == 1) {
          gaps.Remove(it->first);
          want.erase(it);
        } else {
          const Bytes l = op == 2 ? length() : it->second + 1;
          gaps.Resize(it->first, l);
          it->second = l;
        }
      }
      if (step % 100 != 99) continue;
      ASSERT_EQ(Contents(gaps), want) << "seed " << seed << " step " << step;
      for (Bytes size : {Bytes{1}, Bytes{5}, Bytes{1000}, length()}) {
        for (int32_t limit : {0, 3, 16, 1 << 20}) {
          int64_t count = 0;
          for (const auto& [owner, l] : want) count += l >= size;
          ASSERT_EQ(gaps.CountAtLeast(size, limit),
                    std::min<int64_t>(count, limit + 1))
              << "seed " << seed << " size " << size << " limit " << limit;
        }
      }
    }
    gaps.Clear();
    EXPECT_EQ(gaps.NextClass(0), GapsByLength::kClasses);
    EXPECT_TRUE(Contents(gaps).empty());
    // Usable again after Clear.
    gaps.Add(10, 3);
    EXPECT_EQ(Contents(gaps), (std::map<Offset, Bytes>{{10, 3}}));
  }
}

}  // namespace
}  // namespace memplan
