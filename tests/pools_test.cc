// Plans across several pools: SpillsLess, and exact and cpsat minimising
// the bytes that spill out of the faster pools, against brute force
// (oracles.h: OptimumAcrossPools).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/planners/exact.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "oracles.h"
#include "test_util.h"

namespace memplan {
namespace {

using testing::OptimumAcrossPools;
using testing::PoolsOptimum;

// `a` below `b`, the last pool first (pool 0 aside), as SpillsLess orders
// the bytes.
bool Below(const std::vector<Bytes>& a, const std::vector<Bytes>& b) {
  return SpillsLess(a, 0, b, 0);
}

// 3 to 7 buffers in 2 or 3 pools; the pools but the last have a small
// capacity. By seed: alignments, explicit conflicts, a fixed buffer.
Problem SmallPoolsProblem(uint64_t seed) {
  return testing::RandomProblem(seed,
                                {.buffers = 3 + static_cast<int>(seed % 5),
                                 .horizon = 6,
                                 .max_lifetime = 4,
                                 .max_size = 8,
                                 .pools = seed % 3 == 0 ? 3 : 2,
                                 .capacity = 6 + static_cast<Bytes>(seed % 7),
                                 .alignments = seed % 4 == 0,
                                 .explicit_conflicts = seed % 5 == 0 ? 2 : 0,
                                 .fixed = seed % 6 == 0 ? 1 : 0});
}

// What exact's search proves on: no fixed buffers, no explicit conflicts,
// one alignment.
bool Plain(const Problem& problem) {
  if (!problem.conflicts.empty()) return false;
  for (const Buffer& b : problem.buffers) {
    if (b.fixed.has_value() || b.alignment != 1) return false;
  }
  for (const Pool& p : problem.pools) {
    if (p.alignment != 1) return false;
  }
  return true;
}

absl::StatusOr<Plan> Solve(const std::string& name, const Problem& problem,
                           PlanOptions options = testing::CountedWork(2)) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner(name);
  if (!planner.ok()) return planner.status();
  absl::StatusOr<Plan> plan = (*planner)->Solve(problem, options);
  if (plan.ok()) {
    const absl::Status valid = VerifyPlan(problem, *plan);
    if (!valid.ok()) return valid;
  }
  return plan;
}

TEST(SpillsLessTest, TheLastPoolDecidesFirstThenThePeak) {
  // Three pools: the bytes of pool 2, then of pool 1; pool 0's decide
  // nothing (it holds the rest).
  EXPECT_TRUE(SpillsLess({0, 9, 1}, 100, {9, 0, 2}, 1));
  EXPECT_TRUE(SpillsLess({5, 1, 2}, 100, {4, 2, 2}, 1));
  EXPECT_FALSE(SpillsLess({4, 2, 2}, 1, {5, 1, 2}, 100));
  EXPECT_TRUE(SpillsLess({5, 1, 2}, 1, {7, 1, 2}, 2));
  EXPECT_FALSE(SpillsLess({5, 1, 2}, 2, {5, 1, 2}, 2));
  // One pool: the peak alone.
  EXPECT_TRUE(SpillsLess({9}, 1, {1}, 2));
}

TEST(SpillsLessTest, PoolBytesSumsTheSizesInEachPool) {
  const Problem problem{
      .buffers = {{.name = "a", .size = 3, .lifetime = {0, 1}},
                  {.name = "b", .size = 4, .lifetime = {0, 1}},
                  {.name = "c", .size = 5, .lifetime = {1, 2}}},
      .pools = {{.name = "sram", .capacity = 8}, {.name = "dram"}}};
  Plan plan{.assignments = {{.buffer = 0, .pool = 1, .offset = 0},
                            {.buffer = 1, .pool = 0, .offset = 0},
                            {.buffer = 2, .pool = 0, .offset = 0}}};
  EXPECT_EQ(PoolBytes(problem, plan), (std::vector<Bytes>{9, 3}));
}

class AcrossPoolsTest : public ::testing::TestWithParam<std::string> {};

// Brute force knows the least spill; a proven plan meets it, no plan beats
// it, and where the search is complete the plan is proven.
TEST_P(AcrossPoolsTest, MeetsBruteForceAndProvesIt) {
  int proven = 0, spilled = 0, three_pools = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Problem problem = SmallPoolsProblem(seed);
    const PoolsOptimum optimum = OptimumAcrossPools(problem);
    ASSERT_TRUE(optimum.fits);  // the last pool is unbounded
    absl::StatusOr<Plan> plan = Solve(GetParam(), problem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const std::vector<Bytes> bytes = PoolBytes(problem, *plan);
    EXPECT_FALSE(Below(bytes, optimum.bytes));
    if (plan->proven_optimal) {
      EXPECT_EQ(bytes, optimum.bytes);
      ++proven;
    }
    if (Plain(problem)) {
      EXPECT_TRUE(plan->proven_optimal);
      EXPECT_EQ(bytes, optimum.bytes);
    }
    // CP-SAT's last stage minimises the tops, and proves it on these.
    if (GetParam() == "cpsat" && plan->proven_optimal) {
      EXPECT_EQ(plan->peak, optimum.peak);
    }
    for (size_t p = 1; p < bytes.size(); ++p) spilled += bytes[p] > 0;
    three_pools += problem.pools.size() == 3;
  }
  EXPECT_GT(proven, 40);
  EXPECT_GT(spilled, 10);  // not only problems that fit in the first pool
  EXPECT_GT(three_pools, 10);
}

// No plan within the pools' capacities: ResourceExhausted.
TEST_P(AcrossPoolsTest, ProvesThatNothingFitsTheCapacities) {
  // Three buffers of 4 alive together, two pools of 6 bytes: one of them
  // fits nowhere, whatever the assignment.
  Problem problem{.pools = {{.name = "sram", .capacity = 6},
                            {.name = "dram", .capacity = 6}}};
  for (const char* name : {"a", "b", "c"}) {
    problem.buffers.push_back({.name = name, .size = 4, .lifetime = {0, 2}});
  }
  EXPECT_FALSE(OptimumAcrossPools(problem).fits);
  absl::StatusOr<Plan> plan = Solve(GetParam(), problem);
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
      << plan.status();
  // With 8 bytes each: two pools hold them, the last one as little as can
  // be (one buffer).
  problem.pools[0].capacity = problem.pools[1].capacity = 8;
  plan = Solve(GetParam(), problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(PoolBytes(problem, *plan), (std::vector<Bytes>{8, 4}));
  EXPECT_TRUE(plan->proven_optimal);
}

// Two fixed buffers one after the other in the fast pool leave room for a
// buffer alive over both: their bytes are never there together.
TEST_P(AcrossPoolsTest, FixedBuffersInTheFastPoolCountWhenAlive) {
  const Problem problem{
      .buffers = {{.name = "f1",
                   .size = 6,
                   .lifetime = {0, 1},
                   .fixed = Placement{.pool = 0, .offset = 0}},
                  {.name = "f2",
                   .size = 6,
                   .lifetime = {1, 2},
                   .fixed = Placement{.pool = 0, .offset = 0}},
                  {.name = "b", .size = 4, .lifetime = {0, 2}}},
      .pools = {{.name = "sram", .capacity = 10}, {.name = "dram"}}};
  ASSERT_EQ(OptimumAcrossPools(problem).bytes, (std::vector<Bytes>{16, 0}));
  absl::StatusOr<Plan> plan = Solve(GetParam(), problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(PoolBytes(problem, *plan), (std::vector<Bytes>{16, 0}));
  EXPECT_TRUE(plan->proven_optimal);
}

// Never spills more than a heuristic on larger problems, whatever the
// search proves; the same plan twice (counted work, no clock).
TEST_P(AcrossPoolsTest, NeverSpillsMoreThanTheHeuristicsAndIsDeterministic) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Problem problem =
        testing::RandomProblem(seed, {.buffers = 60,
                                      .max_size = 400,
                                      .pools = 2,
                                      .capacity = 1500,
                                      .alignments = seed % 2 == 0});
    const PlanOptions options = testing::CountedWork(0.5);
    absl::StatusOr<Plan> plan = Solve(GetParam(), problem, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const std::vector<Bytes> bytes = PoolBytes(problem, *plan);
    for (const char* heuristic :
         {"greedy_by_size", "first_fit", "position_greedy", "caffe2_dp",
          "hill_climb", "best"}) {
      absl::StatusOr<Plan> other = Solve(heuristic, problem, options);
      ASSERT_TRUE(other.ok()) << heuristic << ": " << other.status();
      EXPECT_FALSE(Below(PoolBytes(problem, *other), bytes)) << heuristic;
    }
    absl::StatusOr<Plan> again = Solve(GetParam(), problem, options);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->assignments, plan->assignments);
    EXPECT_EQ(again->counters, plan->counters);
  }
}

std::vector<std::string> AcrossPoolsPlanners() {
  std::vector<std::string> names = {"exact"};
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name == "cpsat") names.emplace_back(info.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, AcrossPoolsTest,
                         ::testing::ValuesIn(AcrossPoolsPlanners()),
                         [](const auto& info) { return info.param; });

// cp stays single-pool; exact's search alone plans several pools only when
// asked (best's members do not), as the registered exact does.
TEST(AtTheBoundTest, AcrossPoolsOnlyWhenNothingSitsLaterThanItCould) {
  // a [0, 2) and b [1, 3), 4 bytes each; c [0, 3), 2 bytes, allowed only in
  // the second pool. Max-live: 10 bytes.
  Problem problem;
  problem.pools = {{.name = "sram", .capacity = 16}, {.name = "dram"}};
  problem.buffers = {
      {.name = "a", .size = 4, .lifetime = {0, 2}},
      {.name = "b", .size = 4, .lifetime = {1, 3}},
      {.name = "c", .size = 2, .lifetime = {0, 3}, .pools = {1}}};
  ASSERT_EQ(LowerBound(problem), 10);
  auto plan_of = [&](PoolId a_pool, Offset a_offset) {
    Plan plan;
    plan.assignments = {{.buffer = 0, .pool = a_pool, .offset = a_offset},
                        {.buffer = 1, .pool = 0, .offset = 0},
                        {.buffer = 2, .pool = 1, .offset = 0}};
    if (a_pool == 0) plan.assignments[1].offset = 4;
    ComputePlanStatistics(problem, plan);
    EXPECT_TRUE(VerifyPlan(problem, plan).ok());
    return plan;
  };
  // a and b in the fast pool, c where it must be: the bound proves it.
  const Plan kept = plan_of(0, 0);
  EXPECT_EQ(kept.peak, 10);
  EXPECT_TRUE(AtTheBound(problem, kept));
  EXPECT_TRUE(kept.proven_optimal);
  // a spilled to DRAM: the sum of tops is still the bound, but a plan that
  // keeps a in SRAM spills less, so the bound proves nothing.
  const Plan spilled = plan_of(1, 2);
  EXPECT_EQ(spilled.peak, 10);
  EXPECT_TRUE(SpillsLess(problem, kept, spilled));
  EXPECT_FALSE(AtTheBound(problem, spilled));
  EXPECT_FALSE(spilled.proven_optimal);
  // One pool: the bound alone.
  Problem one = problem;
  one.pools.resize(1);
  one.buffers[2].pools.clear();
  Plan single;
  single.assignments = {{.buffer = 0, .pool = 0, .offset = 0},
                        {.buffer = 1, .pool = 0, .offset = 4},
                        {.buffer = 2, .pool = 0, .offset = 8}};
  ComputePlanStatistics(one, single);
  EXPECT_TRUE(AtTheBound(one, single));
  EXPECT_TRUE(single.proven_optimal);
}

TEST(AcrossPoolsTest, WhoPlansSeveralPools) {
  const Problem problem = SmallPoolsProblem(1);
  ASSERT_EQ(problem.pools.size(), 2u);
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != "cp") continue;
    EXPECT_EQ(Solve("cp", problem).status().code(),
              absl::StatusCode::kUnimplemented);
  }
  EXPECT_EQ(MakeExactPlanner({})->Solve(problem, {}).status().code(),
            absl::StatusCode::kUnimplemented);
  absl::StatusOr<Plan> plan =
      MakeExactPlanner({.across_pools = true})->Solve(problem, {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
}

}  // namespace
}  // namespace memplan
