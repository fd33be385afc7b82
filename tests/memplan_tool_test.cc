// The memplan tool, run as a user runs it. Plans it writes are checked here
// by an all-pairs checker that shares no code with the library.

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/planner.h"
#include "memplan/registry.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace memplan {
namespace {

// The input types of the optional importers this build has.
constexpr const char* kOptionalInputTypes =
#if defined(MEMPLAN_HAVE_ONNX) && defined(MEMPLAN_HAVE_TFLITE)
    ", .onnx, .tflite";
#elif defined(MEMPLAN_HAVE_ONNX)
    ", .onnx";
#elif defined(MEMPLAN_HAVE_TFLITE)
    ", .tflite";
#else
    "";
#endif

using ::testing::HasSubstr;
using ::testing::Not;

using ::memplan::testing::OffsetMacros;
using ::memplan::testing::RunTool;
using ::memplan::testing::RunToolStdout;
using ::memplan::testing::ToolRun;

std::string Data(const std::string& relative) {
  return testing::DataPath(relative);
}

std::string Temp(const std::string& name) {
  return ::testing::TempDir() + "/memplan_tool_test_" + name;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(MemplanToolTest, PlannersListsTheRegistry) {
  ToolRun run = RunTool("planners");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("naive"));
}

// `memplan planners NAME`: the planner's description and every option it
// declares, with type and default, as --option takes them.
TEST(MemplanToolTest, PlannersNameListsItsOptions) {
  ToolRun run = RunToolStdout("planners exact");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("exact: branch-and-bound"));
  EXPECT_THAT(run.output, HasSubstr("--option NAME=VALUE"));
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != "exact") continue;
    for (const PlannerOption& option : info.options) {
      const std::string type(OptionTypeName(option.type));
      EXPECT_THAT(run.output, HasSubstr(absl::StrCat(
                                  "  ", option.name, "=", type, " (default ",
                                  option.default_value, ")")));
    }
  }
  EXPECT_THAT(run.output, HasSubstr("  section_inference=bool (default true)"));
  EXPECT_THAT(run.output, HasSubstr("  start_share=double (default 0.1)"));
  EXPECT_THAT(RunToolStdout("planners best").output,
              HasSubstr("  lower_bound_try_work=int (default 25000000)"));
  ToolRun naive = RunToolStdout("planners naive");
  ASSERT_EQ(naive.exit_code, 0) << naive.output;
  EXPECT_THAT(naive.output, HasSubstr("options: none"));
}

// A bad flag value is a usage error (exit 2), as --help says, found before
// the input is read.
TEST(MemplanToolTest, ABadAlignmentIsAUsageError) {
  for (const std::string command : {"plan", "stats", "verify", "report"}) {
    ToolRun run = RunTool(command + " /nonexistent.json --alignment=3");
    EXPECT_EQ(run.exit_code, 2) << command << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("alignment 3 is not a power of two"));
  }
}

// --out and --graph-out naming one file would lose the plan: refused.
TEST(MemplanToolTest, OutAndGraphOutMayNotNameOneFile) {
  const std::string out = Temp("same.json");
  const std::string dir = ::testing::TempDir();
  for (const std::string& graph_out :
       {out, dir + "/./memplan_tool_test_same.json"}) {
    ToolRun run =
        RunTool("plan " + Data("models/resnet18.json") +
                " --planner=greedy_by_size --reorder=memory --out=" + out +
                " --graph-out=" + graph_out);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr("name one file")) << run.output;
  }
}

// Output lost on the way (a full disk) is an error, not a plan written.
TEST(MemplanToolTest, AFullStandardOutputIsAnError) {
  for (const std::string command :
       {"plan " + Data("models/resnet18.json") + " --planner=greedy_by_size",
        "stats " + Data("models/resnet18.json"),
        "report " + Data("models/resnet18.json") + " --planner=greedy_by_size",
        std::string("planners")}) {
    SCOPED_TRACE(command);
    ToolRun run = RunTool(command + " >/dev/full");
    EXPECT_EQ(run.exit_code, 1) << run.output;
  }
}

// A plan a limit decided says so on stderr; a capacity missed within the
// limit names the limit; one below the lower bound says the smallest that
// could work. Work limits: the same on any machine.
TEST(MemplanToolTest, TheToolSaysWhenTheLimitDecided) {
  const std::string out = Temp("s1.csv");
  ToolRun cut = RunTool("plan " + Data("traces/S_1.csv") +
                        " --work-limit=1000000 --out=" + out);
  ASSERT_EQ(cut.exit_code, 0) << cut.output;
  EXPECT_THAT(cut.output,
              HasSubstr("memplan plan: warning: the work limit (1000000 work "
                        "units) cut the greedy pass after "));
  EXPECT_THAT(cut.output, HasSubstr("; a whole greedy pass costs about "));
  ToolRun whole = RunTool("plan " + Data("traces/tiny_bert.csv") +
                          " --planner=greedy_by_size --out=" + out);
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_THAT(whole.output, Not(HasSubstr("warning")));
  ToolRun missed =
      RunTool("plan " + Data("minimalloc/D.1048576.csv") +
              " --capacity=1048576 --work-limit=1000000 --out=" + out);
  EXPECT_EQ(missed.exit_code, 1);
  EXPECT_THAT(missed.output,
              HasSubstr("no plan found within the limit (work limit 1000000 "
                        "work units)"));
  ToolRun below = RunTool("plan " + Data("minimalloc/D.1048576.csv") +
                          " --capacity=900000 --out=" + out);
  EXPECT_EQ(below.exit_code, 1);
  EXPECT_THAT(below.output,
              HasSubstr("the smallest capacity that could work is the lower "
                        "bound, 986112 bytes"));
}

