// AnalyzePlan, the text report and the HTML page's data, on hand-worked
// cases and on bundled inputs. Every plan here passes VerifyPlan.

#include "memplan/report.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/dim_expr.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/report_html.h"
#include "memplan/verify.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// in -> conv -> a -> relu -> b -> fc(b, a) -> out; w is a constant.
//   in  [0,1) 100    a [0,3) 200    b [1,3) 160    out [2,3) 50
// live bytes: step 0: 300, step 1: 360, step 2: 410 (the peak step).
Graph SmallGraph() {
  return Graph{
      .name = "small",
      .tensors = {{.name = "in", .size = 100, .kind = TensorKind::kInput},
                  {.name = "w", .size = 10, .kind = TensorKind::kConstant},
                  {.name = "a", .size = 200},
                  {.name = "b", .size = 160},
                  {.name = "out", .size = 50, .kind = TensorKind::kOutput}},
      .ops = {{.name = "conv", .inputs = {"in", "w"}, .outputs = {"a"}},
              {.name = "relu", .inputs = {"a"}, .outputs = {"b"}},
              {.name = "fc", .inputs = {"b", "a"}, .outputs = {"out"}}},
  };
}

BufferId Find(const Problem& problem, const std::string& name) {
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    if (problem.buffers[b].name == name) return b;
  }
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}

// A plan from (buffer name, pool, offset), verified.
Plan HandPlan(const Problem& problem,
              const std::vector<std::tuple<std::string, PoolId, Offset>>& at) {
  Plan plan;
  plan.planner = "hand";
  plan.assignments.resize(problem.buffers.size());
  for (const auto& [name, pool, offset] : at) {
    const BufferId b = Find(problem, name);
    plan.assignments[b] = {.buffer = b, .pool = pool, .offset = offset};
  }
  ComputePlanStatistics(problem, plan);
  EXPECT_TRUE(VerifyPlan(problem, plan).ok()) << VerifyPlan(problem, plan);
  return plan;
}

TEST(ReportTest, LiveBytesPeakStepAndFragmentationOfAHandPlan) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  // out reuses in's bytes: in is dead at step 2. Used: 460 bytes.
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 0}, {"a", 0, 100}, {"b", 0, 300}, {"out", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->planner, "hand");
  EXPECT_EQ(report->peak, 460);
  EXPECT_EQ(report->lower_bound, 410);
  EXPECT_EQ(report->naive_total, 510);
  EXPECT_FALSE(report->proven_optimal);
  EXPECT_EQ(report->steps, 3);
  EXPECT_THAT(report->step_names, ElementsAre("conv", "relu", "fc"));
  EXPECT_THAT(report->live, ElementsAre(300, 360, 410));
  EXPECT_EQ(report->max_live, 410);
  EXPECT_THAT(report->peak_steps, ElementsAre(2));
  EXPECT_THAT(report->alive_at_peak,
              ElementsAre(Find(*problem, "a"), Find(*problem, "b"),
                          Find(*problem, "out")));
  ASSERT_EQ(report->pools.size(), 1u);
  const PoolReport& pool = report->pools[0];
  EXPECT_EQ(pool.name, "default");
  EXPECT_EQ(pool.used, 460);
  EXPECT_THAT(pool.live, ElementsAre(300, 360, 410));
  EXPECT_EQ(pool.max_live, 410);
  EXPECT_EQ(pool.max_live_step, 2);
  EXPECT_EQ(pool.above_max_live, 50);
  // (used - max live) / used: 50 of the 460 bytes no plan needs.
  EXPECT_DOUBLE_EQ(pool.fragmentation, 50.0 / 460);
  EXPECT_EQ(StepLabel(*report, 2), "fc (step 2)");
}

TEST(ReportTest, BuffersKnowTheirKindProducerAndReaders) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 0}, {"a", 0, 100}, {"b", 0, 300}, {"out", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  const BufferReport& in = report->buffers[Find(*problem, "in")];
  EXPECT_EQ(in.kind, TensorKind::kInput);
  EXPECT_EQ(in.producer, std::nullopt);
  EXPECT_THAT(in.readers, ElementsAre(0));
  const BufferReport& a = report->buffers[Find(*problem, "a")];
  EXPECT_EQ(a.kind, TensorKind::kActivation);
  EXPECT_EQ(a.producer, 0);
  EXPECT_THAT(a.readers, ElementsAre(1, 2));
  EXPECT_EQ(a.offset, 100);
  EXPECT_EQ(a.lifetime, (Lifetime{0, 3}));
  const BufferReport& out = report->buffers[Find(*problem, "out")];
  EXPECT_EQ(out.kind, TensorKind::kOutput);
  EXPECT_EQ(out.producer, 2);
  EXPECT_THAT(out.readers, ElementsAre());
}

