// Answers that say what to do: each message names the item and the fix
// (a misspelt flag, command, planner or option; a cycle; a graph without
// its format; a capacity below the lower bound; unbound ONNX dims; --dim
// given twice or at 0; an --out that is not a regular file; the in-place
// hints a plan used).

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/spelling.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::memplan::testing::RunTool;
using ::memplan::testing::ToolRun;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Data(const std::string& relative) {
  return testing::DataPath(relative);
}

// A file under the test's temporary folder holding `text`.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/messages_test_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(SpellingTest, SuggestsTheClosestNameOnly) {
  const std::vector<std::string> names = {"plan", "planners", "verify"};
  EXPECT_EQ(ClosestName("plna", names), "plan");
  EXPECT_EQ(ClosestName("PLAN", names), "plan");  // case ignored
  EXPECT_EQ(ClosestName("verfiy", names), "verify");
  EXPECT_EQ(ClosestName("xyz", names), "");
  EXPECT_EQ(ClosestName("", names), "");
  EXPECT_EQ(ClosestName("plan", names), "");  // itself is no suggestion
  EXPECT_EQ(ClosestName(std::string(100, 'p'), names), "");
  // A name's first word counts: "gredy" is close to greedy_by_size.
  EXPECT_EQ(ClosestName("gredy", {"naive", "greedy_by_size"}),
            "greedy_by_size");
  EXPECT_EQ(DidYouMean("planer", {"planner", "planners"}),
            " (did you mean \"planner\"?)");
  EXPECT_EQ(DidYouMean("zzz", {"planner"}), "");
}

TEST(MessagesTest, MisspeltCommandAndFlagGetDidYouMean) {
  ToolRun command = RunTool("plna x.json");
  EXPECT_EQ(command.exit_code, 2) << command.output;
  EXPECT_THAT(command.output,
              HasSubstr("unknown command \"plna\" (did you mean \"plan\"?)"));
  ToolRun flag = RunTool(
      absl::StrCat("plan ", Data("models/alexnet.json"), " --planer=best"));
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  EXPECT_THAT(flag.output,
              HasSubstr("unknown flag --planer (did you mean --planner?)"));
  ToolRun far = RunTool("plan x.json --zzzzzz=1");
  EXPECT_EQ(far.exit_code, 2) << far.output;
  EXPECT_THAT(far.output, HasSubstr("unknown flag --zzzzzz"));
  EXPECT_THAT(far.output, Not(HasSubstr("did you mean")));
}

TEST(MessagesTest, MisspeltPlannerAndOptionGetDidYouMean) {
  const std::string input = Data("models/alexnet.json");
  ToolRun planner = RunTool(absl::StrCat("plan ", input, " --planner=gredy"));
  EXPECT_EQ(planner.exit_code, 2) << planner.output;
  EXPECT_THAT(planner.output,
              HasSubstr("unknown planner \"gredy\" (did you mean "
                        "\"greedy_by_size\"?); valid planners: "));
  ToolRun option = RunTool(
      absl::StrCat("plan ", input, " --planner=exact --option symetry=false"));
  EXPECT_EQ(option.exit_code, 2) << option.output;
  EXPECT_THAT(option.output,
              HasSubstr("has no option \"symetry\" (did you mean "
                        "\"symmetry\"?; valid: "));
  // The library answers the same to its callers (Python among them).
  EXPECT_THAT(CreatePlanner("hill_clim", {}).status().message(),
              HasSubstr("(did you mean \"hill_climb\"?)"));
}