// Plans resnet50 with the naive planner and checks the written plan against
// the bundled buffer CSV, pair by pair.
TEST(MemplanToolTest, NaivePlanOfResnet50IsTheNaiveTotalAndValid) {
  const std::string out = Temp("resnet50.json");
  ToolRun run = RunTool("plan " + Data("models/resnet50.json") +
                        " --planner=naive --out=" + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("peak 106393504 bytes"));
  const nlohmann::json plan = nlohmann::json::parse(Slurp(out));
  EXPECT_EQ(plan["format"], "memplan-plan-v1");
  EXPECT_EQ(plan["peak"], 106393504);
  EXPECT_EQ(plan["naive_total"], 106393504);
  EXPECT_EQ(plan["lower_bound"], 9633792);
  // The independent check: lifetimes from the CSV, offsets from the plan.
  std::ifstream csv(Data("models/resnet50.csv"));
  std::string line;
  std::getline(csv, line);
  std::vector<std::array<int64_t, 3>> rows;  // lower, upper, size
  while (std::getline(csv, line)) {
    std::array<int64_t, 4> f{};
    std::sscanf(line.c_str(), "%ld,%ld,%ld,%ld", &f[0], &f[1], &f[2], &f[3]);
    rows.push_back({f[1], f[2], f[3]});
  }
  const auto& buffers = plan["buffers"];
  ASSERT_EQ(buffers.size(), rows.size());
  int64_t peak = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(buffers[i]["start"], rows[i][0]);
    EXPECT_EQ(buffers[i]["end"], rows[i][1]);
    EXPECT_EQ(buffers[i]["size"], rows[i][2]);
    peak = std::max(peak, buffers[i]["offset"].get<int64_t>() + rows[i][2]);
    for (size_t j = 0; j < i; ++j) {
      const bool alive = rows[i][0] < rows[j][1] && rows[j][0] < rows[i][1];
      const int64_t oi = buffers[i]["offset"], oj = buffers[j]["offset"];
      const bool bytes = oi < oj + rows[j][2] && oj < oi + rows[i][2];
      EXPECT_FALSE(alive && bytes) << i << " and " << j << " overlap";
    }
  }
  EXPECT_EQ(peak, 106393504);
  ToolRun verify =
      RunTool("verify " + Data("models/resnet50.json") + " " + out);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("valid plan"));
}

TEST(MemplanToolTest, CsvInAndOutAndVerify) {
  const std::string out = Temp("input12.csv");
  ToolRun run = RunTool("plan " + Data("minimalloc/input.12.csv") +
                        " --planner=naive --out=" + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(Slurp(out), HasSubstr("id,lower,upper,size,offset\n"));
  ToolRun verify =
      RunTool("verify " + Data("minimalloc/input.12.csv") + " " + out);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  // A capacity the naive plan cannot meet.
  ToolRun capped = RunTool("plan " + Data("minimalloc/input.12.csv") +
                           " --planner=naive --capacity=12");
  EXPECT_NE(capped.exit_code, 0);
  EXPECT_THAT(capped.output, HasSubstr("fits in no allowed pool"));
}

// The exact planner's options, as one measures the effect of an inference:
// with the other switches off it still plans B under the capacity; without
// the section inference as well, 200000 nodes are not enough. The search
// reports its work.
TEST(MemplanToolTest, ExactOptionsFromTheCommandLine) {
  const std::string input = Data("minimalloc/B.1048576.csv");
  const std::string out = Temp("b_exact.csv");
  const std::string plan =
      "plan " + input + " --planner=exact --capacity=1048576 ";
  // Plans with `flags`, and checks the plan with `memplan verify`.
  auto plan_and_verify = [&](const std::string& flags) {
    ToolRun run = RunTool(plan + flags + " --out=" + out);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(RunTool("verify " + input + " " + out + " --capacity=1048576")
                  .exit_code,
              0)
        << flags;
    return run.output;
  };
  EXPECT_THAT(plan_and_verify(""), HasSubstr("counters: nodes "));
  const std::string off =
      "--option symmetry=false --option decomposition=false "
      "--option failure_cache=false --option restarts=false "
      "--option warm_start=false ";
  // 200000 search nodes of B's 170 buffers, at 170 / 4 + 32 units a node.
  const std::string nodes = "--work-limit=14800000 ";
  EXPECT_THAT(plan_and_verify(nodes + off), HasSubstr("restarts 0"));
  ToolRun starved =
      RunTool(plan + nodes + off + "--option=section_inference=false");
  EXPECT_NE(starved.exit_code, 0);
  EXPECT_THAT(starved.output, HasSubstr("time or node limit"));
  // report takes its --planner's options the same way.
  ToolRun report =
      RunTool("report " + input + " --planner=exact --option symmetry=false");
  EXPECT_EQ(report.exit_code, 0) << report.output;
}

TEST(MemplanToolTest, VerifyRejectsTheSeedNotebookPlan) {
  ToolRun run = RunTool("verify " + Data("seed/seed000_model.json") + " " +
                        Data("seed/seed000_notebook_plan.json") +
                        " --plan-constants --alignment=4");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("invalid plan"));
  EXPECT_THAT(run.output, HasSubstr("\"input_1_int8:0\""));
  EXPECT_THAT(run.output, HasSubstr("Conv2D/ReadVariableOp:0\""));
}

TEST(MemplanToolTest, StatsPrintsTotalsAndBounds) {
  ToolRun run = RunTool("stats " + Data("seed/seed000_model.json") +
                        " --plan-constants --alignment=4");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("ops: 13"));
  EXPECT_THAT(run.output, HasSubstr("naive total: 728132"));
  EXPECT_THAT(run.output, HasSubstr("lower bound: 697888"));
  ToolRun pools =
      RunTool("stats " + Data("models/alexnet.json") +
              " --pool=sram:1048576:16 --pool=dram:0:64 --no-plan-inputs");
  ASSERT_EQ(pools.exit_code, 0) << pools.output;
  EXPECT_THAT(pools.output, HasSubstr("planned buffers: 20"));
}