TEST(ReportTest, AMergedBufferHasTheReadersOfAllItsTensors) {
  // v is a view of a: one buffer, read by "view" (as a) and "use" (as v).
  const Graph graph{
      .tensors = {{.name = "in", .size = 8, .kind = TensorKind::kInput},
                  {.name = "a", .size = 64},
                  {.name = "v", .size = 64},
                  {.name = "out", .size = 8, .kind = TensorKind::kOutput}},
      .ops = {{.name = "make", .inputs = {"in"}, .outputs = {"a"}},
              {.name = "view",
               .inputs = {"a"},
               .outputs = {"v"},
               .alias = {{.output = 0, .input = 0}}},
              {.name = "use", .inputs = {"v"}, .outputs = {"out"}}},
  };
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan = PlanMemory(*problem, {.planner = "naive"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifyPlan(*problem, *plan).ok());
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, *plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  const BufferReport& a = report->buffers[Find(*problem, "a")];
  EXPECT_THAT(a.tensors, ElementsAre("a", "v"));
  EXPECT_EQ(a.producer, 0);
  EXPECT_THAT(a.readers, ElementsAre(1, 2));
}

// A graph's steps are its ops, never compressed; nor are a buffer CSV's
// steps when they are few (here 4 steps, 3 buffers).
TEST(ReportTest, EveryPoolGetsItsOwnLiveBytesAndUse) {
  // Without a graph: steps are numbers, buffers have no producer.
  const Problem problem{
      .buffers = {Buffer{.name = "x", .size = 16, .lifetime = {0, 2}},
                  Buffer{.name = "y", .size = 32, .lifetime = {1, 3}},
                  Buffer{.name = "z", .size = 8, .lifetime = {1, 4}}},
      .pools = {Pool{.name = "fast", .capacity = 40}, Pool{.name = "slow"}}};
  const Plan plan = HandPlan(problem, {{"x", 0, 0}, {"y", 1, 0}, {"z", 0, 16}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(problem, plan);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->steps, 4);
  EXPECT_TRUE(report->step_names.empty());
  EXPECT_THAT(report->live, ElementsAre(16, 56, 40, 8));
  EXPECT_THAT(report->peak_steps, ElementsAre(1));
  EXPECT_THAT(report->alive_at_peak, ElementsAre(1, 0, 2));
  ASSERT_EQ(report->pools.size(), 2u);
  EXPECT_EQ(report->pools[0].used, 24);
  EXPECT_EQ(report->pools[0].capacity, 40);
  EXPECT_THAT(report->pools[0].live, ElementsAre(16, 24, 8, 8));
  EXPECT_EQ(report->pools[0].above_max_live, 0);
  EXPECT_EQ(report->pools[1].used, 32);
  EXPECT_THAT(report->pools[1].live, ElementsAre(0, 32, 32, 0));
  EXPECT_EQ(report->pools[1].max_live_step, 1);
  EXPECT_EQ(report->buffers[0].producer, std::nullopt);
  EXPECT_EQ(StepLabel(*report, 3), "step 3");
  const std::string text = FormatTextReport(*report);
  EXPECT_THAT(text, HasSubstr("lower bound: 56 bytes in one pool; the peak "
                              "sums 2 pools"));
  EXPECT_THAT(text, Not(HasSubstr("peak / lower bound")));
}

TEST(ReportTest, RejectsAPlanTheVerifierRejects) {
  const Problem problem{
      .buffers = {Buffer{.name = "x", .size = 16, .lifetime = {0, 2}},
                  Buffer{.name = "y", .size = 16, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "default"}}};
  Plan plan{
      .assignments = {{.buffer = 0, .offset = 0}, {.buffer = 1, .offset = 8}}};
  ComputePlanStatistics(problem, plan);
  ASSERT_FALSE(VerifyPlan(problem, plan).ok());
  absl::StatusOr<PlanReport> report = AnalyzePlan(problem, plan);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("\"x\""));
}

TEST(ReportTest, RejectsAGraphThatIsNotTheProblems) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok());
  absl::StatusOr<Plan> plan = PlanMemory(*problem, {.planner = "naive"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifyPlan(*problem, *plan).ok());
  Graph other = graph;
  other.tensors[3].name = "renamed";
  other.ops[1].outputs = {"renamed"};
  other.ops[2].inputs = {"renamed", "a"};
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, *plan, &other);
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(report.status().message(), HasSubstr("\"b\""));
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

