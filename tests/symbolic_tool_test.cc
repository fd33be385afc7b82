// The tool on graphs with symbolic dims: memplan stats (the naive total and
// the lower bound as functions of the dims) and memplan report (the
// symbolic plan at --dim), against the library's figures.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"
#include "test_util.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunTool;
using testing::ToolRun;

constexpr int64_t kMaxSeq = 600;

Graph Transformer() {
  return internal::SymbolicTransformer(
      {.layers = 2, .width = 64, .heads = 2, .min_seq = 1, .max_seq = kMaxSeq});
}

// The transformer as a graph JSON file.
std::string TransformerFile() {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("memplan_symbolic_tool_" + std::to_string(getpid()) + ".json"))
          .string();
  std::ofstream(path) << GraphToJson(Transformer());
  return path;
}

BuildOptions Build64() {
  BuildOptions options;
  options.alignment = 64;
  return options;
}

// The whitespace-separated words of the line of `output` that starts with
// `first` (after spaces), or none.
std::vector<std::string> Row(const std::string& output,
                             const std::string& first) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> row;
    std::string w;
    while (words >> w) row.push_back(w);
    if (!row.empty() && row[0] == first) return row;
  }
  return {};
}

TEST(SymbolicToolTest, StatsGivesTheFiguresAsFunctionsAndValues) {
  const std::string input = TransformerFile();
  const ToolRun run =
      RunTool("stats " + input + " --alignment=64 --at seq=7 --at seq=333");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  absl::StatusOr<SymbolicProblem> p =
      BuildSymbolicProblem(Transformer(), Build64());
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<DimExpr> naive = SymbolicNaiveTotal(*p);
  absl::StatusOr<SymbolicBound> bound = SymbolicLowerBound(*p);
  ASSERT_TRUE(naive.ok() && bound.ok());
  EXPECT_THAT(run.output, HasSubstr("symbolic dims: seq in [1, 600]\n"));
  EXPECT_THAT(run.output, HasSubstr("naive total: " + naive->ToString()));
  EXPECT_THAT(run.output,
              HasSubstr("lower bound: the largest of " +
                        std::to_string(bound->pieces.size()) + " polynom"));
  EXPECT_THAT(run.output, HasSubstr(": " + bound->pieces[0].bytes.ToString()));
  ASSERT_EQ(Row(run.output, "seq"),
            (std::vector<std::string>{"seq", "naive", "total", "lower", "bound",
                                      "at", "step"}));
  for (const int64_t seq : {int64_t{1}, int64_t{7}, int64_t{333}, kMaxSeq}) {
    absl::StatusOr<Problem> at = p->At({{"seq", seq}});
    ASSERT_TRUE(at.ok());
    const std::vector<std::string> row = Row(run.output, std::to_string(seq));
    ASSERT_EQ(row.size(), 4u) << seq << "\n" << run.output;
    EXPECT_EQ(row[1], std::to_string(NaiveTotal(*at))) << seq;
    EXPECT_EQ(row[2], std::to_string(LowerBound(*at))) << seq;
  }
}

TEST(SymbolicToolTest, StatsRefusesBadValuesAndBindsWithDim) {
  const std::string input = TransformerFile();
  ToolRun run = RunTool("stats " + input + " --at seq=601");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output,
              HasSubstr("--at=seq=601: 601 lies outside seq's range [1, 600]"));
  run = RunTool("stats " + input + " --at len=3");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("the graph has no dim \"len\""));
  run = RunTool("stats " + input + " --reorder=memory");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("has symbolic dims (seq in [1, 600])"));
  // Every dim bound: the ordinary figures of the bound graph.
  run = RunTool("stats " + input + " --alignment=64 --dim seq=7");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  absl::StatusOr<Graph> bound = BindDims(Transformer(), {{"seq", 7}});
  ASSERT_TRUE(bound.ok());
  absl::StatusOr<Problem> problem = BuildProblem(*bound, Build64());
  ASSERT_TRUE(problem.ok());
  EXPECT_THAT(run.output,
              HasSubstr("\nlower bound: " +
                        std::to_string(LowerBound(*problem)) + "\n"));
  EXPECT_THAT(run.output, Not(HasSubstr("symbolic dims")));
}

