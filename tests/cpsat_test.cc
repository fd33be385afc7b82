// The cpsat planner: the seed notebook's optimum, agreement with brute
// force on tiny problems of one and of two pools (alignment, fixed
// placements, explicit conflicts, capacities), infeasible capacities,
// determinism, and the warm start.

#include "cpsat/cpsat.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "memplan/compose.h"
#include "memplan/formats.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#include "oracles.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;
using ::memplan::testing::RandomProblem;
using ::memplan::testing::RandomProblemOptions;

// Solves with the search alone (warm_start false) or from the registered
// heuristic start, and checks the plan with the verifier.
absl::StatusOr<Plan> SolveCpsat(
    const Problem& problem, bool warm_start, CpsatStats* stats = nullptr,
    PlanOptions options = testing::CountedWork(10)) {
  std::unique_ptr<Planner> planner;
  if (warm_start) {
    absl::StatusOr<std::unique_ptr<Planner>> registered =
        CreatePlanner("cpsat");
    if (!registered.ok()) return registered.status();
    planner = *std::move(registered);
  } else {
    planner = MakeCpsatPlanner(CpsatOptions{}, stats);
  }
  absl::StatusOr<Plan> plan = planner->Solve(problem, options);
  if (plan.ok()) {
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    EXPECT_EQ(plan->assignments.size(), problem.buffers.size());
    EXPECT_EQ(plan->planner, "cpsat");
  }
  return plan;
}

TEST(CpsatTest, RegisteredAfterTheCorePlanners) {
  int found = 0;
  for (const PlannerInfo& info : RegisteredPlanners())
    found += info.name == "cpsat";
  EXPECT_EQ(found, 1);
  EXPECT_EQ(RegisteredPlanners().back().name, "cpsat");
  absl::StatusOr<std::unique_ptr<Planner>> cpsat =
      CreatePlanner("cpsat", {{"threads", "1"}, {"warm_start", "false"}});
  ASSERT_TRUE(cpsat.ok()) << cpsat.status();
  EXPECT_EQ((*cpsat)->name(), "cpsat");
}

Problem SeedProblem() {
  return *LoadProblem("seed/seed000_model.json",
                      {.plan_constants = true, .alignment = 4});
}

TEST(CpsatTest, SeedModelOptimumIsProven) {
  const Problem problem = SeedProblem();
  PlanMemoryOptions options;
  options.planner = "cpsat";
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 697888);
  EXPECT_EQ(plan->lower_bound, 697888);
  EXPECT_TRUE(plan->proven_optimal);

  // The model alone, without the heuristic start, finds and proves it too.
  CpsatStats stats;
  plan = SolveCpsat(problem, /*warm_start=*/false, &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 697888);
  EXPECT_TRUE(plan->proven_optimal);
  EXPECT_TRUE(stats.model_built);
  EXPECT_FALSE(stats.used_warm_start);
  EXPECT_EQ(stats.status, 4);  // OPTIMAL
  EXPECT_EQ(plan->counters.at("objective_bound"), 697888);
}

// Three buffers alive at different steps that explicitly conflict pairwise:
// the lower bound (8) knows nothing of the explicit conflicts; the optimum
// is 24.
Problem ExplicitTriangle(Bytes capacity) {
  return Problem{
      .buffers = {Buffer{.name = "x", .size = 8, .lifetime = {0, 1}},
                  Buffer{.name = "y", .size = 8, .lifetime = {1, 2}},
                  Buffer{.name = "z", .size = 8, .lifetime = {2, 3}}},
      .pools = {Pool{.name = "sram", .capacity = capacity}},
      .conflicts = {{.a = 0, .b = 1}, {.a = 0, .b = 2}, {.a = 1, .b = 2}}};
}

TEST(CpsatTest, ExplicitConflictsAboveTheLowerBound) {
  for (bool warm : {false, true}) {
    absl::StatusOr<Plan> plan = SolveCpsat(ExplicitTriangle(0), warm);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->lower_bound, 8);
    EXPECT_EQ(plan->peak, 24);
    EXPECT_TRUE(plan->proven_optimal);
  }
}

