// The cp planner: the seed notebook's figures, a case greedy-by-size gets
// wrong, agreement with a brute force on tiny problems, time limits,
// capacities and the single-pool restriction.

#include "cp/cp.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#include "oracles.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::DataPath;
using ::memplan::testing::LoadProblem;
using ::memplan::testing::RandomProblem;
using ::memplan::testing::RandomProblemOptions;

// The cp search's options, and the planners of its warm start (tried in
// order; the registered cp's by default, none when empty).
struct CpTestOptions : CpOptions {
  std::vector<std::string> warm_start = {"best", "greedy_by_size", "naive"};
};

// Solves with explicit options and checks the plan with the verifier.
absl::StatusOr<Plan> SolveCp(const Problem& problem,
                             const CpTestOptions& cp_options,
                             PlanOptions options = testing::CountedWork(10),
                             CpStats* stats = nullptr) {
  std::unique_ptr<SearchPlanner> search = MakeCpPlanner(cp_options, stats);
  std::unique_ptr<Planner> planner;
  if (cp_options.warm_start.empty()) {
    planner = std::move(search);
  } else {
    std::unique_ptr<Planner> start;
    for (auto it = cp_options.warm_start.rbegin();
         it != cp_options.warm_start.rend(); ++it) {
      absl::StatusOr<std::unique_ptr<Planner>> next = CreatePlanner(*it);
      if (!next.ok()) return next.status();
      start = start == nullptr
                  ? *std::move(next)
                  : WithFallback(*std::move(next), std::move(start));
    }
    planner = WarmStarted(std::move(search), std::move(start), 0.5);
  }
  absl::StatusOr<Plan> plan = planner->Solve(problem, options);
  if (plan.ok()) {
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    EXPECT_EQ(plan->assignments.size(), problem.buffers.size());
    EXPECT_EQ(plan->planner, "cp");
  }
  return plan;
}

CpTestOptions NoWarmStart() {
  CpTestOptions options;
  options.warm_start.clear();
  return options;
}

Problem SeedProblem() {
  return *LoadProblem("seed/seed000_model.json",
                      {.plan_constants = true, .alignment = 4});
}

// RegisterCpPlanner() (called by the tests' main, as by the tool) registers
// "cp", once, after the core's planners (registration_test checks that the
// core alone has no "cp", cp_registration_test that linking alone adds
// nothing).
TEST(CpTest, LinkingTheComponentRegistersCp) {
  int found = 0;
  for (const PlannerInfo& info : RegisteredPlanners())
    found += info.name == "cp";
  EXPECT_EQ(found, 1);
  // After the core's planners (and before cpsat when that is built too).
  EXPECT_EQ(RegisteredPlanners().back().name,
            MEMPLAN_HAVE_CPSAT ? "cpsat" : "cp");
  absl::StatusOr<std::unique_ptr<Planner>> cp = CreatePlanner("cp");
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ((*cp)->name(), "cp");
}

TEST(CpTest, SeedModelOptimumIsProven) {
  const Problem problem = SeedProblem();
  PlanMemoryOptions options;
  options.planner = "cp";
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 697888);
  EXPECT_EQ(plan->lower_bound, 697888);
  EXPECT_EQ(plan->naive_total, 728132);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(CpTest, SeedModelOptimumWithoutWarmStartEitherEncoding) {
  const Problem problem = SeedProblem();
  for (bool nooverlap : {false, true}) {
    SCOPED_TRACE(nooverlap ? "nooverlap" : "disjunctions");
    CpTestOptions cp_options = NoWarmStart();
    cp_options.use_nooverlap = nooverlap;
    CpStats stats;
    absl::StatusOr<Plan> plan =
        SolveCp(problem, cp_options, testing::CountedWork(10), &stats);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, 697888);
    EXPECT_TRUE(plan->proven_optimal);
    EXPECT_FALSE(stats.used_warm_start);
    EXPECT_GE(stats.solutions, 1);
  }
}

TEST(CpTest, NotebookPlanIsInvalidAndBelowTheOptimum) {
  const Problem problem = SeedProblem();
  absl::StatusOr<std::string> text =
      ReadFile(DataPath("seed/seed000_notebook_plan.json"));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Plan> notebook = ParsePlanJson(*text, problem);
  ASSERT_TRUE(notebook.ok()) << notebook.status();
  ComputePlanStatistics(problem, *notebook);
  EXPECT_EQ(notebook->peak, 692352);
  EXPECT_LT(notebook->peak, 697888);  // smaller than the proven optimum...
  EXPECT_FALSE(
      VerifyPlan(problem, *notebook).ok());  // ...because it is invalid
}

