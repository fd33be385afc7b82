// Symbolic plan files (memplan-plan-v1 with dims) and the tool's plan and
// verify of graphs with dims.

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"
#include "nlohmann/json.hpp"
#include "symbolic_graphs.h"
#include "test_util.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunTool;
using testing::RunToolStdout;
using Json = nlohmann::json;

using testing::kAttention;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/symbolic_cli_test_" + name;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

SymbolicGraphPlan AttentionPlan() {
  absl::StatusOr<SymbolicGraphPlan> plan =
      PlanSymbolicMemory(*ParseGraphJson(kAttention), {.max_buckets = 1});
  EXPECT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  return *plan;
}

// The one plan cut into two buckets at seq = 64: valid on each part, so a
// plan with buckets whatever the planner chooses.
SymbolicGraphPlan TwoBuckets(SymbolicGraphPlan plan) {
  SymbolicBucket low = plan.buckets[0];
  SymbolicBucket high = low;
  low.dims["seq"] = {1, 64};
  high.dims["seq"] = {65, 2048};
  plan.buckets = {low, high};
  return plan;
}

size_t BufferIndex(const SymbolicProblem& problem, const std::string& name) {
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    if (problem.buffers[b].name == name) return b;
  }
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}

TEST(SymbolicPlanJsonTest, OneBucketReadsBackTheSamePlan) {
  const SymbolicGraphPlan plan = AttentionPlan();
  ASSERT_EQ(plan.buckets.size(), 1u);
  const std::string text = SymbolicPlanToJson(plan);
  EXPECT_TRUE(IsSymbolicPlanJson(text));
  const Json j = Json::parse(text);
  EXPECT_EQ(j["format"], "memplan-plan-v1");
  EXPECT_EQ(j["dims"]["seq"]["max"], 2048);
  EXPECT_EQ(j["peak"], plan.buckets[0].plan.peak.ToString());
  EXPECT_TRUE(j["peak"].is_string());
  EXPECT_TRUE(j["buffers"][0]["offset"].is_string());
  EXPECT_FALSE(j.contains("buckets"));
  absl::StatusOr<SymbolicGraphPlan> back =
      ParseSymbolicPlanJson(text, plan.problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, plan);
  EXPECT_TRUE(VerifySymbolicGraphPlan(*back).ok());
  // The naive total is the sum of the reserved sizes.
  EXPECT_EQ(j["naive_total"], "32*seq*seq + 1536*seq + 4160");
}

