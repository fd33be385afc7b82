// caffe2_greedy and caffe2_dp: hand cases worked out as memonger would, and
// properties over the bundled models and seeded random problems.

#include "caffe2/caffe2.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;
using ::memplan::testing::RandomProblem;
using ::memplan::testing::RandomProblemOptions;

Problem OnePool(std::vector<Buffer> buffers) {
  return Problem{.buffers = std::move(buffers),
                 .pools = {Pool{.name = "default"}}};
}

Buffer B(const char* name, Bytes size, Step start, Step end) {
  return Buffer{
      .name = name, .tensors = {name}, .size = size, .lifetime = {start, end}};
}

std::vector<Offset> Offsets(const Plan& plan) {
  std::vector<Offset> out;
  for (const Assignment& a : plan.assignments) out.push_back(a.offset);
  return out;
}

absl::StatusOr<Plan> SolveAndVerify(const Planner& planner,
                                    const Problem& problem) {
  absl::StatusOr<Plan> plan = planner.Solve(problem, PlanOptions{});
  if (plan.ok()) {
    absl::Status valid = VerifyPlan(problem, *plan);
    if (!valid.ok()) return valid;
  }
  return plan;
}

absl::StatusOr<Plan> PlanWith(const char* planner, const Problem& problem) {
  return PlanMemory(problem, {.planner = planner});
}

// A chain: each op reads the previous tensor.
//   a [0,2) 100, b [1,3) 200, c [2,4) 100, d [3,5) 200.
// By last use: a opens object 0; b overlaps it and opens object 1; c follows
// a (object 0, same size); d follows b (object 1). Objects {a,c} 100 at 0,
// {b,d} 200 at 100: 300 bytes, the lower bound.
Problem Chain() {
  return OnePool({B("a", 100, 0, 2), B("b", 200, 1, 3), B("c", 100, 2, 4),
                  B("d", 200, 3, 5)});
}

TEST(Caffe2GreedyTest, ChainReusesTwoObjects) {
  for (const char* planner : {"caffe2_greedy", "caffe2_dp"}) {
    SCOPED_TRACE(planner);
    absl::StatusOr<Plan> plan = PlanWith(planner, Chain());
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(Offsets(*plan), (std::vector<Offset>{0, 100, 0, 100}));
    EXPECT_EQ(plan->counters.at("shared_objects"), 2);
    EXPECT_EQ(plan->peak, 300);
    EXPECT_EQ(plan->naive_total, 600);
    EXPECT_TRUE(plan->proven_optimal);  // peak == lower bound
  }
}