TEST(CpsatTest, CapacityFitsOnlyTheOptimumOrNothing) {
  absl::StatusOr<Plan> plan = SolveCpsat(ExplicitTriangle(24), false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 24);

  // Greedy by size needs 10 bytes here, the optimum is 7 (cp_test.cc).
  Problem trap{.buffers = {Buffer{.name = "a", .size = 4, .lifetime = {0, 1}},
                           Buffer{.name = "b", .size = 3, .lifetime = {0, 3}},
                           Buffer{.name = "c", .size = 3, .lifetime = {2, 4}},
                           Buffer{.name = "d", .size = 4, .lifetime = {3, 5}}},
               .pools = {Pool{.name = "default", .capacity = 7}}};
  for (bool warm : {false, true}) {
    plan = SolveCpsat(trap, warm);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, 7);
    EXPECT_TRUE(plan->proven_optimal);
  }

  // The lower bound fits (8 <= 16), no plan does: CP-SAT proves it.
  for (bool warm : {false, true}) {
    plan = SolveCpsat(ExplicitTriangle(16), warm);
    ASSERT_FALSE(plan.ok());
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
        << plan.status();
  }
  // A buffer larger than its pool: named.
  plan = SolveCpsat(ExplicitTriangle(4), false);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(plan.status().message().find("\"x\""), std::string::npos)
      << plan.status();
}

TEST(CpsatTest, FixedPlacementsAlignmentAndZeroSizeBuffers) {
  Problem problem{
      .buffers = {Buffer{.name = "fixed",
                         .size = 16,
                         .lifetime = {0, 4},
                         .fixed = Placement{.pool = 0, .offset = 16}},
                  Buffer{.name = "a", .size = 16, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 32, .lifetime = {1, 3}},
                  Buffer{.name = "empty", .size = 0, .lifetime = {0, 4}}},
      .pools = {Pool{.name = "default", .alignment = 16}}};
  absl::StatusOr<Plan> plan = SolveCpsat(problem, false);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->assignments[0].offset, 16);
  // a below the fixed buffer, b above it.
  EXPECT_EQ(plan->peak, 64);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(CpsatTest, AgreesWithBruteForceOnTinyProblems) {
  int above_lower_bound = 0, several_pools = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomProblemOptions options;
    options.buffers = 3 + static_cast<int>(seed % 4);  // 3..6
    options.horizon = 6;
    options.max_lifetime = 4;
    options.max_size = 12;
    options.alignments = seed % 2 == 0;
    options.explicit_conflicts = seed % 3 == 0 ? 2 : 0;
    options.fixed = seed % 5 == 0 ? 1 : 0;
    options.pools = seed % 4 == 1 ? 2 : 1;
    if (options.pools == 2) options.capacity = 16;
    const Problem problem = RandomProblem(seed, options);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    // Across pools: the least spill (SpillsLess), then the least peak.
    const testing::PoolsOptimum optimum = testing::OptimumAcrossPools(problem);
    ASSERT_TRUE(optimum.fits);
    if (optimum.peak > LowerBound(problem)) ++above_lower_bound;
    if (problem.pools.size() > 1) ++several_pools;
    for (bool warm : {false, true}) {
      absl::StatusOr<Plan> plan = SolveCpsat(problem, warm);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(PoolBytes(problem, *plan), optimum.bytes);
      EXPECT_EQ(plan->peak, optimum.peak);
      EXPECT_TRUE(plan->proven_optimal);
    }
  }
  EXPECT_GT(above_lower_bound, 0);
  EXPECT_GT(several_pools, 0);
}

