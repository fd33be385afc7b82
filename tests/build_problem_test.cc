// BuildProblem: lifetimes, hints, options, bounds and bad input.

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "model/conflict_graph.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr TensorKind kIn = TensorKind::kInput;
constexpr TensorKind kOut = TensorKind::kOutput;
constexpr TensorKind kConst = TensorKind::kConstant;

const Buffer& Find(const Problem& problem, const std::string& name) {
  for (const Buffer& b : problem.buffers) {
    if (std::find(b.tensors.begin(), b.tensors.end(), name) != b.tensors.end())
      return b;
  }
  ADD_FAILURE() << "no buffer holds " << name;
  static const Buffer kNone;
  return kNone;
}

bool Planned(const Problem& problem, const std::string& name) {
  for (const Buffer& b : problem.buffers) {
    if (std::find(b.tensors.begin(), b.tensors.end(), name) != b.tensors.end())
      return true;
  }
  return false;
}

// x -> op0 -> a -> op1 -> b -> op2 -> y, with w a constant read by op1 and
// x also read by op2.
Graph Chain() {
  return Graph{
      .name = "chain",
      .tensors = {{.name = "x", .size = 10, .kind = kIn},
                  {.name = "w", .size = 7, .kind = kConst},
                  {.name = "a", .size = 20},
                  {.name = "b", .size = 30},
                  {.name = "y", .size = 40, .kind = kOut}},
      .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
              {.name = "op1", .inputs = {"a", "w"}, .outputs = {"b"}},
              {.name = "op2", .inputs = {"b", "x"}, .outputs = {"y"}}},
  };
}

TEST(BuildProblemTest, LifetimesFollowProducersAndLastReaders) {
  absl::StatusOr<Problem> problem = BuildProblem(Chain());
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(Find(*problem, "x").lifetime,
            (Lifetime{0, 3}));  // input from 0 to its last reader
  EXPECT_EQ(Find(*problem, "a").lifetime, (Lifetime{0, 2}));
  EXPECT_EQ(Find(*problem, "b").lifetime, (Lifetime{1, 3}));
  EXPECT_EQ(Find(*problem, "y").lifetime,
            (Lifetime{2, 3}));           // output to the end
  EXPECT_FALSE(Planned(*problem, "w"));  // constants are not planned by default
  EXPECT_EQ(problem->buffers.size(), 4u);
  EXPECT_EQ(NaiveTotal(*problem), 100);
  EXPECT_EQ(LowerBound(*problem), 10 + 30 + 40);  // step 2: x, b, y
}

TEST(BuildProblemTest, OptionsPlanConstantsAndSkipInputsAndOutputs) {
  absl::StatusOr<Problem> problem = BuildProblem(
      Chain(),
      {.plan_inputs = false, .plan_outputs = false, .plan_constants = true});
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_FALSE(Planned(*problem, "x"));
  EXPECT_FALSE(Planned(*problem, "y"));
  // A constant without producer lives from step 0 to its last reader.
  EXPECT_EQ(Find(*problem, "w").lifetime, (Lifetime{0, 2}));
}

