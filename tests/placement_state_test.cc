// PlacementState: the header's worked example, fixed placements, pools in
// preference order, obstacles with explicit conflicts, taking buffers out.

#include "placement/placement_state.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "placement/placement_index.h"

namespace memplan {
namespace {

using internal::Fit;
using internal::GapSearch;
using internal::Obstacle;
using internal::PlacementIndex;
using internal::PlacementState;
using ::testing::HasSubstr;

// The header's sketch: pool 0 (capacity 64) holds a [0, 16) and b
// [32, 64) while x (24 bytes) is alive; x goes to pool 1.
Problem HeaderExample() {
  return Problem{.buffers = {{.name = "a",
                              .size = 16,
                              .lifetime = {0, 4},
                              .fixed = Placement{.pool = 0, .offset = 0}},
                             {.name = "b",
                              .size = 32,
                              .lifetime = {1, 5},
                              .fixed = Placement{.pool = 0, .offset = 32}},
                             {.name = "x", .size = 24, .lifetime = {2, 3}},
                             {.name = "y", .size = 16, .lifetime = {2, 3}},
                             {.name = "z", .size = 0, .lifetime = {2, 3}}},
                 .pools = {{.name = "fast", .capacity = 64}, {.name = "slow"}}};
}

TEST(PlacementStateTest, TheHeaderExample) {
  const Problem problem = HeaderExample();
  for (GapSearch search : {GapSearch::kListed, GapSearch::kIndexed}) {
    const PlacementIndex index(problem, search);
    PlacementState state(index);
    ASSERT_TRUE(state.PlaceFixed().ok());
    EXPECT_TRUE(state.placed(0) && state.placed(1));
    EXPECT_FALSE(state.placed(2));
    ASSERT_TRUE(state.PlaceGreedily(2, Fit::kBest).ok());
    EXPECT_EQ(state.pool(2), 1);
    EXPECT_EQ(state.offset(2), 0);
    // 16 bytes fit the gap [16, 32) of pool 0.
    ASSERT_TRUE(state.PlaceGreedily(3, Fit::kBest).ok());
    EXPECT_EQ(state.pool(3), 0);
    EXPECT_EQ(state.offset(3), 16);
    // Size 0: offset 0 of its first pool, whatever is there.
    ASSERT_TRUE(state.PlaceGreedily(4, Fit::kBest).ok());
    EXPECT_EQ(state.pool(4), 0);
    EXPECT_EQ(state.offset(4), 0);
    EXPECT_EQ(state.PoolUsed(), (std::vector<Bytes>{64, 24}));
    const Plan plan = state.ToPlan();
    EXPECT_TRUE(VerifyPlan(problem, plan).ok());
    EXPECT_EQ(plan.assignments[3].offset, 16);
  }
}

TEST(PlacementStateTest, NoRoomInAnyPoolIsResourceExhausted) {
  Problem problem = HeaderExample();
  problem.pools[1].capacity = 20;  // x (24 bytes) fits neither pool
  const PlacementIndex index(problem);
  PlacementState state(index);
  ASSERT_TRUE(state.PlaceFixed().ok());
  const absl::Status status = state.PlaceGreedily(2, Fit::kFirst);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(), HasSubstr("x"));
  EXPECT_FALSE(state.placed(2));
}

TEST(PlacementStateTest, CollidingFixedPlacementsNameBothBuffers) {
  Problem problem = HeaderExample();
  problem.buffers[1].fixed->offset = 8;  // b over a's [0, 16)
  const PlacementIndex index(problem);
  PlacementState state(index);
  const absl::Status status = state.PlaceFixed();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"a\""));
  EXPECT_THAT(status.message(), HasSubstr("\"b\""));
  EXPECT_THAT(status.message(), HasSubstr("fast"));
}

// An explicit conflict makes a buffer alive at another time an obstacle;
// taking a buffer out frees its bytes for the next.
TEST(PlacementStateTest, ExplicitPartnersAreObstaclesAndUnplaceFrees) {
  const Problem problem{
      .buffers = {{.name = "p", .size = 10, .lifetime = {0, 1}},
                  {.name = "q", .size = 10, .lifetime = {5, 6}},
                  {.name = "r", .size = 10, .lifetime = {5, 6}},
                  {.name = "s", .size = 10, .lifetime = {9, 10}}},
      .pools = {{.name = "default"}},
      .conflicts = {{.a = 0, .b = 1}}};
  for (GapSearch search : {GapSearch::kListed, GapSearch::kIndexed}) {
    const PlacementIndex index(problem, search);
    PlacementState state(index);
    ASSERT_TRUE(state.PlaceFixed().ok());
    for (BufferId b : {0, 1, 2, 3})
      ASSERT_TRUE(state.PlaceGreedily(b, Fit::kBest).ok());
    EXPECT_EQ(state.offset(1), 10);  // above its partner p
    EXPECT_EQ(state.offset(2), 0);   // r: q is in the way, p is not
    std::vector<Obstacle> obstacles;
    state.CollectObstacles(1, 0, obstacles);
    std::vector<BufferId> ids;
    for (const Obstacle& o : obstacles) ids.push_back(o.buffer);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<BufferId>{0, 2}));
    state.Unplace(2);
    EXPECT_FALSE(state.placed(2));
    state.CollectObstacles(1, 0, obstacles);
    EXPECT_EQ(obstacles.size(), 1u);
    state.Unplace(1);
    // q again, first fit: p is still in the way at [0, 10).
    ASSERT_TRUE(state.PlaceGreedily(1, Fit::kFirst).ok());
    EXPECT_EQ(state.offset(1), 10);
    ASSERT_TRUE(state.PlaceGreedily(2, Fit::kFirst).ok());
    EXPECT_EQ(state.offset(2), 0);
    EXPECT_TRUE(VerifyPlan(problem, state.ToPlan()).ok());
  }
}

// Both searches count the same work, and it grows with the buffers met.
TEST(PlacementStateTest, WorkIsTheSameWhicheverSearchAnswers) {
  Problem problem{.pools = {{.name = "default"}}};
  for (int i = 0; i < 300; ++i) {
    problem.buffers.push_back(
        {.name = "t" + std::to_string(i),
         .size = 1 + (i * 37) % 100,
         .lifetime = {i % 50, i % 50 + 1 + (i * 13) % 40}});
  }
  const PlacementIndex listed(problem, GapSearch::kListed);
  const PlacementIndex indexed(problem, GapSearch::kIndexed);
  PlacementState a(listed);
  PlacementState b(indexed);
  for (BufferId id = 0; id < 300; ++id) {
    ASSERT_TRUE(a.PlaceGreedily(id, Fit::kBest).ok());
    ASSERT_TRUE(b.PlaceGreedily(id, Fit::kBest).ok());
    ASSERT_EQ(a.offset(id), b.offset(id)) << id;
    ASSERT_EQ(a.work(), b.work()) << id;
  }
  EXPECT_GT(a.work(), 300);
  // A moved state keeps its placement.
  PlacementState moved = std::move(b);
  EXPECT_EQ(moved.offset(299), a.offset(299));
  EXPECT_TRUE(VerifyPlan(problem, moved.ToPlan()).ok());
}

}  // namespace
}  // namespace memplan
