// Op orderings: hand cases, and on every bundled graph a valid topological
// order of exactly the original ops that plans validly.

#include "memplan/reorder.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "test_util.h"

namespace memplan {
namespace {

Tensor T(const char* name, Bytes size,
         TensorKind kind = TensorKind::kActivation) {
  return Tensor{.name = name, .size = size, .kind = kind};
}

Op O(const char* name, std::vector<std::string> inputs,
     std::vector<std::string> outputs) {
  return Op{
      .name = name, .inputs = std::move(inputs), .outputs = std::move(outputs)};
}

std::vector<std::string> OpNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const Op& op : graph.ops) names.push_back(op.name);
  return names;
}

// Every op reads only graph inputs, constants and tensors of earlier ops, and
// the ops are exactly the original ones.
void ExpectValidReorder(const Graph& original, const Graph& reordered) {
  std::vector<std::string> before = OpNames(original);
  std::vector<std::string> after = OpNames(reordered);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  EXPECT_EQ(before, after);
  absl::flat_hash_map<std::string, Op> by_name;
  for (const Op& op : original.ops) by_name.emplace(op.name, op);
  absl::flat_hash_set<std::string> available;
  for (const Tensor& t : original.tensors) {
    if (t.kind == TensorKind::kInput || t.kind == TensorKind::kConstant) {
      available.insert(t.name);
    }
  }
  for (const Op& op : reordered.ops) {
    EXPECT_EQ(op, by_name.at(op.name));
    for (const std::string& in : op.inputs) {
      EXPECT_TRUE(available.contains(in))
          << "op " << op.name << " reads " << in << " before it is produced";
    }
    for (const std::string& out : op.outputs) available.insert(out);
  }
  EXPECT_EQ(original.tensors, reordered.tensors);
}

TEST(ReorderTest, UnknownOrderingIsNotFoundListingTheValidNames) {
  const Graph graph{.tensors = {T("x", 4, TensorKind::kInput), T("y", 4)},
                    .ops = {O("f", {"x"}, {"y"})}};
  absl::StatusOr<Graph> reordered = ReorderGraph(graph, "fastest");
  ASSERT_FALSE(reordered.ok());
  EXPECT_EQ(reordered.status().code(), absl::StatusCode::kNotFound);
  for (const std::string& name : OrderingNames()) {
    EXPECT_NE(reordered.status().message().find(name), std::string::npos);
  }
  absl::StatusOr<GraphPlan> plan =
      PlanMemory(graph, {.planner = "naive", .reorder = "fastest"});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kNotFound);
}

TEST(ReorderTest, MalformedGraphIsInvalidArgument) {
  const Graph graph{
      .tensors = {T("x", 4, TensorKind::kInput), T("y", 4), T("z", 4)},
      .ops = {O("g", {"y"}, {"z"}), O("f", {"x"}, {"y"})}};
  absl::StatusOr<Graph> reordered = ReorderGraph(graph, "memory");
  EXPECT_EQ(reordered.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReorderTest, AProblemHasNoOpsToReorder) {
  Problem problem{.pools = {Pool{.name = "default"}}};
  absl::StatusOr<Plan> plan = PlanMemory(problem, {.reorder = "memory"});
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
}

// A forks into a short branch B1 -> D and a long one B2 -> C2 -> D; the
// compiler interleaves them. longest_path runs the long chain first, then
// the short one, then the join.
TEST(ReorderTest, LongestPathRunsTheLongChainFirst) {
  const Graph graph{
      .tensors = {T("x", 1, TensorKind::kInput), T("a", 1), T("b1", 1),
                  T("b2", 1), T("c2", 1), T("d", 1, TensorKind::kOutput)},
      .ops = {O("A", {"x"}, {"a"}), O("B1", {"a"}, {"b1"}),
              O("B2", {"a"}, {"b2"}), O("C2", {"b2"}, {"c2"}),
              O("D", {"b1", "c2"}, {"d"})}};
  absl::StatusOr<std::vector<int>> order =
      ComputeOpOrder(graph, "longest_path");
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<int>{0, 2, 3, 1, 4}));
}

// Equal branches run one after the other instead of interleaved.
TEST(ReorderTest, LongestPathDoesNotInterleaveEqualBranches) {
  const Graph graph{
      .tensors = {T("x", 1, TensorKind::kInput), T("a", 1), T("b1", 1),
                  T("b2", 1), T("c1", 1), T("c2", 1),
                  T("d", 1, TensorKind::kOutput)},
      .ops = {O("A", {"x"}, {"a"}), O("B1", {"a"}, {"b1"}),
              O("B2", {"a"}, {"b2"}), O("C1", {"b1"}, {"c1"}),
              O("C2", {"b2"}, {"c2"}), O("D", {"c1", "c2"}, {"d"})}};
  absl::StatusOr<std::vector<int>> order =
      ComputeOpOrder(graph, "longest_path");
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<int>{0, 1, 3, 2, 4, 5}));
}