TEST(ReportTest, TextReportOfTheHandPlan) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok());
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 0}, {"a", 0, 100}, {"b", 0, 300}, {"out", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok());
  const std::string text = FormatTextReport(*report);
  EXPECT_THAT(text, HasSubstr("peak: 460 bytes"));
  EXPECT_THAT(text, HasSubstr("lower bound: 410 bytes"));
  EXPECT_THAT(text, Not(HasSubstr("any op order")));  // not computed
  PlanReport with_order = *report;
  with_order.order_lower_bound = 400;
  with_order.order_lower_bound_op = "\"fc\"";
  EXPECT_THAT(FormatTextReport(with_order),
              HasSubstr("lower bound: 410 bytes (peak / lower bound = "
                        "1.1220)\nany op order: at least 400 bytes (at op "
                        "\"fc\")\n"));
  EXPECT_THAT(text, HasSubstr("peak step: fc (step 2), 410 live bytes"));
  // The tensors alive at the peak, largest first, keyed for the chart.
  const size_t a =
      text.find("  A          200  48.8%          100          [0, 3)  a\n");
  const size_t b =
      text.find("  B          160  39.0%          300          [1, 3)  b\n");
  const size_t c =
      text.find("  C           50  12.2%            0          [2, 3)  out\n");
  ASSERT_NE(a, std::string::npos) << text;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  // The per-op table: live bytes and % of the peak (460).
  EXPECT_THAT(text,
              HasSubstr("conv                                  300   65.2%"));
  EXPECT_THAT(text,
              HasSubstr("fc                                    410   89.1%"));
  // The chart: one row per step; at step 2 out (C) sits at the bottom, a (A)
  // above it from byte 100, b (B) from byte 300; 460 bytes in 75 columns of
  // 7 bytes: columns 0..7 are out's, 14..42 a's, 42..65 b's.
  std::string row;
  for (const std::string& line : Lines(text)) {
    if (line.rfind("     2 fc", 0) == 0) row = line;
  }
  ASSERT_FALSE(row.empty()) << text;
  const std::string cells = row.substr(row.find('|') + 1);
  EXPECT_EQ(cells.substr(0, 7), "CCCCCCC");
  EXPECT_EQ(cells.substr(15, 27), std::string(27, 'A'));
  EXPECT_EQ(cells.substr(44, 21), std::string(21, 'B'));
  for (const std::string& line : Lines(text)) {
    EXPECT_LE(line.size(), 100u) << line;
  }
}

// A bundled graph and the 28526-buffer trace: every line fits 100 columns,
// and the trace's 44681 steps are grouped.
TEST(ReportTest, TextReportsOfBundledInputsFitTheTerminal) {
  for (const std::string input : {"models/resnet50.json", "traces/S_1.csv"}) {
    // naive: the layout does not matter here, the width of the lines does.
    SCOPED_TRACE(input);
    absl::StatusOr<LoadedInput> loaded =
        LoadInput(testing::DataPath(input), {});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    absl::StatusOr<Plan> plan =
        PlanMemory(loaded->problem, {.planner = "naive"});
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(VerifyPlan(loaded->problem, *plan).ok());
    absl::StatusOr<PlanReport> report =
        AnalyzePlan(loaded->problem, *plan,
                    loaded->graph.has_value() ? &*loaded->graph : nullptr);
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->max_live, plan->lower_bound);
    EXPECT_EQ(report->pools[0].used, plan->peak);
    const std::string text = FormatTextReport(*report);
    const std::vector<std::string> lines = Lines(text);
    for (const std::string& line : lines) {
      EXPECT_LE(line.size(), 100u) << line;
    }
    EXPECT_LT(lines.size(), 500u);
    EXPECT_THAT(text, HasSubstr(absl::StrCat("peak: ", plan->peak, " bytes")));
    if (loaded->graph.has_value()) {
      // Long op names keep their end ("/layer2/layer2.0/downsample/...").
      EXPECT_THAT(text, HasSubstr(" ~ownsample/downsample.0/Conv "));
    } else {
      EXPECT_THAT(text, HasSubstr("live bytes over 44681 steps, in 200 rows"));
    }
  }
}

// The page's embedded data, read back as a browser would.
nlohmann::json PageData(const std::string& page) {
  const std::string open =
      "<script type=\"application/json\" id=\"memplan-data\">";
  const size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos);
  const size_t start = begin + open.size();
  const size_t end = page.find("</script>", start);
  return nlohmann::json::parse(page.substr(start, end - start));
}

