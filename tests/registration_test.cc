// The registry of a program linked with the core alone (memplan::memplan):
// the optional cp planner is not registered, and RegisterPlanner() adds a
// program's own planner after the core's. cp_registration_test checks the
// other side: a program linked with memplan::cp finds "cp" once it calls
// RegisterCpPlanner(), and not before.

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/registry.h"

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
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("cpsat")));
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
                              [](const OptionValues&) {
                                return std::unique_ptr<Planner>(new OwnPlanner);
                              })
                  .ok());
  std::vector<std::string> names = Names();
  ASSERT_EQ(names.size(), core + 1);
  EXPECT_EQ(names.back(), "own");
  EXPECT_EQ(RegisteredPlanners().back().description, "a program's own planner");
  // It declares no options: CreatePlanner(name, options) refuses any.
  EXPECT_EQ(CreatePlanner("own", {{"symmetry", "false"}}).status().code(),
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
    absl::Status again =
        RegisterPlanner({taken, "again"}, [](const OptionValues&) {
          return std::unique_ptr<Planner>(new OwnPlanner);
        });
    EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << taken;
    EXPECT_THAT(again.message(), HasSubstr(std::string(taken)));
  }
  EXPECT_EQ(RegisterPlanner({"", "no name"},
                            [](const OptionValues&) {
                              return std::unique_ptr<Planner>(new OwnPlanner);
                            })
                .code(),
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

// A program's planner with options of every type: the registry parses them
// by their declarations and hands the factory typed values.
struct Seen {
  bool flag = false;
  int64_t count = 0;
  double share = 0;
  std::string order;
};
Seen& LastSeen() {
  static Seen seen;
  return seen;
}

TEST(RegistrationTest, OptionsOfEveryTypeReachTheFactory) {
  const PlannerInfo info = {
      .name = "typed",
      .description = "a planner with options of every type",
      .options = {{.name = "flag",
                   .type = OptionType::kBool,
                   .default_value = "false",
                   .description = "a switch"},
                  {.name = "count",
                   .type = OptionType::kInt,
                   .default_value = "3",
                   .description = "a count",
                   .min = 1,
                   .max = 10},
                  {.name = "share",
                   .type = OptionType::kDouble,
                   .default_value = "0.5",
                   .description = "a fraction",
                   .min = 0,
                   .max = 1},
                  {.name = "order",
                   .type = OptionType::kEnum,
                   .default_value = "size",
                   .description = "an order",
                   .choices = {"size", "area"}}}};
  ASSERT_TRUE(RegisterPlanner(info, [](const OptionValues& values) {
                LastSeen() = {.flag = values.Bool("flag"),
                              .count = values.Int("count"),
                              .share = values.Double("share"),
                              .order = values.Enum("order")};
                return std::unique_ptr<Planner>(new OwnPlanner);
              }).ok());
  ASSERT_TRUE(CreatePlanner("typed").ok());
  EXPECT_FALSE(LastSeen().flag);
  EXPECT_EQ(LastSeen().count, 3);
  EXPECT_EQ(LastSeen().share, 0.5);
  EXPECT_EQ(LastSeen().order, "size");
  ASSERT_TRUE(CreatePlanner("typed", {{"flag", "true"},
                                      {"count", "10"},
                                      {"share", "0.25"},
                                      {"order", "area"}})
                  .ok());
  EXPECT_TRUE(LastSeen().flag);
  EXPECT_EQ(LastSeen().count, 10);
  EXPECT_EQ(LastSeen().share, 0.25);
  EXPECT_EQ(LastSeen().order, "area");
  for (const auto& [name, value] :
       {std::pair{"count", "11"}, std::pair{"share", "2"},
        std::pair{"share", "nan"}, std::pair{"order", "lifetime"},
        std::pair{"flag", "TRUE"}}) {
    absl::StatusOr<std::unique_ptr<Planner>> bad =
        CreatePlanner("typed", {{name, value}});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument)
        << name << "=" << value;
    EXPECT_THAT(bad.status().message(),
                HasSubstr(absl::StrCat(name, "=", value)));
  }
  EXPECT_THAT(CreatePlanner("typed", {{"order", "x"}}).status().message(),
              HasSubstr("one of size, area"));

  // A declaration whose default does not parse is refused.
  PlannerInfo bad = info;
  bad.name = "typed_bad";
  bad.options[1].default_value = "0";
  EXPECT_EQ(RegisterPlanner(bad,
                            [](const OptionValues&) {
                              return std::unique_ptr<Planner>(new OwnPlanner);
                            })
                .code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace memplan