TEST(MemplanToolTest, BadInputIsOneLineAndNonZero) {
  const std::string bad_json = Temp("bad.json");
  std::ofstream(bad_json)
      << "{\"format\": \"memplan-graph-v1\", \"tensors\": [";
  const std::string bad_csv = Temp("bad.csv");
  std::ofstream(bad_csv) << "id,lower,upper,size\n0,4,2,10\n";
  const std::string cycle = Temp("cycle.json");
  std::ofstream(cycle) << R"({"format":"memplan-graph-v1","tensors":[
    {"name":"a","size":4},{"name":"b","size":4}],
    "ops":[{"name":"f","inputs":["b"],"outputs":["a"]},{"name":"g","inputs":["a"],"outputs":["b"]}]})";
  const std::map<std::string, std::string> cases = {
      {"plan " + Data("models/resnet18.json") + " --planner=nope",
       "unknown planner \"nope\""},
      {"plan " + Data("models/resnet18.json") + " --alignment=3",
       "alignment 3"},
      {"plan " + Data("models/resnet18.json") + " --pool=fast:x",
       "--pool=fast:x"},
      {"plan " + Data("models/resnet18.json") + " --bogus",
       "unknown flag --bogus"},
      {"plan /nonexistent.json", "cannot open"},
      {"plan " + Data("minimalloc/input.12.csv") + " --capacity=-5",
       "--capacity=-5: \"-5\" is not a size"},
      {"plan " + bad_json, "malformed JSON at line 1"},
      {"plan " + bad_csv, "line 2"},
      {"plan " + cycle, "reads tensor \"b\""},
      {"verify " + Data("models/resnet18.json"),
       "unsupported plan format \"memplan-graph-v1\""},
      {"frobnicate", "unknown command"},
      {"plan " + Data("minimalloc/input.12.csv") +
           " --planner=exact "
           "--option symmetry=false --option bogus=true",
       "planner \"exact\" has no option \"bogus\" (valid: "},
      {"plan " + Data("minimalloc/input.12.csv") +
           " --planner=exact "
           "--option failure_cache_entries=-1",
       "option failure_cache_entries=-1: \"-1\" is not an integer of at "
       "least 0"},
      {"plan " + Data("minimalloc/input.12.csv") + " --work-limit=-1",
       "--work-limit must not be negative"},
      {"plan " + Data("minimalloc/input.12.csv") +
           " --planner=exact --option symmetry=maybe",
       "symmetry=maybe: \"maybe\" is not a bool (true or false)"},
      {"plan " + Data("minimalloc/input.12.csv") +
           " --planner=naive --option node_limit=5",
       "planner \"naive\" has no option \"node_limit\" (it has none)"},
      {"plan " + Data("minimalloc/input.12.csv") + " --option node_limit",
       "--option=node_limit: expected NAME=VALUE"},
      {"planners nope", "unknown planner \"nope\""},
      {"stats " + Data("models/README.md"),
       "unknown input type (expected .json, .json.gz, .csv, .csv.gz" +
           std::string(kOptionalInputTypes) + ")"},
      {"report " + Data("minimalloc/input.12.csv") +
           " --planner=exact --option bogus=1",
       "planner \"exact\" has no option \"bogus\""},
      {"report " + Data("minimalloc/input.12.csv") +
           " --planners=naive,exact --option symmetry=false",
       "--option sets options of --planner, not of --planners"},
  };
  for (const auto& [args, message] : cases) {
    ToolRun run = RunTool(args);
    EXPECT_NE(run.exit_code, 0) << args;
    EXPECT_NE(run.exit_code, -1) << args << " crashed";
    EXPECT_THAT(run.output, HasSubstr(message)) << args;
  }
}

