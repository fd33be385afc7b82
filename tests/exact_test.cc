// Tests of the exact planner: agreement with a brute-force enumeration of
// every offset on small problems, proofs of infeasibility, the time limit,
// and MiniMalloc instances under their capacity.

#include "exact.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;

// The smallest peak over every assignment of integer offsets (multiples of
// the alignment) - no canonical form, no pruning beyond the conflicts.
class BruteForce {
 public:
  explicit BruteForce(const Problem& problem) : problem_(problem) {
    const int n = static_cast<int>(problem.buffers.size());
    conflict_.assign(n, std::vector<bool>(n, false));
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        conflict_[a][b] = a != b && Overlaps(problem.buffers[a].lifetime,
                                             problem.buffers[b].lifetime);
      }
    }
    for (const BufferConflict& c : problem.conflicts) {
      conflict_[c.a][c.b] = conflict_[c.b][c.a] = c.a != c.b;
    }
    offset_.assign(n, 0);
  }

  Bytes Optimum() {
    Bytes height = 0;  // max-live is a valid start for the enumeration
    for (const Buffer& b : problem_.buffers) height = std::max(height, b.size);
    height = std::max(height, LowerBound(problem_));
    while (!Fits(0, height)) ++height;
    return height;
  }

  bool Fits(int i, Bytes height) {
    if (i == static_cast<int>(problem_.buffers.size())) return true;
    const Buffer& b = problem_.buffers[i];
    const Bytes align = EffectiveAlignment(problem_, i, 0);
    for (Offset o = 0; o + b.size <= height; o += align) {
      bool ok = true;
      for (int j = 0; j < i && ok; ++j) {
        ok = !conflict_[i][j] || o + b.size <= offset_[j] ||
             offset_[j] + problem_.buffers[j].size <= o;
      }
      if (!ok) continue;
      offset_[i] = o;
      if (Fits(i + 1, height)) return true;
    }
    return false;
  }

 private:
  const Problem& problem_;
  std::vector<std::vector<bool>> conflict_;
  std::vector<Offset> offset_;
};

Problem SmallRandomProblem(uint64_t seed, bool explicit_conflicts) {
  std::mt19937_64 rng(seed);
  Problem problem{.pools = {Pool{.name = "default"}}};
  const int n = 3 + static_cast<int>(rng() % 5);
  for (int i = 0; i < n; ++i) {
    const Step start = static_cast<Step>(rng() % 6);
    const Step end = start + 1 + static_cast<Step>(rng() % 4);
    problem.buffers.push_back(Buffer{.name = absl::StrCat("b", i),
                                     .size = 1 + static_cast<Bytes>(rng() % 4),
                                     .lifetime = {start, end}});
  }
  if (explicit_conflicts) {
    problem.conflicts.push_back({0, static_cast<BufferId>(n - 1)});
  }
  return problem;
}

absl::StatusOr<Plan> SolveExact(const Problem& problem,
                                absl::Duration limit = absl::Seconds(5)) {
  PlanMemoryOptions options;
  options.planner = "exact";
  options.plan.time_limit = limit;
  return PlanMemory(problem, options);
}

TEST(ExactTest, IsRegistered) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner("exact");
  ASSERT_TRUE(planner.ok()) << planner.status();
  EXPECT_EQ((*planner)->name(), "exact");
}

TEST(ExactTest, AgreesWithBruteForceOnSmallProblems) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    const Problem problem = SmallRandomProblem(seed, false);
    const Bytes optimum = BruteForce(problem).Optimum();
    absl::StatusOr<Plan> plan = SolveExact(problem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->peak, optimum);
    EXPECT_TRUE(plan->proven_optimal);

    // Under a capacity: the optimum fits, one byte less is proven impossible.
    Problem tight = problem;
    tight.pools[0].capacity = optimum;
    absl::StatusOr<Plan> fits = SolveExact(tight);
    ASSERT_TRUE(fits.ok()) << fits.status();
    EXPECT_LE(fits->peak, optimum);
    tight.pools[0].capacity = optimum - 1;
    absl::StatusOr<Plan> none = SolveExact(tight);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted)
        << none.status();
  }
}