TEST(CpsatTest, SameInputSamePlan) {
  RandomProblemOptions options;
  options.buffers = 60;
  options.alignments = true;
  options.explicit_conflicts = 6;
  options.pools = 2;
  options.capacity = 4000;
  const Problem problem = RandomProblem(7, options);
  // A budget too small to prove anything: the deterministic time limit
  // decides where it stops, the same both times.
  const PlanOptions small = testing::CountedWork(0.4);
  absl::StatusOr<Plan> first = SolveCpsat(problem, false, nullptr, small);
  absl::StatusOr<Plan> second = SolveCpsat(problem, false, nullptr, small);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(first->proven_optimal);  // stopped by the budget
  EXPECT_EQ(first->assignments, second->assignments);
  EXPECT_EQ(first->counters, second->counters);
}

TEST(CpsatTest, NeverWorseThanTheWarmStart) {
  for (const char* name :
       {"minimalloc/A.1048576.csv", "minimalloc/B.1048576.csv"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<Problem> problem = LoadProblem(name, {});
    ASSERT_TRUE(problem.ok()) << problem.status();
    PlanMemoryOptions best_options;
    best_options.planner = "best";
    best_options.plan = testing::CountedWork(0.5);
    absl::StatusOr<Plan> best = PlanMemory(*problem, best_options);
    ASSERT_TRUE(best.ok()) << best.status();
    // cpsat's start is best with half of its work.
    absl::StatusOr<Plan> plan =
        SolveCpsat(*problem, true, nullptr, testing::CountedWork(1));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_LE(plan->peak, best->peak);
  }
}

// Under a capacity, from a start that fits: CP-SAT searches in slices while
// they lower the top. From naive's plan the slices reach brute force's
// optimum and prove it.
TEST(CpsatTest, UnderACapacitySlicesReachTheOptimum) {
  int above_start = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    RandomProblemOptions options;
    options.buffers = 4 + static_cast<int>(seed % 3);  // 4..6
    options.horizon = 6;
    options.max_lifetime = 4;
    options.max_size = 12;
    Problem problem = RandomProblem(seed, options);
    Bytes total = 0;
    for (const Buffer& b : problem.buffers) total += b.size;
    problem.pools[0].capacity = total;  // naive's plan fits
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const testing::PoolsOptimum optimum = testing::OptimumAcrossPools(problem);
    ASSERT_TRUE(optimum.fits);
    absl::StatusOr<std::unique_ptr<Planner>> naive = CreatePlanner("naive");
    ASSERT_TRUE(naive.ok()) << naive.status();
    std::unique_ptr<Planner> planner =
        WarmStarted(MakeCpsatPlanner(CpsatOptions{}), *std::move(naive), 0.1);
    absl::StatusOr<Plan> plan =
        planner->Solve(problem, testing::CountedWork(10));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    EXPECT_EQ(plan->peak, optimum.peak);
    EXPECT_TRUE(plan->proven_optimal);
    EXPECT_GE(plan->counters.at("slices"), 1);
    above_start += optimum.peak < total;
  }
  EXPECT_GT(above_start, 0);
}

// MiniMalloc's D under its capacity: best's start fits, and CP-SAT finds no
// lower top in its first slice (an eighth of the deterministic budget), so
// it stops there with the start's plan.
TEST(CpsatTest, UnderACapacityTheFirstSliceWithoutGainEndsTheSearch) {
  absl::StatusOr<Problem> problem =
      LoadProblem("minimalloc/D.1048576.csv", {.capacity = 1048576});
  ASSERT_TRUE(problem.ok()) << problem.status();
  const PlanOptions work = testing::CountedWork(1);
  PlanMemoryOptions best_options;
  best_options.planner = "best";
  best_options.plan = testing::CountedWork(0.5);  // cpsat's start's share
  absl::StatusOr<Plan> best = PlanMemory(*problem, best_options);
  ASSERT_TRUE(best.ok()) << best.status();
  absl::StatusOr<Plan> plan = SolveCpsat(*problem, true, nullptr, work);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->counters.at("slices"), 1);
  EXPECT_EQ(plan->assignments, best->assignments);
  EXPECT_EQ(plan->peak, 1048576);
  EXPECT_FALSE(plan->proven_optimal);
}