// A diamond: x [0,3) 100 feeds l [1,4) 50 and r [2,4) 50, which feed y [3,4)
// 100. By last use: x, then l and r (each overlapping everything before),
// then y, which can follow only x and does (same size). Greedy objects in
// creation order: {x,y} at 0, {l} at 100, {r} at 150: 200 bytes, the lower
// bound. The dynamic program finds the same groups but, as memonger, moves
// the object y joined to the end: {l} at 0, {r} at 50, {x,y} at 100.
TEST(Caffe2GreedyTest, DiamondSharesTheJoinWithTheFork) {
  const Problem problem = OnePool({B("x", 100, 0, 3), B("l", 50, 1, 4),
                                   B("r", 50, 2, 4), B("y", 100, 3, 4)});
  const std::pair<const char*, std::vector<Offset>> expected[] = {
      {"caffe2_greedy", {0, 100, 150, 0}}, {"caffe2_dp", {100, 0, 50, 100}}};
  for (const auto& [planner, offsets] : expected) {
    SCOPED_TRACE(planner);
    absl::StatusOr<Plan> plan = PlanWith(planner, problem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(Offsets(*plan), offsets);
    EXPECT_EQ(plan->counters.at("shared_objects"), 3);
    EXPECT_EQ(plan->peak, 200);
  }
}

// Where the dynamic program beats the greedy:
//   a [0,1) 100, b [0,1) 10, p [1,3) 60, q [2,3) 100.
// Greedy: a and b open objects 0 (100) and 1 (10); p is closest in size to
// object 0 (|100-60| < |10-60|) and joins it; q overlaps p and must grow
// object 1 to 100. Objects {a,p} at 0, {b,q} at 100: 200 bytes.
// DP: for q, joining a's object means p is re-planned without it and joins
// b's (60); q joins a's (100): {b,p} 60 at 0, {a,q} 100 at 60: 160 bytes,
// the lower bound.
Problem DpBeatsGreedy() {
  return OnePool({B("a", 100, 0, 1), B("b", 10, 0, 1), B("p", 60, 1, 3),
                  B("q", 100, 2, 3)});
}

TEST(Caffe2DpTest, BeatsTheGreedyOnTheClosestSizeTrap) {
  absl::StatusOr<Plan> greedy = PlanWith("caffe2_greedy", DpBeatsGreedy());
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  EXPECT_EQ(Offsets(*greedy), (std::vector<Offset>{0, 100, 0, 100}));
  EXPECT_EQ(greedy->peak, 200);
  EXPECT_FALSE(greedy->proven_optimal);

  absl::StatusOr<Plan> dp = PlanWith("caffe2_dp", DpBeatsGreedy());
  ASSERT_TRUE(dp.ok()) << dp.status();
  EXPECT_EQ(Offsets(*dp), (std::vector<Offset>{60, 0, 0, 60}));
  EXPECT_EQ(dp->peak, 160);
  EXPECT_EQ(dp->lower_bound, 160);
  EXPECT_TRUE(dp->proven_optimal);
  EXPECT_EQ(dp->counters.at("shared_objects"), 2);
}

TEST(Caffe2DpTest, AnExhaustedBudgetFallsBackToTheGreedy) {
  const auto planner = MakeCaffe2DpPlanner({.dp_max_work = kCaffe2DpNodeWork});
  absl::StatusOr<Plan> plan = SolveAndVerify(*planner, DpBeatsGreedy());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 200);
  EXPECT_FALSE(plan->proven_optimal);
}

TEST(Caffe2GreedyTest, StaticBuffersGetAnObjectOfTheirOwn) {
  // The chain with c static: a, b, d are grouped ({a} 100, {b,d} 200), then
  // c is stacked on top.
  const auto planner = MakeCaffe2GreedyPlanner({.static_buffers = {"c"}});
  absl::StatusOr<Plan> plan = SolveAndVerify(*planner, Chain());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Offsets(*plan), (std::vector<Offset>{0, 100, 300, 100}));
  EXPECT_EQ(plan->counters.at("shared_objects"), 3);
  EXPECT_EQ(plan->peak, 400);
}

TEST(Caffe2GreedyTest, GraphInputsAndOutputsCanBeMadeStatic) {
  const Graph graph{
      .tensors = {{.name = "in", .size = 8, .kind = TensorKind::kInput},
                  {.name = "t", .size = 8},
                  {.name = "out", .size = 8, .kind = TensorKind::kOutput}},
      .ops = {{.name = "f", .inputs = {"in"}, .outputs = {"t"}},
              {.name = "g", .inputs = {"t"}, .outputs = {"out"}}}};
  EXPECT_EQ(GraphInputOutputNames(graph, true, true),
            (std::vector<std::string>{"in", "out"}));
  EXPECT_EQ(GraphInputOutputNames(graph, false, true),
            (std::vector<std::string>{"out"}));
  // in [0,1) and out [1,2) could share; static, they do not.
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> shared = PlanWith("caffe2_greedy", *problem);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(shared->counters.at("shared_objects"), 2);
  const auto planner = MakeCaffe2GreedyPlanner(
      {.static_buffers = GraphInputOutputNames(graph, true, true)});
  absl::StatusOr<Plan> plan = SolveAndVerify(*planner, *problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->counters.at("shared_objects"), 3);
  EXPECT_EQ(plan->peak, 24);
}

