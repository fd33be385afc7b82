#include "memplan/symbolic_planner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_verify.h"
#include "symbolic_graphs.h"
#include "workloads/symbolic_decoder.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kAttention;

// A decoder layer of 8 heads up to seq 256, aligned to 64: the search's
// hill climb finds better plans than its first tries there.
SymbolicProblem Decoder() {
  const Graph g = internal::SymbolicDecoder({.layers = 1,
                                             .width = 64,
                                             .heads = 8,
                                             .mlp = 176,
                                             .vocab = 1000,
                                             .max_seq = 256});
  BuildOptions build;
  build.alignment = 64;
  absl::StatusOr<SymbolicProblem> p = BuildSymbolicProblem(g, build);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(SymbolicPlannerRegistryTest, ReachesEachPlannerByName) {
  std::vector<std::string> names;
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    names.emplace_back(info.name);
  }
  EXPECT_THAT(names,
              ElementsAre("symbolic_search", "symbolic_greedy", "upper_bound"));
  EXPECT_EQ(DefaultSymbolicPlannerName(), "symbolic_search");
  absl::StatusOr<SymbolicProblem> p =
      BuildSymbolicProblem(*ParseGraphJson(kAttention));
  ASSERT_TRUE(p.ok()) << p.status();
  SymbolicSearchOptions options;
  options.work_limit = SymbolicCandidateWork(1 << 12);
  for (const std::string& name : names) {
    absl::StatusOr<std::unique_ptr<SymbolicPlanner>> planner =
        CreateSymbolicPlanner(name);
    ASSERT_TRUE(planner.ok()) << planner.status();
    EXPECT_EQ((*planner)->name(), name);
    absl::StatusOr<SymbolicPlan> plan = (*planner)->Solve(*p, options);
    ASSERT_TRUE(plan.ok()) << name << ": " << plan.status();
    EXPECT_EQ(plan->planner, name);
    EXPECT_TRUE(VerifySymbolicPlan(*p, *plan).ok()) << name;
  }
}

TEST(SymbolicPlannerRegistryTest, UnknownNamesAndOptionsAreRefused) {
  absl::StatusOr<std::unique_ptr<SymbolicPlanner>> unknown =
      CreateSymbolicPlanner("first_fit");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("unknown symbolic planner \"first_fit\"; valid "
                        "symbolic planners: symbolic_search, "
                        "symbolic_greedy, upper_bound"));
  EXPECT_THAT(CreateSymbolicPlanner("symbolic_greedy", {{"seed", "2"}})
                  .status()
                  .message(),
              HasSubstr("seed"));
  EXPECT_FALSE(CreateSymbolicPlanner("symbolic_search", {{"seed", "x"}}).ok());
  EXPECT_TRUE(CreateSymbolicPlanner("symbolic_search", {{"seed", "7"}}).ok());
  // PlanSymbolicMemory chooses through the same table.
  SymbolicPlanMemoryOptions options;
  options.planner = "first_fit";
  EXPECT_THAT(PlanSymbolicMemory(*ParseGraphJson(kAttention), options)
                  .status()
                  .message(),
              HasSubstr("valid symbolic planners: symbolic_search"));
}

TEST(SymbolicPlannerRegistryTest, UpperBoundThroughPlanSymbolicMemory) {
  SymbolicPlanMemoryOptions options;
  options.planner = "upper_bound";
  const Graph g = *ParseGraphJson(kAttention);
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(g, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->planner, "upper_bound");
  ASSERT_EQ(plan->buckets.size(), 1u);
  EXPECT_EQ(plan->buckets[0].plan, *PlanSymbolicUpperBound(plan->problem));
  EXPECT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
}

