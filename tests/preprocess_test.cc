// The shared preprocessing of the exact planners: the unit, the time
// sections, explicit conflicts and interchangeable buffers.

#include "exact/preprocess.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Buffer Make(Bytes size, Step start, Step end, Bytes alignment = 1) {
  return Buffer{.name = "b",
                .size = size,
                .alignment = alignment,
                .lifetime = {start, end}};
}

Problem OnePool(std::vector<Buffer> buffers, Bytes pool_alignment = 1) {
  Problem p{.name = "p",
            .buffers = std::move(buffers),
            .pools = {Pool{.name = "default", .alignment = pool_alignment}}};
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    p.buffers[i].name = "b" + std::to_string(i);
  }
  return p;
}

TEST(PlanningUnitTest, IsTheGcdOfSizesAndFixedOffsets) {
  Problem p = OnePool({Make(2048, 0, 2), Make(3072, 1, 3), Make(1024, 2, 4)});
  EXPECT_EQ(internal::PlanningUnit(p), 1024);
  p.buffers[2].fixed = Placement{.pool = 0, .offset = 512};
  EXPECT_EQ(internal::PlanningUnit(p), 512);
}

TEST(PlanningUnitTest, AlignmentsThatDivideItOrThatItDividesKeepIt) {
  // 64 divides 1024 and 4096 is a multiple of it: neither changes the unit.
  Problem p = OnePool({Make(1024, 0, 2, 64), Make(4096, 1, 3, 4096)});
  EXPECT_EQ(internal::PlanningUnit(p), 1024);
  EXPECT_EQ(internal::AlignmentInUnits(p, 0, 1024), 1);
  EXPECT_EQ(internal::AlignmentInUnits(p, 1, 1024), 4);
}

TEST(PlanningUnitTest, AnAlignmentItDoesNotDivideTakesItToAPowerOfTwo) {
  // gcd 3072 = 3 x 1024; an alignment of 2048 leaves 1024, which divides
  // every size and alignment and is divided by none but 2048.
  Problem p = OnePool({Make(3072, 0, 2), Make(6144, 1, 3, 2048)});
  const Bytes unit = internal::PlanningUnit(p);
  EXPECT_EQ(unit, 1024);
  for (BufferId b = 0; b < 2; ++b) {
    EXPECT_EQ(p.buffers[b].size % unit, 0);
    const Bytes align = EffectiveAlignment(p, b, 0);
    EXPECT_TRUE(align % unit == 0 || unit % align == 0) << align;
  }
  // The pool's alignment counts too.
  EXPECT_EQ(internal::PlanningUnit(OnePool({Make(3072, 0, 1)}, 2048)), 1024);
}

TEST(PlanningUnitTest, IsOneWithoutBytes) {
  EXPECT_EQ(internal::PlanningUnit(OnePool({})), 1);
  EXPECT_EQ(internal::PlanningUnit(OnePool({Make(0, 0, 1)})), 1);
}

TEST(SectionTimesTest, AreTheDistinctEndsOfTheGivenBuffers) {
  const Problem p =
      OnePool({Make(1, 5, 9), Make(1, 0, 5), Make(1, 2, 9), Make(1, 20, 30)});
  const std::vector<BufferId> some = {0, 1, 2};
  const std::vector<Step> times = internal::SectionTimes(p, some);
  EXPECT_THAT(times, ElementsAre(0, 2, 5, 9));
  EXPECT_EQ(internal::SectionOf(times, 0), 0);
  EXPECT_EQ(internal::SectionOf(times, 5), 2);
  EXPECT_EQ(internal::SectionOf(times, 9), 3);
  EXPECT_THAT(internal::SectionTimes(p, {}), IsEmpty());
}

TEST(ExplicitConflictsTest, KeepOnlyWhatLifetimesDoNotImply) {
  Problem p =
      OnePool({Make(8, 0, 2), Make(8, 1, 3), Make(8, 4, 6), Make(0, 7, 8)});
  p.conflicts = {{0, 1},   // lifetimes overlap: implied
                 {0, 2},   // kept
                 {2, 0},   // the same again
                 {1, 1},   // itself
                 {1, 3}};  // a buffer without bytes
  const std::vector<std::vector<BufferId>> e = internal::ExplicitConflicts(p);
  EXPECT_THAT(e[0], ElementsAre(2));
  EXPECT_THAT(e[1], IsEmpty());
  EXPECT_THAT(e[2], ElementsAre(0));
  EXPECT_THAT(e[3], IsEmpty());
}

