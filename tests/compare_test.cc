#include "memplan/compare.h"

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/registry.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Three buffers: a and b overlap, c reuses a's bytes. Naive 600, bound 300.
Problem Small() {
  Problem p;
  p.name = "small";
  p.pools = {{.name = "default", .capacity = 0, .alignment = 1}};
  p.buffers = {
      {.name = "a", .tensors = {"a"}, .size = 100, .lifetime = {0, 2}},
      {.name = "b", .tensors = {"b"}, .size = 200, .lifetime = {1, 3}},
      {.name = "c", .tensors = {"c"}, .size = 100, .lifetime = {3, 4}},
  };
  return p;
}

std::vector<std::string> AllPlanners() {
  std::vector<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners())
    names.emplace_back(info.name);
  return names;
}

// Two pools: the rows carry each pool's bytes and no ratio of their sum to
// the single-pool lower bound.
TEST(CompareTest, SeveralPoolsAreReportedPerPoolWithoutARatio) {
  Problem p = Small();
  p.pools = {{.name = "sram", .capacity = 200, .alignment = 1},
             {.name = "dram", .capacity = 0, .alignment = 1}};
  CompareOptions options;
  options.planners = {"naive"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(p, "pools", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  const CompareRow& r = rows->front();
  ASSERT_TRUE(r.verified) << r.status;
  ASSERT_EQ(r.pool_used.size(), 2u);
  EXPECT_EQ(r.pool_used[0] + r.pool_used[1], r.peak);
  const std::string table = FormatComparison(*rows, CompareFormat::kMarkdown);
  EXPECT_THAT(table, HasSubstr(absl::StrCat("pools: sram ", r.pool_used[0],
                                            ", dram ", r.pool_used[1])));
  EXPECT_THAT(table, HasSubstr("| - |"));  // the ratio column
  EXPECT_THAT(FormatComparison(*rows, CompareFormat::kSummary),
              HasSubstr("| naive | 1 | 1 | 0 | - | - |"));
}

TEST(CompareTest, NaiveRowCarriesTheBounds) {
  CompareOptions options;
  options.planners = {"naive"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(Small(), "small", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  const CompareRow& r = rows->front();
  EXPECT_EQ(r.input, "small");
  EXPECT_EQ(r.planner, "naive");
  EXPECT_EQ(r.buffers, 3);
  EXPECT_EQ(r.naive_total, 400);
  EXPECT_EQ(r.lower_bound, 300);
  EXPECT_TRUE(r.planned);
  EXPECT_TRUE(r.verified);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.peak, 400);
  EXPECT_FALSE(AnyUnverified(*rows));
}

TEST(CompareTest, EveryRegisteredPlannerOnResnet50) {
  absl::StatusOr<Problem> problem =
      testing::LoadProblem("models/resnet50.json");
  ASSERT_TRUE(problem.ok()) << problem.status();
  CompareOptions options;
  options.plan = testing::CountedWork(1);
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(*problem, "resnet50.json", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  const std::vector<std::string> planners = AllPlanners();
  ASSERT_EQ(rows->size(), planners.size());
  for (size_t i = 0; i < rows->size(); ++i) {
    const CompareRow& r = (*rows)[i];
    EXPECT_EQ(r.planner, planners[i]);
    EXPECT_EQ(r.naive_total, 106393504);
    EXPECT_EQ(r.lower_bound, 9633792);
    // A failure is a row saying so; a plan is always verified.
    if (r.planned) {
      EXPECT_TRUE(r.verified) << r.planner << ": " << r.status;
      EXPECT_GE(r.peak, r.lower_bound) << r.planner;
      EXPECT_LE(r.peak, r.naive_total) << r.planner;
    } else {
      EXPECT_FALSE(r.status.ok()) << r.planner;
    }
  }
  EXPECT_FALSE(AnyUnverified(*rows));
}

TEST(CompareTest, PlannerFailureIsARowNotAnError) {
  Problem p = Small();
  p.pools[0].capacity = 350;  // naive needs 400
  CompareOptions options;
  options.planners = {"naive"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(p, "tight", options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_FALSE((*rows)[0].planned);
  EXPECT_EQ((*rows)[0].status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(AnyUnverified(*rows));
  const std::string table = FormatComparison(*rows, CompareFormat::kTable);
  EXPECT_THAT(table, HasSubstr("RESOURCE_EXHAUSTED"));
  const std::string csv = FormatComparison(*rows, CompareFormat::kCsv);
  EXPECT_THAT(csv, HasSubstr("tight,naive,3,400,300,,,,,"));
}

TEST(CompareTest, UnknownPlannerIsAnErrorBeforeAnythingRuns) {
  CompareOptions options;
  options.planners = {"naive", "no_such_planner"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(Small(), "small", options);
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(rows.status().message()),
              HasSubstr("no_such_planner"));
}

TEST(CompareTest, MalformedProblemIsInvalidArgument) {
  Problem p = Small();
  p.buffers[1].lifetime = {3, 3};
  EXPECT_EQ(ComparePlanners(p, "bad", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CompareTest, UnreadableInputNamesThePath) {
  absl::StatusOr<std::vector<CompareRow>> rows = CompareInputs(
      {testing::DataPath("models/resnet18.json"), "/nonexistent/x.json"}, {});
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(std::string(rows.status().message()),
              HasSubstr("/nonexistent/x.json"));
}

TEST(CompareTest, InputsComeInputMajor) {
  CompareOptions options;
  options.planners = {"naive", "naive"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      CompareInputs({testing::DataPath("models/resnet18.json"),
                     testing::DataPath("traces/G_1.csv")},
                    options);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].input, "resnet18.json");
  EXPECT_EQ((*rows)[1].input, "resnet18.json");
  EXPECT_EQ((*rows)[2].input, "G_1.csv");
  EXPECT_EQ((*rows)[2].buffers, 816);
}

TEST(CompareTest, AnUnverifiedRowIsFlagged) {
  CompareRow ok{
      .input = "x", .planner = "p", .planned = true, .verified = true};
  CompareRow bad = ok;
  bad.verified = false;
  bad.status = absl::InvalidArgumentError("buffers a and b overlap");
  EXPECT_FALSE(AnyUnverified({ok}));
  EXPECT_TRUE(AnyUnverified({ok, bad}));
  EXPECT_THAT(FormatComparison({bad}, CompareFormat::kTable),
              HasSubstr(" NO "));
}

TEST(CompareTest, Formats) {
  CompareOptions options;
  options.planners = {"naive"};
  absl::StatusOr<std::vector<CompareRow>> rows =
      ComparePlanners(Small(), "small", options);
  ASSERT_TRUE(rows.ok());

  const std::string table = FormatComparison(*rows, CompareFormat::kTable);
  std::vector<std::string> lines =
      absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("naive total"));
  EXPECT_THAT(lines[1], HasSubstr("100.00"));  // % of naive
  EXPECT_THAT(lines[1], HasSubstr("1.3333"));  // 400 / 300

  const std::string markdown =
      FormatComparison(*rows, CompareFormat::kMarkdown);
  EXPECT_THAT(markdown, HasSubstr("| input | planner |"));
  EXPECT_THAT(markdown, HasSubstr("|---|---|---:|"));
  EXPECT_THAT(
      markdown,
      HasSubstr("| small | naive | 3 | 400 | 300 | 400 | 100.00 | 1.3333 |"));

  const std::string csv = FormatComparison(*rows, CompareFormat::kCsv);
  lines = absl::StrSplit(csv, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0],
      "input,planner,buffers,naive_total,lower_bound,peak,percent_of_naive,"
      "ratio_to_lower_bound,proven_optimal,wall_time_ms,verified,status");
  EXPECT_THAT(lines[1],
              HasSubstr("small,naive,3,400,300,400,100.0000,1.333333,0,"));
  EXPECT_THAT(lines[1], HasSubstr(",1,ok"));

  const std::string summary = FormatComparison(*rows, CompareFormat::kSummary);
  EXPECT_THAT(summary,
              HasSubstr("| naive | 1 | 1 | 0 | 1.3333 | 1.3333 | 1 | 0 |"));

  EXPECT_TRUE(ParseCompareFormat("markdown").ok());
  EXPECT_EQ(ParseCompareFormat("xml").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CompareTest, SummaryCountsWhoFoundTheSmallestPeak) {
  std::vector<CompareRow> rows = {
      {.input = "i",
       .planner = "a",
       .lower_bound = 10,
       .planned = true,
       .peak = 10,
       .verified = true},
      {.input = "i",
       .planner = "b",
       .lower_bound = 10,
       .planned = true,
       .peak = 20,
       .verified = true},
      {.input = "j",
       .planner = "a",
       .lower_bound = 10,
       .planned = true,
       .peak = 40,
       .verified = true},
      {.input = "j",
       .planner = "b",
       .lower_bound = 10,
       .status = absl::DeadlineExceededError("out of time")},
  };
  const std::string summary = FormatComparison(rows, CompareFormat::kSummary);
  // a: ratios 1 and 4 (geomean 2), smallest on both; b: one plan at 2, one
  // failure.
  EXPECT_THAT(summary,
              HasSubstr("| a | 2 | 2 | 0 | 2.0000 | 4.0000 | 2 | 0 |"));
  EXPECT_THAT(summary,
              HasSubstr("| b | 2 | 1 | 1 | 2.0000 | 2.0000 | 0 | 0 |"));
}

using ::memplan::testing::RunTool;
using ::memplan::testing::ToolRun;

TEST(CompareToolTest, Resnet50EveryPlannerVerified) {
  ToolRun run = RunTool("compare " + testing::DataPath("models/resnet50.json") +
                        " --work-limit=40000000 --format=csv");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> lines =
      absl::StrSplit(run.output, '\n', absl::SkipEmpty());
  const std::vector<std::string> planners = AllPlanners();
  ASSERT_EQ(lines.size(), planners.size() + 1) << run.output;
  for (size_t i = 0; i < planners.size(); ++i) {
    EXPECT_THAT(lines[i + 1], HasSubstr("resnet50.json," + planners[i] +
                                        ",123,106393504,9633792,"));
    // Verified, or a failure that says why; never a rejected plan.
    EXPECT_THAT(lines[i + 1], Not(HasSubstr(",0,INVALID")));
  }
}

TEST(CompareToolTest, FailingPlannerStillExitsZero) {
  ToolRun run = RunTool("compare " + testing::DataPath("models/resnet18.json") +
                        " --planners=naive --capacity=1024");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("RESOURCE_EXHAUSTED"));
}

// An input that cannot be read is a failure (1); a bad command line is a
// usage error (2).
TEST(CompareToolTest, BadInputsAndFlagsExitNonZero) {
  EXPECT_EQ(RunTool("compare /nonexistent/model.json").exit_code, 1);
  EXPECT_EQ(RunTool("compare").exit_code, 2);
  ToolRun run = RunTool("compare " + testing::DataPath("models/resnet18.json") +
                        " --planners=naive,nope");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.output, HasSubstr("nope"));
  EXPECT_EQ(RunTool("compare " + testing::DataPath("models/resnet18.json") +
                    " --format=xml")
                .exit_code,
            2);
}

TEST(CompareToolTest, MarkdownOfTwoInputs) {
  ToolRun run = RunTool("compare " + testing::DataPath("models/resnet18.json") +
                        " " + testing::DataPath("minimalloc/A.1048576.csv") +
                        " --planners=naive --format=markdown");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("| resnet18.json | naive |"));
  EXPECT_THAT(run.output, HasSubstr("| A.1048576.csv | naive | 154 |"));
}

TEST(CompareToolTest, SeveralFormatsFromOneRun) {
  ToolRun run = RunTool("compare " + testing::DataPath("models/resnet18.json") +
                        " --planners=naive --format=summary,csv");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("| naive | 1 | 1 | 0 | 3.6731 |"));
  EXPECT_THAT(run.output, HasSubstr("\ninput,planner,buffers,"));
  EXPECT_THAT(run.output,
              HasSubstr("resnet18.json,naive,50,23590816,6422528,23590816,"));
}

}  // namespace
}  // namespace memplan