TEST(ExactTest, EveryInferenceSwitchGivesTheSameOptimum) {
  for (uint64_t seed = 100; seed <= 130; ++seed) {
    SCOPED_TRACE(seed);
    const Problem problem = SmallRandomProblem(seed, false);
    const Bytes optimum = BruteForce(problem).Optimum();
    for (int mask = 0; mask < 16; ++mask) {
      ExactOptions options;
      options.section_inference = (mask & 1) != 0;
      options.symmetry = (mask & 2) != 0;
      options.decomposition = (mask & 4) != 0;
      options.failure_cache = (mask & 8) != 0;
      options.heuristic_warm_start = false;
      absl::StatusOr<Plan> plan =
          MakeExactPlanner(options)->Solve(problem, PlanOptions{});
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
      EXPECT_EQ(plan->peak, optimum) << "mask " << mask;
      EXPECT_TRUE(plan->proven_optimal);
    }
  }
}

TEST(ExactTest, ExplicitConflictsAndAlignmentGiveValidPlans) {
  for (uint64_t seed = 200; seed <= 230; ++seed) {
    SCOPED_TRACE(seed);
    Problem problem = SmallRandomProblem(seed, true);
    if (seed % 2 == 0) {
      problem.buffers[1].alignment = 4;
      problem.buffers[1].size = 4;
    }
    const Bytes optimum = BruteForce(problem).Optimum();
    absl::StatusOr<Plan> plan = SolveExact(problem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_GE(plan->peak, optimum);
    // Proven only when it is right.
    if (plan->proven_optimal) EXPECT_EQ(plan->peak, optimum);
  }
}

TEST(ExactTest, ProvesSmallHandCasesInfeasible) {
  // Three buffers alive together need 48 bytes; 40 cannot hold them.
  Problem together{
      .buffers = {Buffer{.name = "a", .size = 16, .lifetime = {0, 3}},
                  Buffer{.name = "b", .size = 16, .lifetime = {1, 4}},
                  Buffer{.name = "c", .size = 16, .lifetime = {2, 5}}},
      .pools = {Pool{.name = "sram", .capacity = 40}}};
  absl::StatusOr<Plan> plan = SolveExact(together);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ExactTest, SeveralPoolsAreUnimplemented) {
  Problem problem{
      .buffers = {Buffer{.name = "a", .size = 8, .lifetime = {0, 1}}},
      .pools = {Pool{.name = "fast", .capacity = 64}, Pool{.name = "slow"}}};
  absl::StatusOr<Plan> plan = SolveExact(problem);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ExactTest, SolvesMiniMallocInstancesUnderTheirCapacity) {
  for (const char* name :
       {"minimalloc/B.1048576.csv", "minimalloc/C.1048576.csv"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<Problem> problem = LoadProblem(name, {.capacity = 1048576});
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<Plan> plan = SolveExact(*problem, absl::Seconds(30));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_LE(plan->peak, 1048576);
  }
}

TEST(ExactTest, TheTimeLimitKeepsTheBestPlan) {
  absl::StatusOr<Problem> problem = LoadProblem("minimalloc/D.1048576.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<Plan> plan = SolveExact(*problem, absl::Milliseconds(300));
  const absl::Duration elapsed = absl::Now() - start;
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GE(plan->peak, plan->lower_bound);
  EXPECT_FALSE(plan->proven_optimal);  // D's optimum is open
  // Generous: the machine is shared; the point is that it stops.
  EXPECT_LT(elapsed, absl::Seconds(20));
}

TEST(ExactTest, NodeLimitsMakeItDeterministic) {
  absl::StatusOr<Problem> problem = LoadProblem("minimalloc/A.1048576.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  ExactOptions options;
  options.node_limit = 20000;
  PlanOptions plan_options;
  plan_options.time_limit = absl::Seconds(60);
  ExactStats stats;
  absl::StatusOr<Plan> first =
      MakeExactPlanner(options, &stats)->Solve(*problem, plan_options);
  absl::StatusOr<Plan> second =
      MakeExactPlanner(options)->Solve(*problem, plan_options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->assignments, second->assignments);
  EXPECT_LE(stats.nodes, options.node_limit);
  EXPECT_TRUE(VerifyPlan(*problem, *first).ok());
}

}  // namespace
}  // namespace memplan