TEST(BuildProblemTest, UnreadOutputsOfAnOpLiveOneStep) {
  Graph graph{
      .tensors = {{.name = "x", .size = 1, .kind = kIn},
                  {.name = "a", .size = 2},
                  {.name = "unused", .size = 3},
                  {.name = "y", .size = 4, .kind = kOut}},
      .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a", "unused"}},
              {.name = "op1", .inputs = {"a"}, .outputs = {"y"}},
              {.name = "op2", .inputs = {}, .outputs = {}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(Find(*problem, "unused").lifetime, (Lifetime{0, 1}));
  EXPECT_EQ(Find(*problem, "y").lifetime,
            (Lifetime{1, 3}));  // until step N = 3
}

TEST(BuildProblemTest, ScratchLivesDuringItsOp) {
  Graph graph = Chain();
  graph.tensors.push_back(
      {.name = "ws", .size = 64, .kind = TensorKind::kScratch});
  graph.ops[1].scratch = {"ws"};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(Find(*problem, "ws").lifetime, (Lifetime{1, 2}));
}

TEST(BuildProblemTest, InPlaceMergesWhenTheInputDiesAtTheOp) {
  Graph graph = Chain();
  graph.tensors[3].size = 20;                          // b is no larger than a
  graph.ops[1].inplace = {{.output = 0, .input = 0}};  // b may reuse a
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Buffer& merged = Find(*problem, "b");
  EXPECT_THAT(merged.tensors, ElementsAre("a", "b"));
  EXPECT_EQ(merged.name, "a");
  EXPECT_EQ(merged.size, 20);
  EXPECT_EQ(merged.lifetime, (Lifetime{0, 3}));
  EXPECT_EQ(problem->buffers.size(), 3u);
}

TEST(BuildProblemTest, InPlaceIsIgnoredWhenItWouldBeWrong) {
  {  // the output is larger than the input
    Graph graph = Chain();
    graph.ops[1].inplace = {{.output = 0, .input = 0}};
    EXPECT_EQ(BuildProblem(graph)->buffers.size(), 4u);
  }
  {  // the input is read again later
    Graph graph = Chain();
    graph.tensors[3].size = 5;
    graph.ops[2].inputs.push_back("a");
    graph.ops[1].inplace = {{.output = 0, .input = 0}};
    EXPECT_EQ(BuildProblem(graph)->buffers.size(), 4u);
  }
  {  // the input is a graph input
    Graph graph = Chain();
    graph.tensors[2].size = 5;
    graph.ops[2].inputs = {"b"};  // x dies at op0
    graph.ops[0].inplace = {{.output = 0, .input = 0}};
    absl::StatusOr<Problem> problem = BuildProblem(graph);
    ASSERT_TRUE(problem.ok()) << problem.status();
    EXPECT_THAT(Find(*problem, "a").tensors, ElementsAre("a"));
  }
}

TEST(BuildProblemTest, AliasSharesTheBaseOverBothLifetimes) {
  // a -> view v (reshape) read by op2; a itself dies at op1.
  Graph graph{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                          {.name = "a", .size = 100},
                          {.name = "v", .size = 100},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
                      {.name = "view",
                       .inputs = {"a"},
                       .outputs = {"v"},
                       .alias = {{.output = 0, .input = 0}}},
                      {.name = "op2", .inputs = {"v"}, .outputs = {"y"}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Buffer& shared = Find(*problem, "v");
  EXPECT_THAT(shared.tensors, ElementsAre("a", "v"));
  EXPECT_EQ(shared.lifetime, (Lifetime{0, 3}));
  EXPECT_EQ(shared.size, 100);
}

TEST(BuildProblemTest, AViewOfAnUnplannedConstantIsNotPlanned) {
  Graph graph{.tensors = {{.name = "w", .size = 8, .kind = kConst},
                          {.name = "wt", .size = 8},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "t",
                       .inputs = {"w"},
                       .outputs = {"wt"},
                       .alias = {{.output = 0, .input = 0}}},
                      {.name = "use", .inputs = {"wt"}, .outputs = {"y"}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_FALSE(Planned(*problem, "wt"));
  EXPECT_TRUE(Planned(*problem, "y"));
}

TEST(BuildProblemTest, AlignmentRoundsSizesAndTensorAlignmentWins) {
  Graph graph = Chain();
  graph.tensors[2].alignment = 128;
  absl::StatusOr<Problem> problem = BuildProblem(graph, {.alignment = 16});
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(Find(*problem, "x").size, 16);
  EXPECT_EQ(Find(*problem, "x").alignment, 16);
  EXPECT_EQ(Find(*problem, "a").size, 128);
  EXPECT_EQ(Find(*problem, "a").alignment, 128);
  EXPECT_EQ(NaiveTotal(*problem), 16 + 128 + 32 + 48);
}

TEST(BuildProblemTest, PoolsConflictsAndFixedPlacements) {
  Graph graph = Chain();
  graph.pools = {{.name = "sram", .capacity = 64, .alignment = 4},
                 {.name = "dram", .capacity = 0, .alignment = 64}};
  graph.tensors[2].pools = {"dram", "sram"};
  graph.tensors[4].fixed = FixedTensorPlacement{.pool = "dram", .offset = 128};
  graph.conflicts = {
      {.a = "y", .b = "x"}, {.a = "x", .b = "y"}, {.a = "w", .b = "x"}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_EQ(problem->pools.size(), 2u);
  EXPECT_THAT(Find(*problem, "a").pools, ElementsAre(1, 0));
  EXPECT_TRUE(Find(*problem, "x").pools.empty());
  EXPECT_EQ(Find(*problem, "y").fixed, (Placement{.pool = 1, .offset = 128}));
  // The duplicate is merged and the conflict with an unplanned constant
  // dropped.
  ASSERT_EQ(problem->conflicts.size(), 1u);
  const BufferConflict& c = problem->conflicts[0];
  EXPECT_EQ(problem->buffers[c.a].name, "x");
  EXPECT_EQ(problem->buffers[c.b].name, "y");
  EXPECT_THAT(AllowedPools(*problem, 0), ElementsAre(0, 1));
  EXPECT_EQ(EffectiveAlignment(*problem, 0, 1), 64);
}

TEST(BuildProblemTest, CapacityOptionSetsTheDefaultPool) {
  absl::StatusOr<Problem> problem = BuildProblem(Chain(), {.capacity = 4096});
  ASSERT_TRUE(problem.ok()) << problem.status();
  ASSERT_EQ(problem->pools.size(), 1u);
  EXPECT_EQ(problem->pools[0].name, "default");
  EXPECT_EQ(problem->pools[0].capacity, 4096);
}

TEST(BuildProblemTest, AnEmptyGraphIsAnEmptyProblem) {
  absl::StatusOr<Problem> problem = BuildProblem(Graph{});
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_TRUE(problem->buffers.empty());
  EXPECT_EQ(LowerBound(*problem), 0);
  EXPECT_EQ(NaiveTotal(*problem), 0);
}

// The seed notebook's model: the figures its README derives.
TEST(BuildProblemTest, SeedModelTotalsAndBounds) {
  absl::StatusOr<Problem> with = testing::LoadProblem(
      "seed/seed000_model.json", {.plan_constants = true, .alignment = 4});
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(NaiveTotal(*with), 728132);
  EXPECT_EQ(LowerBound(*with), 697888);
  absl::StatusOr<Problem> without =
      testing::LoadProblem("seed/seed000_model.json");
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->buffers.size(), 8u);
  EXPECT_EQ(NaiveTotal(*without), 34168);
  EXPECT_EQ(LowerBound(*without), 27040);
}

std::map<std::string, std::pair<int64_t, int64_t>> ReadSummary(
    const std::string& path, const std::string& naive_col,
    const std::string& bound_col) {
  std::ifstream in(testing::DataPath(path));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = absl::StrSplit(line, ',');
  const auto col = [&](const std::string& name) {
    return std::find(header.begin(), header.end(), name) - header.begin();
  };
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    int64_t naive = 0, bound = 0;
    if (f.size() != header.size() ||
        !absl::SimpleAtoi(f[col(naive_col)], &naive) ||
        !absl::SimpleAtoi(f[col(bound_col)], &bound)) {
      continue;
    }
    out[f[0]] = {naive, bound};
  }
  return out;
}

// Every bundled model graph gives the naive total and max-live bound its
// data README publishes (computed there independently from the CSVs).
TEST(BuildProblemTest, BundledModelsMatchThePublishedTotals) {
  const auto summary =
      ReadSummary("models/summary.csv", "naive_bytes", "max_live_bytes");
  ASSERT_EQ(summary.size(), testing::ModelGraphs().size());
  for (const std::string& path : testing::ModelGraphs()) {
    SCOPED_TRACE(path);
    absl::StatusOr<LoadedInput> graph = LoadInput(testing::DataPath(path), {});
    ASSERT_TRUE(graph.ok()) << graph.status();
    const std::string name = graph->graph->name;
    ASSERT_TRUE(summary.contains(name));
    EXPECT_EQ(NaiveTotal(graph->problem), summary.at(name).first);
    EXPECT_EQ(LowerBound(graph->problem), summary.at(name).second);
    // The CSV next to the graph describes the same buffers.
    std::string csv_path = path.substr(0, path.size() - 5) + ".csv";
    absl::StatusOr<Problem> csv = testing::LoadProblem(csv_path);
    ASSERT_TRUE(csv.ok()) << csv.status();
    ASSERT_EQ(csv->buffers.size(), graph->problem.buffers.size());
    for (size_t b = 0; b < csv->buffers.size(); ++b) {
      EXPECT_EQ(csv->buffers[b].lifetime, graph->problem.buffers[b].lifetime)
          << b;
      EXPECT_EQ(csv->buffers[b].size, graph->problem.buffers[b].size) << b;
    }
  }
}

TEST(BuildProblemTest, TrainingGraphsMergeViewsAndKeepTheBound) {
  const auto summary =
      ReadSummary("training/summary.csv", "naive_bytes", "max_live_bytes");
  for (const std::string& path : testing::TrainingGraphs()) {
    SCOPED_TRACE(path);
    absl::StatusOr<Problem> graph = testing::LoadProblem(path);
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<Problem> csv =
        testing::LoadProblem(path.substr(0, path.size() - 5) + ".csv");
    ASSERT_TRUE(csv.ok()) << csv.status();
    // Views share their base, so the graph has fewer buffers and bytes than
    // the CSV, which keeps one buffer per tensor.
    EXPECT_LE(graph->buffers.size(), csv->buffers.size());
    EXPECT_LE(NaiveTotal(*graph), NaiveTotal(*csv));
    const std::string name = path.substr(9, path.size() - 14);
    if (summary.contains(name)) {
      EXPECT_EQ(NaiveTotal(*csv), summary.at(name).first);
      EXPECT_EQ(LowerBound(*csv), summary.at(name).second);
    }
  }
}

TEST(ConflictGraphTest, SweepAgreesWithAllPairs) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Problem problem = testing::RandomProblem(
        seed, {.buffers = 60, .horizon = 30, .explicit_conflicts = 6});
    const ConflictGraph graph = ConflictGraph::Build(problem);
    ASSERT_EQ(graph.size(), 60);
    int64_t edges = 0;
    for (BufferId a = 0; a < 60; ++a) {
      for (BufferId b = 0; b < 60; ++b) {
        if (a == b) continue;
        bool expected =
            Overlaps(problem.buffers[a].lifetime, problem.buffers[b].lifetime);
        for (const BufferConflict& c : problem.conflicts) {
          expected |= (c.a == a && c.b == b) || (c.a == b && c.b == a);
        }
        EXPECT_EQ(graph.Conflict(a, b), expected)
            << seed << ": " << a << " " << b;
        edges += expected;
      }
    }
    EXPECT_EQ(graph.num_edges(), edges / 2);
  }
}

TEST(ConflictGraphTest, TouchingLifetimesDoNotConflict) {
  Problem problem{
      .buffers = {Buffer{.name = "a", .size = 1, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 1, .lifetime = {2, 4}},
                  Buffer{.name = "c", .size = 1, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "default"}}};
  const ConflictGraph graph = ConflictGraph::Build(problem);
  EXPECT_FALSE(graph.Conflict(0, 1));
  EXPECT_TRUE(graph.Conflict(0, 2));
  EXPECT_TRUE(graph.Conflict(1, 2));
  EXPECT_THAT(graph.neighbors(2), ElementsAre(0, 1));
}

// ---------------------------------------------------------------------------
// Bad input: an InvalidArgument that names the culprit.

void ExpectInvalid(const Graph& graph, const std::string& culprit,
                   const BuildOptions& options = {}) {
  absl::StatusOr<Problem> problem = BuildProblem(graph, options);
  ASSERT_FALSE(problem.ok()) << "expected an error naming " << culprit;
  EXPECT_EQ(problem.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(problem.status().message()), HasSubstr(culprit));
}

TEST(BuildProblemErrorsTest, ReadingATensorNoEarlierOpProduced) {
  Graph graph = Chain();
  std::swap(graph.ops[0], graph.ops[1]);  // op1 now reads a before op0 makes it
  ExpectInvalid(graph, "\"a\"");
}

TEST(BuildProblemErrorsTest, ATensorProducedTwice) {
  Graph graph = Chain();
  graph.ops[1].outputs.push_back("a");
  ExpectInvalid(graph, "\"a\" is produced twice");
}

TEST(BuildProblemErrorsTest, DuplicateNames) {
  Graph tensors = Chain();
  tensors.tensors.push_back({.name = "b", .size = 1});
  ExpectInvalid(tensors, "tensor \"b\" is defined twice");
  Graph ops = Chain();
  ops.ops[2].name = "op0";
  ExpectInvalid(ops, "op \"op0\" is defined twice");
}

TEST(BuildProblemErrorsTest, UnknownTensorsInAnOp) {
  Graph input = Chain();
  input.ops[1].inputs.push_back("ghost");
  ExpectInvalid(input, "\"ghost\"");
  Graph output = Chain();
  output.ops[1].outputs.push_back("phantom");
  ExpectInvalid(output, "\"phantom\"");
}

TEST(BuildProblemErrorsTest, NegativeSizeBadAlignmentUnknownPool) {
  Graph negative = Chain();
  negative.tensors[2].size = -5;
  ExpectInvalid(negative, "\"a\" has a negative size");
  Graph alignment = Chain();
  alignment.tensors[3].alignment = 24;
  ExpectInvalid(alignment, "\"b\" has alignment 24");
  ExpectInvalid(Chain(), "alignment 3", {.alignment = 3});
  Graph pool = Chain();
  pool.tensors[3].pools = {"hbm"};
  ExpectInvalid(pool, "unknown pool \"hbm\"");
  Graph pool_alignment = Chain();
  pool_alignment.pools = {{.name = "p", .alignment = 6}};
  ExpectInvalid(pool_alignment, "pool \"p\" has alignment 6");
}

TEST(BuildProblemErrorsTest, SizesThatOverflowInt64) {
  Graph graph = Chain();
  graph.tensors[2].size = std::numeric_limits<int64_t>::max() - 2;
  ExpectInvalid(graph, "\"a\"", {.alignment = 64});
  Graph sum = Chain();
  sum.tensors[2].size = std::numeric_limits<int64_t>::max() / 2 + 1;
  sum.tensors[3].size = std::numeric_limits<int64_t>::max() / 2 + 1;
  ExpectInvalid(sum, "exceed the largest supported arena");
}

TEST(BuildProblemErrorsTest, ActivationsWithoutProducerAndOrphanScratch) {
  Graph graph = Chain();
  graph.tensors.push_back({.name = "dangling", .size = 4});
  ExpectInvalid(graph, "\"dangling\" is produced by no op");
  Graph scratch = Chain();
  scratch.tensors.push_back(
      {.name = "ws", .size = 4, .kind = TensorKind::kScratch});
  ExpectInvalid(scratch, "\"ws\" belongs to no op");
}

TEST(BuildProblemErrorsTest, HintsOutOfRangeAndBadConflicts) {
  Graph hint = Chain();
  hint.ops[1].inplace = {{.output = 3, .input = 0}};
  ExpectInvalid(hint, "op \"op1\" has inplace hint [3, 0] out of range");
  Graph conflict = Chain();
  conflict.conflicts = {{.a = "a", .b = "nobody"}};
  ExpectInvalid(conflict, "\"nobody\"");
}

TEST(BuildProblemErrorsTest, AViewSpanningMoreThanItsBufferIsInvalid) {
  // y (200 bytes) declared a view of x (100 bytes), t planned after it.
  Graph graph{
      .tensors = {{.name = "in", .size = 8, .kind = kIn},
                  {.name = "x", .size = 100},
                  {.name = "y", .size = 200},
                  {.name = "t", .size = 100},
                  {.name = "out", .size = 8, .kind = kOut}},
      .ops = {{.name = "op0", .inputs = {"in"}, .outputs = {"x"}},
              {.name = "reshape",
               .inputs = {"x"},
               .outputs = {"y"},
               .alias = {{.output = 0, .input = 0}}},
              {.name = "op2", .inputs = {"y"}, .outputs = {"t"}},
              {.name = "op3", .inputs = {"t", "y"}, .outputs = {"out"}}}};
  ExpectInvalid(graph,
                "view \"y\" of \"x\" (op \"reshape\") spans 200 bytes, more "
                "than the 100 bytes of its base");
  // A view of a view: the buffer is the first base's.
  graph.tensors[2].size = 100;
  graph.tensors.push_back({.name = "z", .size = 150});
  graph.ops.insert(graph.ops.begin() + 2,
                   Op{.name = "slice",
                      .inputs = {"y"},
                      .outputs = {"z"},
                      .alias = {{.output = 0, .input = 0}}});
  graph.ops.back().inputs.push_back("z");
  ExpectInvalid(graph,
                "view \"z\" of \"y\" (op \"slice\") spans 150 bytes, "
                "more than the 100 bytes of buffer \"x\"");
  // A view no larger than its base is fine; its span is its own size.
  graph.tensors.back().size = 40;
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Buffer& x = Find(*problem, "z");
  EXPECT_THAT(x.tensors, ElementsAre("x", "y", "z"));
  ASSERT_EQ(x.spans.size(), 3u);
  EXPECT_EQ(x.spans[2].size, 40);
  EXPECT_EQ(x.spans[2].lifetime, (Lifetime{2, 5}));
}

// ---------------------------------------------------------------------------
// Merged buffers: alive over the union of their members, whatever merged them.

constexpr TensorKind kScratch = TensorKind::kScratch;

// The reproducer: op2's output c is a view of p and may reuse b in place. The
// view decides where c lives (p's bytes), so the optional hint cannot apply:
// p, alive from step 0, and b, alive at op2, must not share bytes.
Graph ViewAndInPlaceOnOneOutput() {
  return Graph{
      .name = "view_and_inplace",
      .tensors = {{.name = "p", .size = 64, .kind = kIn},
                  {.name = "s", .size = 64, .kind = kScratch},
                  {.name = "a", .size = 64},
                  {.name = "b", .size = 64},
                  {.name = "c", .size = 64},
                  {.name = "y", .size = 64, .kind = kOut}},
      .ops =
          {{.name = "op0", .inputs = {"p"}, .outputs = {"a"}, .scratch = {"s"}},
           {.name = "op1", .inputs = {"a"}, .outputs = {"b"}},
           {.name = "op2",
            .inputs = {"p", "b"},
            .outputs = {"c"},
            .inplace = {{.output = 0, .input = 1}},
            .alias = {{.output = 0, .input = 0}}},
           {.name = "op3", .inputs = {"c"}, .outputs = {"y"}}},
  };
}

TEST(MergeTest, AViewThatMayAlsoReuseAnotherInputStaysAView) {
  absl::StatusOr<Problem> problem = BuildProblem(ViewAndInPlaceOnOneOutput());
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "c").tensors, ElementsAre("p", "c"));
  EXPECT_EQ(Find(*problem, "c").lifetime, (Lifetime{0, 4}));
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("b"));
  // At step 0: p, s and a (64 bytes each); at step 1: p, a and b.
  EXPECT_EQ(LowerBound(*problem), 192);
  for (const PlannerInfo& info : RegisteredPlanners()) {
    absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << planner.status();
    absl::StatusOr<Plan> plan =
        (*planner)->Solve(*problem, testing::CountedWork(2));
    ASSERT_TRUE(plan.ok()) << info.name << ": " << plan.status();
    EXPECT_TRUE(VerifyPlan(*problem, *plan).ok()) << info.name;
    EXPECT_GE(plan->peak, 192) << info.name;
  }
}