// The stages of several pools share one deterministic budget: the work
// limit over 8 x kWorkPerSecond in all, not each (CP-SAT stops at its
// limit between checks, a few thousandths of a deterministic second late);
// both where the stages all finish and where the budget stops them.
TEST(CpsatTest, StagesShareOneDeterministicBudget) {
  int several_stages = 0, stopped = 0;
  for (const int buffers : {40, 120}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(absl::StrCat(buffers, " buffers, seed ", seed));
      RandomProblemOptions options;
      options.buffers = buffers;
      options.pools = 3;
      options.capacity = 3000;
      const Problem problem = RandomProblem(seed, options);
      const double work_seconds = 0.4;  // 0.05 CP-SAT seconds in all
      CpsatStats stats;
      absl::StatusOr<Plan> plan = SolveCpsat(
          problem, false, &stats, testing::CountedWork(work_seconds));
      ASSERT_TRUE(plan.ok()) << plan.status();
      ASSERT_TRUE(stats.model_built);
      EXPECT_LE(stats.deterministic_time, work_seconds / 8 + 0.01);
      several_stages += plan->counters.at("stages") > 1;
      stopped += !plan->proven_optimal;
    }
  }
  EXPECT_GT(several_stages, 0);
  EXPECT_GT(stopped, 0);
}

// The pairs of buffers alive together in a pool, by brute force: what
// the size guard counts.
int64_t PairsByBruteForce(const Problem& problem) {
  int64_t pairs = 0;
  const int n = static_cast<int>(problem.buffers.size());
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    const Bytes capacity = problem.pools[p].capacity;
    auto may_use = [&](const Buffer& b) {
      if (b.size == 0 || (capacity > 0 && b.size > capacity)) return false;
      if (b.fixed.has_value()) return b.fixed->pool == p;
      return b.pools.empty() ||
             std::find(b.pools.begin(), b.pools.end(), p) != b.pools.end();
    };
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < i; ++j) {
        const Buffer& a = problem.buffers[i];
        const Buffer& b = problem.buffers[j];
        if (may_use(a) && may_use(b) && a.lifetime.start < b.lifetime.end &&
            b.lifetime.start < a.lifetime.end) {
          ++pairs;
        }
      }
    }
  }
  return pairs;
}

// Above its pairs per deterministic second of the budget the model is not
// built: the start is returned, verified, unproven unless it spills
// nothing, with the pairs counted; the same problem under the default
// bound is searched.
TEST(CpsatTest, ModelTooLargeForTheBudgetReturnsTheStart) {
  int too_large = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    RandomProblemOptions options;
    options.buffers = 40;
    options.pools = 2;
    options.capacity = 2000;
    options.explicit_conflicts = 3;
    options.fixed = 2;
    const Problem problem = RandomProblem(seed, options);
    const int64_t pairs = PairsByBruteForce(problem);
    ASSERT_GT(pairs, 0);
    absl::StatusOr<std::unique_ptr<Planner>> guarded =
        CreatePlanner("cpsat", {{"max_pairs_per_second", "1"}});
    ASSERT_TRUE(guarded.ok()) << guarded.status();
    absl::StatusOr<Plan> start =
        (*guarded)->Solve(problem, testing::CountedWork(1));
    ASSERT_TRUE(start.ok()) << start.status();
    EXPECT_TRUE(VerifyPlan(problem, *start).ok())
        << VerifyPlan(problem, *start);
    EXPECT_EQ(start->planner, "cpsat");
    if (!start->counters.contains("model_too_large")) {
      // A start that needs no search (at the lower bound, nothing
      // spilled) is returned before the guard.
      EXPECT_TRUE(start->proven_optimal);
      continue;
    }
    ++too_large;
    EXPECT_EQ(start->counters.at("model_too_large"), 1);
    EXPECT_EQ(start->counters.at("pairs"), pairs);
    EXPECT_EQ(start->proven_optimal, PoolBytes(problem, *start).back() == 0);
    absl::StatusOr<Plan> searched = SolveCpsat(problem, true);
    ASSERT_TRUE(searched.ok()) << searched.status();
    EXPECT_FALSE(searched->counters.contains("model_too_large"));
    EXPECT_FALSE(SpillsLess(problem, *start, *searched));
  }
  EXPECT_GT(too_large, 0);
  // Without a start there is no plan to fall back to: an error that says
  // why.
  const Problem problem = RandomProblem(1, {.buffers = 40, .pools = 2});
  CpsatOptions bounded;
  bounded.max_pairs_per_second = 1;
  CpsatStats stats;
  absl::StatusOr<Plan> none = MakeCpsatPlanner(bounded, &stats)
                                  ->Solve(problem, testing::CountedWork(1));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("pairs"), std::string::npos);
  EXPECT_FALSE(stats.model_built);
}