TEST(SymbolicPlanJsonTest, StepsReadBackAndAreChecked) {
  // The upper bucket counted in steps of 4 at alignment 64.
  BuildOptions build;
  build.alignment = 64;
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(
      *ParseGraphJson(kAttention), {.build = build, .max_buckets = 1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  *plan = TwoBuckets(*plan);
  SymbolicBucket& high = plan->buckets[1];
  high.steps = {{"seq", 4}};
  absl::StatusOr<SymbolicProblem> stepped = high.ProblemOf(plan->problem);
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  absl::StatusOr<SymbolicPlan> high_plan = PlanSymbolicGreedy(*stepped);
  ASSERT_TRUE(high_plan.ok()) << high_plan.status();
  high.plan = *high_plan;
  high.plan.planner = plan->planner;
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  const std::string text = SymbolicPlanToJson(*plan);
  const Json j = Json::parse(text);
  EXPECT_FALSE(j["buckets"][0].contains("steps"));
  EXPECT_EQ(j["buckets"][1]["steps"], Json({{"seq", 4}}));
  const size_t scores = BufferIndex(plan->problem, "scores");
  EXPECT_EQ(j["buckets"][1]["sizes"][scores],
            stepped->buffers[scores].size.ToString());
  absl::StatusOr<SymbolicGraphPlan> back =
      ParseSymbolicPlanJson(text, plan->problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, *plan);
  // The expressions are in seq_div and seq_mod: without the steps that
  // give them, the bucket is refused, naming the dim.
  Json bare = j;
  bare["buckets"][1].erase("steps");
  bare["buckets"][1].erase("sizes");
  EXPECT_THAT(
      ParseSymbolicPlanJson(bare.dump(), plan->problem).status().message(),
      HasSubstr("uses dim \"seq_div\", which the plan's dims do not "
                "declare"));
  // Another step than the sizes were reserved with is refused.
  Json wrong = j;
  wrong["buckets"][1]["steps"]["seq"] = 2;
  EXPECT_THAT(
      ParseSymbolicPlanJson(wrong.dump(), plan->problem).status().message(),
      HasSubstr("plan bucket #1 size of buffer"));
  wrong["buckets"][1]["steps"]["seq"] = 1;
  EXPECT_THAT(
      ParseSymbolicPlanJson(wrong.dump(), plan->problem).status().message(),
      HasSubstr("the step of dim \"seq\" is 1; an integer in [2, 2^20]"));
  wrong["buckets"][1]["steps"] = {{"len", 4}};
  EXPECT_THAT(
      ParseSymbolicPlanJson(wrong.dump(), plan->problem).status().message(),
      HasSubstr("\"steps\" names dim \"len\""));
}

TEST(SymbolicPlanJsonTest, BucketsReadBackTheSamePlan) {
  const SymbolicGraphPlan plan = TwoBuckets(AttentionPlan());
  ASSERT_TRUE(VerifySymbolicGraphPlan(plan).ok());
  const std::string text = SymbolicPlanToJson(plan);
  const Json j = Json::parse(text);
  EXPECT_FALSE(j.contains("peak"));
  EXPECT_FALSE(j["buffers"][0].contains("offset"));
  ASSERT_EQ(j["buckets"].size(), 2u);
  EXPECT_EQ(j["buckets"][1]["dims"]["seq"]["min"], 65);
  EXPECT_EQ(j["buckets"][0]["offsets"].size(), plan.problem.buffers.size());
  // Each bucket lists the sizes reserved over its own range: exact at its
  // minimum, so the upper bucket's are those of seq = 65 there.
  const size_t scores = BufferIndex(plan.problem, "scores");
  ASSERT_EQ(j["buckets"][1]["sizes"].size(), plan.problem.buffers.size());
  const DimExpr high_scores =
      *DimExpr::Parse(j["buckets"][1]["sizes"][scores].get<std::string>());
  const DimExpr whole_scores = plan.problem.buffers[scores].size;
  EXPECT_LE(*high_scores.Evaluate({{"seq", 65}}),
            *whole_scores.Evaluate({{"seq", 65}}));
  absl::StatusOr<SymbolicGraphPlan> back =
      ParseSymbolicPlanJson(text, plan.problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, plan);
  EXPECT_TRUE(VerifySymbolicGraphPlan(*back).ok());
  // A file without the buckets' sizes (they are optional) reads the same.
  Json bare = j;
  for (Json& bucket : bare["buckets"]) bucket.erase("sizes");
  back = ParseSymbolicPlanJson(bare.dump(), plan.problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, plan);
  // Sizes that are not the graph's reserved over the bucket are refused.
  Json wrong = j;
  wrong["buckets"][1]["sizes"][scores] = "1";
  back = ParseSymbolicPlanJson(wrong.dump(), plan.problem);
  EXPECT_THAT(back.status().message(),
              HasSubstr("plan bucket #1 size of buffer \"scores\" is 1; the "
                        "graph's, reserved over the bucket's ranges, is"));
  // Buffers in another order: offsets follow the file's buffer order.
  Json shuffled = j;
  std::swap(shuffled["buffers"][0], shuffled["buffers"][1]);
  for (Json& bucket : shuffled["buckets"]) {
    std::swap(bucket["offsets"][0], bucket["offsets"][1]);
  }
  back = ParseSymbolicPlanJson(shuffled.dump(), plan.problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, plan);
}

TEST(SymbolicPlanJsonTest, ReaderNamesWhatDoesNotMatchTheGraph) {
  const SymbolicGraphPlan plan = AttentionPlan();
  const Json good = Json::parse(SymbolicPlanToJson(plan));
  const size_t scores = BufferIndex(plan.problem, "scores");
  auto error = [&](const Json& j) {
    absl::StatusOr<SymbolicGraphPlan> read =
        ParseSymbolicPlanJson(j.dump(), plan.problem);
    EXPECT_FALSE(read.ok());
    return std::string(read.status().message());
  };
  Json j = good;
  j["buffers"][scores]["size"] = "32*seq*seq";
  EXPECT_THAT(error(j), HasSubstr("buffer \"scores\": the plan's size is "
                                  "32*seq*seq; the graph's is"));
  j = good;
  j["buffers"][scores]["end"] = 99;
  EXPECT_THAT(error(j), HasSubstr("buffer \"scores\": the plan's lifetime"));
  j = good;
  j["buffers"][scores]["name"] = "logits";
  EXPECT_THAT(error(j), HasSubstr("\"logits\", which is no buffer"));
  j = good;
  j["buffers"].erase(scores);
  EXPECT_THAT(error(j), HasSubstr("does not place buffer \"scores\""));
  j = good;
  j["dims"]["seq"]["max"] = 1024;
  EXPECT_THAT(error(j), HasSubstr("dim \"seq\" ranges over [1, 1024]; the "
                                  "graph's over [1, 2048]"));
  j = good;
  j["buffers"][scores]["offset"] = "64*seq +";
  EXPECT_THAT(error(j), HasSubstr("buffer \"scores\" offset"));
  EXPECT_THAT(error(j), HasSubstr("position"));
  j = good;
  j["buffers"][scores]["offset"] = "64*len";
  EXPECT_THAT(error(j), HasSubstr("uses dim \"len\""));
  j = good;
  j["buffers"][scores]["offset"] = true;
  EXPECT_THAT(error(j), HasSubstr("must be an expression"));
  j = good;
  j["peak"] = "seq seq";
  EXPECT_THAT(error(j), HasSubstr("the plan's peak"));
  j = good;
  j["naive_total"] = "1";
  EXPECT_THAT(error(j), HasSubstr("claims naive_total 1"));
  j = good;
  j.erase("dims");
  EXPECT_THAT(error(j), HasSubstr("no \"dims\""));
  // Buckets: offsets of each bucket, named by bucket and buffer.
  Json two = Json::parse(SymbolicPlanToJson(TwoBuckets(plan)));
  j = two;
  j["buckets"][1]["offsets"][scores] = "7*";
  EXPECT_THAT(error(j),
              HasSubstr("plan bucket #1 offset of buffer \"scores\""));
  j = two;
  j["buckets"][0]["offsets"].erase(0);
  EXPECT_THAT(error(j), HasSubstr("plan bucket #0: \"offsets\" must be an "
                                  "array of 5"));
  j = two;
  j["peak"] = "1";
  EXPECT_THAT(error(j), HasSubstr("a peak per bucket"));
}

// ---------------------------------------------------------------------------
// The tool.

TEST(SymbolicToolTest, PlansAndVerifiesOverTheRange) {
  const std::string graph = WriteTemp("attn.json", kAttention);
  const std::string plan = TempPath("attn_plan.json");
  testing::ToolRun run =
      RunTool("plan " + graph + " --alignment=64 --out=" + plan +
              " --at seq=7 --at seq=500");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("planner symbolic_search"));
  // The greedy alone, by name.
  testing::ToolRun greedy = RunTool("plan " + graph +
                                    " --alignment=64 "
                                    "--planner=symbolic_greedy --out=" +
                                    TempPath("attn_greedy.json"));
  ASSERT_EQ(greedy.exit_code, 0) << greedy.output;
  EXPECT_THAT(greedy.output, HasSubstr("planner symbolic_greedy"));
  EXPECT_THAT(run.output, HasSubstr("seq in [1, 2048], "));
  EXPECT_THAT(run.output, HasSubstr("seq in [1, "));
  EXPECT_THAT(run.output, HasSubstr(": peak "));
  EXPECT_THAT(run.output, HasSubstr("peak/LB"));
  EXPECT_THAT(run.output, HasSubstr("seq=500"));
  const std::string text = ReadText(plan);
  EXPECT_TRUE(IsSymbolicPlanJson(text));
  EXPECT_THAT(text, HasSubstr("\"input\""));  // provenance, as any plan
  // The plan file names its input: verify needs no INPUT nor flags.
  run = RunTool("verify " + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("valid plan of " + graph));
  EXPECT_THAT(run.output, HasSubstr("over seq in [1, 2048]"));
  run = RunTool("verify " + graph + " " + plan);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // At one value: the plan evaluated there, against the graph bound there.
  for (int seq : {1, 7, 2048}) {
    run = RunTool("verify " + graph + " " + plan +
                  " --dim seq=" + std::to_string(seq));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_THAT(run.output, HasSubstr("at seq=" + std::to_string(seq)));
  }
  // stdout holds the plan alone.
  run = RunToolStdout("plan " + graph + " --alignment=64 --buckets=1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(IsSymbolicPlanJson(run.output)) << run.output;
}

TEST(SymbolicToolTest, VerifyRefusesATamperedOffsetNamingAValue) {
  const std::string graph = WriteTemp("tamper.json", kAttention);
  const std::string plan = TempPath("tamper_plan.json");
  ASSERT_EQ(RunTool("plan " + graph + " --buckets=1 --out=" + plan).exit_code,
            0);
  Json j = Json::parse(ReadText(plan));
  ASSERT_FALSE(j.contains("buckets"));
  // k moved onto q, which is alive with it: they overlap from seq = 1 on.
  size_t q = 0, k = 0;
  for (size_t i = 0; i < j["buffers"].size(); ++i) {
    if (j["buffers"][i]["name"] == "q") q = i;
    if (j["buffers"][i]["name"] == "k") k = i;
  }
  j["buffers"][k]["offset"] = j["buffers"][q]["offset"];
  const std::string bad = WriteTemp("tamper_bad.json", j.dump());
  testing::ToolRun run = RunTool("verify " + graph + " " + bad);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("invalid plan"));
  EXPECT_THAT(run.output, HasSubstr("seq="));
  EXPECT_THAT(run.output, HasSubstr("\"q\""));
  run = RunTool("verify " + graph + " " + bad + " --dim seq=9");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("invalid plan at seq=9"));
  // k above q at small values only: its offset falls below q's top, then
  // below 0, inside the range.
  j = Json::parse(ReadText(plan));
  j["buffers"][q]["offset"] = "0";
  j["buffers"][k]["offset"] = "1024*seq - 512*seq*seq + 1048576";
  const std::string late = WriteTemp("tamper_late.json", j.dump());
  run = RunTool("verify " + graph + " " + late);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("seq="));
}