TEST(SymbolicSearchWorkTest, CountsWorkUnitsAndStopsAtTheLimit) {
  const SymbolicProblem p = Decoder();
  // The tries before the hill climb, which every limit grants.
  SymbolicSearchStats first;
  SymbolicSearchOptions options;
  options.work_limit = 1;
  options.stats = &first;
  ASSERT_TRUE(PlanSymbolicSearch(p, options).ok());
  EXPECT_EQ(first.steps, 0);
  ASSERT_GT(first.work_done, 0);
  double previous = first.score;
  for (int64_t extra : {int64_t{1} << 22, int64_t{1} << 24}) {
    SymbolicSearchStats stats;
    options.work_limit = first.work_done + extra;
    options.stats = &stats;
    absl::StatusOr<SymbolicPlan> plan = PlanSymbolicSearch(p, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(stats.work_limit, options.work_limit);
    EXPECT_GT(stats.steps, 0);
    // It stopped because the work was spent, within one move of the limit.
    EXPECT_GE(stats.work_done, options.work_limit);
    EXPECT_LE(stats.work_done, options.work_limit + stats.largest_step);
    // A larger limit continues the same climb: no worse a plan.
    EXPECT_LE(stats.score, previous) << extra;
    previous = stats.score;
  }
}

// A small graph is answered at once: the climb stops once every move from
// its best order was tried (more work could not change the plan), and the
// whole range's plan with its buckets costs a fraction of one default
// budget.
TEST(SymbolicSearchWorkTest, SmallGraphStopsWhenNoMoveIsLeft) {
  absl::StatusOr<Graph> g = ParseGraphJson(kAttention);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<SymbolicProblem> p = BuildSymbolicProblem(*g, {});
  ASSERT_TRUE(p.ok()) << p.status();
  SymbolicSearchStats stats;
  SymbolicSearchOptions options;
  options.stats = &stats;
  absl::StatusOr<SymbolicPlan> plan = PlanSymbolicSearch(*p, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifySymbolicPlan(*p, *plan).ok());
  EXPECT_EQ(stats.work_limit, kDefaultWorkLimit);
  EXPECT_GT(stats.steps, 0);
  EXPECT_LT(stats.work_done, kDefaultWorkLimit / 100);
  // Twice the budget: the same plan (the climb had nothing left to try).
  SymbolicSearchStats twice;
  options.work_limit = 2 * kDefaultWorkLimit;
  options.stats = &twice;
  absl::StatusOr<SymbolicPlan> again = PlanSymbolicSearch(*p, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *plan);
  EXPECT_EQ(twice.work_done, stats.work_done);

  SymbolicPlanMemoryOptions whole;
  const absl::Time start = absl::Now();
  absl::StatusOr<SymbolicGraphPlan> graph_plan = PlanSymbolicMemory(*g, whole);
  ASSERT_TRUE(graph_plan.ok()) << graph_plan.status();
  EXPECT_TRUE(VerifySymbolicGraphPlan(*graph_plan).ok());
  EXPECT_GE(graph_plan->buckets.size(), 2u);
  // Seconds before the climb stopped early (a generous bound for a busy
  // machine; the counted work above is the exact check).
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(SymbolicSearchWorkTest, DefaultLimitIsTheSearchOfTwoToTheTwentyOne) {
  EXPECT_EQ(SymbolicCandidateWork(int64_t{1} << 21), kDefaultWorkLimit);
  EXPECT_EQ(SymbolicCandidateWork(int64_t{1} << 15), kDefaultWorkLimit / 64);
  EXPECT_EQ(SymbolicWorkLimit({}), kDefaultWorkLimit);
  SymbolicSearchOptions timed;
  timed.time_limit = absl::Seconds(2);
  EXPECT_EQ(SymbolicWorkLimit(timed), 2 * kWorkPerSecond);
}

TEST(SymbolicSearchWorkTest, TimeLimitEndsThePlanningWithAVerifiedPlan) {
  const Graph g = internal::SymbolicDecoder({.layers = 2,
                                             .width = 64,
                                             .heads = 8,
                                             .mlp = 176,
                                             .vocab = 1000,
                                             .max_seq = 2048});
  for (const char* planner : {"symbolic_search", "symbolic_greedy"}) {
    SymbolicPlanMemoryOptions options;
    options.build.alignment = 64;
    options.planner = planner;
    options.search.time_limit = absl::Milliseconds(1);
    const absl::Time start = absl::Now();
    absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(g, options);
    ASSERT_TRUE(plan.ok()) << planner << ": " << plan.status();
    EXPECT_TRUE(VerifySymbolicGraphPlan(*plan).ok()) << planner;
    // Without the limit this takes seconds.
    EXPECT_LT(absl::Now() - start, absl::Seconds(1)) << planner;
  }
}

}  // namespace
}  // namespace memplan