TEST(TwinClassesTest, SameSizeLifetimeAlignmentAndConflicts) {
  Problem p = OnePool({
      Make(8, 0, 4),      // 0
      Make(8, 0, 4),      // 1: twin of 0
      Make(8, 0, 4),      // 2: twin of 0 but for its explicit conflict
      Make(8, 0, 5),      // 3: another lifetime
      Make(16, 0, 4),     // 4: another size
      Make(8, 0, 4),      // 5: fixed
      Make(0, 0, 4),      // 6: no bytes
      Make(8, 6, 9),      // 7: the partner of 2
      Make(8, 0, 4, 16),  // 8: an alignment that is not a divisor of 8
  });
  p.buffers[5].fixed = Placement{.pool = 0, .offset = 64};
  p.conflicts = {{2, 7}};
  const Bytes unit = internal::PlanningUnit(p);
  ASSERT_EQ(unit, 8);
  EXPECT_THAT(internal::TwinClasses(p, unit),
              ElementsAre(0, 0, 2, 3, 4, 5, 6, 7, 8));
}

TEST(TwinClassesTest, AlignmentsThatDivideTheUnitAreAlike) {
  const Problem p = OnePool({Make(64, 0, 4, 16), Make(64, 0, 4, 32)});
  EXPECT_THAT(internal::TwinClasses(p, 64), ElementsAre(0, 0));
  EXPECT_THAT(internal::TwinClasses(p, 16), ElementsAre(0, 1));
}

TEST(TwinClassesTest, TheSameExplicitConflictsWithFixedBuffersOnly) {
  // Two buffers that each must avoid a different fixed buffer (at different
  // places) are not interchangeable, even when both fixed buffers end at
  // the same height.
  Problem p =
      OnePool({Make(8, 0, 2), Make(8, 0, 2), Make(8, 3, 4), Make(8, 5, 6)});
  p.buffers[2].fixed = Placement{.pool = 0, .offset = 0};
  p.buffers[3].fixed = Placement{.pool = 0, .offset = 0};
  p.conflicts = {{0, 2}, {1, 3}};
  EXPECT_THAT(internal::TwinClasses(p, 8), ElementsAre(0, 1, 2, 3));
  p.conflicts = {{0, 2}, {1, 2}};
  EXPECT_THAT(internal::TwinClasses(p, 8), ElementsAre(0, 0, 2, 3));
}

// What makes the classes sound: swapping the places of two twins in any
// valid plan leaves it valid.
TEST(TwinClassesTest, SwappingTwinsKeepsEveryPlanValid) {
  int swaps = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    testing::RandomProblemOptions options{.buffers = 24,
                                          .horizon = 8,
                                          .max_lifetime = 3,
                                          .max_size = 4,
                                          .alignments = seed % 2 == 0,
                                          .explicit_conflicts = 6,
                                          .fixed = 2};
    const Problem problem = testing::RandomProblem(seed, options);
    absl::StatusOr<std::unique_ptr<Planner>> planner =
        CreatePlanner("greedy_by_size");
    ASSERT_TRUE(planner.ok());
    absl::StatusOr<Plan> plan = (*planner)->Solve(problem, {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(VerifyPlan(problem, *plan).ok());
    const std::vector<BufferId> twin_of =
        internal::TwinClasses(problem, internal::PlanningUnit(problem));
    for (BufferId b = 0; b < static_cast<BufferId>(twin_of.size()); ++b) {
      const BufferId a = twin_of[b];
      if (a == b) continue;
      Plan swapped = *plan;
      std::swap(swapped.assignments[a].offset, swapped.assignments[b].offset);
      std::swap(swapped.assignments[a].pool, swapped.assignments[b].pool);
      EXPECT_TRUE(VerifyPlan(problem, swapped).ok())
          << "seed " << seed << ": buffers " << a << " and " << b;
      ++swaps;
    }
  }
  EXPECT_GT(swaps, 20);  // the random problems do have twins
}

}  // namespace
}  // namespace memplan