// x -> a -> b -> c with op "first" listed after the op that reads its
// output; with `cycle`, "first" reads c as well, which closes a cycle.
std::string OrderGraph(bool cycle) {
  return absl::StrCat(
      R"({"format": "memplan-graph-v1", "tensors": [
        {"name": "x", "size": 4, "kind": "input"},
        {"name": "a", "size": 4}, {"name": "b", "size": 4},
        {"name": "c", "size": 4, "kind": "output"}],
      "ops": [
        {"name": "second", "inputs": ["a"], "outputs": ["b"]},
        {"name": "third", "inputs": ["b"], "outputs": ["c"]},
        {"name": "first", "inputs": ["x")",
      cycle ? R"(, "c")" : "", R"(], "outputs": ["a"]}]})");
}

TEST(MessagesTest, ACycleIsNamedWithItsOps) {
  absl::StatusOr<Graph> graph = ParseGraphJson(OrderGraph(/*cycle=*/true));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const absl::Status status = BuildProblem(*graph, {}).status();
  EXPECT_THAT(status.message(),
              HasSubstr("ops \"second\" -> \"third\" -> \"first\" -> "
                        "\"second\" form a cycle"));
  EXPECT_THAT(status.message(), HasSubstr("break the cycle"));
  EXPECT_THAT(status.message(), Not(HasSubstr("topological")));
  ToolRun run =
      RunTool(absl::StrCat("plan ", WriteTemp("cycle.json", OrderGraph(true))));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("form a cycle"));
}

TEST(MessagesTest, AnOpListedTooLateIsToldWhereToGo) {
  absl::StatusOr<Graph> graph = ParseGraphJson(OrderGraph(/*cycle=*/false));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const absl::Status status = BuildProblem(*graph, {}).status();
  EXPECT_THAT(status.message(),
              HasSubstr("op \"second\" reads tensor \"a\" before op \"first\" "
                        "produces it: list op \"first\" before op \"second\""));
  EXPECT_THAT(status.message(), Not(HasSubstr("cycle")));
}

TEST(MessagesTest, AGraphWithoutFormatIsToldTheValue) {
  const absl::Status status =
      ParseGraphJson(R"({"tensors": [], "ops": []})").status();
  EXPECT_THAT(status.message(),
              HasSubstr("add \"format\": \"memplan-graph-v1\""));
}

TEST(MessagesTest, ACapacityBelowTheLowerBoundNamesTheSmallestThatCouldWork) {
  const std::string input = Data("models/alexnet.json");
  absl::StatusOr<LoadedInput> loaded = LoadInput(input, {});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Bytes bound = LowerBound(loaded->problem);
  const std::string expected =
      absl::StrCat("the smallest capacity that could work is the lower bound, ",
                   bound, " bytes");
  std::vector<std::string> planners = {"", "greedy_by_size", "exact"};
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name == "cpsat") planners.push_back("cpsat");
  }
  for (const std::string& planner : planners) {
    ToolRun run =
        RunTool(absl::StrCat("plan ", input, " --capacity=1K",
                             planner.empty() ? "" : " --planner=", planner));
    EXPECT_EQ(run.exit_code, 1) << planner << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr(expected)) << planner;
    EXPECT_THAT(run.output, Not(HasSubstr("fits in no allowed pool")));
    EXPECT_THAT(run.output, Not(HasSubstr("model not begun")));
  }
  // At the bound itself, a plan is found and verified.
  ToolRun at = RunTool(
      absl::StrCat("plan ", input, " --capacity=", bound, " --out=/dev/null"));
  EXPECT_EQ(at.exit_code, 0) << at.output;
}

// Several pools: their capacities together are what the bound is against;
// one unbounded pool means anything may fit.
TEST(MessagesTest, PoolsTogetherBelowTheLowerBoundNameTheBound) {
  Problem problem;
  problem.pools = {Pool{.name = "sram", .capacity = 60},
                   Pool{.name = "dram", .capacity = 60}};
  problem.buffers = {Buffer{.name = "a", .size = 100, .lifetime = {0, 2}},
                     Buffer{.name = "b", .size = 50, .lifetime = {1, 3}}};
  PlanMemoryOptions options;
  options.planner = "greedy_by_size";
  const absl::Status status = PlanMemory(problem, options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(),
              HasSubstr("no plan fits in the pools' capacities together, 120: "
                        "the buffers alive at one step need 150 bytes (buffer "
                        "\"a\" alone needs 100); the smallest capacity that "
                        "could work is the lower bound, 150 bytes (30 more)"));
  // With room for each buffer in a pool of its own, a plan is found.
  problem.pools[1].capacity = 100;
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(problem, *plan).ok());
}