TEST(ReportHtmlTest, NamesCannotInjectMarkup) {
  const std::string evil = "</script><script>alert(1)</script><!--&amp;";
  Graph graph = SmallGraph();
  graph.tensors[2].name = evil;
  graph.ops[0].outputs = {evil};
  graph.ops[1].inputs = {evil};
  graph.ops[2].inputs = {"b", evil};
  graph.ops[1].name = "<img src=x onerror=alert(2)>";
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan =
      PlanMemory(*problem, {.planner = "greedy_by_size"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifyPlan(*problem, *plan).ok());
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, *plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  const std::string page =
      RenderHtmlReport({.title = "<b>title</b>\"", .plans = {*report}});
  EXPECT_THAT(page, Not(HasSubstr("alert(1)</script>")));
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, Not(HasSubstr("<b>title")));
  EXPECT_THAT(page, HasSubstr("&lt;b&gt;title&lt;/b&gt;&quot;"));
  // Exactly the page's own two scripts.
  size_t scripts = 0;
  for (size_t at = page.find("<script"); at != std::string::npos;
       at = page.find("<script", at + 1)) {
    ++scripts;
  }
  EXPECT_EQ(scripts, 2u);
  const nlohmann::json data = PageData(page);
  EXPECT_EQ(data["title"], "<b>title</b>\"");
  EXPECT_EQ(data["step_names"][1], "<img src=x onerror=alert(2)>");
  const BufferId a = Find(*problem, evil);
  EXPECT_EQ(data["buffers"]["tensors"][a][0], evil);
}

TEST(ReportHtmlTest, ThePageIsSelfContainedAndCarriesEveryPlan) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok());
  std::vector<PlanReport> reports;
  for (const char* planner : {"naive", "greedy_by_size"}) {
    absl::StatusOr<Plan> plan = PlanMemory(*problem, {.planner = planner});
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(VerifyPlan(*problem, *plan).ok());
    absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, *plan, &graph);
    ASSERT_TRUE(report.ok());
    reports.push_back(*report);
  }
  const std::string page = RenderHtmlReport(
      {.title = "small",
       .plans = reports,
       .failures = {{.planner = "cp", .message = "out of time"}}});
  // Nothing is fetched: no URL, no external script, style sheet or font.
  EXPECT_THAT(page, Not(HasSubstr("http")));
  EXPECT_THAT(page, Not(HasSubstr("src=")));
  EXPECT_THAT(page, Not(HasSubstr("<link")));
  EXPECT_THAT(page, Not(HasSubstr("url(")));
  EXPECT_THAT(page, Not(HasSubstr("@import")));
  const nlohmann::json data = PageData(page);
  ASSERT_EQ(data["plans"].size(), 2u);
  EXPECT_EQ(data["plans"][0]["planner"], "naive");
  EXPECT_EQ(data["plans"][0]["peak"], 510);
  EXPECT_EQ(data["plans"][1]["planner"], "greedy_by_size");
  EXPECT_EQ(data["plans"][1]["peak"], reports[1].peak);
  EXPECT_EQ(data["plans"][1]["lower_bound"], 410);
  EXPECT_EQ(data["plans"][1]["live"], nlohmann::json({300, 360, 410}));
  EXPECT_EQ(data["plans"][1]["peak_steps"], nlohmann::json({2}));
  EXPECT_EQ(data["failures"][0]["planner"], "cp");
  EXPECT_EQ(data["steps"], 3);
  const BufferId a = Find(*problem, "a");
  EXPECT_EQ(data["buffers"]["kind"][a], "activation");
  EXPECT_EQ(data["buffers"]["producer"][a], 0);
  EXPECT_EQ(data["buffers"]["readers"][a], nlohmann::json({1, 2}));
  EXPECT_EQ(data["plans"][1]["offset"][a], reports[1].buffers[a].offset);
}