TEST(Caffe2GreedyTest, ExplicitConflictsAndPoolsKeepBuffersApart) {
  Problem conflict = OnePool({B("a", 10, 0, 1), B("b", 10, 1, 2)});
  absl::StatusOr<Plan> shared = PlanWith("caffe2_greedy", conflict);
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(Offsets(*shared), (std::vector<Offset>{0, 0}));
  conflict.conflicts = {{.a = 0, .b = 1}};
  for (const char* planner : {"caffe2_greedy", "caffe2_dp"}) {
    absl::StatusOr<Plan> plan = PlanWith(planner, conflict);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(Offsets(*plan), (std::vector<Offset>{0, 10})) << planner;
  }
  Problem pools = OnePool({B("a", 10, 0, 1), B("b", 10, 1, 2)});
  pools.pools.push_back(Pool{.name = "slow"});
  pools.buffers[1].pools = {1, 0};  // a allows both in order 0, 1
  for (const char* planner : {"caffe2_greedy", "caffe2_dp"}) {
    absl::StatusOr<Plan> plan = PlanWith(planner, pools);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->counters.at("shared_objects"), 2) << planner;
    EXPECT_EQ(plan->assignments[1].pool, 1) << planner;
  }
}

TEST(Caffe2GreedyTest, ObjectsStackAboveFixedBuffers) {
  Problem problem =
      OnePool({B("fixed", 64, 0, 4), B("a", 32, 0, 2), B("b", 16, 2, 4)});
  problem.buffers[0].fixed = Placement{.pool = 0, .offset = 0};
  absl::StatusOr<Plan> plan = PlanWith("caffe2_greedy", problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Offsets(*plan), (std::vector<Offset>{0, 64, 64}));
  EXPECT_EQ(plan->counters.at("shared_objects"), 2);
}

TEST(Caffe2GreedyTest, AnObjectThatFitsNowhereNamesItsLargestMember) {
  Problem problem = OnePool({B("small", 64, 0, 1), B("large", 2048, 1, 2)});
  problem.pools[0].capacity = 1024;
  absl::StatusOr<Plan> plan = PlanWith("caffe2_greedy", problem);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(plan.status().message().find("large"), std::string::npos)
      << plan.status();
}

// Every plan is a shared-object plan: buffers at one (pool, offset) form an
// object, and objects of one pool do not overlap.
void ExpectSharedObjects(const Problem& problem, const Plan& plan) {
  std::map<std::pair<PoolId, Offset>, Bytes> objects;
  for (const Assignment& a : plan.assignments) {
    Bytes& size = objects[{a.pool, a.offset}];
    size = std::max(size, problem.buffers[a.buffer].size);
  }
  const std::pair<PoolId, Offset>* previous = nullptr;
  Bytes previous_size = 0;
  for (const auto& [where, size] : objects) {
    if (previous != nullptr && previous->first == where.first) {
      EXPECT_LE(previous->second + previous_size, where.second)
          << "objects overlap in pool " << where.first;
    }
    previous = &where;
    previous_size = size;
  }
}

void ExpectDpNoWorse(const std::string& name, const Problem& problem) {
  SCOPED_TRACE(name);
  absl::StatusOr<Plan> greedy = PlanWith("caffe2_greedy", problem);
  absl::StatusOr<Plan> dp = PlanWith("caffe2_dp", problem);
  ASSERT_TRUE(greedy.ok()) << greedy.status();
  ASSERT_TRUE(dp.ok()) << dp.status();
  EXPECT_LE(dp->peak, greedy->peak);
  EXPECT_GE(dp->peak, dp->lower_bound);
  ExpectSharedObjects(problem, *greedy);
  ExpectSharedObjects(problem, *dp);
}

TEST(Caffe2DpTest, NeverWorseThanTheGreedyOnBundledGraphs) {
  std::vector<std::string> paths = testing::ModelGraphs();
  for (const std::string& path : testing::TrainingGraphs())
    paths.push_back(path);
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths) {
    absl::StatusOr<Problem> problem = LoadProblem(path);
    ASSERT_TRUE(problem.ok()) << problem.status();
    ExpectDpNoWorse(path, *problem);
  }
}

TEST(Caffe2DpTest, NeverWorseThanTheGreedyOnRandomProblems) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomProblemOptions options;
    options.buffers = 10 + static_cast<int>(seed % 7) * 10;
    options.alignments = seed % 2 == 0;
    options.explicit_conflicts = seed % 3 == 0 ? 5 : 0;
    options.fixed = seed % 5 == 0 ? 2 : 0;
    if (seed % 4 == 0) {
      options.pools = 2;
      options.capacity = 4000;
    }
    ExpectDpNoWorse(absl::StrCat("random_", seed),
                    RandomProblem(seed, options));
  }
}

}  // namespace
}  // namespace memplan