TEST(MemplanToolTest, HelpForTheToolAndEveryCommandOnStdout) {
  for (const std::string help : {"--help", "-h", "help"}) {
    ToolRun run = RunToolStdout(help);
    EXPECT_EQ(run.exit_code, 0) << help;
    EXPECT_THAT(run.output, HasSubstr("memplan compare INPUT...")) << help;
  }
  for (const std::string command :
       {"plan", "verify", "stats", "planners", "compare"}) {
    for (const std::string help : {"--help", "-h"}) {
      ToolRun run = RunToolStdout(command + " " + help);
      EXPECT_EQ(run.exit_code, 0) << command << " " << help;
      EXPECT_THAT(run.output, HasSubstr("usage: memplan " + command))
          << command;
      EXPECT_THAT(run.output, HasSubstr("--help")) << command;
    }
  }
  // Each command's flags are described once, from the flag definitions.
  ToolRun plan = RunToolStdout("plan --help");
  EXPECT_THAT(plan.output, HasSubstr("--time-limit=SECONDS"));
  EXPECT_THAT(plan.output, HasSubstr("--option=NAME=VALUE"));
  EXPECT_THAT(plan.output, HasSubstr("--capacity=SIZE"));
  EXPECT_THAT(RunToolStdout("stats --help").output,
              HasSubstr("--shared-objects"));
  EXPECT_THAT(RunToolStdout("stats --help").output,
              Not(HasSubstr("--planner=")));
  ToolRun version = RunToolStdout("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.output, ::testing::StartsWith("memplan "));
}

TEST(MemplanToolTest, UsageErrorsExitTwoOtherErrorsOne) {
  const std::string input = Data("minimalloc/input.12.csv");
  const std::vector<std::string> usage_errors = {
      "",
      "frobnicate",
      "plan",
      "plan " + input + " " + input,
      "plan " + input + " --bogus",
      "plan " + input + " --planners=naive",  // a compare flag
      "plan " + input + " --planner",         // no value
      "plan " + input + " --planner=nope",
      "plan " + input + " --time-limit=nan",
      "plan " + input + " --time-limit=inf",
      "plan " + input + " --time-limit=-1",
      "plan " + input + " --time-limit=soon",
      "plan " + input + " --threads=0",
      "plan " + input + " --capacity=12Q",
      "plan " + input + " --reorder=fastest",
      "stats " + input + " --planner=naive",
      "compare",
      "compare " + input + " --format=xml",
  };
  for (const std::string& args : usage_errors) {
    ToolRun run = RunTool(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr("--help")) << args;
  }
  EXPECT_EQ(RunTool("plan /nonexistent.json").exit_code, 1);
  EXPECT_EQ(
      RunTool("plan " + input + " --planner=naive --capacity=12").exit_code, 1);
}

// --flag value and --flag=value are the same; sizes take units.
TEST(MemplanToolTest, FlagSpellingsAndSizeUnits) {
  const std::string input = Data("models/resnet18.json");
  const std::string a = Temp("spelled_a.json"), b = Temp("spelled_b.json");
  ToolRun equals = RunTool("plan " + input +
                           " --planner=greedy_by_size --alignment=64 "
                           "--capacity=8MiB --out=" +
                           a);
  ToolRun spaced = RunTool("plan " + input +
                           " --planner greedy_by_size --alignment 64 "
                           "--capacity 8388608 --out " +
                           b);
  ASSERT_EQ(equals.exit_code, 0) << equals.output;
  ASSERT_EQ(spaced.exit_code, 0) << spaced.output;
  nlohmann::json plan_a = nlohmann::json::parse(Slurp(a));
  nlohmann::json plan_b = nlohmann::json::parse(Slurp(b));
  plan_a.erase("wall_time_ms");
  plan_b.erase("wall_time_ms");
  EXPECT_EQ(plan_a, plan_b);
  EXPECT_EQ(plan_a["pools"][0]["capacity"], 8388608);
  // 2M is 2 MiB; the plan of resnet18 needs 6422528 bytes at least.
  ToolRun small = RunTool("plan " + input + " --capacity=2M");
  EXPECT_EQ(small.exit_code, 1);
  EXPECT_THAT(small.output, HasSubstr("capacity 2097152"));
  ToolRun decimal = RunTool("plan " + input + " --capacity=2MB");
  EXPECT_THAT(decimal.output, HasSubstr("capacity 2000000"));
  ToolRun pools =
      RunTool("stats " + input + " --pool=sram:512KiB:16 --pool dram:1G:64");
  ASSERT_EQ(pools.exit_code, 0) << pools.output;
  EXPECT_THAT(pools.output,
              HasSubstr("pool sram: capacity 524288, alignment 16"));
  EXPECT_THAT(pools.output,
              HasSubstr("pool dram: capacity 1073741824, alignment 64"));
}

TEST(MemplanToolTest, PlannersMarksTheDefault) {
  ToolRun run = RunTool("planners");
  ASSERT_EQ(run.exit_code, 0);
  std::istringstream lines(run.output);
  std::string line;
  int marked = 0;
  while (std::getline(lines, line)) {
    if (line.find("[default]") == std::string::npos) continue;
    ++marked;
    EXPECT_THAT(line, ::testing::StartsWith("best "));
  }
  EXPECT_EQ(marked, 1) << run.output;
}

// Several pools: the summary gives each pool's bytes and never a ratio of
// their sum to the single-pool lower bound.
// stats, plan and report print the lower bound over op orders of a graph:
// equal to its own order's bound on an inference graph, below it on a
// training step whose order holds activations longer than it must.
TEST(MemplanToolTest, TheLowerBoundOverOpOrders) {
  ToolRun stats = RunTool("stats " + Data("models/resnet18.json"));
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_THAT(stats.output, HasSubstr("lower bound: 6422528\n"));
  EXPECT_THAT(stats.output,
              HasSubstr("any op order: at least 6422528 bytes (at op \""));
  ToolRun training =
      RunTool("stats " + Data("training/mobilenet_v2_train.json"));
  EXPECT_THAT(training.output, HasSubstr("lower bound: 643832672\n"));
  // Its traced order's bound: the fewest bytes any order holds while "mean"
  // runs (a cut over the ops free to run before it or after).
  EXPECT_THAT(training.output,
              HasSubstr("any op order: at least 641866592 bytes (at op "
                        "\"mean\")"));
  // convnext_tiny's gradients, all alive at the last step of every order,
  // are more than any one op holds.
  ToolRun gradients = RunTool("stats " + Data("order/convnext_tiny_step.json"));
  EXPECT_THAT(gradients.output,
              HasSubstr("any op order: at least 111311276 bytes (the graph "
                        "outputs, all alive at the last step)\n"));
  ToolRun gradients_report =
      RunTool("report " + Data("order/convnext_tiny_step.json") +
              " --planner=greedy_by_size");
  EXPECT_THAT(gradients_report.output,
              HasSubstr("any op order: at least 111311276 bytes (the graph "
                        "outputs"));
  ToolRun plan = RunTool("plan " + Data("models/resnet18.json") +
                         " --planner=greedy_by_size --out=" + Temp("r.json"));
  EXPECT_THAT(plan.output, HasSubstr("any op order: at least 6422528 bytes"));
  ToolRun report = RunTool("report " + Data("models/resnet18.json") +
                           " --planner=greedy_by_size");
  EXPECT_THAT(report.output, HasSubstr("any op order: at least 6422528 bytes"));
  // A buffer CSV has no ops to order.
  ToolRun csv = RunTool("stats " + Data("minimalloc/input.12.csv"));
  EXPECT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_THAT(csv.output, Not(HasSubstr("any op order")));
}

// stats --reorder=optimal says whether the order is proven optimal (and
// otherwise how far it is from the bound), the bound the search proved and
// the work it counted.
TEST(MemplanToolTest, StatsSaysWhetherTheOptimalOrderIsProven) {
  ToolRun proven = RunTool("stats " + Data("training/resnet18_train.json") +
                           " --reorder=optimal");
  EXPECT_EQ(proven.exit_code, 0) << proven.output;
  EXPECT_THAT(proven.output, HasSubstr("lower bound: 232468228\n"));
  EXPECT_THAT(proven.output,
              HasSubstr("op order: proven optimal, 232468228 bytes\n"));
  EXPECT_THAT(proven.output,
              HasSubstr("op order search: no order below 232468228 bytes, "));
  // At the bound over op orders: proven without a search.
  ToolRun at_bound =
      RunTool("stats " + Data("training/mobilenet_v2_train.json") +
              " --reorder=optimal");
  EXPECT_EQ(at_bound.exit_code, 0) << at_bound.output;
  EXPECT_THAT(at_bound.output,
              HasSubstr("any op order: at least 641866592 bytes"));
  EXPECT_THAT(at_bound.output,
              HasSubstr("op order: proven optimal, 641866592 bytes\n"));
  // Its work: the bound's and "window"'s, in work units.
  EXPECT_THAT(at_bound.output, HasSubstr("no order below 641866592 bytes, "));
  EXPECT_THAT(at_bound.output, HasSubstr(" work units\n"));
  // Above it, proven by the search: the NASNet-style cells.
  ToolRun searched = RunTool("stats " + Data("order/nasnet_seed1.json") +
                             " --reorder=optimal");
  EXPECT_EQ(searched.exit_code, 0) << searched.output;
  EXPECT_THAT(searched.output,
              HasSubstr("any op order: at least 458752 bytes"));
  EXPECT_THAT(searched.output,
              HasSubstr("op order: proven optimal, 524288 bytes\n"));
  // Other orderings say nothing of it.
  ToolRun memory = RunTool("stats " + Data("training/resnet18_train.json") +
                           " --reorder=memory");
  EXPECT_THAT(memory.output, Not(HasSubstr("\nop order:")));
  // --work-limit bounds the search: cut short, not proven, within it.
  ToolRun limited = RunTool("stats " + Data("order/randwire_seed1.json") +
                            " --reorder=optimal --work-limit=20000");
  EXPECT_EQ(limited.exit_code, 0) << limited.output;
  EXPECT_THAT(limited.output, HasSubstr("not proven optimal"));
  const size_t at =
      limited.output.find(" bytes, ", limited.output.find("op order search:"));
  ASSERT_NE(at, std::string::npos) << limited.output;
  EXPECT_LE(std::stoll(limited.output.substr(at + 8)), 20000 + 2000)
      << limited.output;
}

// plan --reorder=placed keeps the order of the smallest placed peak, says
// which, and records it, so verify rebuilds the same order; other commands
// take no "placed".
TEST(MemplanToolTest, PlacedRecordsTheOrderingItChose) {
  const std::string out = Temp("resnet18_train_placed.json");
  ToolRun run =
      RunTool("plan " + Data("training/resnet18_train.json") +
              " --planner=greedy_by_size --reorder=placed --out=" + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("op order: window (the smallest placed peak)\n"));
  EXPECT_THAT(run.output, HasSubstr("lower bound 232468228"));
  const nlohmann::json plan = nlohmann::json::parse(Slurp(out));
  EXPECT_EQ(plan["build"]["reorder"], "window");
  ToolRun verify =
      RunTool("verify " + Data("training/resnet18_train.json") + " " + out);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("valid plan"));
  ToolRun stats = RunTool("stats " + Data("training/resnet18_train.json") +
                          " --reorder=placed");
  EXPECT_EQ(stats.exit_code, 2) << stats.output;
}