TEST(SymbolicToolTest, VerifyRefusesEditedSizes) {
  const std::string graph = WriteTemp("sizes.json", kAttention);
  const std::string plan = TempPath("sizes_plan.json");
  ASSERT_EQ(RunTool("plan " + graph + " --buckets=1 --out=" + plan).exit_code,
            0);
  Json j = Json::parse(ReadText(plan));
  for (Json& b : j["buffers"]) {
    if (b["name"] == "scores") b["size"] = "32*seq*seq";
  }
  const std::string bad = WriteTemp("sizes_bad.json", j.dump());
  testing::ToolRun run = RunTool("verify " + graph + " " + bad);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("buffer \"scores\": the plan's size is "
                                    "32*seq*seq"));
  // A bad expression names the buffer and the position.
  j = Json::parse(ReadText(plan));
  j["buffers"][0]["offset"] = "64*seq + + 1";
  const std::string garbled = WriteTemp("sizes_garbled.json", j.dump());
  run = RunTool("verify " + graph + " " + garbled);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("offset"));
  EXPECT_THAT(run.output, HasSubstr("position"));
}

TEST(SymbolicToolTest, VerifiesAPlanWithBuckets) {
  const std::string graph = WriteTemp("buckets.json", kAttention);
  const SymbolicGraphPlan two = TwoBuckets(AttentionPlan());
  const std::string plan =
      WriteTemp("buckets_plan.json", SymbolicPlanToJson(two));
  testing::ToolRun run = RunTool("verify " + graph + " " + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("2 buckets"));
  EXPECT_THAT(run.output, HasSubstr("seq in [65, 2048]: peak"));
  run = RunTool("verify " + graph + " " + plan + " --dim seq=100");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // A gap between the buckets is refused.
  Json j = Json::parse(SymbolicPlanToJson(two));
  j["buckets"][1]["dims"]["seq"]["min"] = 66;
  const std::string gap = WriteTemp("buckets_gap.json", j.dump());
  run = RunTool("verify " + graph + " " + gap);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("65"));
  run = RunTool("verify " + graph + " " + gap + " --dim seq=65");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("should start at 65"));
  // Overlapping buckets are refused at a value both hold, before the first
  // listed could be taken for it.
  j = Json::parse(SymbolicPlanToJson(two));
  j["buckets"][0]["dims"]["seq"]["max"] = 128;
  const std::string overlap = WriteTemp("buckets_overlap.json", j.dump());
  run = RunTool("verify " + graph + " " + overlap + " --dim seq=100");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("invalid plan: bucket [65, 2048]"));
  EXPECT_THAT(run.output, HasSubstr("should start at 129"));
}

