// The registry: every planner by name, with what it is and the options it
// declares, and the errors of names and options it does not know.

#include "memplan/registry.h"

#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

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
    if (info.name == "exact" || info.name == "cp" || info.name == "cpsat") {
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

// The registered composition with the caller's options: exact from best's
// plan, its search with the options given by name.
TEST(RegistryTest, BuildsItsCompositionsWithACallersOptions) {
  absl::StatusOr<std::unique_ptr<Planner>> exact =
      CreatePlanner("exact", {{"symmetry", "false"}, {"restarts", "false"}});
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ((*exact)->name(), "exact");
  const Problem problem = *testing::LoadProblem("minimalloc/A.1048576.csv");
  absl::StatusOr<Plan> plan =
      (*exact)->Solve(problem, {.work_limit = 4'000'000});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
  EXPECT_GT(plan->counters.at("nodes"), 0);  // the caller's search ran
  EXPECT_EQ(plan->counters.at("restarts"), 0);

  // An option the planner does not declare, by a planner without options.
  absl::StatusOr<std::unique_ptr<Planner>> naive =
      CreatePlanner("naive", {{"symmetry", "false"}});
  EXPECT_EQ(naive.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreatePlanner("nope", {{"symmetry", "false"}}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RegistryTest, AnUnknownOptionIsInvalidListingTheValidOnes) {
  absl::StatusOr<std::unique_ptr<Planner>> exact =
      CreatePlanner("exact", {{"symetry", "false"}});
  ASSERT_FALSE(exact.ok());
  EXPECT_EQ(exact.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exact.status().message(), HasSubstr("\"symetry\""));
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != "exact") continue;
    ASSERT_FALSE(info.options.empty());
    for (const PlannerOption& option : info.options) {
      EXPECT_THAT(exact.status().message(), HasSubstr(option.name));
    }
  }
  EXPECT_THAT(CreatePlanner("naive", {{"x", "1"}}).status().message(),
              HasSubstr("it has none"));
}

TEST(RegistryTest, ABadValueIsInvalidNamingTheOption) {
  const std::pair<PlannerOptions, std::string> cases[] = {
      {{{"symmetry", "yes"}}, "symmetry=yes"},
      {{{"symmetry", "1"}}, "true or false"},
      {{{"failure_cache_entries", "many"}}, "failure_cache_entries=many"},
      {{{"failure_cache_entries", "-1"}}, "an integer of at least 0"},
      {{{"failure_cache_entries", "1.5"}}, "failure_cache_entries=1.5"},
      {{{"start_share", "2"}}, "a finite number from 0 to 1"},
      {{{"start_share", "x"}}, "start_share=x"},
      {{{"first_node_limit", "0"}}, "first_node_limit=0"},
  };
  for (const auto& [options, message] : cases) {
    absl::StatusOr<std::unique_ptr<Planner>> exact =
        CreatePlanner("exact", options);
    ASSERT_FALSE(exact.ok()) << message;
    EXPECT_EQ(exact.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(exact.status().message(), HasSubstr(message));
    EXPECT_THAT(exact.status().message(), HasSubstr("\"exact\""));
  }
  EXPECT_THAT(
      CreatePlanner("hill_climb", {{"max_rounds", "x"}}).status().message(),
      HasSubstr("not an integer"));
  EXPECT_TRUE(CreatePlanner("hill_climb", {{"max_rounds", "10"}}).ok());
}

// Every declared default parses: creating each planner with its defaults
// spelled out is creating it with none.
TEST(RegistryTest, EveryDefaultIsAValidValue) {
  for (const PlannerInfo& info : RegisteredPlanners()) {
    PlannerOptions defaults;
    for (const PlannerOption& option : info.options) {
      EXPECT_FALSE(option.description.empty()) << info.name << option.name;
      defaults[option.name] = option.default_value;
    }
    EXPECT_TRUE(CreatePlanner(info.name, defaults).ok()) << info.name;
  }
}

}  // namespace
}  // namespace memplan
