// The C header of a symbolic plan, compiled as a C99 user compiles it and
// run at several values of its dim, against SymbolicGraphPlan::At().

#include "memplan/emit.h"

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"
#include "test_util.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

using ::memplan::testing::OffsetMacros;

std::string Temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("memplan_emit_test_" + std::to_string(getpid()) + "_" + name))
      .string();
}

// Runs `command`; its output, and whether it exited 0.
bool Run(const std::string& command, std::string* output) {
  output->clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return false;
  char chunk[4096];
  size_t n = 0;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0) {
    output->append(chunk, n);
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The macros' arguments at `values`: the dims' values in name order.
std::string Arguments(const DimValues& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    out += (out.empty() ? "" : ", ") + std::to_string(value);
  }
  return out;
}

// Compiles a program that includes `header` and prints, at each of
// `points`, every offset macro and the arena size there, one per line.
std::string CompileAndRun(const std::string& header,
                          const std::vector<std::string>& macros,
                          const std::vector<DimValues>& points,
                          const std::string& name) {
  const std::string h = Temp(name + ".h"), c = Temp(name + ".c"),
                    exe = Temp(name + ".exe");
  std::ofstream(h) << header;
  std::ofstream program(c);
  program << "#include \"" << h << "\"\n#include <stdio.h>\n"
          << "#include <inttypes.h>\n"
          << "static void print(const int64_t offsets[], size_t n, "
          << "int64_t arena) {\n"
          << "  size_t i;\n  for (i = 0; i < n; ++i)\n"
          << "    printf(\"%\" PRId64 \"\\n\", offsets[i]);\n"
          << "  printf(\"arena %\" PRId64 \"\\n\", arena);\n"
          << "}\nint main(void) {\n";
  for (const DimValues& point : points) {
    const std::string args = Arguments(point);
    program << "  {\n    const int64_t offsets[] = {\n";
    for (const std::string& m : macros) {
      program << "      " << m << "(" << args << "),\n";
    }
    program << "    };\n    print(offsets, sizeof offsets / sizeof "
            << "offsets[0], MEMPLAN_ARENA_SIZE(" << args << "));\n  }\n";
  }
  program << "  return 0;\n}\n";
  program.close();
  std::string output;
  if (!Run(std::string(MEMPLAN_TEST_CC) +
               " -std=c99 -Wall -Wextra -Werror -pedantic -o " + exe + " " + c,
           &output)) {
    ADD_FAILURE() << "the header does not compile:\n"
                  << output << "\n"
                  << header;
    return "";
  }
  EXPECT_TRUE(Run(exe, &output)) << output;
  return output;
}

// What the program should print: SymbolicGraphPlan::At() at each point, in
// the graph's tensor order (-1 when not planned), and the bucket's peak.
std::string Expected(const SymbolicGraphPlan& plan, const Graph& graph,
                     const std::vector<DimValues>& points) {
  std::string want;
  for (const DimValues& at : points) {
    absl::StatusOr<GraphPlan> bound = plan.At(graph, at);
    EXPECT_TRUE(bound.ok()) << bound.status();
    if (!bound.ok()) return "";
    EXPECT_TRUE(VerifyPlan(bound->problem, bound->plan).ok());
    for (const TensorPlacement& t : bound->tensors) {
      want += std::to_string(t.planned() ? t.offset : -1) + "\n";
    }
    const SymbolicBucket* bucket = plan.Find(at);
    EXPECT_NE(bucket, nullptr);
    if (bucket == nullptr) return "";
    absl::StatusOr<int64_t> peak = bucket->PeakAt(at);
    EXPECT_TRUE(peak.ok());
    // The arena holds every buffer there.
    EXPECT_GE(*peak, bound->plan.peak);
    want += "arena " + std::to_string(*peak) + "\n";
  }
  return want;
}

std::vector<DimValues> SeqPoints(const std::vector<int64_t>& values) {
  std::vector<DimValues> points;
  for (int64_t v : values) points.push_back({{"seq", v}});
  return points;
}

