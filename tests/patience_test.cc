// The default planner answers at once: its searches stop by counted
// patience (PlanOptions::patience), so the same input gives the same plan,
// and progress reports reach the caller without changing the plan.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "effort/budget.h"
#include "exact/exact.h"
#include "greedy_by_size.h"
#include "gtest/gtest.h"
#include "memplan/compose.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "peak_window.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::LoadProblem;

// 13 buffers in a chain, each alive with the next; the first and the last
// (4096 bytes each) in one explicit conflict, so that no plan is below
// 8192 bytes while the lower bound (max-live) is 5376. exact's search is
// not complete with explicit conflicts: it cannot prove 8192, and without
// patience it searched its whole budget (8 s) for a smaller plan.
Problem ChainWithOneConflict() {
  const std::vector<Bytes> sizes = {4096, 256,  512, 1024, 768,  2048, 384,
                                    640,  1536, 896, 320,  1280, 4096};
  Problem problem;
  for (size_t i = 0; i < sizes.size(); ++i) {
    problem.buffers.push_back(
        {.name = absl::StrCat("t", i),
         .size = sizes[i],
         .lifetime = {static_cast<Step>(i), static_cast<Step>(i + 2)}});
  }
  problem.pools = {{.name = "default"}};
  problem.conflicts = {{.a = 0, .b = 12}};
  return problem;
}

TEST(PatienceTest, CountsFromTheLastGainAndFourTimesTheWorkBeforeIt) {
  Budget none(PlanOptions{.work_limit = 1000});
  none.Tick(999);
  EXPECT_FALSE(none.OutOfPatience());  // without patience, never

  Budget budget(PlanOptions{.work_limit = 10000, .patience = 100});
  budget.Tick(99);
  EXPECT_FALSE(budget.OutOfPatience());
  budget.Tick();
  EXPECT_TRUE(budget.OutOfPatience());
  EXPECT_FALSE(budget.Expired());  // the work limit is not spent
  // A gain after 300 units buys four times as many (more than the
  // patience).
  budget.Tick(200);
  budget.Improved(10, "test");
  budget.Tick(1199);
  EXPECT_FALSE(budget.OutOfPatience());
  budget.Tick();
  EXPECT_TRUE(budget.OutOfPatience());
  // A later gain counts afresh.
  budget.Improved(9, "test");
  EXPECT_FALSE(budget.OutOfPatience());
}

TEST(PatienceTest, TheBudgetReportsGainsToTheCallback) {
  std::vector<Bytes> peaks;
  std::vector<std::string> names;
  Budget budget(PlanOptions{.progress = [&](const Progress& p) {
    peaks.push_back(p.peak);
    names.emplace_back(p.planner);
  }});
  budget.Improved(7, "a");
  budget.Improved(5, "b");
  EXPECT_EQ(peaks, (std::vector<Bytes>{7, 5}));
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
}

