// memplan remat, run as a user runs it: the summary, the rewritten graph
// and its plan (which `memplan verify` accepts), the sweep's table, and the
// errors of a budget out of reach and of bad flags.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/remat.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::RunTool;
using ::memplan::testing::RunToolStdout;
using ::memplan::testing::ToolRun;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/remat_tool_test_" + name;
}

// 8 layers of 100 bytes forward, then backward, each backward op reading
// its layer's input: 1000 bytes at the loss without recomputation.
std::string WriteChain() {
  Graph g{.name = "chain"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput}};
  std::string last = "x";
  for (int i = 1; i <= 8; ++i) {
    const std::string a = absl::StrCat("a", i);
    g.tensors.push_back({.name = a, .size = 100});
    g.ops.push_back(Op{.name = absl::StrCat("f", i),
                       .inputs = {last},
                       .outputs = {a},
                       .cost = 10,
                       .recomputable = true});
    last = a;
  }
  g.tensors.push_back({.name = "g9", .size = 100});
  g.ops.push_back(
      Op{.name = "loss", .inputs = {last}, .outputs = {"g9"}, .cost = 20});
  for (int i = 8; i >= 1; --i) {
    const std::string out = i > 1 ? absl::StrCat("g", i) : "gx";
    g.tensors.push_back(
        {.name = out,
         .size = 100,
         .kind = i > 1 ? TensorKind::kActivation : TensorKind::kOutput});
    g.ops.push_back(Op{.name = absl::StrCat("b", i),
                       .inputs = {absl::StrCat("g", i + 1),
                                  i > 1 ? absl::StrCat("a", i - 1) : "x"},
                       .outputs = {out},
                       .cost = 20});
  }
  const std::string path = Temp("chain.json");
  EXPECT_TRUE(WriteFile(path, GraphToJson(g)).ok());
  return path;
}

TEST(RematToolTest, FitsABudgetAndWritesAGraphAndPlanThatVerify) {
  const std::string input = WriteChain();
  const std::string graph = Temp("rewritten.json");
  const std::string plan = Temp("plan.json");
  ToolRun run = RunTool(absl::StrCat(
      "remat ", input, " --budget=700 --graph-out=", graph, " --out=", plan));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(
      run.output,
      AllOf(HasSubstr("peak without recomputation: 1000 bytes"),
            HasSubstr("(budget 700 bytes"), HasSubstr("of the graph's cost"),
            HasSubstr("ops recomputed: ")));
  ToolRun verify = RunTool(absl::StrCat("verify ", graph, " ", plan));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("valid plan"));
  absl::StatusOr<std::string> text = ReadFile(graph);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> rewritten = ParseGraphJson(*text);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  EXPECT_GT(rewritten->ops.size(), 17u);
  EXPECT_THAT(*text, HasSubstr(kRecomputeSuffix));
}

TEST(RematToolTest, SweepPrintsATableFromThePeakToTheSmallest) {
  ToolRun run =
      RunToolStdout(absl::StrCat("remat ", WriteChain(), " --sweep=4"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> lines =
      absl::StrSplit(run.output, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << run.output;
  EXPECT_THAT(lines[0], AllOf(HasSubstr("budget"), HasSubstr("peak reached"),
                              HasSubstr("added cost"), HasSubstr("% of cost")));
  // The first row: the peak without recomputation, nothing recomputed.
  std::vector<std::string> first =
      absl::StrSplit(lines[1], ' ', absl::SkipEmpty());
  EXPECT_EQ(first,
            (std::vector<std::string>{"1000", "1000", "0", "0.00%", "0"}));
}

// A graph with nothing to recompute: one row, and a note saying why.
TEST(RematToolTest, ASweepWithNothingToRecomputeSaysSo) {
  ToolRun run = RunTool("remat " + testing::DataPath("models/resnet50.json") +
                        " --sweep=3");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("no recomputation lowers the peak of graph"),
                    HasSubstr("(0 of its")));
}

TEST(RematToolTest, ABudgetOutOfReachGivesTheSmallest) {
  ToolRun run = RunTool(absl::StrCat("remat ", WriteChain(), " --budget=100"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, AllOf(HasSubstr("into 100 bytes"),
                                HasSubstr("the smallest peak found is "),
                                HasSubstr("give a budget of at least ")));
}

TEST(RematToolTest, BadFlagsAreUsageErrors) {
  const std::string input = WriteChain();
  for (const auto& [flags, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"", "give either --budget=SIZE"},
           {"--budget=1K --sweep=3", "give either --budget=SIZE"},
           {"--budget=1K --out=p.json", "give --graph-out=FILE.json"},
           {"--sweep=1", "at least 2 budgets"},
           {"--sweep=3 --graph-out=g.json", "go with --budget"},
           {"--budget=1K --reorder=memory", "the graph's own order"},
           {"--budgte=1K", "did you mean --budget?"}}) {
    ToolRun run = RunTool(absl::StrCat("remat ", input, " ", flags));
    EXPECT_EQ(run.exit_code, 2) << flags << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr(message)) << flags;
  }
}

}  // namespace
}  // namespace memplan