TEST(MergeTest, InPlaceThenAViewOfTheOutput) {
  // a -> op1 (b reuses a) -> op2 (v views b) -> op3 reads v.
  Graph graph{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                          {.name = "a", .size = 100},
                          {.name = "b", .size = 100},
                          {.name = "v", .size = 60},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
                      {.name = "op1",
                       .inputs = {"a"},
                       .outputs = {"b"},
                       .inplace = {{.output = 0, .input = 0}}},
                      {.name = "op2",
                       .inputs = {"b"},
                       .outputs = {"v"},
                       .alias = {{.output = 0, .input = 0}}},
                      {.name = "op3", .inputs = {"v"}, .outputs = {"y"}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Buffer& merged = Find(*problem, "v");
  EXPECT_THAT(merged.tensors, ElementsAre("a", "b", "v"));
  EXPECT_EQ(merged.lifetime, (Lifetime{0, 4}));
  EXPECT_EQ(merged.size, 100);
}

TEST(MergeTest, AViewOfTheInputThenInPlace) {
  // a (from step 0) -> op1: v views a -> op2: c reuses v (a and v die there).
  Graph graph{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                          {.name = "a", .size = 100},
                          {.name = "v", .size = 100},
                          {.name = "c", .size = 80},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
                      {.name = "op1",
                       .inputs = {"a"},
                       .outputs = {"v"},
                       .alias = {{.output = 0, .input = 0}}},
                      {.name = "op2",
                       .inputs = {"v"},
                       .outputs = {"c"},
                       .inplace = {{.output = 0, .input = 0}}},
                      {.name = "op3", .inputs = {"c"}, .outputs = {"y"}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  const Buffer& merged = Find(*problem, "c");
  EXPECT_THAT(merged.tensors, ElementsAre("a", "v", "c"));
  EXPECT_EQ(merged.lifetime, (Lifetime{0, 4}));
  // The input's view still read later keeps the hint from applying.
  graph.ops[3].inputs.push_back("v");
  problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "c").tensors, ElementsAre("c"));
}

TEST(MergeTest, ChainsOfInPlaceAndTwoHintsOnOneOutput) {
  // op1: b reuses a; op2: c reuses b: one buffer alive from a's start to c's
  // end.
  Graph graph{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                          {.name = "a", .size = 100},
                          {.name = "b", .size = 100},
                          {.name = "c", .size = 100},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
                      {.name = "op1",
                       .inputs = {"a"},
                       .outputs = {"b"},
                       .inplace = {{.output = 0, .input = 0}}},
                      {.name = "op2",
                       .inputs = {"b"},
                       .outputs = {"c"},
                       .inplace = {{.output = 0, .input = 0}}},
                      {.name = "op3", .inputs = {"c"}, .outputs = {"y"}}}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "c").tensors, ElementsAre("a", "b", "c"));
  EXPECT_EQ(Find(*problem, "c").lifetime, (Lifetime{0, 4}));

  // Two inputs dying at one op may not both become the output's bytes: the
  // first hint applies, the second does not.
  Graph two{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                        {.name = "a", .size = 100},
                        {.name = "b", .size = 100},
                        {.name = "c", .size = 100},
                        {.name = "y", .size = 8, .kind = kOut}},
            .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a", "b"}},
                    {.name = "add",
                     .inputs = {"a", "b"},
                     .outputs = {"c"},
                     .inplace = {{.output = 0, .input = 0},
                                 {.output = 0, .input = 1}}},
                    {.name = "op2", .inputs = {"c"}, .outputs = {"y"}}}};
  problem = BuildProblem(two);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "c").tensors, ElementsAre("a", "c"));
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("b"));
}