// Greedy by size places a and d (4 bytes) at 0, then b above a at 4, and c
// (conflicting with b and d) has to go above b: 10 bytes. The optimum is the
// lower bound, 7 (at step 0: a + b):
//
//   7 |      bbb     dddd        offset ^
//   4 | aaaa bbb     dddd               |
//   3 | aaaa     ccc dddd               |
//   0 | aaaa     ccc                    +--> time
//      [0,1) [0,3) [2,4) [3,5)
Problem GreedyTrap() {
  return Problem{
      .buffers = {Buffer{.name = "a", .size = 4, .lifetime = {0, 1}},
                  Buffer{.name = "b", .size = 3, .lifetime = {0, 3}},
                  Buffer{.name = "c", .size = 3, .lifetime = {2, 4}},
                  Buffer{.name = "d", .size = 4, .lifetime = {3, 5}}},
      .pools = {Pool{.name = "default"}}};
}

// Largest first (ties by id), each at the lowest offset that fits: the
// greedy-by-size rule, written out here so the test does not depend on
// another planner.
Bytes GreedyBySizePeak(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return problem.buffers[a].size != problem.buffers[b].size
               ? problem.buffers[a].size > problem.buffers[b].size
               : a < b;
  });
  std::vector<Offset> offset(n, -1);
  Bytes peak = 0;
  for (int i : order) {
    const Buffer& b = problem.buffers[i];
    std::vector<Offset> candidates = {0};
    for (int j = 0; j < n; ++j) {
      if (offset[j] >= 0)
        candidates.push_back(offset[j] + problem.buffers[j].size);
    }
    std::sort(candidates.begin(), candidates.end());
    for (Offset o : candidates) {
      bool fits = true;
      for (int j = 0; j < n; ++j) {
        const Buffer& c = problem.buffers[j];
        if (offset[j] >= 0 && Overlaps(b.lifetime, c.lifetime) &&
            o < offset[j] + c.size && offset[j] < o + b.size) {
          fits = false;
        }
      }
      if (fits) {
        offset[i] = o;
        break;
      }
    }
    peak = std::max(peak, offset[i] + b.size);
  }
  return peak;
}

TEST(CpTest, FindsAndProvesTheOptimumWhereGreedyBySizeDoesNot) {
  const Problem problem = GreedyTrap();
  EXPECT_EQ(GreedyBySizePeak(problem), 10);
  for (const CpTestOptions& cp_options : {CpTestOptions{}, NoWarmStart()}) {
    absl::StatusOr<Plan> plan = SolveCp(problem, cp_options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, 7);
    EXPECT_TRUE(plan->proven_optimal);
  }
  // When the greedy planner is registered, cp improves on it.
  PlanMemoryOptions options;
  options.planner = "greedy_by_size";
  if (absl::StatusOr<Plan> greedy = PlanMemory(problem, options); greedy.ok()) {
    EXPECT_GT(greedy->peak, 7);
  }
}

// Three buffers alive at different steps that explicitly conflict pairwise:
// the lower bound (8) knows nothing of the explicit conflicts, the optimum is
// 24, and the search must prove it.
Problem ExplicitTriangle(Bytes capacity) {
  return Problem{
      .buffers = {Buffer{.name = "x", .size = 8, .lifetime = {0, 1}},
                  Buffer{.name = "y", .size = 8, .lifetime = {1, 2}},
                  Buffer{.name = "z", .size = 8, .lifetime = {2, 3}}},
      .pools = {Pool{.name = "sram", .capacity = capacity}},
      .conflicts = {{.a = 0, .b = 1}, {.a = 0, .b = 2}, {.a = 1, .b = 2}}};
}

TEST(CpTest, ProvesOptimumAboveTheLowerBound) {
  absl::StatusOr<Plan> plan = SolveCp(ExplicitTriangle(0), NoWarmStart());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->lower_bound, 8);
  EXPECT_EQ(plan->peak, 24);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(CpTest, CapacityThatFitsOnlyTheOptimum) {
  // Exactly the optimum fits; the naive warm start fits too, and a tighter
  // plan is not possible.
  absl::StatusOr<Plan> plan = SolveCp(ExplicitTriangle(24), CpTestOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 24);
  EXPECT_TRUE(plan->proven_optimal);

  // The greedy trap under a capacity of 7: stacking (14 bytes) does not fit,
  // the search finds the only shape that does.
  Problem trap = GreedyTrap();
  trap.pools[0].capacity = 7;
  plan = SolveCp(trap, CpTestOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 7);
}

