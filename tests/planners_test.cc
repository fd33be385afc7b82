// Comparative tests: every registered planner x a shared corpus. Each plan
// must pass the verifier, reach at least the lower bound, be deterministic,
// and no exact planner may be worse than any heuristic.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;
using ::memplan::testing::RandomProblem;
using ::memplan::testing::RandomProblemOptions;

struct CorpusEntry {
  std::string name;
  Problem problem;
};

// Small and medium inputs: hand cases, every bundled model and training graph,
// seeded random problems with pools, alignment, conflicts and fixed buffers.
const std::vector<CorpusEntry>& Corpus() {
  static const auto* corpus = [] {
    auto* out = new std::vector<CorpusEntry>();
    out->push_back({"empty", Problem{.pools = {Pool{.name = "default"}}}});
    out->push_back({"one_buffer",
                    Problem{.buffers = {Buffer{
                                .name = "a", .size = 64, .lifetime = {0, 1}}},
                            .pools = {Pool{.name = "default"}}}});
    out->push_back(
        {"zero_size",
         Problem{
             .buffers = {Buffer{.name = "a", .size = 0, .lifetime = {0, 2}},
                         Buffer{.name = "b", .size = 8, .lifetime = {1, 3}}},
             .pools = {Pool{.name = "default"}}}});
    for (const std::string& path : testing::ModelGraphs()) {
      out->push_back({path, *LoadProblem(path)});
    }
    for (const std::string& path : testing::TrainingGraphs()) {
      out->push_back({path, *LoadProblem(path)});
    }
    out->push_back({"seed_constants",
                    *LoadProblem("seed/seed000_model.json",
                                 {.plan_constants = true, .alignment = 4})});
    out->push_back(
        {"minimalloc_example", *LoadProblem("minimalloc/input.12.csv")});
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      RandomProblemOptions options;
      options.buffers = 20 + 10 * static_cast<int>(seed);
      options.alignments = seed % 2 == 0;
      options.explicit_conflicts = seed % 3 == 0 ? 5 : 0;
      options.fixed = seed % 4 == 0 ? 2 : 0;
      out->push_back(
          {absl::StrCat("random_", seed), RandomProblem(seed, options)});
    }
    for (uint64_t seed = 11; seed <= 14; ++seed) {
      // Two pools: a small fast one with a capacity, a large one without.
      RandomProblemOptions options;
      options.buffers = 40;
      options.pools = 2;
      options.capacity = 4000;
      options.alignments = seed % 2 == 0;
      options.fixed = seed == 13 ? 2 : 0;
      out->push_back(
          {absl::StrCat("random_pools_", seed), RandomProblem(seed, options)});
    }
    return out;
  }();
  return *corpus;
}

bool IsSingleUnboundedPool(const Problem& problem) {
  return problem.pools.size() == 1 && problem.pools[0].capacity == 0;
}

class PlannerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PlannerTest, EveryPlanIsValidAndAtLeastTheLowerBound) {
  PlanMemoryOptions options;
  options.planner = GetParam();
  options.plan = testing::CountedWork(1);
  for (const CorpusEntry& entry : Corpus()) {
    SCOPED_TRACE(entry.name);
    absl::StatusOr<Plan> plan = PlanMemory(entry.problem, options);
    if (!plan.ok() &&
        plan.status().code() == absl::StatusCode::kUnimplemented) {
      // Some planners support a single pool only; they must say so.
      EXPECT_GT(entry.problem.pools.size(), 1u) << plan.status();
      continue;
    }
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(entry.problem, *plan).ok());
    EXPECT_EQ(plan->naive_total, NaiveTotal(entry.problem));
    EXPECT_EQ(plan->lower_bound, LowerBound(entry.problem));
    if (IsSingleUnboundedPool(entry.problem) &&
        entry.problem.conflicts.empty()) {
      EXPECT_GE(plan->peak, plan->lower_bound);
    }
    // A plan at the lower bound is optimal, and says so (across pools, when
    // it also keeps every buffer in the first pool it may use).
    if (AtTheBound(entry.problem, *plan)) EXPECT_TRUE(plan->proven_optimal);
    EXPECT_EQ(plan->planner, GetParam());
  }
}

