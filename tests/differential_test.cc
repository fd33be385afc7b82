// Differential testing at scale: seeded random problems (pools, alignments,
// fixed placements, explicit conflicts, capacities) and random graphs
// (scratch, in-place and alias hints, planned constants) through every
// registered planner. Every plan must pass the verifier, every failure must
// be an input or capacity answer (never an internal error), no plan may beat
// the lower bound, and on small single-pool problems `cp` (and `exact`, where
// its search is complete) must agree with a brute force over all placement
// orders.
//
// Bounded for CI; MEMPLAN_DIFFERENTIAL_PROBLEMS=N runs N problems of each
// family (and MEMPLAN_DIFFERENTIAL_SEED=S starts at another seed) for long
// runs.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "oracles.h"
#include "test_util.h"

namespace memplan {
namespace {

int64_t EnvOr(const char* name, int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoll(value, nullptr, 10) : fallback;
}

int64_t NumProblems() { return EnvOr("MEMPLAN_DIFFERENTIAL_PROBLEMS", 40); }
uint64_t FirstSeed() {
  return static_cast<uint64_t>(EnvOr("MEMPLAN_DIFFERENTIAL_SEED", 0));
}

// Plans `problem` with every planner and checks what comes back. Returns the
// peaks by planner name (for planners that returned a plan).
std::map<std::string, Plan> PlanWithEveryPlanner(const Problem& problem,
                                                 const std::string& what) {
  std::map<std::string, Plan> plans;
  const Bytes lower_bound = LowerBound(problem);
  for (const PlannerInfo& info : RegisteredPlanners()) {
    SCOPED_TRACE(absl::StrCat(what, ", planner ", std::string(info.name)));
    absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner(info.name);
    EXPECT_TRUE(planner.ok()) << planner.status();
    if (!planner.ok()) continue;
    absl::StatusOr<Plan> plan = PlanMemory(
        problem, **planner, {.work_limit = 5 * kWorkPerSecond, .seed = 1});
    if (!plan.ok()) {
      // Out of capacity, or a problem the planner does not support (several
      // pools for cp and exact); never an internal error (an invalid plan).
      const absl::StatusCode code = plan.status().code();
      EXPECT_TRUE(code == absl::StatusCode::kResourceExhausted ||
                  code == absl::StatusCode::kUnimplemented ||
                  code == absl::StatusCode::kInvalidArgument ||
                  code == absl::StatusCode::kDeadlineExceeded)
          << plan.status();
      const bool bounded =
          std::any_of(problem.pools.begin(), problem.pools.end(),
                      [](const Pool& p) { return p.capacity > 0; });
      if (problem.pools.size() == 1 && !bounded) {
        ADD_FAILURE() << "an unbounded single pool always has a plan: "
                      << plan.status();
      }
      continue;
    }
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    if (problem.pools.size() == 1) EXPECT_GE(plan->peak, lower_bound);
    plans.emplace(std::string(info.name), std::move(*plan));
  }
  return plans;
}

// Small single-pool problems: exact and cp against brute force.
void CheckAgainstBruteForce(const Problem& problem,
                            const std::map<std::string, Plan>& plans,
                            const std::string& what) {
  SCOPED_TRACE(what);
  const Bytes optimum = testing::OptimumByEveryOrder(problem);
  for (const auto& [name, plan] : plans) {
    EXPECT_GE(plan.peak, optimum) << name << " beats the brute force";
  }
  // exact's search is complete only without fixed buffers, explicit
  // conflicts and mixed alignments (it says so when it gives up); there it
  // must meet the brute force, elsewhere it may only not beat it.
  bool complete = problem.conflicts.empty();
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    if (problem.buffers[b].fixed.has_value() ||
        EffectiveAlignment(problem, b, 0) !=
            EffectiveAlignment(problem, 0, 0)) {
      complete = false;
    }
  }
  for (const std::string name : {"exact", "cp", "cpsat"}) {
    if (name == "exact" && !complete) continue;
    auto it = plans.find(name);
    if (it == plans.end()) {
      const std::vector<PlannerInfo> planners = RegisteredPlanners();
      const bool registered = std::any_of(
          planners.begin(), planners.end(),
          [&](const PlannerInfo& info) { return info.name == name; });
      if (registered) ADD_FAILURE() << name << " returned no plan";
      // cp is registered exactly when its component is built and linked.
      if (name == "cp") EXPECT_EQ(registered, MEMPLAN_HAVE_CP != 0);
      if (name == "cpsat") EXPECT_EQ(registered, MEMPLAN_HAVE_CPSAT != 0);
      continue;
    }
    // Both find the optimum. (exact does not always say it proved it: with
    // a fixed buffer or alignments its bounds may not meet.)
    EXPECT_EQ(it->second.peak, optimum) << name;
    if (name == "cp" || name == "cpsat")
      EXPECT_TRUE(it->second.proven_optimal) << name;
  }
  // With the optimum as the capacity exact finds a plan; one byte less, it
  // proves none exists.
  auto exact = CreatePlanner("exact");
  ASSERT_TRUE(exact.ok());
  if (optimum <= 1 || !complete) return;  // capacity 0 means unbounded
  for (const Bytes capacity : {optimum, optimum - 1}) {
    Problem bounded = problem;
    bounded.pools[0].capacity = capacity;
    if (!ValidateProblem(bounded).ok()) continue;  // a fixed buffer sticks out
    absl::StatusOr<Plan> plan =
        PlanMemory(bounded, **exact, testing::CountedWork(5));
    if (capacity == optimum) {
      ASSERT_TRUE(plan.ok())
          << "capacity " << capacity << ": " << plan.status();
      EXPECT_TRUE(VerifyPlan(bounded, *plan).ok());
    } else {
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kResourceExhausted)
          << "capacity " << capacity << ": " << plan.status();
    }
  }
}