TEST(PatienceTest, ExactStopsOnceItStopsGaining) {
  const Problem problem = ChainWithOneConflict();
  const std::unique_ptr<Planner> exact =
      WarmStarted(MakeExactPlanner({}), MakeGreedyPlanner({}), 0.1);
  const absl::StatusOr<Plan> whole =
      exact->Solve(problem, {.work_limit = 20'000'000});
  const absl::StatusOr<Plan> patient =
      exact->Solve(problem, {.work_limit = 20'000'000, .patience = 20'000});
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(patient.ok()) << patient.status();
  EXPECT_TRUE(VerifyPlan(problem, *whole).ok());
  EXPECT_TRUE(VerifyPlan(problem, *patient).ok());
  EXPECT_EQ(whole->peak, 8192);
  EXPECT_EQ(patient->peak, 8192);
  EXPECT_FALSE(patient->proven_optimal);
  // Without patience the search spends its work limit; with it, about the
  // patience (the rounds overshoot it by one round at most).
  EXPECT_GT(whole->counters.at("nodes"), 10 * patient->counters.at("nodes"));
}

TEST(PatienceTest, TheDefaultAnswersTheConflictAtOnceAndTwiceAlike) {
  const Problem problem = ChainWithOneConflict();
  absl::StatusOr<Plan> first = PlanMemory(problem);
  absl::StatusOr<Plan> second = PlanMemory(problem);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->peak, 8192);
  EXPECT_EQ(first->assignments, second->assignments);
  EXPECT_EQ(first->counters, second->counters);
}

// The peaks the default planner reached with its whole budget before it
// had patience (bench/NOTES.md), on bundled inputs of every kind: a
// training graph, two real traces, MiniMalloc instances.
struct FullBudget {
  std::string input;
  Bytes peak;
};

TEST(PatienceTest, TheDefaultIsWithinItsRatioOfTheWholeBudget) {
  for (const FullBudget& full :
       std::vector<FullBudget>{{"training/mobilenet_v2_train.json", 643832672},
                               {"traces/S_1.csv", 1499410684},
                               {"traces/somas_resnet50.csv", 1515472556},
                               {"minimalloc/C.1048576.csv", 1039360},
                               {"minimalloc/K.1048576.csv", 1048576}}) {
    SCOPED_TRACE(full.input);
    absl::StatusOr<Problem> problem = LoadProblem(full.input);
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<Plan> first = PlanMemory(*problem);
    ASSERT_TRUE(first.ok()) << first.status();
    EXPECT_TRUE(VerifyPlan(*problem, *first).ok());
    EXPECT_LE(static_cast<double>(first->peak),
              1.002 * static_cast<double>(full.peak));
    absl::StatusOr<Plan> second = PlanMemory(*problem);
    ASSERT_TRUE(second.ok()) << second.status();
    EXPECT_EQ(first->assignments, second->assignments);
  }
}

// Once its start is within 1.002x of the bound, the default's try at the
// bound still affords one descent, a node per buffer and an eighth more:
// bert_base's 5620 buffers reach their bound, proven, in that many nodes.
TEST(PatienceTest, TheDefaultReachesBertBasesBoundInOneDescent) {
  absl::StatusOr<Problem> problem = LoadProblem("traces/bert_base.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan = PlanMemory(*problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
  EXPECT_EQ(plan->peak, plan->lower_bound);
  EXPECT_TRUE(plan->proven_optimal);
  const auto n = static_cast<int64_t>(problem->buffers.size());
  ASSERT_TRUE(plan->counters.contains("nodes"));
  EXPECT_LE(plan->counters.at("nodes"), n + n / 8);
}

// Where the try at the bound fails, exact's search below the plan stops at
// its cap of nodes per buffer (not a cut by the work limit), and the sweep
// of heights from the same start goes below it: MiniMalloc's J by the
// sweep's probes, below the 1030144 bytes of the whole budget's search; D
// keeps the search's 1007616. Both twice alike.
TEST(PatienceTest, TheDefaultSweepsHeightsFromTheStartOfExactsSearch) {
  struct Case {
    std::string input;
    Bytes at_most;
    bool by_sweep;
  };
  for (const Case& c :
       std::vector<Case>{{"minimalloc/J.1048576.csv", 1030144, true},
                         {"minimalloc/D.1048576.csv", 1007616, false}}) {
    SCOPED_TRACE(c.input);
    absl::StatusOr<Problem> problem = LoadProblem(c.input);
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<Plan> plan = PlanMemory(*problem);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
    EXPECT_LE(plan->peak, c.at_most);
    EXPECT_FALSE(plan->counters.contains("cut_by_work_limit"));
    EXPECT_EQ(plan->counters.contains("sweep_probes"), c.by_sweep);
    absl::StatusOr<Plan> again = PlanMemory(*problem);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(plan->assignments, again->assignments);
    EXPECT_EQ(plan->counters, again->counters);
  }
}

// pangu_2.6B (18692 buffers) is dense for the default: one greedy pass,
// by size classes (1.0334x the lower bound), then peak_window: the steps
// around the peak planned by exact's search, the rest placed around them,
// at the lower bound. Within the default budget, twice alike.
TEST(PatienceTest, TheDefaultPlansPangusPeakByExactsSearch) {
  absl::StatusOr<Problem> problem = LoadProblem("traces/pangu_2.6B.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan = PlanMemory(*problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
  EXPECT_LE(static_cast<double>(plan->peak),
            1.005 * static_cast<double>(plan->lower_bound));
  EXPECT_EQ(plan->peak, plan->lower_bound);
  EXPECT_FALSE(plan->counters.contains("cut_by_work_limit"));
  // The window: the buffers alive over the steps of at least 0.9x
  // max-live around its peak, a few hundred, planned in few nodes.
  ASSERT_TRUE(plan->counters.contains("window_buffers"));
  EXPECT_GT(plan->counters.at("window_buffers"), 0);
  EXPECT_LE(plan->counters.at("window_buffers"), 1000);
  ASSERT_TRUE(plan->counters.contains("window_nodes"));
  EXPECT_LE(plan->counters.at("window_nodes"),
            plan->counters.at("window_buffers") * 4);
  absl::StatusOr<Plan> again = PlanMemory(*problem);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(plan->assignments, again->assignments);
}

// peak_window keeps its start where it does not apply (two pools), and
// never returns a larger plan than its start.
TEST(PatienceTest, PeakWindowKeepsItsStartWhereItCannotGain) {
  absl::StatusOr<Problem> problem = LoadProblem("traces/pangu_2.6B.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  const std::unique_ptr<SearchPlanner> window = MakePeakWindowPlanner({});
  // From greedy by size's plan (1.0076x): smaller.
  const std::unique_ptr<Planner> greedy = MakeGreedyPlanner({});
  Incumbent by_size(*greedy, *problem, {});
  ASSERT_TRUE(by_size.Get().ok()) << by_size.Get().status();
  const Bytes start = by_size.Get()->peak;
  absl::StatusOr<Plan> plan = window->Search(*problem, {}, by_size);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
  EXPECT_LT(plan->peak, start);
  EXPECT_EQ(plan->planner, "peak_window");
  // Two pools: the start as it is.
  Problem two_pools = *problem;
  two_pools.pools.push_back({.name = "second"});
  Incumbent start_plan(*greedy, two_pools, {});
  ASSERT_TRUE(start_plan.Get().ok()) << start_plan.Get().status();
  absl::StatusOr<Plan> kept = window->Search(two_pools, {}, start_plan);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->assignments, start_plan.Get()->assignments);
  EXPECT_FALSE(kept->counters.contains("window_buffers"));
}

// On random problems, some with alignments, explicit conflicts or fixed
// buffers (which it leaves alone), peak_window's plan is valid and never
// larger than its start.
TEST(PatienceTest, PeakWindowsPlansAreValidAndNoLarger) {
  const std::unique_ptr<SearchPlanner> window = MakePeakWindowPlanner({});
  const std::unique_ptr<Planner> greedy = MakeGreedyPlanner({});
  int gained = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Problem problem = memplan::testing::RandomProblem(
        seed, {.buffers = 60,
               .alignments = seed % 4 == 1,
               .explicit_conflicts = seed % 4 == 2 ? 6 : 0,
               .fixed = seed % 4 == 3 ? 3 : 0});
    Incumbent start(*greedy, problem, {});
    ASSERT_TRUE(start.Get().ok()) << start.Get().status();
    absl::StatusOr<Plan> plan =
        window->Search(problem, {.work_limit = 10'000'000}, start);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok()) << VerifyPlan(problem, *plan);
    EXPECT_LE(plan->peak, start.Get()->peak);
    if (plan->peak < start.Get()->peak) ++gained;
  }
  EXPECT_GT(gained, 0);
}

TEST(ProgressTest, ReportsEachSmallerPlanAndLeavesThePlanAlone) {
  absl::StatusOr<Problem> problem = LoadProblem("minimalloc/A.1048576.csv");
  ASSERT_TRUE(problem.ok()) << problem.status();
  const absl::StatusOr<Plan> silent = PlanMemory(*problem);
  ASSERT_TRUE(silent.ok()) << silent.status();

  std::vector<Progress> reports;
  std::vector<std::string> names;
  PlanMemoryOptions options;
  options.plan.progress = [&](const Progress& p) {
    reports.push_back(p);
    names.emplace_back(p.planner);
  };
  const absl::StatusOr<Plan> reported = PlanMemory(*problem, options);
  ASSERT_TRUE(reported.ok()) << reported.status();
  EXPECT_TRUE(VerifyPlan(*problem, *reported).ok());
  EXPECT_EQ(reported->assignments, silent->assignments);

  // Several reports (the heuristics' first plan, then the searches'), each
  // smaller than the one before, the last the plan's peak.
  ASSERT_GE(reports.size(), 2u);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_LT(reports[i].peak, reports[i - 1].peak) << names[i];
  }
  EXPECT_EQ(reports.back().peak, reported->peak);
  for (const std::string& name : names) EXPECT_FALSE(name.empty());
}

}  // namespace
}  // namespace memplan