TEST_P(PlannerTest, SameInputSamePlan) {
  PlanMemoryOptions options;
  options.planner = GetParam();
  options.plan = testing::CountedWork(1);
  for (const char* path :
       {"models/inception_v3.json", "training/mlp_train.json"}) {
    SCOPED_TRACE(path);
    const Problem problem = *LoadProblem(path);
    absl::StatusOr<Plan> first = PlanMemory(problem, options);
    absl::StatusOr<Plan> second = PlanMemory(problem, options);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->assignments, second->assignments);
  }
}

// A deadline already passed: every planner answers at once, with a plan
// (verified, under its own name) or DeadlineExceeded saying what stopped.
// The searches built on a heuristic start (exact, cp) return that start,
// whose last resort is the naive plan; one-pass heuristics and compositions
// of them have no plan to give.
TEST_P(PlannerTest, APassedDeadlineGivesAPlanOrDeadlineExceeded) {
  const Problem problem = *LoadProblem("training/mlp_train.json");
  PlanMemoryOptions options;
  options.planner = GetParam();
  options.plan.deadline = absl::InfinitePast();
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  if (plan.ok()) {
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
    EXPECT_EQ(plan->planner, GetParam());
    EXPECT_FALSE(plan->proven_optimal && plan->peak > plan->lower_bound);
  } else {
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kDeadlineExceeded)
        << plan.status();
    EXPECT_FALSE(plan.status().message().empty());
  }
  const std::string name = GetParam();
  // naive is linear; exact and cp fall back to a start whose last resort
  // is naive, and best to naive itself.
  if (name == "naive" || name == "exact" || name == "cp" || name == "best") {
    EXPECT_TRUE(plan.ok()) << plan.status();
  }
  if (name == "greedy_by_size" || name == "hill_climb") {
    EXPECT_FALSE(plan.ok());
  }
}

TEST_P(PlannerTest, AFixedPlacementIsKept) {
  Problem problem{
      .buffers = {Buffer{.name = "fixed",
                         .size = 16,
                         .lifetime = {0, 4},
                         .fixed = Placement{.pool = 0, .offset = 32}},
                  Buffer{.name = "a", .size = 32, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 48, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "default"}}};
  PlanMemoryOptions options;
  options.planner = GetParam();
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->assignments[0].offset, 32);
}

TEST_P(PlannerTest, ABufferThatFitsNowhereIsResourceExhausted) {
  Problem problem{
      .buffers = {Buffer{.name = "small", .size = 64, .lifetime = {0, 2}},
                  Buffer{.name = "huge", .size = 4096, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "sram", .capacity = 1024}}};
  PlanMemoryOptions options;
  options.planner = GetParam();
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
      << plan.status();
  EXPECT_NE(plan.status().message().find("huge"), std::string::npos)
      << plan.status();
}

// The baseline on every bundled input, traces and MiniMalloc instances
// included: verified, and exactly the naive total.
TEST(NaivePlannerTest, PlansEveryBundledInputAtTheNaiveTotal) {
  std::vector<std::string> inputs = testing::ModelGraphs();
  for (const std::vector<std::string>& more :
       {testing::TrainingGraphs(), testing::TraceCsvs(),
        testing::MinimallocCsvs()}) {
    inputs.insert(inputs.end(), more.begin(), more.end());
  }
  for (const std::string& path : inputs) {
    SCOPED_TRACE(path);
    absl::StatusOr<Problem> problem = LoadProblem(path);
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<Plan> plan = PlanMemory(*problem, {.planner = "naive"});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, NaiveTotal(*problem));
  }
}

std::vector<std::string> PlannerNames() {
  std::vector<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners())
    names.emplace_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, PlannerTest,
                         ::testing::ValuesIn(PlannerNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace memplan