TEST(SymbolicToolTest, PlansWithBucketsOnATransformer) {
  const Graph g = internal::SymbolicTransformer(
      {.layers = 1, .width = 64, .heads = 4, .max_seq = 2048});
  const std::string graph = WriteTemp("transformer.json", GraphToJson(g));
  const std::string plan = TempPath("transformer_plan.json");
  testing::ToolRun run =
      RunTool("plan " + graph + " --alignment=64 --buckets=4 --out=" + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Json j = Json::parse(ReadText(plan));
  const size_t buckets = j.contains("buckets") ? j["buckets"].size() : 1;
  EXPECT_LE(buckets, 4u);
  run = RunTool("verify " + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr(std::to_string(buckets) +
                                    (buckets == 1 ? " bucket" : " buckets")));
  for (int seq : {1, 300, 2048}) {
    run = RunTool("verify " + plan + " --dim seq=" + std::to_string(seq));
    EXPECT_EQ(run.exit_code, 0) << run.output;
  }
  // The baseline: the plan at the maxima, the same peak everywhere.
  run = RunTool("plan " + graph +
                " --alignment=64 --planner=upper_bound --out=" + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("planner upper_bound"));
  run = RunTool("verify " + plan);
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

// Two dims, one of them bound by --dim: a plan over the other.
constexpr char kTwoDims[] = R"({"format": "memplan-graph-v1", "name": "two",
 "dims": {"batch": {"min": 1, "max": 8}, "seq": {"min": 1, "max": 64}},
 "tensors": [{"name": "x", "size": "64*batch*seq", "kind": "input"},
             {"name": "h", "size": "128*batch*seq"},
             {"name": "s", "size": "4*batch*seq*seq"},
             {"name": "out", "size": "64*batch", "kind": "output"}],
 "ops": [{"name": "a", "inputs": ["x"], "outputs": ["h"]},
         {"name": "b", "inputs": ["h"], "outputs": ["s"]},
         {"name": "c", "inputs": ["s"], "outputs": ["out"]}]})";