// The header of `plan` compiles and gives At()'s offsets and the peak at
// the ends, the cuts and their neighbours, and values between.
void CheckHeaderOf(const SymbolicGraphPlan* plan, const Graph& graph,
                   const std::string& name) {
  const std::string header =
      SymbolicPlanToCHeader(*plan, graph, graph.name, "memplan");
  const std::vector<std::string> macros = OffsetMacros(header);
  ASSERT_EQ(macros.size(), graph.tensors.size()) << header;
  EXPECT_THAT(header, HasSubstr("#define MEMPLAN_ARENA_SIZE(seq) "));
  EXPECT_THAT(header, HasSubstr(" * dim seq: [1, 600]\n"));
  EXPECT_THAT(header, HasSubstr("#define MEMPLAN_DIM_SEQ_MAX INT64_C(600)"));
  EXPECT_THAT(header, HasSubstr("*(int64_t)(seq)"));
  if (plan->buckets.size() > 1) {
    EXPECT_THAT(header, HasSubstr(" buckets, cut on seq: [1, "));
    EXPECT_THAT(header, HasSubstr("(int64_t)(seq) <= INT64_C("));
  } else {
    EXPECT_THAT(header, HasSubstr("One bucket"));
  }
  // The ends, the cuts and their neighbours, and values between.
  std::vector<int64_t> values = {1, 2, 3, 7, 64, 100, 333, 500, 599, 600};
  for (const SymbolicBucket& b : plan->buckets) {
    values.push_back(b.dims.at("seq").min);
    values.push_back(b.dims.at("seq").max);
  }
  EXPECT_EQ(CompileAndRun(header, macros, SeqPoints(values), name),
            Expected(*plan, graph, SeqPoints(values)));
}