// MiniMalloc's A (154 buffers), whose naive plan is far above its bound.
Problem MiniMallocA() {
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("minimalloc/A.1048576.csv"));
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(*text);
  return csv->problem;
}

TEST(CpsatTest, ADeadlinePassedBeforeTheCallReturnsTheStartCutByTime) {
  // The library's load counts against the deadline: with none of it left
  // the start comes back, said to be cut by the time limit.
  const Problem problem = MiniMallocA();
  absl::StatusOr<std::unique_ptr<Planner>> cpsat =
      CreatePlanner("cpsat", {{"max_pairs_per_second", "0"}});
  ASSERT_TRUE(cpsat.ok()) << cpsat.status();
  const PlanOptions options{.deadline = absl::Now() - absl::Seconds(1)};
  absl::StatusOr<Plan> plan = (*cpsat)->Solve(problem, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
  EXPECT_EQ(plan->planner, "cpsat");
  EXPECT_EQ(plan->counters["cut_by_time_limit"], 1);
  EXPECT_NE(LimitNote(*plan, options).find("the deadline"), std::string::npos)
      << LimitNote(*plan, options);
}

TEST(CpsatTest, ALibraryThatDoesNotLoadIsTriedOnlyWithinTheDeadline) {
  const Problem problem = MiniMallocA();
  absl::StatusOr<std::unique_ptr<Planner>> naive = CreatePlanner("naive");
  ASSERT_TRUE(naive.ok()) << naive.status();
  absl::StatusOr<Plan> start = (*naive)->Solve(problem, {});
  ASSERT_TRUE(start.ok()) << start.status();
  CpsatOptions missing;
  missing.library = "/nonexistent/libortools.so.9";
  missing.max_pairs_per_second = 0;
  std::unique_ptr<SearchPlanner> cpsat = MakeCpsatPlanner(missing);
  // With the deadline passed, or too close for a first load (a quarter of
  // a second), no load is begun: the start, cut by time.
  for (const absl::Duration left :
       {-absl::Seconds(1), absl::Milliseconds(50)}) {
    SCOPED_TRACE(absl::FormatDuration(left));
    Incumbent late(*start);
    absl::StatusOr<Plan> plan =
        cpsat->Search(problem, {.deadline = absl::Now() + left}, late);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    EXPECT_EQ(plan->peak, start->peak);
    EXPECT_EQ(plan->counters["cut_by_time_limit"], 1);
    EXPECT_NE(LimitNote(*plan, {.deadline = absl::Now()}).find("the deadline"),
              std::string::npos);
  }
  // Then, with time left, the load's own error, naming the library.
  Incumbent with_time(*start);
  absl::StatusOr<Plan> failed =
      cpsat->Search(problem, testing::CountedWork(1), with_time);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(failed.status().message().find("/nonexistent/libortools.so.9"),
            std::string::npos)
      << failed.status();
}

}  // namespace
}  // namespace memplan