// An order cut by a work limit is not the one its name gives by default:
// the plan file records the order itself, and verify uses it (checked
// against what every ordering keeps) instead of running the ordering again.
TEST(MemplanToolTest, AnOrderCutByALimitIsRecordedAndVerified) {
  const std::string input = Data("order/darts_seed1.json");
  const std::string out = Temp("darts_cut.json");
  ToolRun run = RunTool("plan " + input +
                        " --planner=greedy_by_size --reorder=optimal "
                        "--work-limit=20000 --out=" +
                        out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  nlohmann::json plan = nlohmann::json::parse(Slurp(out));
  ASSERT_TRUE(plan["build"]["op_order"].is_array());
  ToolRun verify = RunTool("verify " + input + " " + out);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_THAT(verify.output, HasSubstr("valid plan"));
  // A recorded order that breaks a dependency is refused, naming the ops.
  std::vector<std::string> order = plan["build"]["op_order"];
  std::reverse(order.begin(), order.end());
  plan["build"]["op_order"] = order;
  const std::string forged = Temp("darts_forged_order.json");
  std::ofstream(forged) << plan.dump();
  ToolRun bad = RunTool("verify " + input + " " + forged);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("the op order runs"));
}

TEST(MemplanToolTest, MultiPoolSummaryReportsEachPool) {
  const std::string input = Data("models/alexnet.json");
  const std::string out = Temp("alexnet_pools.json");
  ToolRun run = RunTool("plan " + input +
                        " --planner=greedy_by_size --pool=sram:1M:16 "
                        "--pool=dram:0:64 --out=" +
                        out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, ::testing::ContainsRegex("sram [0-9]+ of 1048576 "
                                                   "bytes, dram [0-9]+ bytes"));
  EXPECT_THAT(run.output, Not(HasSubstr("lower bound")));
  ToolRun verify =
      RunTool("verify " + input + " " + out + " --pool=sram:1M:16,dram:0:64");
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

// stats plans nothing unless asked: memonger's figures need --shared-objects.
TEST(MemplanToolTest, StatsPlansOnlyWhenAsked) {
  const std::string input = Data("seed/seed000_model.json");
  EXPECT_THAT(RunTool("stats " + input).output,
              Not(HasSubstr("shared objects")));
  ToolRun shared = RunTool("stats " + input + " --shared-objects");
  ASSERT_EQ(shared.exit_code, 0) << shared.output;
  EXPECT_THAT(shared.output, HasSubstr("shared objects (caffe2_greedy): "));
  EXPECT_THAT(shared.output, HasSubstr("shared objects (caffe2_dp): "));
}

// A plan file records its input and build flags: the same input gives the
// same bytes, verify needs no flags (nor the INPUT), and a plan of another
// input is told apart.
TEST(MemplanToolTest, PlanFilesDescribeThemselves) {
  const std::string input = Temp("seed_copy.json");
  std::ofstream(input) << Slurp(Data("seed/seed000_model.json"));
  const std::string flags =
      " --planner=greedy_by_size --plan-constants --alignment=64 "
      "--pool=sram:1M:16 --pool=dram:0:64";
  const std::string a = Temp("self_a.json"), b = Temp("self_b.json");
  ASSERT_EQ(RunTool("plan " + input + flags + " --out=" + a).exit_code, 0);
  ASSERT_EQ(RunTool("plan " + input + flags + " --out=" + b).exit_code, 0);
  EXPECT_EQ(Slurp(a), Slurp(b));
  const nlohmann::json plan = nlohmann::json::parse(Slurp(a));
  EXPECT_EQ(plan["input"]["name"], input);
  EXPECT_THAT(plan["input"]["hash"].get<std::string>(),
              ::testing::StartsWith("fnv1a64:"));
  EXPECT_EQ(plan["build"]["alignment"], 64);
  EXPECT_EQ(plan["build"]["plan_constants"], true);
  EXPECT_EQ(plan["build"]["pools"][0]["capacity"], 1048576);
  EXPECT_FALSE(plan.contains("wall_time_ms"));
  // Every tensor of the graph, with its offset or "planned": false.
  const nlohmann::json graph =
      nlohmann::json::parse(Slurp(Data("seed/seed000_model.json")));
  ASSERT_EQ(plan["tensors"].size(), graph["tensors"].size());
  for (size_t i = 0; i < graph["tensors"].size(); ++i) {
    EXPECT_EQ(plan["tensors"][i]["name"], graph["tensors"][i]["name"]);
    EXPECT_TRUE(plan["tensors"][i].contains("offset")) << i;
  }
  // No flags: the recorded ones. No INPUT: the recorded path.
  ToolRun with_input = RunTool("verify " + input + " " + a);
  EXPECT_EQ(with_input.exit_code, 0) << with_input.output;
  EXPECT_THAT(with_input.output, HasSubstr("with the flags the plan records"));
  ToolRun alone = RunTool("verify " + a);
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
  // Flags given replace the recorded ones: without the constants the plan
  // places buffers the input does not have.
  EXPECT_EQ(RunTool("verify " + input + " " + a + " --alignment=64").exit_code,
            1);
  // Another input.
  ToolRun other = RunTool("verify " + Data("models/resnet18.json") + " " + a);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_THAT(other.output, HasSubstr("is a plan of another input"));
  std::ofstream(input, std::ios::app) << "\n";  // same graph, other bytes
  EXPECT_THAT(RunTool("verify " + a).output,
              HasSubstr("is a plan of another input"));
  std::remove(input.c_str());
  ToolRun gone = RunTool("verify " + a);
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_THAT(gone.output, HasSubstr("cannot find \"" + input + "\""));
  // A CSV plan holds its own input: its rows, checked alone.
  const std::string csv = Temp("self.csv");
  ASSERT_EQ(RunTool("plan " + Data("minimalloc/input.12.csv") + " --out=" + csv)
                .exit_code,
            0);
  ToolRun self = RunTool("verify " + csv);
  EXPECT_EQ(self.exit_code, 0) << self.output;
  EXPECT_THAT(self.output, HasSubstr("valid plan of " + csv));
  // ... and `report PLAN.csv` shows it; a row moved onto another is caught.
  ToolRun shown = RunTool("report " + csv);
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("peak: "));
  std::ifstream in(csv);
  std::vector<std::string> rows;
  for (std::string row; std::getline(in, row);) rows.push_back(row);
  in.close();
  ASSERT_GE(rows.size(), 3u);
  // Every row gets the second row's offset: overlapping buffers collide.
  const std::string offset = rows[1].substr(rows[1].rfind(',') + 1);
  std::ofstream out(csv);
  out << rows[0] << "\n";
  for (size_t i = 1; i < rows.size(); ++i) {
    out << rows[i].substr(0, rows[i].rfind(',') + 1) << offset << "\n";
  }
  out.close();
  ToolRun broken = RunTool("verify " + csv);
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_THAT(broken.output, HasSubstr("invalid plan"));
  // A plain buffer CSV given to verify alone is no plan.
  EXPECT_THAT(RunTool("verify " + Data("minimalloc/input.12.csv")).output,
              HasSubstr("no offset column"));
  // --wall-time adds the planner's time.
  ToolRun timed = RunTool("plan " + Data("models/resnet18.json") +
                          " --planner=naive --wall-time");
  EXPECT_THAT(timed.output, HasSubstr("\"wall_time_ms\":"));
}