TEST(ReportHtmlTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const Problem problem{
      .buffers = {Buffer{
          .name = "bad\xff\xfe", .size = 16, .lifetime = {0, 2}}},
      .pools = {Pool{.name = "default"}}};
  const Plan plan = HandPlan(problem, {{"bad\xff\xfe", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(problem, plan);
  ASSERT_TRUE(report.ok());
  const nlohmann::json data =
      PageData(RenderHtmlReport({.title = "t", .plans = {*report}}));
  EXPECT_EQ(data["buffers"]["tensors"][0][0], "bad\xEF\xBF\xBD\xEF\xBF\xBD");
}

// The tool's report command, run as a user runs it.
std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReportToolTest, PrintsTheTextReportOfAPlanFile) {
  const std::string plan = ::testing::TempDir() + "/report_tool_plan.json";
  const std::string input = testing::DataPath("models/resnet18.json");
  testing::ToolRun run =
      testing::RunTool("plan " + input + " --planner=naive --out=" + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = testing::RunTool("report " + input + " " + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("planner: naive"));
  EXPECT_THAT(run.output, HasSubstr("peak: 23590816 bytes"));
  EXPECT_THAT(run.output, HasSubstr("lower bound: 6422528 bytes"));
  EXPECT_THAT(run.output,
              HasSubstr("peak step: /relu/Relu (step 1), 6422528 live bytes"));
  EXPECT_THAT(run.output, HasSubstr("arena of pool default"));
  // Not planned here: no planning time.
  EXPECT_THAT(run.output, HasSubstr("read from a plan file"));
  EXPECT_THAT(run.output, Not(HasSubstr("planned in")));
  const std::string html = ::testing::TempDir() + "/report_tool_plan.html";
  run = testing::RunTool("report " + input + " " + plan + " --html=" + html);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json data = PageData(Slurp(html));
  EXPECT_EQ(data["plans"][0]["planned_here"], false);
}

// A JSON plan records how its input was built: report builds INPUT that
// way, as verify does, unless build flags are given.
TEST(ReportToolTest, BuildsTheInputAsThePlanRecords) {
  const std::string plan = ::testing::TempDir() + "/report_tool_recorded.json";
  const std::string input = testing::DataPath("models/resnet18.json");
  const std::string flags = " --alignment=4096 --reorder=memory";
  testing::ToolRun run = testing::RunTool(
      "plan " + input + " --planner=greedy_by_size --out=" + plan + flags);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const testing::ToolRun given =
      testing::RunToolStdout("report " + input + " " + plan + flags);
  ASSERT_EQ(given.exit_code, 0) << given.output;
  const testing::ToolRun recorded =
      testing::RunToolStdout("report " + input + " " + plan);
  EXPECT_EQ(recorded.exit_code, 0) << recorded.output;
  EXPECT_EQ(recorded.output, given.output);
  // Flags on the command line win over the recorded ones.
  const testing::ToolRun flagged =
      testing::RunToolStdout("report " + input + " " + plan + " --alignment=1");
  EXPECT_NE(flagged.output, given.output);
}

TEST(ReportToolTest, WritesOnePageWithEveryPlanAsked) {
  const std::string html = ::testing::TempDir() + "/report_tool.html";
  testing::ToolRun run =
      testing::RunTool("report " + testing::DataPath("models/resnet18.json") +
                       " --planners=naive,greedy_by_size --html=" + html);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json data = PageData(Slurp(html));
  ASSERT_EQ(data["plans"].size(), 2u);
  EXPECT_EQ(data["plans"][0]["planner"], "naive");
  EXPECT_EQ(data["plans"][0]["peak"], 23590816);
  EXPECT_EQ(data["plans"][1]["planner"], "greedy_by_size");
  EXPECT_EQ(data["plans"][1]["lower_bound"], 6422528);
  EXPECT_EQ(data["title"], "resnet18.json");
}

TEST(ReportToolTest, UsageErrorsExitWithTwo) {
  const std::string input = testing::DataPath("models/resnet18.json");
  testing::ToolRun run =
      testing::RunTool("report " + input + " --planner=naive --planners=naive");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  run = testing::RunTool("report " + input + " --planners=nope");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("unknown planner \"nope\""));
  run = testing::RunTool("report " + input + " --html=" + input);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  run = testing::RunTool("report");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  run = testing::RunTool("report --help");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--html"));
}

TEST(ReportToolTest, APlanOfAnotherInputIsAnError) {
  const std::string plan = ::testing::TempDir() + "/report_tool_other.json";
  testing::ToolRun run =
      testing::RunTool("plan " + testing::DataPath("models/resnet18.json") +
                       " --planner=naive --out=" + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = testing::RunTool("report " + testing::DataPath("models/alexnet.json") +
                         " " + plan);
  EXPECT_EQ(run.exit_code, 1) << run.output;
}

}  // namespace
// Lifetimes far longer than the buffers are many: time is compressed to the
// steps where a lifetime starts or ends, so that the report costs O(buffers)
// whatever the steps (before: a vector per step, 2.4 GB at 10^8 steps, and
// std::length_error near 2^61).
TEST(ReportTest, LongLifetimesAreCompressedToTheirEvents) {
  constexpr Step kFar = Step{1} << 61;
  const Problem problem{
      .buffers = {Buffer{.name = "x", .size = 16, .lifetime = {0, 100000000}},
                  Buffer{.name = "y", .size = 32, .lifetime = {5, kFar}},
                  Buffer{.name = "z", .size = 8, .lifetime = {kFar - 7, kFar}}},
      .pools = {Pool{.name = "default"}}};
  const Plan plan = HandPlan(problem, {{"x", 0, 0}, {"y", 0, 16}, {"z", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(problem, plan);
  ASSERT_TRUE(report.ok()) << report.status();
  // Rows start at 0, 5, 10^8 and 2^61 - 7; the real end is 2^61.
  EXPECT_EQ(report->steps, 4);
  EXPECT_THAT(report->step_times, ElementsAre(0, 5, 100000000, kFar - 7, kFar));
  EXPECT_THAT(report->live, ElementsAre(16, 48, 32, 40));
  EXPECT_EQ(report->max_live, 48);
  EXPECT_THAT(report->peak_steps, ElementsAre(1));
  EXPECT_EQ(RealStep(*report, 1), 5);
  EXPECT_EQ(StepLabel(*report, 3), absl::StrCat("step ", kFar - 7));
  EXPECT_EQ(report->buffers[1].lifetime, (Lifetime{1, 4}));
  // The pool is 48 bytes high, its most live bytes: no fragmentation.
  EXPECT_EQ(report->pools[0].used, 48);
  EXPECT_DOUBLE_EQ(report->pools[0].fragmentation, 0.0);
  const std::string text = FormatTextReport(*report);
  EXPECT_THAT(text, HasSubstr(absl::StrCat("3 buffers over ", kFar, " steps")));
  EXPECT_THAT(text, HasSubstr("time compressed to the 4 steps"));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("[5, ", kFar, ")")));
  for (const std::string& line : Lines(text)) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  const std::string page = RenderHtmlReport({.plans = {*report}});
  EXPECT_EQ(PageData(page)["step_times"].size(), 5u);
}

// Fragmentation is measured against the lower bound: a plan at the bound
// has none, however much of the pool is free at other steps (before: the
// mean over steps of (used - live) / used, 83.6 % for a plan at the bound).
TEST(ReportTest, APlanAtTheLowerBoundHasNoFragmentation) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  // in [0,1) and b [1,3) share bytes 200..360; a, b, out fill 410 at step 2.
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 200}, {"a", 0, 0}, {"b", 0, 200}, {"out", 0, 360}});
  ASSERT_EQ(plan.peak, 410);
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->lower_bound, 410);
  EXPECT_DOUBLE_EQ(report->pools[0].fragmentation, 0.0);
  EXPECT_THAT(FormatTextReport(*report), HasSubstr("  0.0%\n"));
  const nlohmann::json data =
      PageData(RenderHtmlReport({.title = "t", .plans = {*report}}));
  EXPECT_EQ(data["plans"][0]["pools"][0]["fragmentation"], 0.0);
  EXPECT_FALSE(data["plans"][0]["pools"][0].contains("mean_fragmentation"));
}