TEST(MergeTest, AnInPlaceHintDoesNotApplyAcrossAnExplicitConflict) {
  Graph graph = Chain();
  graph.tensors[3].size = 20;
  graph.ops[1].inplace = {{.output = 0, .input = 0}};  // b may reuse a
  graph.conflicts = {{.a = "b", .b = "a"}};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "a").tensors, ElementsAre("a"));
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("b"));
  EXPECT_EQ(problem->conflicts.size(), 1u);
}

TEST(MergeTest, AnInPlaceHintDoesNotApplyAcrossAViewsPoolsOrFixedPlacement) {
  // b may reuse a; a view w of b is fixed or allowed only in another pool.
  Graph graph{.tensors = {{.name = "x", .size = 8, .kind = kIn},
                          {.name = "a", .size = 64, .pools = {"fast"}},
                          {.name = "b", .size = 64},
                          {.name = "w", .size = 64},
                          {.name = "y", .size = 8, .kind = kOut}},
              .ops = {{.name = "op0", .inputs = {"x"}, .outputs = {"a"}},
                      {.name = "op1",
                       .inputs = {"a"},
                       .outputs = {"b"},
                       .inplace = {{.output = 0, .input = 0}}},
                      {.name = "op2",
                       .inputs = {"b"},
                       .outputs = {"w"},
                       .alias = {{.output = 0, .input = 0}}},
                      {.name = "op3", .inputs = {"w"}, .outputs = {"y"}}},
              .pools = {{.name = "fast"}, {.name = "slow"}}};
  graph.tensors[3].pools = {"slow"};
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("b", "w"));
  graph.tensors[3].pools = {};
  graph.tensors[3].fixed = FixedTensorPlacement{.pool = "slow", .offset = 0};
  problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("b", "w"));
  graph.tensors[3].fixed.reset();
  problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok()) << problem.status();
  EXPECT_THAT(Find(*problem, "b").tensors, ElementsAre("a", "b", "w"));
}