TEST(CpTest, InfeasibleCapacityIsResourceExhausted) {
  // The lower bound fits (8 <= 16) but no plan does.
  absl::StatusOr<Plan> plan = SolveCp(ExplicitTriangle(16), CpTestOptions{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
      << plan.status();
  EXPECT_NE(plan.status().message().find("sram"), std::string::npos)
      << plan.status();

  // Max live bytes above the capacity: the buffer that overflows is named.
  Problem trap = GreedyTrap();
  trap.pools[0].capacity = 6;
  plan = SolveCp(trap, NoWarmStart());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
      << plan.status();
  EXPECT_NE(plan.status().message().find("\"b\""), std::string::npos)
      << plan.status();
}

TEST(CpTest, SeveralPoolsAreUnimplemented) {
  RandomProblemOptions options;
  options.buffers = 10;
  options.pools = 2;
  options.capacity = 2000;
  absl::StatusOr<Plan> plan =
      SolveCp(RandomProblem(5, options), CpTestOptions{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("2 pools"), std::string::npos)
      << plan.status();
}

TEST(CpTest, FixedPlacementsAndZeroSizeBuffers) {
  Problem problem{
      .buffers = {Buffer{.name = "fixed",
                         .size = 16,
                         .lifetime = {0, 4},
                         .fixed = Placement{.pool = 0, .offset = 16}},
                  Buffer{.name = "a", .size = 16, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 32, .lifetime = {1, 3}},
                  Buffer{.name = "empty", .size = 0, .lifetime = {0, 4}}},
      .pools = {Pool{.name = "default", .alignment = 16}}};
  absl::StatusOr<Plan> plan = SolveCp(problem, NoWarmStart());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->assignments[0].offset, 16);
  // a below the fixed buffer, b above it.
  EXPECT_EQ(plan->peak, 64);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(CpTest, AgreesWithBruteForceOnTinyProblems) {
  int above_lower_bound = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomProblemOptions options;
    options.buffers = 3 + static_cast<int>(seed % 5);  // 3..7
    options.horizon = 6;
    options.max_lifetime = 4;
    options.max_size = 12;
    options.alignments = seed % 2 == 0;
    options.explicit_conflicts = seed % 3 == 0 ? 3 : 0;
    options.fixed = seed % 5 == 0 ? 1 : 0;
    const Problem problem = RandomProblem(seed, options);
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Bytes optimum = testing::OptimumByRestingPlacements(problem);
    if (optimum > LowerBound(problem)) ++above_lower_bound;
    CpTestOptions plain = NoWarmStart();
    plain.dominance = false;
    plain.redundant_cliques = false;
    CpTestOptions nooverlap = NoWarmStart();
    nooverlap.use_nooverlap = true;
    CpTestOptions lowest = NoWarmStart();
    lowest.lowest_offset_first = true;
    for (const CpTestOptions& cp_options :
         {CpTestOptions{}, NoWarmStart(), plain, nooverlap, lowest}) {
      absl::StatusOr<Plan> plan = SolveCp(problem, cp_options);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->peak, optimum);
      EXPECT_TRUE(plan->proven_optimal);
    }
  }
  // The corpus must exercise proofs above the lower bound too.
  EXPECT_GT(above_lower_bound, 0);
}

TEST(CpTest, SameInputSamePlanWithOneThread) {
  RandomProblemOptions options;
  options.buffers = 12;
  options.alignments = true;
  options.explicit_conflicts = 4;
  const Problem problem = RandomProblem(7, options);
  absl::StatusOr<Plan> first = SolveCp(problem, NoWarmStart());
  absl::StatusOr<Plan> second = SolveCp(problem, NoWarmStart());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(first->proven_optimal);
  EXPECT_EQ(first->assignments, second->assignments);
}

TEST(CpTest, TinyTimeLimitReturnsValidUnprovenPlan) {
  // A MiniMalloc instance is far too hard to prove in a millisecond; the
  // warm start comes back unproven.
  const Problem problem = *LoadProblem("minimalloc/A.1048576.csv");
  CpStats stats;
  // A real wall-clock limit: what is tested is what comes back. (That it
  // stops is left to the test's own time-out: no assertion on the clock.)
  const PlanOptions tiny{.time_limit = absl::Milliseconds(1)};
  absl::StatusOr<Plan> plan = SolveCp(problem, CpTestOptions{}, tiny, &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->proven_optimal);
  EXPECT_TRUE(stats.used_warm_start);
  EXPECT_LE(plan->peak, stats.warm_start_peak);

  // Without a warm start, either a plan found in time or DeadlineExceeded.
  plan = SolveCp(problem, NoWarmStart(), tiny);
  if (plan.ok()) {
    EXPECT_FALSE(plan->proven_optimal);
  } else {
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kDeadlineExceeded)
        << plan.status();
  }
}