TEST(DifferentialTest, RandomProblemsThroughEveryPlanner) {
  const uint64_t first = FirstSeed();
  for (uint64_t seed = first; seed < first + NumProblems(); ++seed) {
    std::mt19937_64 rng(seed);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    testing::RandomProblemOptions options{
        .buffers = static_cast<int>(uniform(2, 24)),
        .horizon = uniform(2, 20),
        .max_lifetime = uniform(1, 8),
        .max_size = uniform(1, 300),
        .pools = static_cast<int>(uniform(1, 3)),
        .capacity = uniform(0, 1) == 0 ? 0 : uniform(100, 1000),
        .alignments = uniform(0, 1) == 1,
        .explicit_conflicts = static_cast<int>(uniform(0, 4)),
        .fixed = static_cast<int>(uniform(0, 2)),
    };
    const Problem problem = testing::RandomProblem(seed, options);
    ASSERT_TRUE(ValidateProblem(problem).ok()) << ValidateProblem(problem);
    PlanWithEveryPlanner(problem, absl::StrCat("problem seed ", seed));
  }
}

TEST(DifferentialTest, SmallProblemsAgreeWithBruteForce) {
  const uint64_t first = FirstSeed();
  for (uint64_t seed = first; seed < first + NumProblems(); ++seed) {
    std::mt19937_64 rng(seed ^ 0x5eed);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    testing::RandomProblemOptions options{
        .buffers = static_cast<int>(uniform(2, 7)),
        .horizon = uniform(2, 8),
        .max_lifetime = uniform(1, 5),
        .max_size = uniform(1, 64),
        .pools = 1,
        .alignments = uniform(0, 1) == 1,
        .explicit_conflicts = static_cast<int>(uniform(0, 3)),
        .fixed = static_cast<int>(uniform(0, 1)),
    };
    const Problem problem = testing::RandomProblem(seed, options);
    const std::string what = absl::StrCat("small problem seed ", seed);
    CheckAgainstBruteForce(problem, PlanWithEveryPlanner(problem, what), what);
  }
}

TEST(DifferentialTest, RandomGraphsWithHintsThroughEveryPlanner) {
  const uint64_t first = FirstSeed();
  for (uint64_t seed = first; seed < first + NumProblems(); ++seed) {
    std::mt19937_64 rng(seed ^ 0x9a7e);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    const Graph graph =
        testing::RandomGraph(seed, static_cast<int>(uniform(2, 14)));
    const BuildOptions options{.plan_constants = uniform(0, 1) == 1,
                               .alignment = Bytes{1} << uniform(0, 6)};
    absl::StatusOr<Problem> problem = BuildProblem(graph, options);
    ASSERT_TRUE(problem.ok()) << seed << ": " << problem.status();
    const std::string what = absl::StrCat("graph seed ", seed);
    const auto plans = PlanWithEveryPlanner(*problem, what);
    if (problem->buffers.size() <= 7) {
      CheckAgainstBruteForce(*problem, plans, what);
    }
  }
}

}  // namespace
}  // namespace memplan
