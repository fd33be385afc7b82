// The registry: every planner by name, with what it is, and the errors of
// names it does not know.

#include <memory>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "exact.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

TEST(RegistryTest, EveryPlannerIsCreatedByItsNameAndPlans) {
  const Problem problem = *testing::LoadProblem("models/resnet18.json");
  std::set<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    SCOPED_TRACE(std::string(info.name));
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << "twice";
    EXPECT_FALSE(info.description.empty());
    absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << planner.status();
    EXPECT_EQ((*planner)->name(), info.name);
    absl::StatusOr<Plan> plan =
        (*planner)->Solve(problem, {.work_limit = 1'000'000});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
    EXPECT_EQ(plan->planner, info.name);
  }
  EXPECT_TRUE(names.contains(std::string(DefaultPlannerName())));
}

TEST(RegistryTest, SaysWhatKindOfPlannerEachIs) {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    SCOPED_TRACE(std::string(info.name));
    if (info.name == "exact" || info.name == "cp") {
      EXPECT_EQ(info.kind, PlannerKind::kExact);
      EXPECT_EQ(info.cost, PlannerCost::kModel);
    } else if (info.name == "best" || info.name == "hill_climb") {
      EXPECT_EQ(info.kind, PlannerKind::kSearch);
      EXPECT_EQ(info.cost, PlannerCost::kBudgeted);
    } else if (info.name == "naive" || info.name == "greedy_by_size") {
      EXPECT_EQ(info.kind, PlannerKind::kHeuristic);
      EXPECT_EQ(info.cost, PlannerCost::kLight);
    }
  }
}

TEST(RegistryTest, AnUnknownNameIsNotFoundListingTheValidOnes) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner("nope");
  ASSERT_FALSE(planner.ok());
  EXPECT_EQ(planner.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(planner.status().message().find("\"nope\""), std::string::npos);
  for (const PlannerInfo& info : RegisteredPlanners()) {
    EXPECT_NE(planner.status().message().find(std::string(info.name)),
              std::string::npos);
  }
}

TEST(RegistryTest, BuildsItsCompositionsAroundACallersSearch) {
  ExactStats stats;
  absl::StatusOr<std::unique_ptr<Planner>> exact =
      CreatePlanner("exact", MakeExactPlanner({}, &stats));
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ((*exact)->name(), "exact");
  const Problem problem = *testing::LoadProblem("minimalloc/A.1048576.csv");
  absl::StatusOr<Plan> plan = (*exact)->Solve(problem, {.work_limit = 4'000'000});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
  EXPECT_GT(stats.nodes, 0);  // the caller's search ran

  absl::StatusOr<std::unique_ptr<Planner>> naive =
      CreatePlanner("naive", MakeExactPlanner({}));
  EXPECT_EQ(naive.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreatePlanner("nope", MakeExactPlanner({})).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace memplan