TEST(ReportTest, APlanReadFromAFileHasNoPlanningTime) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 0}, {"a", 0, 100}, {"b", 0, 300}, {"out", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_THAT(FormatTextReport(*report), HasSubstr(", planned in "));
  report->planned_here = false;
  const std::string text = FormatTextReport(*report);
  EXPECT_THAT(text, HasSubstr("4 buffers over 3 steps, read from a plan file"));
  EXPECT_THAT(text, Not(HasSubstr("planned in")));
}

// An input that cannot fit: no plan, but its live bytes, the lower bound
// against the capacity and the bytes missing (before: "0 buffers over 0
// steps" and nothing drawn).
TEST(ReportTest, AnInputThatCannotFitShowsTheBytesMissing) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem =
      BuildProblem(graph, {.pools = {Pool{.name = "sram", .capacity = 300}}});
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<PlanReport> report = AnalyzeLiveBytes(*problem, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_FALSE(report->planned);
  EXPECT_FALSE(report->planned_here);
  EXPECT_EQ(report->lower_bound, 410);
  EXPECT_EQ(report->capacity, 300);
  EXPECT_EQ(report->missing, 110);
  EXPECT_THAT(report->live, ElementsAre(300, 360, 410));
  EXPECT_THAT(report->peak_steps, ElementsAre(2));
  EXPECT_EQ(report->alive_at_peak.size(), 3u);
  EXPECT_TRUE(report->pools.empty());
  const std::string text = FormatTextReport(*report);
  EXPECT_THAT(text, HasSubstr("no plan: the live bytes of the input\n"));
  EXPECT_THAT(text, HasSubstr("capacity: 300 bytes"));
  EXPECT_THAT(text, HasSubstr("missing: 110 bytes"));
  EXPECT_THAT(text, HasSubstr("a capacity of at least 410 bytes could fit"));
  EXPECT_THAT(text, HasSubstr("peak step: fc (step 2), 410 live bytes"));
  EXPECT_THAT(text, Not(HasSubstr("arena of pool")));
  for (const std::string& line : Lines(text)) {
    EXPECT_LE(line.size(), 100u) << line;
  }
  const nlohmann::json data =
      PageData(RenderHtmlReport({.title = "t", .plans = {*report}}));
  EXPECT_EQ(data["plans"][0]["planned"], false);
  EXPECT_EQ(data["plans"][0]["missing"], 110);
  EXPECT_EQ(data["plans"][0]["capacity"], 300);
  EXPECT_EQ(data["plans"][0]["live"], nlohmann::json({300, 360, 410}));
  EXPECT_EQ(data["buffers"]["size"].size(), 4u);
  // Unbounded pools: nothing is missing.
  absl::StatusOr<Problem> unbounded = BuildProblem(graph);
  ASSERT_TRUE(unbounded.ok());
  report = AnalyzeLiveBytes(*unbounded, &graph);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->capacity, 0);
  EXPECT_EQ(report->missing, 0);
}