// Two producers of 100-byte tensors, each reduced to 1 byte. In the
// compiler's order both large tensors are alive at once (lower bound 201:
// x + big1 + big2); the memory scheduler reduces the first before producing
// the second (lower bound 102).
TEST(ReorderTest, MemoryReducesBeforeProducingMore) {
  const Graph graph{
      .tensors = {T("x", 1, TensorKind::kInput), T("big1", 100), T("big2", 100),
                  T("s1", 1), T("s2", 1), T("out", 1, TensorKind::kOutput)},
      .ops = {O("P1", {"x"}, {"big1"}), O("P2", {"x"}, {"big2"}),
              O("R1", {"big1"}, {"s1"}), O("R2", {"big2"}, {"s2"}),
              O("F", {"s1", "s2"}, {"out"})}};
  absl::StatusOr<std::vector<int>> order = ComputeOpOrder(graph, "memory");
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(*order, (std::vector<int>{0, 2, 1, 3, 4}));
  absl::StatusOr<GraphPlan> before = PlanMemory(graph, {.planner = "naive"});
  absl::StatusOr<GraphPlan> after =
      PlanMemory(graph, {.planner = "naive", .reorder = "memory"});
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(before->plan.lower_bound, 201);
  EXPECT_EQ(after->plan.lower_bound, 102);
  // The result says which order was planned.
  EXPECT_EQ(before->op_order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(after->op_order, *order);
}

// An op allowed to write its input in place still reads it last.
TEST(ReorderTest, InPlaceMergesSurvive) {
  Graph graph{
      .tensors = {T("x", 8, TensorKind::kInput), T("a", 8), T("b", 8),
                  T("c", 8), T("y", 8, TensorKind::kOutput)},
      .ops = {O("A", {"x"}, {"a"}), O("Long", {"a"}, {"c"}),
              O("InPlace", {"a"}, {"b"}), O("Join", {"b", "c"}, {"y"})}};
  graph.ops[2].inplace = {{.output = 0, .input = 0}};
  absl::StatusOr<Problem> original = BuildProblem(graph);
  ASSERT_TRUE(original.ok()) << original.status();
  for (const std::string& name : OrderingNames()) {
    SCOPED_TRACE(name);
    absl::StatusOr<Graph> reordered = ReorderGraph(graph, name);
    ASSERT_TRUE(reordered.ok()) << reordered.status();
    ExpectValidReorder(graph, *reordered);
    absl::StatusOr<Problem> problem = BuildProblem(*reordered);
    ASSERT_TRUE(problem.ok()) << problem.status();
    EXPECT_EQ(problem->buffers.size(), original->buffers.size());
  }
}

TEST(ReorderTest, EveryBundledGraphReordersAndPlansValidly) {
  std::vector<std::string> paths = testing::ModelGraphs();
  for (const std::string& path : testing::TrainingGraphs())
    paths.push_back(path);
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadFile(testing::DataPath(path));
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<Graph> graph = ParseGraphJson(*text);
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<Problem> original = BuildProblem(*graph);
    ASSERT_TRUE(original.ok()) << original.status();
    for (const std::string& name : OrderingNames()) {
      SCOPED_TRACE(path + " " + name);
      absl::StatusOr<std::vector<int>> order = ComputeOpOrder(*graph, name);
      ASSERT_TRUE(order.ok()) << order.status();
      std::vector<int> sorted = *order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int> identity(graph->ops.size());
      std::iota(identity.begin(), identity.end(), 0);
      EXPECT_EQ(sorted, identity);
      absl::StatusOr<Graph> reordered = ReorderGraph(*graph, name);
      ASSERT_TRUE(reordered.ok()) << reordered.status();
      ExpectValidReorder(*graph, *reordered);
      absl::StatusOr<Problem> problem = BuildProblem(*reordered);
      ASSERT_TRUE(problem.ok()) << problem.status();
      // In-place and alias merges are kept: the same buffers.
      EXPECT_EQ(problem->buffers.size(), original->buffers.size());
      if (name == "memory")
        EXPECT_LE(LowerBound(*problem), LowerBound(*original));
      absl::StatusOr<GraphPlan> plan =
          PlanMemory(*graph, {.planner = "caffe2_greedy", .reorder = name});
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->problem, *problem);
      EXPECT_TRUE(VerifyPlan(*problem, plan->plan).ok());
      EXPECT_EQ(plan->plan.lower_bound, LowerBound(*problem));
    }
  }
}

// "memory" never raises the lower bound of the options the graph is planned
// with: alignment and planned constants change which order is smaller.
TEST(ReorderTest, MemoryNeverRaisesTheLowerBoundOfTheOptionsUsed) {
  int reordered_count = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const Graph graph = testing::RandomGraph(seed, 16);
    const BuildOptions options{.plan_constants = seed % 2 == 0,
                               .alignment = Bytes{1} << (seed % 8)};
    absl::StatusOr<Problem> original = BuildProblem(graph, options);
    ASSERT_TRUE(original.ok()) << seed << ": " << original.status();
    absl::StatusOr<Graph> reordered = ReorderGraph(graph, "memory", options);
    ASSERT_TRUE(reordered.ok()) << seed << ": " << reordered.status();
    ExpectValidReorder(graph, *reordered);
    absl::StatusOr<Problem> problem = BuildProblem(*reordered, options);
    ASSERT_TRUE(problem.ok()) << seed << ": " << problem.status();
    EXPECT_LE(LowerBound(*problem), LowerBound(*original)) << seed;
    if (reordered->ops != graph.ops) ++reordered_count;
    absl::StatusOr<GraphPlan> result = PlanMemory(
        graph, {.build = options, .planner = "greedy_by_size",
                .reorder = "memory"});
    ASSERT_TRUE(result.ok()) << seed << ": " << result.status();
    EXPECT_LE(result->plan.lower_bound, LowerBound(*original)) << seed;
  }
  EXPECT_GT(reordered_count, 0);  // the test exercises actual reorders
}

}  // namespace
}  // namespace memplan
