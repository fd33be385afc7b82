// memplan remat, run as a user runs it: the summary, the rewritten graph
// and its plan (which `memplan verify` accepts), the sweep's table, and the
// errors of a budget out of reach and of bad flags.

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
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

// `layers` layers of 100 bytes forward, then backward, each backward op
// reading its layer's input: 1000 bytes at the loss without recomputation
// (8 layers, 17 ops).
std::string WriteChain(int layers = 8) {
  Graph g{.name = "chain"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput}};
  std::string last = "x";
  for (int i = 1; i <= layers; ++i) {
    const std::string a = absl::StrCat("a", i);
    g.tensors.push_back({.name = a, .size = 100});
    g.ops.push_back(Op{.name = absl::StrCat("f", i),
                       .inputs = {last},
                       .outputs = {a},
                       .cost = 10,
                       .recomputable = true});
    last = a;
  }
  const std::string loss = absl::StrCat("g", layers + 1);
  g.tensors.push_back({.name = loss, .size = 100});
  g.ops.push_back(
      Op{.name = "loss", .inputs = {last}, .outputs = {loss}, .cost = 20});
  for (int i = layers; i >= 1; --i) {
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
  const std::string path = Temp(absl::StrCat("chain", layers, ".json"));
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

// The number after `label` in the tool's summary.
double Number(const std::string& output, const std::string& label) {
  const size_t at = output.find(label);
  if (at == std::string::npos) return -1;
  return std::stod(output.substr(at + label.size()));
}

TEST(RematToolTest, ExactProvesACostNoHigherThanTheHeuristics) {
  const std::string input = WriteChain();
  const std::string graph = Temp("exact_rewritten.json");
  const std::string plan = Temp("exact_plan.json");
  ToolRun exact = RunTool(
      absl::StrCat("remat ", input, " --budget=700 --exact --graph-out=", graph,
                   " --out=", plan));
  ASSERT_EQ(exact.exit_code, 0) << exact.output;
  EXPECT_THAT(exact.output,
              AllOf(HasSubstr("peak reached: 700 bytes"),
                    HasSubstr("search: least added cost, proven (")));
  ToolRun heuristic = RunTool(absl::StrCat("remat ", input, " --budget=700"));
  ASSERT_EQ(heuristic.exit_code, 0) << heuristic.output;
  EXPECT_THAT(heuristic.output, ::testing::Not(HasSubstr("search:")));
  const double exact_cost = Number(exact.output, "added cost: ");
  EXPECT_GT(exact_cost, 0) << exact.output;
  EXPECT_LE(exact_cost, Number(heuristic.output, "added cost: "));
  ToolRun verify = RunTool(absl::StrCat("verify ", graph, " ", plan));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("valid plan"));
}

TEST(RematToolTest, ExactSaysWhenTheWorkLimitLeftItUnproven) {
  // 41 layers (83 ops) under a small limit (counted: the same on any
  // machine): a rewrite within the budget, not proven, and the heuristic
  // suggested.
  ToolRun run =
      RunTool(absl::StrCat("remat ", WriteChain(41),
                           " --budget=1500 --exact --work-limit=", 2'000'000));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("peak reached: 1500 bytes"),
                    HasSubstr("work limit reached: raise --work-limit)"),
                    HasSubstr("has 83 ops, and --exact suits graphs of up to "
                              "about 60: drop --exact for the heuristic")));
}

TEST(RematToolTest, ExactOnAGraphTooLargeSuggestsTheHeuristic) {
  ToolRun run =
      RunTool(absl::StrCat("remat ", WriteChain(41),
                           " --budget=1500 --exact --work-limit=", 100'000));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("the search spent its limits"),
                                HasSubstr("has 83 ops"),
                                HasSubstr("drop --exact for the heuristic")));
}

// examples/remat_example.cc's step: b1 reads x and a1 again, so the
// heuristic's chain runs f1 twice, which the search's model leaves out.
TEST(RematToolTest, ExactSaysWhenTheHeuristicsRewriteFitsInstead) {
  Graph g{.name = "tiny"};
  g.tensors = {{.name = "x", .size = 1000, .kind = TensorKind::kInput}};
  for (const char* name : {"a1", "a2", "a3", "g3", "g2"}) {
    g.tensors.push_back({.name = name, .size = 1000});
  }
  g.tensors.push_back({.name = "loss", .size = 4});
  g.tensors.push_back(
      {.name = "gx", .size = 1000, .kind = TensorKind::kOutput});
  for (const auto& [name, in, out] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"f1", "x", "a1"},
           {"f2", "a1", "a2"},
           {"f3", "a2", "a3"},
           {"head", "a3", "loss"}}) {
    g.ops.push_back(Op{.name = name,
                       .inputs = {in},
                       .outputs = {out},
                       .cost = 2,
                       .recomputable = true});
  }
  g.ops.push_back({.name = "b3", .inputs = {"loss", "a3"}, .outputs = {"g3"}});
  g.ops.push_back({.name = "b2", .inputs = {"g3", "a2"}, .outputs = {"g2"}});
  g.ops.push_back(
      {.name = "b1", .inputs = {"g2", "a1", "x"}, .outputs = {"gx"}});
  const std::string input = Temp("tiny.json");
  ASSERT_TRUE(WriteFile(input, GraphToJson(g)).ok());
  ToolRun run =
      RunTool(absl::StrCat("remat ", input, " --budget=4000 --exact"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              AllOf(HasSubstr("peak reached: 4000 bytes"),
                    HasSubstr("search: not proven (the heuristic's rewrite, "
                              "outside the search's model, fits where none "
                              "of the model does)")));
}

TEST(RematToolTest, ExactGivesTheSmallestPeakOfABudgetOutOfReach) {
  ToolRun run =
      RunTool(absl::StrCat("remat ", WriteChain(), " --budget=100 --exact"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, AllOf(HasSubstr("into 100 bytes (proven)"),
                                HasSubstr("the smallest peak found is 500"),
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
           {"--sweep=3 --exact", "--exact fits one --budget"},
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