TEST(SymbolicToolTest, TwoDimsAndPartialBindings) {
  const std::string graph = WriteTemp("two.json", kTwoDims);
  const std::string all = TempPath("two_all.json");
  testing::ToolRun run =
      RunTool("plan " + graph + " --out=" + all + " --at batch=2");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("batch=2, seq=64"));
  run = RunTool("verify " + all);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("over batch in [1, 8], seq in [1, 64]"));
  run = RunTool("verify " + all + " --dim batch=3 --dim seq=17");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("at batch=3, seq=17"));
  run = RunTool("verify " + all + " --dim batch=3");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("dim \"batch\" is not a dim of the graph "
                                    "as read"));
  // Planned with batch bound: a plan over seq, checked with the same binding.
  const std::string four = TempPath("two_batch4.json");
  run = RunTool("plan " + graph + " --dim batch=4 --out=" + four);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("seq in [1, 64], "));
  run = RunTool("verify " + four + " --dim batch=4");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("over seq in [1, 64]"));
  run = RunTool("verify " + four);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("a plan made with --dim batch=N is "
                                    "checked with the same binding"));
  // Bound to another batch, the sizes differ: named.
  run = RunTool("verify " + four + " --dim batch=5");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("the plan's size is"));
}

TEST(SymbolicToolTest, WritesTheCHeaderOfMacrosOfTheDims) {
  const std::string graph = WriteTemp("header.json", kAttention);
  const std::string header = TempPath("attn_plan.h");
  testing::ToolRun run =
      RunTool("plan " + graph + " --alignment=64 --out=" + header);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string text = ReadText(header);
  EXPECT_THAT(text, HasSubstr("#define MEMPLAN_ARENA_SIZE(seq)"));
  EXPECT_THAT(text, HasSubstr("#define MEMPLAN_SCORES_OFFSET(seq)"));
  run = RunToolStdout("plan " + graph + " --format=c-header");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("#define MEMPLAN_ARENA_SIZE(seq)"));
}