// A graph x -> y -> z of 256-byte tensors declaring the pool "sram" of
// 1024 bytes, with x's own alignment `x_alignment`, written to `path`; its
// contents' hash into `hash`.
void WriteSramGraph(const std::string& path, std::string* hash,
                    int x_alignment = 0) {
  const std::string graph =
      std::string(R"({"format": "memplan-graph-v1", "name": "g",)"
                  R"( "pools": [{"name": "sram", "capacity": 1024}],)"
                  R"( "tensors": [{"name": "x", "size": 256,)"
                  R"( "kind": "input")") +
      (x_alignment == 0 ? ""
                        : ", \"alignment\": " + std::to_string(x_alignment)) +
      R"(}, {"name": "y", "size": 256},)"
      R"( {"name": "z", "size": 256, "kind": "output"}],)"
      R"( "ops": [{"name": "a", "type": "A", "inputs": ["x"],)"
      R"( "outputs": ["y"]},)"
      R"( {"name": "b", "type": "B", "inputs": ["y"], "outputs": ["z"]}]})";
  std::ofstream(path) << graph;
  // The hash the tool records, read back from a plan it writes.
  const std::string plan = path + ".plan.json";
  ASSERT_EQ(RunTool("plan " + path + " --out=" + plan).exit_code, 0);
  *hash = nlohmann::json::parse(Slurp(plan))["input"]["hash"];
  std::remove(plan.c_str());
}

// A plan file written by hand for `input` (of hash `hash`), recording
// `build` and placing `buffers`.
std::string HandPlan(const std::string& name, const std::string& input,
                     const std::string& hash, const std::string& build,
                     const std::string& buffers) {
  const std::string path = Temp(name);
  std::ofstream(path) << R"({"format": "memplan-plan-v1", "input": {"name": ")"
                      << input << R"(", "hash": ")" << hash
                      << R"("}, "build": )" << build
                      << R"(, "planner": "by hand", "buffers": )" << buffers
                      << "}";
  return path;
}

// The graph's own declarations are the contract: a plan recording an
// unbounded "sram" does not make a buffer at [5000, 5256) fit in the 1024
// bytes the graph declares.
TEST(MemplanToolTest, VerifyKeepsTheCapacityTheGraphDeclares) {
  const std::string input = Temp("sram_graph.json");
  std::string hash;
  WriteSramGraph(input, &hash);
  const std::string plan = HandPlan(
      "sram_unbounded.json", input, hash,
      R"({"pools": [{"name": "sram", "capacity": 0, "alignment": 1}]})",
      R"([{"name": "x", "pool": "sram", "offset": 0},
          {"name": "y", "pool": "sram", "offset": 5000},
          {"name": "z", "pool": "sram", "offset": 0}])");
  for (const std::string command : {"verify ", "report "}) {
    ToolRun run = RunTool(command + input + " " + plan);
    EXPECT_EQ(run.exit_code, 1) << run.output;
    EXPECT_THAT(run.output,
                HasSubstr("plan records pool \"sram\" with capacity 0; the "
                          "graph declares capacity 1024"));
  }
  // Placed inside the 1024 bytes, the same record is a plan of the graph's.
  const std::string inside =
      HandPlan("sram_inside.json", input, hash, R"({"capacity": 1024})",
               R"([{"name": "x", "offset": 0}, {"name": "y", "offset": 256},
          {"name": "z", "offset": 0}])");
  ToolRun run = RunTool("verify " + input + " " + inside);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::remove(input.c_str());
}

// A plan recording plan_inputs: false is a plan that leaves the graph's
// inputs to the caller, and verify says so; --plan-inputs asks for a full
// plan, which it is not.
TEST(MemplanToolTest, VerifyNamesInputsLeftToTheCaller) {
  const std::string input = Temp("inputs_graph.json");
  std::string hash;
  WriteSramGraph(input, &hash);
  const std::string plan =
      HandPlan("inputs_left.json", input, hash, R"({"plan_inputs": false})",
               R"([{"name": "y", "offset": 0}, {"name": "z", "offset": 256}])");
  ToolRun run = RunTool("verify " + input + " " + plan);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("(with the flags the plan records; graph inputs left "
                        "to the caller, as the plan records)"));
  ToolRun report = RunTool("report " + input + " " + plan);
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_THAT(report.output,
              HasSubstr("graph inputs left to the caller, as the plan "
                        "records"));
  ToolRun strict = RunTool("verify " + input + " " + plan + " --plan-inputs");
  EXPECT_EQ(strict.exit_code, 1) << strict.output;
  EXPECT_THAT(strict.output, HasSubstr("\"x\""));
  std::remove(input.c_str());
}