TEST(CpTest, NeverWorseThanTheWarmStartOnBundledModels) {
  for (const std::string& path : testing::ModelGraphs()) {
    SCOPED_TRACE(path);
    const Problem problem = *LoadProblem(path);
    CpStats stats;
    absl::StatusOr<Plan> plan =
        SolveCp(problem, CpTestOptions{}, testing::CountedWork(0.3), &stats);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(stats.used_warm_start);
    EXPECT_LE(plan->peak, stats.warm_start_peak);
    EXPECT_GE(plan->peak, plan->lower_bound);
    if (plan->peak == plan->lower_bound) EXPECT_TRUE(plan->proven_optimal);
  }
}

// The model bound: above CpOptions::max_conflicting_pairs cp builds no model
// and returns its warm start plan, not proven optimal.

TEST(CpTest, AboveThePairBoundReturnsTheWarmStartUnproven) {
  const Problem problem = GreedyTrap();  // 3 overlapping pairs
  CpTestOptions cp_options;
  cp_options.warm_start = {"greedy_by_size"};
  cp_options.max_conflicting_pairs = 2;
  CpStats stats;
  absl::StatusOr<Plan> plan =
      SolveCp(problem, cp_options, testing::CountedWork(10), &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(stats.conflicting_pairs, 3);
  EXPECT_TRUE(stats.model_too_large);
  ASSERT_TRUE(stats.used_warm_start);
  EXPECT_EQ(stats.warm_start_peak, 10);
  EXPECT_EQ(plan->peak, 10);  // the warm start's, not the optimum 7
  EXPECT_FALSE(plan->proven_optimal);
  EXPECT_EQ(stats.nodes, 0);  // no search

  // At the bound the model is built and the optimum proven.
  cp_options.max_conflicting_pairs = 3;
  plan = SolveCp(problem, cp_options, testing::CountedWork(10), &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(stats.model_too_large);
  EXPECT_EQ(plan->peak, 7);
  EXPECT_TRUE(plan->proven_optimal);
}

TEST(CpTest, ExplicitConflictsCountTowardsThePairBound) {
  CpTestOptions cp_options;
  cp_options.warm_start = {"naive"};
  cp_options.max_conflicting_pairs = 2;
  CpStats stats;
  absl::StatusOr<Plan> plan = SolveCp(ExplicitTriangle(0), cp_options,
                                      testing::CountedWork(10), &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(stats.conflicting_pairs, 3);
  EXPECT_TRUE(stats.model_too_large);
  // naive stacks the three: 24, which is the optimum but above the lower
  // bound (8), so nothing proves it.
  EXPECT_EQ(plan->peak, 24);
  EXPECT_FALSE(plan->proven_optimal);
}

TEST(CpTest, AboveThePairBoundWithoutWarmStartIsAnError) {
  CpTestOptions cp_options = NoWarmStart();
  cp_options.max_conflicting_pairs = 2;
  absl::StatusOr<Plan> plan = SolveCp(GreedyTrap(), cp_options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("max_conflicting_pairs"),
            std::string::npos)
      << plan.status();
}

TEST(CpTest, DefaultPairBoundKeepsDenseProblemsOutOfTheModel) {
  // The greedy trap (in thousands of bytes) and, later, 500 one-byte buffers
  // alive together: 124753 conflicting pairs, above the default bound. The
  // warm start is 10000 against a lower bound of 7000.
  Problem problem = GreedyTrap();
  for (Buffer& b : problem.buffers) b.size *= 1000;
  for (int i = 0; i < 500; ++i) {
    problem.buffers.push_back(
        Buffer{.name = absl::StrCat("t", i), .size = 1, .lifetime = {10, 11}});
  }
  CpTestOptions cp_options;
  ASSERT_LT(cp_options.max_conflicting_pairs, 124753);
  cp_options.warm_start = {"greedy_by_size"};
  CpStats stats;
  absl::StatusOr<Plan> plan =
      SolveCp(problem, cp_options, testing::CountedWork(10), &stats);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(stats.conflicting_pairs, 124753);
  EXPECT_TRUE(stats.model_too_large);
  EXPECT_EQ(plan->lower_bound, 7000);
  EXPECT_EQ(plan->peak, 10000);
  EXPECT_FALSE(plan->proven_optimal);
  EXPECT_EQ(stats.nodes, 0);
}

}  // namespace
}  // namespace memplan