#ifdef MEMPLAN_HAVE_ONNX
TEST(SymbolicToolTest, OnnxDimParamsGivenARangeArePlannedOverIt) {
  const std::string model =
      testing::DataPath("onnx/transformer_encoder_opset17.onnx");
  const std::string dims = " --dim sequence=1:2048 --dim batch=1";
  testing::ToolRun run = RunTool("stats " + model + dims);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("lower bound"));
  EXPECT_THAT(run.output, HasSubstr("sequence"));
  const std::string plan = TempPath("encoder_plan.json");
  run = RunTool("plan " + model + dims + " --alignment=64 --out=" + plan);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(IsSymbolicPlanJson(ReadText(plan)));
  run = RunTool("verify " + model + " " + plan + dims + " --alignment=64");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("over sequence in [1, 2048]"));
  run = RunTool("report " + model + dims);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("sequence"));
}
#endif

// The symbolic planners through the tool: listed by `memplan planners` in a
// section of their own, their options given with --option and checked by
// the registry, their effort bounded by --work-limit and --time-limit.
TEST(SymbolicToolTest, SymbolicPlannersByNameWithOptionsAndLimits) {
  testing::ToolRun run = RunTool("planners");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("planners of graphs with dims"));
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    EXPECT_THAT(run.output, HasSubstr(std::string(info.name) + " "));
  }
  run = RunTool("planners symbolic_search");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("  seed=int (default 1)"));
  const std::string graph = WriteTemp("options.json", kAttention);
  const std::string seeded = TempPath("options_seed.json");
  // Options are checked before the input is read: they name the planner.
  run = RunTool("plan " + graph +
                " --planner=symbolic_search --option seed=1 --out=" + seeded);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string plain = TempPath("options_plain.json");
  ASSERT_EQ(RunTool("plan " + graph + " --out=" + plain).exit_code, 0);
  EXPECT_EQ(ReadText(seeded), ReadText(plain));  // seed 1 is the default
  run = RunTool("plan " + graph + " --planner=symbolic_search --option nope=1");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--option: "));
  EXPECT_THAT(run.output, HasSubstr("nope"));
  run = RunTool("plan " + graph + " --planner=symbolic_greedy --option seed=2");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  // Limits: a plan within them, verified as any other.
  for (const char* limit : {"--work-limit=1", "--time-limit=0.001"}) {
    const std::string out = TempPath("options_limited.json");
    run = RunTool("plan " + graph + " " + limit + " --out=" + out);
    ASSERT_EQ(run.exit_code, 0) << limit << ": " << run.output;
    run = RunTool("verify " + graph + " " + out);
    EXPECT_EQ(run.exit_code, 0) << limit << ": " << run.output;
  }
  run = RunTool("report " + graph + " --time-limit=0.001");
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

TEST(SymbolicToolTest, ClearErrors) {
  const std::string graph = WriteTemp("errors.json", kAttention);
  testing::ToolRun run = RunTool("plan " + graph + " --planner=greedy_by_size");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("symbolic_search (the default), "
                                    "symbolic_greedy or upper_bound"));
  run = RunTool("plan " + graph + " --out=" + TempPath("errors.csv"));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("is written as .json or .h"));
  run = RunTool("plan " + graph + " --buckets=0");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  run = RunTool("plan " + graph + " --at seq=5000");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--at=seq=5000"));
  // An ordinary plan of the graph at one value, checked over the range.
  const std::string at7 = TempPath("errors_at7.json");
  ASSERT_EQ(RunTool("plan " + graph + " --dim seq=7 --out=" + at7).exit_code,
            0);
  run = RunTool("verify " + graph + " " + at7);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("plan at one value of the dims"));
  EXPECT_THAT(run.output, HasSubstr("--dim seq=N"));
  run = RunTool("verify " + graph + " " + at7 + " --dim seq=7");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  // The symbolic flags and planners with a graph that has no dims left.
  run = RunTool("plan " + graph + " --dim seq=7 --buckets=2");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("--buckets applies to a graph with dims"));
  run = RunTool("plan " + graph + " --dim seq=7 --planner=symbolic_greedy");
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("plans graphs with dims only"));
  // A symbolic plan (recording no input) against a graph without dims.
  const std::string plan =
      WriteTemp("errors_plan.json", SymbolicPlanToJson(AttentionPlan()));
  const std::string bound = TempPath("errors_bound.json");
  ASSERT_EQ(RunTool("plan " + graph + " --dim seq=7 --out=" +
                    TempPath("errors_x.json") + " --graph-out=" + bound)
                .exit_code,
            0);
  run = RunTool("verify " + bound + " " + plan);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("is a plan over dims, and " + bound + " has none"));
  EXPECT_THAT(run.output, Not(HasSubstr("valid plan")));
}

}  // namespace
}  // namespace memplan