// A traced tensor's module and source line ("source" in graph JSON) reach
// the report: the buffer, the text report and the page.
TEST(ReportTest, TensorsCarryTheirModuleAndSourceLine) {
  Graph graph = SmallGraph();
  graph.tensors[2].source = TensorSource{
      .module = "layer1.0.conv1", .file = "pkg/model.py", .line = 42};
  graph.tensors[3].source = TensorSource{.module = "relu"};
  absl::StatusOr<Graph> back = ParseGraphJson(GraphToJson(graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, graph);
  EXPECT_THAT(GraphToJson(graph),
              HasSubstr("\"source\":{\"file\":\"pkg/model.py\",\"line\":42,"
                        "\"module\":\"layer1.0.conv1\"}"));
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Plan plan = HandPlan(
      *problem, {{"in", 0, 0}, {"a", 0, 100}, {"b", 0, 300}, {"out", 0, 0}});
  absl::StatusOr<PlanReport> report = AnalyzePlan(*problem, plan, &graph);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->buffers[Find(*problem, "a")].source,
            "layer1.0.conv1 at model.py:42");
  EXPECT_EQ(report->buffers[Find(*problem, "b")].source, "relu");
  EXPECT_EQ(report->buffers[Find(*problem, "out")].source, "");
  EXPECT_THAT(FormatTextReport(*report),
              HasSubstr("  a  <- layer1.0.conv1 at model.py:42\n"));
  const nlohmann::json data =
      PageData(RenderHtmlReport({.title = "t", .plans = {*report}}));
  EXPECT_EQ(data["buffers"]["source"][Find(*problem, "a")],
            "layer1.0.conv1 at model.py:42");
}

TEST(ReportTest, AMalformedSourceIsNamed) {
  const std::string head =
      R"({"format": "memplan-graph-v1", "name": "g", "tensors": [)"
      R"({"name": "x", "size": 4, "source": )";
  const std::string tail = R"(}], "ops": []})";
  EXPECT_THAT(
      ParseGraphJson(head + R"({"line": -1})" + tail).status().message(),
      HasSubstr("tensor \"x\": \"source\": line -1 is negative"));
  EXPECT_THAT(
      ParseGraphJson(head + R"({"lines": 3})" + tail).status().message(),
      HasSubstr("lines"));
  EXPECT_THAT(ParseGraphJson(head + R"("model.py")" + tail).status().message(),
              HasSubstr("\"source\" must be an object"));
  EXPECT_TRUE(ParseGraphJson(head + R"({"module": "m"})" + tail).ok());
}

// memplan report of an input that cannot fit in --capacity writes the page
// of its live bytes against the capacity, and fails.
TEST(ReportToolTest, AnInputThatCannotFitIsStillReported) {
  const std::string html = ::testing::TempDir() + "/report_tool_full.html";
  const std::string input = testing::DataPath("models/resnet18.json");
  testing::ToolRun run =
      testing::RunTool("report " + input + " --capacity=5M --html=" + html);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("bytes missing"));
  const nlohmann::json data = PageData(Slurp(html));
  ASSERT_EQ(data["plans"].size(), 1u);
  const nlohmann::json& plan = data["plans"][0];
  EXPECT_EQ(plan["planned"], false);
  EXPECT_EQ(plan["lower_bound"], 6422528);
  EXPECT_GT(plan["capacity"].get<int64_t>(), 0);
  EXPECT_EQ(plan["capacity"].get<int64_t>() + plan["missing"].get<int64_t>(),
            6422528);
  EXPECT_GT(data["buffers"]["size"].size(), 0u);
  EXPECT_EQ(data["failures"].size(), 1u);
  run = testing::RunToolStdout("report " + input + " --capacity=5M");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("\nmissing: "));
}