// A tensor's own alignment holds whatever the plan records: a smaller
// recorded alignment does not lower it, a larger one is accepted and named.
TEST(MemplanToolTest, VerifyKeepsATensorsOwnAlignment) {
  const std::string input = Temp("aligned_graph.json");
  std::string hash;
  WriteSramGraph(input, &hash, /*x_alignment=*/64);
  const std::string low =
      HandPlan("align_low.json", input, hash, R"({"alignment": 1})",
               R"([{"name": "x", "offset": 32}, {"name": "y", "offset": 512},
          {"name": "z", "offset": 0}])");
  ToolRun run = RunTool("verify " + input + " " + low);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\"x\""));
  const std::string high =
      HandPlan("align_high.json", input, hash, R"({"alignment": 128})",
               R"([{"name": "x", "offset": 0}, {"name": "y", "offset": 256},
          {"name": "z", "offset": 0}])");
  run = RunTool("verify " + input + " " + high);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("buffers aligned to 128, as the plan "
                                    "records (tensor \"x\" declares 64)"));
  std::remove(input.c_str());
}

// Every plan the tool writes verifies with no flags: pools given by flags
// fill in what a model without pools leaves open.
TEST(MemplanToolTest, APlanWithPoolFlagsVerifiesWithoutFlags) {
  const std::string out = Temp("pools_by_flags.json");
  ASSERT_EQ(RunTool("plan " + Data("models/alexnet.json") +
                    " --pool=sram:1048576 --pool=dram --out=" + out)
                .exit_code,
            0);
  ToolRun run = RunTool("verify " + Data("models/alexnet.json") + " " + out);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("(with the flags the plan records)"));
}

TEST(MemplanToolTest, OutNeverOverwritesTheInputAndFollowsTheExtension) {
  const std::string input = Temp("precious.json");
  const std::string original = Slurp(Data("models/resnet18.json"));
  std::ofstream(input) << original;
  for (const std::string flag : {"--out=", "--graph-out="}) {
    ToolRun run = RunTool("plan " + input + " " + flag + input);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_THAT(run.output, HasSubstr("never overwritten"));
  }
  EXPECT_EQ(Slurp(input), original);
  ToolRun unknown = RunTool("plan " + input + " --out=" + Temp("plan.jsn"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.output, HasSubstr("unknown output format"));
  const std::string gz = Temp("plan.json.gz");
  ASSERT_EQ(RunTool("plan " + input + " --planner=naive --out=" + gz).exit_code,
            0);
  EXPECT_EQ(RunTool("verify " + input + " " + gz).exit_code, 0);
}

// The offsets of a plan JSON's tensors in order, -1 where not planned.
std::vector<int64_t> JsonOffsets(const nlohmann::json& plan) {
  std::vector<int64_t> offsets;
  for (const auto& t : plan["tensors"]) {
    offsets.push_back(t.contains("offset") ? t["offset"].get<int64_t>() : -1);
  }
  return offsets;
}

// Compiles `header` with gcc -std=c99 -Wall -Werror into a program that
// prints every _OFFSET macro and the arena size, and returns its output.
ToolRun CompileAndRunHeader(const std::string& header,
                            const std::vector<std::string>& macros,
                            const std::string& name) {
  const std::string c = Temp(name + ".c"), exe = Temp(name + ".exe");
  std::ofstream program(c);
  program << "#include \"" << header << "\"\n#include <stdio.h>\n"
          << "int main(void) {\n  static const long long offsets[] = {\n";
  for (const std::string& m : macros) program << "    " << m << ",\n";
  program << "  };\n  size_t i;\n"
          << "  for (i = 0; i < sizeof offsets / sizeof offsets[0]; ++i)\n"
          << "    printf(\"%lld\\n\", offsets[i]);\n"
          << "  printf(\"arena %lld\\n\", (long long)MEMPLAN_ARENA_SIZE);\n"
          << "  return 0;\n}\n";
  program.close();
  const std::string compile = std::string(MEMPLAN_TEST_GCC) +
                              " -std=c99 -Wall -Wextra -Werror -pedantic -o " +
                              exe + " " + c + " 2>&1";
  ToolRun run;
  FILE* pipe = popen(compile.c_str(), "r");
  char chunk[4096];
  size_t n = 0;
  while (pipe != nullptr && (n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    run.output.append(chunk, n);
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return run;
  pipe = popen(exe.c_str(), "r");
  run.output.clear();
  while (pipe != nullptr && (n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    run.output.append(chunk, n);
  const int ran = pipe == nullptr ? -1 : pclose(pipe);
  run.exit_code = WIFEXITED(ran) ? WEXITSTATUS(ran) : -1;
  return run;
}

// The C header compiles as C99 with every warning an error, has one unique
// offset per tensor (names sanitized), and its values are the plan's.
TEST(MemplanToolTest, CHeaderCompilesAndCarriesThePlan) {
  const std::string odd = Temp("odd_names.json");
  std::ofstream(odd) << R"({"format":"memplan-graph-v1","name":"odd","tensors":[
    {"name":"in","size":64,"kind":"input"},
    {"name":"w","size":32,"kind":"constant"},
    {"name":"a.b","size":128},{"name":"a_b","size":128},
    {"name":"A-B","size":64},{"name":"x*/y","size":16},
    {"name":"9lives","size":16,"kind":"output"}],
    "ops":[{"name":"op*/0","inputs":["in","w"],"outputs":["a.b"]},
           {"name":"op1","inputs":["a.b"],"outputs":["a_b"]},
           {"name":"op2","inputs":["a_b"],"outputs":["A-B","x*/y"]},
           {"name":"op3","inputs":["A-B","x*/y"],"outputs":["9lives"]}]})";
  for (const std::string& input : {odd, Data("models/resnet18.json")}) {
    const std::string header = Temp("plan.h"), json = Temp("plan_h.json");
    const std::string plan = "plan " + input + " --planner=greedy_by_size ";
    ASSERT_EQ(RunTool(plan + "--out=" + header).exit_code, 0) << input;
    ASSERT_EQ(RunTool(plan + "--out=" + json).exit_code, 0) << input;
    const nlohmann::json parsed = nlohmann::json::parse(Slurp(json));
    const std::vector<int64_t> expected = JsonOffsets(parsed);
    const std::string text = Slurp(header);
    const std::vector<std::string> macros = OffsetMacros(text);
    ASSERT_EQ(macros.size(), expected.size()) << text;
    EXPECT_EQ(std::set<std::string>(macros.begin(), macros.end()).size(),
              macros.size());
    EXPECT_THAT(text, HasSubstr(" bytes, alive steps ["));
    ToolRun run = CompileAndRunHeader(header, macros, "header");
    ASSERT_EQ(run.exit_code, 0) << run.output << "\n" << text;
    std::string want;
    for (int64_t o : expected) want += std::to_string(o) + "\n";
    want += "arena " + std::to_string(parsed["peak"].get<int64_t>()) + "\n";
    EXPECT_EQ(run.output, want) << input;
  }
  const std::string text = Slurp(Temp("plan.h"));  // resnet18's
  EXPECT_THAT(text, HasSubstr("#define MEMPLAN_INPUT_OFFSET "));
  EXPECT_THAT(text, HasSubstr("#define MEMPLAN_LAYER1_LAYER1_0_CONV1_CONV_"
                              "OUTPUT_0_OFFSET "));
}

// TFLite Micro's offline plan: version 0, subgraph 0, n, one offset per
// tensor (-1: the runtime's), as little-endian int32.
TEST(MemplanToolTest, TflmOfflinePlanIsTheInt32Array) {
  const std::string input = Data("seed/seed000_model.json");
  const std::string bin = Temp("offline.bin"), json = Temp("offline.json");
  const std::string plan = "plan " + input + " --planner=greedy_by_size ";
  ASSERT_EQ(RunTool(plan + "--format=tflm-offline --out=" + bin).exit_code, 0);
  ASSERT_EQ(RunTool(plan + "--out=" + json).exit_code, 0);
  const std::string bytes = Slurp(bin);
  ASSERT_EQ(bytes.size() % 4, 0u);
  std::vector<int32_t> values;
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t u = 0;
    for (int k = 3; k >= 0; --k)
      u = (u << 8) | static_cast<unsigned char>(bytes[i + k]);
    values.push_back(static_cast<int32_t>(u));
  }
  const std::vector<int64_t> expected =
      JsonOffsets(nlohmann::json::parse(Slurp(json)));
  ASSERT_EQ(values.size(), expected.size() + 3);
  EXPECT_EQ(values[0], 0);
  EXPECT_EQ(values[1], 0);
  EXPECT_EQ(values[2], static_cast<int32_t>(expected.size()));
  int unplanned = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(values[i + 3], expected[i]) << i;
    unplanned += values[i + 3] == -1;
  }
  EXPECT_GT(unplanned, 0);  // the constants are the runtime's
  ToolRun pools = RunTool(plan +
                          "--pool=a:1M --pool=b --format=tflm-offline "
                          "--out=" +
                          bin);
  EXPECT_EQ(pools.exit_code, 1);
  EXPECT_THAT(pools.output, HasSubstr("one arena"));
  EXPECT_EQ(RunTool(plan + "--format=tflm-offline").exit_code, 2);
  EXPECT_EQ(RunTool(plan + "--format=xml --out=" + bin).exit_code, 2);
}