TEST(SymbolicToolTest, ReportShowsTheSymbolicPlanAtDim) {
  const std::string input = TransformerFile();
  SymbolicPlanMemoryOptions options;
  options.build = Build64();
  absl::StatusOr<SymbolicGraphPlan> plan =
      PlanSymbolicMemory(Transformer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  absl::StatusOr<SymbolicPlan> upper = PlanSymbolicUpperBound(plan->problem);
  ASSERT_TRUE(upper.ok());
  for (const int64_t seq : {int64_t{5}, int64_t{100}, kMaxSeq}) {
    const DimValues values = {{"seq", seq}};
    const ToolRun run =
        RunTool("report " + input + " --alignment=64" +
                (seq == kMaxSeq ? "" : " --dim seq=" + std::to_string(seq)));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    absl::StatusOr<GraphPlan> at = plan->At(Transformer(), values);
    ASSERT_TRUE(at.ok()) << at.status();
    ASSERT_TRUE(VerifyPlan(at->problem, at->plan).ok());
    const SymbolicBucket* bucket = plan->Find(values);
    ASSERT_NE(bucket, nullptr);
    EXPECT_THAT(run.output,
                HasSubstr("symbolic plan of \"transformer_2x64\", one plan "
                          "valid for every value of seq in [1, 600]: "));
    EXPECT_THAT(
        run.output,
        HasSubstr(plan->buckets.size() == 1
                      ? std::string("one bucket")
                      : "this value in seq in [" +
                            std::to_string(bucket->dims.at("seq").min) + ", "));
    EXPECT_THAT(run.output,
                HasSubstr(seq == kMaxSeq
                              ? "shown at seq=600 (seq at its maximum"
                              : "shown at seq=" + std::to_string(seq) + "\n"));
    EXPECT_THAT(
        run.output,
        HasSubstr("arena there: " + std::to_string(*bucket->PeakAt(values)) +
                  " bytes, the bucket's peak " + bucket->plan.peak.ToString()));
    // The ratio is to the bound of the graph bound there (its own sizes).
    const Problem own =
        *BuildProblem(*BindDims(Transformer(), values), Build64());
    EXPECT_THAT(run.output, HasSubstr(" x the lower bound " +
                                      std::to_string(LowerBound(own)) + ")"));
    EXPECT_THAT(
        run.output,
        HasSubstr("used at every value): " +
                  std::to_string(*upper->peak.Evaluate(values)) + " bytes"));
    EXPECT_THAT(run.output, HasSubstr("\nplanner: " + plan->planner + "\n"));
    EXPECT_THAT(
        run.output,
        HasSubstr("\npeak: " + std::to_string(at->plan.peak) + " bytes"));
    EXPECT_THAT(run.output,
                HasSubstr("\nlower bound: " +
                          std::to_string(LowerBound(at->problem)) + " bytes"));
  }
}

TEST(SymbolicToolTest, ReportRefusesValuesOutsideAndKeepsNamedPlanners) {
  const std::string input = TransformerFile();
  ToolRun run = RunTool("report " + input + " --dim seq=601");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("--dim: dim \"seq\" is bound to 601, "
                                    "outside its range [1, 600]"));
  run = RunTool("report " + input + " --dim seq=7 --reorder=memory");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("--reorder: graph \"transformer_2x64\""));
  // A planner named: the ordinary report of the graph bound to the value.
  run = RunTool("report " + input + " --dim seq=7 --planner=greedy_by_size");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\nplanner: greedy_by_size\n"));
  EXPECT_THAT(run.output, Not(HasSubstr("symbolic plan")));
}

}  // namespace
}  // namespace memplan