// A symbolic plan's report gives the peak in the graph's dims with the
// range it holds for, also for a bucket counted in steps (whose own peak is
// in seq_div and seq_mod), in the text and on the page.
TEST(ReportToolTest, ASymbolicPlansPeakIsInTheGraphsDims) {
  const std::string input =
      testing::DataPath("symbolic/transformer_encoder.json");
  const std::string html = ::testing::TempDir() + "/report_symbolic.html";
  const testing::ToolRun run = testing::RunToolStdout(
      "report " + input + " --dim seq=500 --alignment=64 --html=" + html);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json data = PageData(Slurp(html));
  std::map<std::string, std::string> facts;
  for (const nlohmann::json& fact : data["facts"]) {
    facts[fact["key"].get<std::string>()] = fact["text"].get<std::string>();
  }
  EXPECT_EQ(facts["dims"], "seq=500");
  EXPECT_THAT(facts["bucket"], HasSubstr("seq in ["));
  // "EXPR bytes, for seq in [LOW, HIGH]", EXPR in seq only, its value at
  // 500 the arena there.
  const std::string peak = facts["peak-expression"];
  const size_t bytes = peak.find(" bytes, for seq in [");
  ASSERT_NE(bytes, std::string::npos) << peak;
  absl::StatusOr<DimExpr> expr = DimExpr::Parse(peak.substr(0, bytes));
  ASSERT_TRUE(expr.ok()) << peak;
  EXPECT_EQ(expr->Dims(), std::vector<std::string>{"seq"});
  int64_t low = 0, high = 0;
  ASSERT_EQ(sscanf(peak.c_str() + bytes, " bytes, for seq in [%ld, %ld]", &low,
                   &high),
            2)
      << peak;
  EXPECT_LE(low, 500);
  EXPECT_GE(high, 500);
  const int64_t arena = data["plans"][0]["peak"].get<int64_t>();
  EXPECT_EQ(*expr->Evaluate({{"seq", 500}}), arena);
  EXPECT_THAT(facts["arena"], HasSubstr(absl::StrCat(arena, " bytes")));
  // A bucket in steps also gets its whole peak in seq and seq_div.
  if (facts.contains("bucket-expression")) {
    EXPECT_THAT(facts["bucket-expression"],
                HasSubstr("seq_div = floor(seq / "));
    EXPECT_THAT(facts["bucket-expression"], Not(HasSubstr("seq_mod")));
  }
  const testing::ToolRun text = testing::RunToolStdout(
      "report " + input + " --dim seq=500 --alignment=64");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("\npeak there: " + peak + "\n"));
}

// A reordered plan's report says so: the ordering, how many ops moved, the
// order used and the lower bound in the graph's own order beside this one.
TEST(ReportToolTest, AReorderedPlanSaysItsOrderAndTheGraphsOwn) {
  const std::string input = testing::DataPath("order/darts_seed1.json");
  const std::string flags = " --reorder=longest_path --planner=greedy_by_size";
  const testing::ToolRun run =
      testing::RunToolStdout("report " + input + flags);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("op order: reordered by longest_path: "));
  EXPECT_THAT(run.output, HasSubstr(" ops run at another step than in the "
                                    "file\nthe graph's own order: lower bound "
                                    "786432 bytes; in this order "));
  const std::string html = ::testing::TempDir() + "/report_reordered.html";
  ASSERT_EQ(
      testing::RunTool("report " + input + flags + " --html=" + html).exit_code,
      0);
  std::map<std::string, std::string> facts;
  const nlohmann::json data = PageData(Slurp(html));
  for (const nlohmann::json& fact : data["facts"]) {
    facts[fact["key"].get<std::string>()] = fact["text"].get<std::string>();
  }
  EXPECT_THAT(facts["reordered"], HasSubstr("reordered by longest_path: "));
  EXPECT_THAT(facts["op-order"], HasSubstr(", ... "));
  EXPECT_THAT(facts["own-order"], HasSubstr("lower bound 786432 bytes"));
  EXPECT_THAT(facts["order-bound"], HasSubstr("at least "));
  // The graph's own order says nothing of orders.
  const testing::ToolRun own =
      testing::RunToolStdout("report " + input + " --planner=greedy_by_size");
  EXPECT_THAT(own.output, Not(HasSubstr("reordered")));
}

}  // namespace memplan