// report says when the default planner made its plan, which stops where
// its searches stop gaining; plan and report take --quiet and --progress,
// which change nothing in the plan.
TEST(MemplanToolTest, ReportSaysTheDefaultPlannedFast) {
  const std::string input = Data("training/resnet18_train.json");
  ToolRun fresh = RunTool("report " + input + " --quiet");
  EXPECT_EQ(fresh.exit_code, 0) << fresh.output;
  EXPECT_THAT(fresh.output,
              HasSubstr("planned here by best, the default planner"));
  ToolRun named = RunTool("report " + input + " --planner=greedy_by_size");
  EXPECT_EQ(named.exit_code, 0) << named.output;
  EXPECT_THAT(named.output, Not(HasSubstr("planned here by")));

  const std::string quiet = Temp("quiet_plan.csv");
  const std::string shown = Temp("shown_plan.csv");
  ASSERT_EQ(RunTool("plan " + input + " --quiet --out=" + quiet).exit_code, 0);
  ASSERT_EQ(RunTool("plan " + input + " --progress --out=" + shown).exit_code,
            0);
  EXPECT_FALSE(Slurp(quiet).empty());
  EXPECT_EQ(Slurp(quiet), Slurp(shown));
}

// The progress line ends saying why the run stopped, read from the plan,
// its planner and the limits; on a terminal (MEMPLAN_PROGRESS_TERMINAL=1
// stands for one) it is rewritten in place; --progress=never shows none,
// and a quick run off a terminal stays silent.
TEST(MemplanToolTest, ProgressLineSaysWhyTheRunStopped) {
  const std::string j = Data("minimalloc/J.1048576.csv");
  const std::string out = " --out=" + Temp("progress.csv") + " ";
  const std::string always = " --progress=always";
  ::setenv("MEMPLAN_PROGRESS_TERMINAL", "0", 1);
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"plan " + Data("minimalloc/A.1048576.csv"), "proven optimal"},
      {"plan " + j + " --planner=greedy_by_size", "done"},
      {"plan " + j + " --planner=exact --work-limit=2000000", "work limit"},
      {"plan " + j + " --planner=hill_climb --work-limit=4000000",
       "work limit"},
      // Work without end: the time limit stops it on any machine (exact
      // needs seconds to prove J).
      {"plan " + j +
           " --planner=exact --time-limit=0.2 --work-limit=1000000000000",
       "time limit"},
      {"plan " + Data("training/mobilenet_v2_train.json"),
       "within 1.002x of the lower bound (option enough)"},
  };
  for (const auto& [command, reason] : runs) {
    ToolRun run = RunTool(command + out + always);
    EXPECT_EQ(run.exit_code, 0) << command << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("; stopped: " + reason + "\n"))
        << command;
    EXPECT_THAT(run.output, HasSubstr("best peak ")) << command;
    EXPECT_THAT(run.output, Not(HasSubstr("\r"))) << command;
  }
  const std::string quick = "plan " + j + " --planner=greedy_by_size" + out;
  EXPECT_THAT(RunTool(quick).output, Not(HasSubstr("stopped:")));
  EXPECT_THAT(RunTool(quick + always + " --progress=never").output,
              Not(HasSubstr("stopped:")));
  EXPECT_THAT(RunTool(quick + always + " --quiet").output,
              Not(HasSubstr("stopped:")));
  ::setenv("MEMPLAN_PROGRESS_TERMINAL", "1", 1);
  EXPECT_THAT(RunTool(quick + always).output,
              HasSubstr("\r\033[Kmemplan:    0.0 s  best peak 1333248 bytes "
                        "= 1.3478x lower bound  [greedy_by_size]; stopped: "
                        "done\n"));
  ::unsetenv("MEMPLAN_PROGRESS_TERMINAL");
  ToolRun bad = RunTool(quick + " --progress=sometimes");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("\"sometimes\" is not never, auto or "
                                    "always"));
}

}  // namespace
}  // namespace memplan
