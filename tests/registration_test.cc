// The registry of a program linked with the core alone (memplan::memplan):
// the optional cp planner is not registered, and RegisterPlanner() adds a
// program's own planner after the core's. cp_test checks the other side: a
// program linked with memplan::cp finds "cp".

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/planners/exact.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    names.push_back(std::string(info.name));
  }
  return names;
}

TEST(RegistrationTest, CoreAloneHasNoCp) {
  const std::vector<std::string> names = Names();
  EXPECT_THAT(names, ::testing::Contains("greedy_by_size"));
  EXPECT_THAT(names, ::testing::Contains("exact"));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("cp")));
  absl::StatusOr<std::unique_ptr<Planner>> cp = CreatePlanner("cp");
  ASSERT_FALSE(cp.ok());
  EXPECT_EQ(cp.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(cp.status().message(), HasSubstr("unknown planner \"cp\""));
}

// A program's own planner: every buffer on its own bytes, like naive.
class OwnPlanner : public Planner {
 public:
  std::string_view name() const override { return "own"; }
  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    absl::StatusOr<std::unique_ptr<Planner>> naive = CreatePlanner("naive");
    if (!naive.ok()) return naive.status();
    absl::StatusOr<Plan> plan = (*naive)->Solve(problem, options);
    if (plan.ok()) plan->planner = "own";
    return plan;
  }
};

TEST(RegistrationTest, RegisterPlannerAddsAfterTheCore) {
  const size_t core = RegisteredPlanners().size();
  ASSERT_TRUE(RegisterPlanner({"own", "a program's own planner",
                               PlannerKind::kHeuristic, PlannerCost::kLight},
                              [] {
                                return std::unique_ptr<Planner>(new OwnPlanner);
                              })
                  .ok());
  std::vector<std::string> names = Names();
  ASSERT_EQ(names.size(), core + 1);
  EXPECT_EQ(names.back(), "own");
  EXPECT_EQ(RegisteredPlanners().back().description, "a program's own planner");
  // Not built around a search: CreatePlanner(name, search) refuses it.
  EXPECT_EQ(CreatePlanner("own", MakeExactPlanner({})).status().code(),
            absl::StatusCode::kInvalidArgument);

  absl::StatusOr<std::unique_ptr<Planner>> own = CreatePlanner("own");
  ASSERT_TRUE(own.ok()) << own.status();
  const Graph graph{
      .tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput},
                  {.name = "y", .size = 200},
                  {.name = "z", .size = 100, .kind = TensorKind::kOutput}},
      .ops = {{.name = "f", .inputs = {"x"}, .outputs = {"y"}},
              {.name = "g", .inputs = {"y"}, .outputs = {"z"}}},
  };
  PlanMemoryOptions options;
  options.planner = "own";
  absl::StatusOr<GraphPlan> planned = PlanMemory(graph, options);
  ASSERT_TRUE(planned.ok()) << planned.status();
  EXPECT_EQ(planned->plan.planner, "own");
  EXPECT_EQ(planned->plan.peak, 400);

  // A name is registered once, the core's names included.
  for (std::string_view taken : {"own", "naive"}) {
    absl::Status again = RegisterPlanner({taken, "again"}, [] {
      return std::unique_ptr<Planner>(new OwnPlanner);
    });
    EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << taken;
    EXPECT_THAT(again.message(), HasSubstr(std::string(taken)));
  }
  EXPECT_EQ(RegisterPlanner({"", "no name"}, [] {
              return std::unique_ptr<Planner>(new OwnPlanner);
            }).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RegisterPlanner({"none", "no factory"}, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Names().size(), core + 1);
  // An unknown name lists the registered planners, the added one included.
  absl::StatusOr<std::unique_ptr<Planner>> unknown = CreatePlanner("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("naive, "));
  EXPECT_THAT(unknown.status().message(), HasSubstr(", own"));
}

}  // namespace
}  // namespace memplan