// Random graphs with views and in-place hints: every buffer is alive whenever
// one of its tensors is, is as large as each of them, and two tensors of one
// buffer that are not views of one another are alive together at one step at
// most (the op that writes the output over its dying input).
TEST(MergeTest, RandomGraphsKeepEveryTensorInsideItsBuffer) {
  for (uint64_t seed = 0; seed < 400; ++seed) {
    const Graph graph = testing::RandomGraph(seed);
    Graph plain = graph;
    for (Op& op : plain.ops) {
      op.inplace.clear();
      op.alias.clear();
    }
    BuildOptions options{.plan_constants = seed % 2 == 0};
    absl::StatusOr<Problem> with_hints = BuildProblem(graph, options);
    ASSERT_TRUE(with_hints.ok()) << seed << ": " << with_hints.status();
    absl::StatusOr<Problem> without = BuildProblem(plain, options);
    ASSERT_TRUE(without.ok()) << seed << ": " << without.status();
    std::map<std::string, const Buffer*> own;
    for (const Buffer& b : without->buffers) own[b.name] = &b;
    // Views of one another: union-find over the alias hints.
    std::map<std::string, std::string> parent;
    auto root = [&](std::string t) {
      while (parent.count(t) && parent[t] != t) t = parent[t];
      return t;
    };
    for (const Op& op : graph.ops) {
      for (const OperandPair& pair : op.alias) {
        parent[root(op.outputs[pair.output])] = root(op.inputs[pair.input]);
      }
    }
    for (const Buffer& b : with_hints->buffers) {
      for (size_t i = 0; i < b.tensors.size(); ++i) {
        ASSERT_TRUE(own.count(b.tensors[i])) << seed << ": " << b.tensors[i];
        const Buffer& t = *own[b.tensors[i]];
        EXPECT_LE(b.lifetime.start, t.lifetime.start) << seed << ": " << t.name;
        EXPECT_GE(b.lifetime.end, t.lifetime.end) << seed << ": " << t.name;
        EXPECT_GE(b.size, t.size) << seed << ": " << t.name;
        for (size_t j = 0; j < i; ++j) {
          const Buffer& u = *own[b.tensors[j]];
          if (root(t.name) == root(u.name)) continue;
          const Step together = std::min(t.lifetime.end, u.lifetime.end) -
                                std::max(t.lifetime.start, u.lifetime.start);
          EXPECT_LE(together, 1) << seed << ": " << t.name << " and " << u.name
                                 << " share buffer " << b.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace memplan