TEST(MessagesTest, DimGivenTwiceIsAnError) {
  const std::string input = Data("symbolic/transformer_encoder.json");
  ToolRun run =
      RunTool(absl::StrCat("plan ", input, " --dim seq=4 --dim seq=8"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("--dim=seq=8: dim \"seq\" is given twice; give each "
                        "dim once"));
  EXPECT_FALSE(ParseDimArguments({"seq=4", "seq=1:8"}).ok());
  EXPECT_TRUE(ParseDimArguments({"seq=4", "batch=1:8"}).ok());
}

// A dim whose declared range holds 0 may be bound to 0; where the range
// starts at 1, the range says why 0 is refused.
TEST(MessagesTest, DimAtZeroFollowsTheDeclaredRange) {
  const std::string graph = WriteTemp("zero.json", R"({
    "format": "memplan-graph-v1", "dims": {"seq": {"min": 0, "max": 8}},
    "tensors": [{"name": "x", "size": 16, "kind": "input"},
                {"name": "h", "size": "16*seq"},
                {"name": "y", "size": 16, "kind": "output"}],
    "ops": [{"name": "a", "inputs": ["x"], "outputs": ["h"]},
            {"name": "b", "inputs": ["h", "x"], "outputs": ["y"]}]})");
  const std::string plan =
      ::testing::TempDir() + "/messages_test_zero.plan.json";
  ToolRun run =
      RunTool(absl::StrCat("plan ", graph, " --dim seq=0 --out=", plan));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ToolRun verify =
      RunTool(absl::StrCat("verify ", graph, " ", plan, " --dim seq=0"));
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  ToolRun refused = RunTool(absl::StrCat(
      "plan ", Data("symbolic/transformer_encoder.json"), " --dim seq=0"));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_THAT(refused.output, HasSubstr("seq"));
  EXPECT_THAT(refused.output, HasSubstr("[1, 2048]"));
}

TEST(MessagesTest, OutMayBeDevNull) {
  ToolRun run = RunTool(
      absl::StrCat("plan ", Data("models/alexnet.json"), " --out=/dev/null"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("peak"));
  ToolRun typo =
      RunTool(absl::StrCat("plan ", Data("models/alexnet.json"),
                           " --out=", ::testing::TempDir(), "/plan.jsn"));
  EXPECT_EQ(typo.exit_code, 2) << typo.output;
  EXPECT_THAT(typo.output, HasSubstr("unknown output format"));
}

#ifdef MEMPLAN_HAVE_ONNX
TEST(MessagesTest, UnboundOnnxDimsAreNamedAllAtOnce) {
  ToolRun run = RunTool(
      absl::StrCat("plan ", Data("onnx/transformer_encoder_opset13.onnx")));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("\"batch\" (dim 0 of graph input "
                                    "\"tokens\")"));
  EXPECT_THAT(run.output, HasSubstr("\"sequence\" (dim 1 of graph input "
                                    "\"tokens\")"));
  EXPECT_THAT(run.output,
              HasSubstr("are not bound: add --dim batch=VALUE --dim "
                        "sequence=VALUE"));
  // An ONNX dim has no declared range: 0 parses, and the importer says why
  // it is refused.
  ToolRun zero = RunTool(
      absl::StrCat("plan ", Data("onnx/transformer_encoder_opset13.onnx"),
                   " --dim batch=0 --dim sequence=4"));
  EXPECT_EQ(zero.exit_code, 1) << zero.output;
  EXPECT_THAT(zero.output, HasSubstr("\"batch\" bound to 0 (must be >= 1)"));
}

TEST(MessagesTest, ThePlanSaysHowManyInPlaceHintsItUsedAndWhence) {
  const std::string model = Data("onnx/resnet18_opset13.onnx");
  ToolRun run = RunTool(absl::StrCat("plan ", model, " --out=/dev/null"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("in-place hints: "));
  EXPECT_THAT(run.output,
              HasSubstr("applied (from the ONNX importer's element-wise ops; "
                        "--onnx-inplace=off plans without them)"));
  ToolRun off = RunTool(
      absl::StrCat("plan ", model, " --out=/dev/null --onnx-inplace=off"));
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_THAT(off.output, Not(HasSubstr("in-place hints")));
}
#endif

}  // namespace
}  // namespace memplan