void CheckHeader(const Graph& graph, int max_buckets, int want_buckets) {
  SymbolicPlanMemoryOptions options;
  options.max_buckets = max_buckets;
  options.target_ratio = 1.0;  // cut whenever cutting helps
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(graph, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  if (want_buckets == 1) {
    ASSERT_EQ(plan->buckets.size(), 1u);
  } else {
    ASSERT_GE(plan->buckets.size(), 2u);
  }
  CheckHeaderOf(&*plan, graph, "transformer" + std::to_string(max_buckets));
}

TEST(SymbolicCHeaderTest, OneBucketCompilesAndCarriesThePlan) {
  CheckHeader(
      internal::SymbolicTransformer(
          {.layers = 2, .width = 64, .heads = 2, .min_seq = 1, .max_seq = 600}),
      1, 1);
}

TEST(SymbolicCHeaderTest, BucketsCompileAndCarryThePlan) {
  CheckHeader(
      internal::SymbolicTransformer(
          {.layers = 2, .width = 64, .heads = 2, .min_seq = 1, .max_seq = 600}),
      4, 2);
}

// A bucket counted in steps: its macros take seq / step and seq % step,
// and give At()'s offsets at every value.
TEST(SymbolicCHeaderTest, StepsCompileAndCarryThePlan) {
  const Graph graph = internal::SymbolicTransformer(
      {.layers = 2, .width = 64, .heads = 2, .min_seq = 1, .max_seq = 600});
  BuildOptions build;
  build.alignment = 64;
  absl::StatusOr<SymbolicGraphPlan> plan =
      PlanSymbolicMemory(graph, {.build = build, .max_buckets = 1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  SymbolicBucket low = plan->buckets[0];
  low.dims["seq"] = {1, 64};
  SymbolicBucket high{.dims = low.dims, .steps = {{"seq", 4}}};
  high.dims["seq"] = {65, 600};
  absl::StatusOr<SymbolicProblem> stepped = high.ProblemOf(plan->problem);
  ASSERT_TRUE(stepped.ok()) << stepped.status();
  absl::StatusOr<SymbolicPlan> high_plan = PlanSymbolicGreedy(*stepped);
  ASSERT_TRUE(high_plan.ok()) << high_plan.status();
  high.plan = *high_plan;
  plan->buckets = {low, high};
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  const std::string header =
      SymbolicPlanToCHeader(*plan, graph, graph.name, "memplan");
  EXPECT_THAT(header, HasSubstr("seq counted in steps of 4 (seq_div = seq / "
                                "4, seq_mod = seq % 4)"));
  EXPECT_THAT(header, HasSubstr("*(int64_t)((int64_t)(seq) / INT64_C(4))"));
  EXPECT_THAT(header, HasSubstr("*(int64_t)((int64_t)(seq) % INT64_C(4))"));
  CheckHeaderOf(&*plan, graph, "transformer_steps");
}

// Names as the ordinary header makes them; a dim named as a C keyword is
// renamed as a parameter; a tensor not planned is -1.
TEST(SymbolicCHeaderTest, NamesAndUnplannedTensors) {
  Graph g;
  g.name = "odd";
  g.dims = {{"int", {1, 8}}};
  g.tensors = {{.name = "in",
                .kind = TensorKind::kInput,
                .symbolic_size = *DimExpr::Parse("16*int")},
               {.name = "w", .size = 32, .kind = TensorKind::kConstant},
               {.name = "a.b", .symbolic_size = *DimExpr::Parse("int*int")},
               {.name = "x*/y", .size = 16, .kind = TensorKind::kOutput}};
  g.ops = {{.name = "op*/0", .inputs = {"in", "w"}, .outputs = {"a.b"}},
           {.name = "op1", .inputs = {"a.b"}, .outputs = {"x*/y"}}};
  absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(g);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  const std::string header = SymbolicPlanToCHeader(*plan, g, "odd");
  EXPECT_THAT(header,
              HasSubstr("#define MEMPLAN_W_OFFSET(dimint) (INT64_C(-1))"));
  EXPECT_THAT(header, HasSubstr("#define MEMPLAN_A_B_OFFSET(dimint) "));
  EXPECT_THAT(header, HasSubstr("#define MEMPLAN_X_Y_OFFSET(dimint) "));
  EXPECT_THAT(header, HasSubstr("\"a.b\": activation, int*int bytes, alive "
                                "steps [0, 2): op* /0 .. op1"));
  EXPECT_THAT(header, ::testing::Not(HasSubstr("x*/y")));
  const std::vector<std::string> macros = OffsetMacros(header);
  ASSERT_EQ(macros.size(), 4u);
  const std::vector<DimValues> points = {
      {{"int", 1}}, {{"int", 5}}, {{"int", 8}}};
  EXPECT_EQ(CompileAndRun(header, macros, points, "odd"),
            Expected(*plan, g, points));
}

// Two dims: the macros take them in name order, and the values at every
// point of a grid are the plan's.
TEST(SymbolicCHeaderTest, TwoDims) {
  Graph g;
  g.name = "batched";
  g.dims = {{"seq", {1, 100}}, {"batch", {1, 6}}};
  auto size = [](const char* text) { return *DimExpr::Parse(text); };
  // The scores (seq*seq) outgrow the MLP's activations (seq) inside the
  // range, and x and r live across both: a case for buckets.
  g.tensors = {{.name = "x",
                .kind = TensorKind::kInput,
                .symbolic_size = size("64*batch*seq")},
               {.name = "scores", .symbolic_size = size("4*batch*seq*seq")},
               {.name = "r", .symbolic_size = size("64*batch*seq")},
               {.name = "h", .symbolic_size = size("256*batch*seq + 32")},
               {.name = "y",
                .kind = TensorKind::kOutput,
                .symbolic_size = size("64*batch*seq")}};
  g.ops = {{.name = "attend", .inputs = {"x"}, .outputs = {"scores"}},
           {.name = "mix", .inputs = {"x", "scores"}, .outputs = {"r"}},
           {.name = "up", .inputs = {"r"}, .outputs = {"h"}},
           {.name = "out", .inputs = {"h", "x", "r"}, .outputs = {"y"}}};
  for (const int buckets : {1, 4}) {
    SymbolicPlanMemoryOptions options;
    options.max_buckets = buckets;
    options.target_ratio = 1.0;
    absl::StatusOr<SymbolicGraphPlan> plan = PlanSymbolicMemory(g, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
    if (buckets > 1) EXPECT_GE(plan->buckets.size(), 2u);
    const std::string header = SymbolicPlanToCHeader(*plan, g, "batched");
    EXPECT_THAT(header, HasSubstr("#define MEMPLAN_ARENA_SIZE(batch, seq) "));
    EXPECT_THAT(header,
                HasSubstr(" * dim batch: [1, 6]\n * dim seq: [1, 100]"));
    const std::vector<std::string> macros = OffsetMacros(header);
    ASSERT_EQ(macros.size(), 5u);
    std::vector<DimValues> points;
    for (int64_t batch = 1; batch <= 6; ++batch) {
      for (int64_t seq :
           {1, 2, 3, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 99, 100}) {
        points.push_back({{"batch", batch}, {"seq", seq}});
      }
    }
    const std::string name = "batched" + std::to_string(buckets);
    EXPECT_EQ(CompileAndRun(header, macros, points, name),
              Expected(*plan, g, points));
  }
}

}  // namespace
}  // namespace memplan
