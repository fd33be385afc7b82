// The cpsat component registers explicitly: a program linking
// memplan::cpsat without calling RegisterCpsatPlanner() has no "cpsat", and
// the call adds it once, after the core's planners. A library that does not
// load is a clear error, not a crash.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/planners/cpsat.h"
#include "memplan/registry.h"

namespace memplan {
namespace {

int CpsatEntries() {
  int found = 0;
  for (const PlannerInfo& info : RegisteredPlanners())
    found += info.name == "cpsat";
  return found;
}

TEST(CpsatRegistrationTest, LinkingAloneRegistersNothing) {
  EXPECT_EQ(CpsatEntries(), 0);
  EXPECT_EQ(CreatePlanner("cpsat").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_NE(MakeCpsatPlanner({}), nullptr);
  EXPECT_EQ(CpsatEntries(), 0);
}

TEST(CpsatRegistrationTest, TheCallRegistersCpsatOnce) {
  const size_t core = RegisteredPlanners().size();
  ASSERT_TRUE(RegisterCpsatPlanner().ok());
  ASSERT_TRUE(RegisterCpsatPlanner().ok());  // harmless again
  EXPECT_EQ(CpsatEntries(), 1);
  EXPECT_EQ(RegisteredPlanners().size(), core + 1);
  EXPECT_EQ(RegisteredPlanners().back().name, "cpsat");
  absl::StatusOr<std::unique_ptr<Planner>> cpsat =
      CreatePlanner("cpsat", {{"threads", "2"}});
  ASSERT_TRUE(cpsat.ok()) << cpsat.status();
  EXPECT_EQ(CreatePlanner("cpsat", {{"threads", "-1"}}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // One name per knob: the old name is refused, naming the new one.
  absl::StatusOr<std::unique_ptr<Planner>> workers =
      CreatePlanner("cpsat", {{"workers", "2"}});
  EXPECT_EQ(workers.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(workers.status().message()).find("\"threads\""),
            std::string::npos)
      << workers.status();
}

TEST(CpsatRegistrationTest, MissingLibraryIsFailedPreconditionNamingIt) {
  EXPECT_NE(CpsatDefaultLibrary().find("libortools"), std::string::npos);
  const Problem problem{
      .buffers = {Buffer{.name = "a", .size = 8, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 8, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "default"}}};
  CpsatOptions options;
  options.library = "/nonexistent/ortools/.libs/libortools.so.9";
  absl::StatusOr<Plan> plan = MakeCpsatPlanner(options)->Solve(problem, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(plan.status().message().find(options.library), std::string::npos)
      << plan.status();
  EXPECT_NE(plan.status().message().find("ortools Python package"),
            std::string::npos)
      << plan.status();
}

}  // namespace
}  // namespace memplan
