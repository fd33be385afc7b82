// The cp component registers explicitly: a program linking memplan::cp
// without calling RegisterCpPlanner() has no "cp" (linking alone registers
// nothing, whatever the linker keeps), and the call adds it once, after the
// core's planners, however often it is made.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/planners/cp.h"
#include "memplan/registry.h"

namespace memplan {
namespace {

int CpEntries() {
  int found = 0;
  for (const PlannerInfo& info : RegisteredPlanners())
    found += info.name == "cp";
  return found;
}

TEST(CpRegistrationTest, LinkingAloneRegistersNothing) {
  EXPECT_EQ(CpEntries(), 0);
  EXPECT_EQ(CreatePlanner("cp").status().code(), absl::StatusCode::kNotFound);
  // Referencing the component's code keeps its objects in the program.
  EXPECT_NE(MakeCpPlanner({}), nullptr);
  EXPECT_EQ(CpEntries(), 0);
}

TEST(CpRegistrationTest, TheCallRegistersCpOnce) {
  const size_t core = RegisteredPlanners().size();
  ASSERT_TRUE(RegisterCpPlanner().ok());
  ASSERT_TRUE(RegisterCpPlanner().ok());  // harmless again
  EXPECT_EQ(CpEntries(), 1);
  EXPECT_EQ(RegisteredPlanners().size(), core + 1);
  EXPECT_EQ(RegisteredPlanners().back().name, "cp");
  EXPECT_FALSE(RegisteredPlanners().back().options.empty());
  absl::StatusOr<std::unique_ptr<Planner>> cp =
      CreatePlanner("cp", {{"lowest_offset_first", "true"}});
  ASSERT_TRUE(cp.ok()) << cp.status();
  EXPECT_EQ((*cp)->name(), "cp");
  // One name per knob: "threads", as cpsat's; "workers" is refused.
  EXPECT_TRUE(CreatePlanner("cp", {{"threads", "2"}}).ok());
  absl::StatusOr<std::unique_ptr<Planner>> workers =
      CreatePlanner("cp", {{"workers", "2"}});
  EXPECT_EQ(workers.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(workers.status().message()).find("\"threads\""),
            std::string::npos)
      << workers.status();
}

}  // namespace
}  // namespace memplan
