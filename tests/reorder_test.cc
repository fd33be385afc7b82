// Op orderings: hand cases, and on every bundled graph a valid topological
// order of exactly the original ops that plans validly.

#include "memplan/reorder.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/verify.h"
#include "test_util.h"
#include "valid_orders.h"

namespace memplan {
namespace {

using testing::O;
using testing::OrderBound;
using testing::OwnOrMemoryBound;
using testing::T;
using testing::ValidOrders;
using testing::WithWrites;

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
// A fan of 2000 branches, each a large tensor reduced to a small one that
// a final op reads: "memory" runs each branch to its end before the next
// (one large tensor alive at a time), as it chooses among 2000 ready ops at
// every step.
TEST(ReorderTest, MemoryRunsAWideFanBranchByBranch) {
  Graph g;
  g.tensors = {T("x", 64, TensorKind::kInput), T("y", 64, TensorKind::kOutput)};
  Op sum{.name = "sum", .outputs = {"y"}};
  for (int i = 0; i < 2000; ++i) {
    const std::string a = absl::StrCat("a", i);
    const std::string b = absl::StrCat("b", i);
    g.tensors.push_back(Tensor{.name = a, .size = 1000});
    g.tensors.push_back(Tensor{.name = b, .size = 8});
    g.ops.push_back(
        Op{.name = absl::StrCat("fa", i), .inputs = {"x"}, .outputs = {a}});
    sum.inputs.push_back(b);
  }
  for (int i = 0; i < 2000; ++i) {
    g.ops.push_back(Op{.name = absl::StrCat("fb", i),
                       .inputs = {absl::StrCat("a", i)},
                       .outputs = {absl::StrCat("b", i)}});
  }
  g.ops.push_back(sum);
  absl::StatusOr<Graph> reordered = ReorderGraph(g, "memory");
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  ExpectValidReorder(g, *reordered);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_EQ(reordered->ops[2 * i].name, absl::StrCat("fa", i));
    ASSERT_EQ(reordered->ops[2 * i + 1].name, absl::StrCat("fb", i));
  }
  // At the last fa: x, one large tensor and the 1999 small results so far;
  // in the given order x and all 2000 large tensors at once.
  EXPECT_EQ(LowerBound(*BuildProblem(*reordered)), 64 + 1000 + 1999 * 8);
  EXPECT_EQ(LowerBound(*BuildProblem(g)), 64 + 2000 * 1000);
}

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

// An op that writes `a` in place (W), and R, which reads the bytes of `a`
// before it in the compiler's order (autograd's clone of an activation that
// an in-place ReLU then overwrites):
//
//   A: x -> a (100)    R: a -> r (150, read at the end)
//   W: writes a, a2 is a    B: a2 -> b (100)    C: b -> c    F: r, c -> out
//
// Running R last lowers the bound (at B: a + r + b = 350 before, a + b after)
// and "memory" would pick W, B, C before R; longest_path runs the long chain
// W, B, C first. Either moves R past W: R would read the written bytes.
// Readers and writers of a view of `a`, or of the base of a view, are the
// same bytes.
Graph WrittenGraph(std::string read, std::string written) {
  Graph graph{
      .tensors = {T("x", 1, TensorKind::kInput), T("a", 100), T("v", 100),
                  T("r", 150), T("a2", 100), T("b", 100), T("c", 1),
                  T("out", 1, TensorKind::kOutput)},
      .ops = {O("A", {"x"}, {"a"}), O("V", {"a"}, {"v"}), O("R", {read}, {"r"}),
              O("W", {written}, {"a2"}), O("B", {"a2"}, {"b"}),
              O("C", {"b"}, {"c"}), O("F", {"r", "c"}, {"out"})}};
  graph.ops[1].alias = {{.output = 0, .input = 0}};  // v is a view of a
  graph.ops[3].alias = {{.output = 0, .input = 0}};
  graph.ops[3].writes = {0};
  return graph;
}

std::vector<std::string> OpNamesInOrder(const Graph& graph,
                                        const std::vector<int>& order) {
  std::vector<std::string> names;
  for (int i : order) names.push_back(graph.ops[i].name);
  return names;
}

TEST(ReorderTest, AReaderStaysBeforeAnInPlaceWriterOfItsBytes) {
  absl::flat_hash_map<std::string, int> moved_unwritten;  // per ordering
  for (const auto& [read, written] :
       std::vector<std::pair<std::string, std::string>>{
           {"a", "a"}, {"v", "a"}, {"a", "v"}}) {
    const Graph graph = WrittenGraph(read, written);
    for (const std::string& name : OrderingNames()) {
      SCOPED_TRACE(name + ": R reads " + read + ", W writes " + written);
      absl::StatusOr<std::vector<int>> order = ComputeOpOrder(graph, name);
      ASSERT_TRUE(order.ok()) << order.status();
      const std::vector<std::string> names = OpNamesInOrder(graph, *order);
      const auto r = std::find(names.begin(), names.end(), "R");
      const auto w = std::find(names.begin(), names.end(), "W");
      EXPECT_LT(r - names.begin(), w - names.begin())
          << ::testing::PrintToString(names);
      // Without the write, the same graph does move R past W (in at least
      // one of the three cases): the test exercises a real reorder.
      Graph unwritten = graph;
      unwritten.ops[3].writes.clear();
      absl::StatusOr<std::vector<int>> free = ComputeOpOrder(unwritten, name);
      ASSERT_TRUE(free.ok()) << free.status();
      const std::vector<std::string> free_names = OpNamesInOrder(graph, *free);
      if (std::find(free_names.begin(), free_names.end(), "R") >
          std::find(free_names.begin(), free_names.end(), "W")) {
        ++moved_unwritten[name];
      }
    }
  }
  for (const std::string& name : OrderingNames()) {
    EXPECT_GT(moved_unwritten[name], 0) << name;
  }
}

// The bytes each tensor lives in, independently of reorder.cc: alias hints,
// and the buffers BuildProblem made (applied in-place merges).
std::vector<int> SharedBytes(const Graph& graph, const Problem& problem) {
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  std::vector<int> group(graph.tensors.size());
  std::iota(group.begin(), group.end(), 0);
  // Relabel until stable: small graphs, clarity over speed.
  auto merge = [&](int a, int b) {
    const int from = std::max(group[a], group[b]);
    const int to = std::min(group[a], group[b]);
    for (int& g : group) {
      if (g == from) g = to;
    }
  };
  for (const Op& op : graph.ops) {
    for (const OperandPair& p : op.alias) {
      merge(index.at(op.outputs[p.output]), index.at(op.inputs[p.input]));
    }
  }
  for (const Buffer& b : problem.buffers) {
    for (const std::string& name : b.tensors) {
      merge(index.at(b.tensors.front()), index.at(name));
    }
  }
  return group;
}

// On random graphs with random writes, every ordering keeps each reader of
// written bytes on its side of the writer, and writers of the same bytes in
// their order, pair by pair.
TEST(ReorderTest, EveryOrderingKeepsReadersOnTheirSideOfEveryWriter) {
  int moved = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Graph graph = testing::RandomGraph(seed, 16);
    std::mt19937_64 rng(seed);
    for (Op& op : graph.ops) {
      if (rng() % 3 != 0) continue;
      op.writes = {static_cast<int>(rng() % op.inputs.size())};
    }
    absl::StatusOr<Problem> problem = BuildProblem(graph);
    ASSERT_TRUE(problem.ok()) << seed << ": " << problem.status();
    const std::vector<int> group = SharedBytes(graph, *problem);
    absl::flat_hash_map<std::string, int> index;
    for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
      index.emplace(graph.tensors[t].name, t);
    }
    const int n = static_cast<int>(graph.ops.size());
    // reads[i], writes[i]: the byte groups op i reads and writes.
    std::vector<std::set<int>> reads(n), writes(n);
    for (int i = 0; i < n; ++i) {
      for (const std::string& in : graph.ops[i].inputs) {
        reads[i].insert(group[index.at(in)]);
      }
      for (int j : graph.ops[i].writes) {
        writes[i].insert(group[index.at(graph.ops[i].inputs[j])]);
      }
    }
    for (const std::string& name : OrderingNames()) {
      SCOPED_TRACE(absl::StrCat(name, " seed ", seed));
      absl::StatusOr<std::vector<int>> order = ComputeOpOrder(graph, name);
      ASSERT_TRUE(order.ok()) << order.status();
      std::vector<int> step(n);
      for (int k = 0; k < n; ++k) step[(*order)[k]] = k;
      bool identity = true;
      for (int k = 0; k < n; ++k) identity = identity && (*order)[k] == k;
      if (!identity) ++moved;
      std::string violation;  // the first one
      for (int w = 0; w < n && violation.empty(); ++w) {
        for (int g : writes[w]) {
          for (int i = 0; i < n; ++i) {
            if (i == w || !reads[i].contains(g)) continue;
            if ((i < w) != (step[i] < step[w]) && violation.empty()) {
              violation = absl::StrCat(graph.ops[i].name, " reads the bytes ",
                                       graph.ops[w].name, " writes");
            }
          }
        }
      }
      EXPECT_EQ(violation, "");
    }
    absl::StatusOr<Graph> reordered = ReorderGraph(graph, "memory");
    ASSERT_TRUE(reordered.ok()) << reordered.status();
    ExpectValidReorder(graph, *reordered);
  }
  EXPECT_GT(moved, 0);  // the test exercises actual reorders
}

// Pinned ops (side effects) keep their relative order under every
// ordering, with the rest of what orderings keep (ValidOrders); without the
// pins some orderings do move them, so the pins are what holds them.
TEST(ReorderTest, EveryOrderingKeepsPinnedOpsInTheirOrder) {
  int moved_without_pins = 0;
  int pinned_graphs = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Graph graph = testing::RandomGraph(seed, 16);
    std::mt19937_64 rng(seed);
    std::vector<int> pinned;
    for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
      Op& op = graph.ops[i];
      if (rng() % 4 == 0)
        op.writes = {static_cast<int>(rng() % op.inputs.size())};
      if (rng() % 3 == 0) {
        op.pinned = true;
        pinned.push_back(i);
      }
    }
    if (!BuildProblem(graph).ok()) continue;
    if (pinned.size() >= 2) ++pinned_graphs;
    Graph free = graph;
    for (Op& op : free.ops) op.pinned = false;
    const testing::ValidOrders valid(graph);
    for (const std::string& name : OrderingNames()) {
      SCOPED_TRACE(absl::StrCat(name, " seed ", seed));
      absl::StatusOr<std::vector<int>> order = ComputeOpOrder(graph, name);
      ASSERT_TRUE(order.ok()) << order.status();
      std::vector<int> kept;  // the pinned ops in the new order
      for (int i : *order) {
        if (graph.ops[i].pinned) kept.push_back(i);
      }
      EXPECT_EQ(kept, pinned);
      EXPECT_TRUE(valid.Valid(*order));
      absl::StatusOr<std::vector<int>> unpinned = ComputeOpOrder(free, name);
      ASSERT_TRUE(unpinned.ok()) << unpinned.status();
      std::vector<int> moved;
      for (int i : *unpinned) {
        if (graph.ops[i].pinned) moved.push_back(i);
      }
      if (moved != pinned) ++moved_without_pins;
    }
  }
  EXPECT_GT(pinned_graphs, 150);
  EXPECT_GT(moved_without_pins, 0);
}

// reverse_postorder: depth-first from the source, successors in the graph's
// order; each branch runs to the join before the next, the last one first.
TEST(ReorderTest, ReversePostorderRunsOneBranchAfterAnother) {
  const Graph graph{
      .tensors = {T("x", 8, TensorKind::kInput), T("s", 8), T("a1", 8),
                  T("a2", 8), T("b1", 8), T("b2", 8),
                  T("y", 8, TensorKind::kOutput)},
      .ops = {O("S", {"x"}, {"s"}), O("A1", {"s"}, {"a1"}),
              O("A2", {"s"}, {"a2"}), O("B1", {"a1"}, {"b1"}),
              O("B2", {"a2"}, {"b2"}), O("J", {"b1", "b2"}, {"y"})}};
  absl::StatusOr<std::vector<int>> order =
      ComputeOpOrder(graph, "reverse_postorder");
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(OpNamesInOrder(graph, *order),
            (std::vector<std::string>{"S", "A2", "B2", "A1", "B1", "J"}));
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
        graph,
        {.build = options, .planner = "greedy_by_size", .reorder = "memory"});
    ASSERT_TRUE(result.ok()) << seed << ": " << result.status();
    EXPECT_LE(result->plan.lower_bound, LowerBound(*original)) << seed;
  }
  EXPECT_GT(reordered_count, 0);  // the test exercises actual reorders
}

// Counted work, one unit for every search over orders (memplan/reorder.h):
// granted a work limit, each counts at most the limit plus one step of its
// own, says when the limit cut it short, does no worse with ten times the
// work, and is deterministic.
TEST(OrderEffortTest, OptimalCountsItsWorkWithinTheLimit) {
  int cut = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const Graph graph = WithWrites(testing::RandomGraph(seed, 60), seed);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::optional<OptimalOrder> less;
    for (int64_t limit : {3'000, 30'000, 300'000}) {
      absl::StatusOr<OptimalOrder> a =
          ComputeOptimalOpOrder(graph, {}, {.work_limit = limit});
      absl::StatusOr<OptimalOrder> b =
          ComputeOptimalOpOrder(graph, {}, {.work_limit = limit});
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->order, b->order);
      EXPECT_EQ(a->work, b->work);
      // A step: one state's expansion, each of 60 ops looked at and run
      // (under 60 * 200 steps, 10 a unit), in the search or a beam.
      EXPECT_LE(a->work, limit + 2 * 60 * 200 / 10);
      EXPECT_GT(a->work, 0);
      EXPECT_EQ(a->peak, OrderBound(graph, a->order));
      if (a->cut) {
        ++cut;
        EXPECT_FALSE(a->proven);
      }
      if (less.has_value()) EXPECT_LE(a->peak, less->peak);
      less = *std::move(a);
    }
  }
  EXPECT_GT(cut, 0);  // the limit bites
}

TEST(OrderEffortTest, WindowCountsItsWorkWithinTheLimit) {
  int cut = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const Graph graph =
        WithWrites(testing::RandomGraph(seed, 300), seed, /*one_in=*/8);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Bytes less = OwnOrMemoryBound(graph);
    for (int64_t limit : {5'000, 50'000, 5'000'000}) {
      absl::StatusOr<WindowOrder> window =
          ComputeWindowOpOrder(graph, {}, {.work_limit = limit});
      ASSERT_TRUE(window.ok()) << window.status();
      // A step: a beam level of 256 states, each trying 64 positions and
      // looking at their lists (a unit a step).
      EXPECT_LE(window->work, limit + 256 * 64 * 64);
      EXPECT_EQ(window->peak, OrderBound(graph, window->order));
      if (window->cut) ++cut;
      EXPECT_LE(window->peak, less);
      less = window->peak;
    }
  }
  EXPECT_GT(cut, 0);
}

TEST(OrderEffortTest, TheBoundCountsItsWorkWithinTheLimit) {
  int cut = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const Graph graph = WithWrites(testing::RandomGraph(seed, 200), seed);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    absl::StatusOr<std::optional<OrderLowerBound>> full =
        LowerBoundOverOrders(graph);
    ASSERT_TRUE(full.ok() && full->has_value());
    EXPECT_FALSE((*full)->cut);
    Bytes last = 0;
    for (int64_t limit : {1, 500, 2'000, 20'000}) {
      absl::StatusOr<std::optional<OrderLowerBound>> bound =
          LowerBoundOverOrders(graph, {}, {.work_limit = limit});
      ASSERT_TRUE(bound.ok()) << bound.status();
      if (!bound->has_value()) continue;  // not even the sums fit
      // A step: one minimum cut, within the graph's edges and ops (25
      // steps a unit).
      EXPECT_LE((*bound)->work, limit + 40 * 200);
      EXPECT_LE((*bound)->bytes, (*full)->bytes);
      EXPECT_GE((*bound)->bytes, last);  // more work, no weaker
      last = (*bound)->bytes;
      if ((*bound)->cut) ++cut;
    }
    EXPECT_EQ(*LowerBoundOverOrders(graph, {}, {.work_limit = 1}),
              std::nullopt);
  }
  EXPECT_GT(cut, 0);
}

// Without a limit the defaults give what the step counts gave before they
// were work units: on darts_seed1, "optimal" proves 688128 bytes and
// "window" reaches 720896, over a bound of 655360 (as `memplan stats`
// --reorder=optimal and =window gave them).
TEST(OrderEffortTest, TheDefaultsGiveTheBundledResults) {
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("order/darts_seed1.json"));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<OptimalOrder> optimal = ComputeOptimalOpOrder(*graph);
  ASSERT_TRUE(optimal.ok()) << optimal.status();
  EXPECT_EQ(optimal->peak, 688128);
  EXPECT_TRUE(optimal->proven);
  EXPECT_FALSE(optimal->cut);
  absl::StatusOr<WindowOrder> window = ComputeWindowOpOrder(*graph);
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_EQ(window->peak, 720896);
  absl::StatusOr<std::optional<OrderLowerBound>> bound =
      LowerBoundOverOrders(*graph);
  ASSERT_TRUE(bound.ok() && bound->has_value());
  EXPECT_EQ((*bound)->bytes, 655360);
}

// A deadline bounds the searches too: one already passed leaves "optimal"
// and "window" their starting orders, still valid.
TEST(OrderEffortTest, APassedDeadlineStopsTheSearches) {
  const Graph graph = WithWrites(testing::RandomGraph(3, 300), 3, 8);
  ASSERT_TRUE(BuildProblem(graph).ok());
  PlanOptions effort;
  effort.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<OptimalOrder> optimal =
      ComputeOptimalOpOrder(graph, {}, effort);
  ASSERT_TRUE(optimal.ok()) << optimal.status();
  EXPECT_TRUE(ValidOrders(graph).Valid(optimal->order));
  EXPECT_LE(optimal->peak, OwnOrMemoryBound(graph));
  absl::StatusOr<WindowOrder> window = ComputeWindowOpOrder(graph, {}, effort);
  ASSERT_TRUE(window.ok()) << window.status();
  EXPECT_TRUE(window->cut);
  EXPECT_LE(window->passes, 1);
  EXPECT_TRUE(ValidOrders(graph).Valid(window->order));
}

TEST(OrderEffortTest, PlanMemorySharesItsLimitsWithTheOrdering) {
  int differs = 0;
  for (uint64_t seed = 0; seed < 12; ++seed) {
    const Graph graph = WithWrites(testing::RandomGraph(seed, 60), seed);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    PlanMemoryOptions options;
    options.reorder = "optimal";
    options.plan.work_limit = 6'000;
    absl::StatusOr<GraphPlan> plan = PlanMemory(graph, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(plan->problem, plan->plan).ok());
    // The ordering gets half of the work limit (SplitOrderingEffort).
    absl::StatusOr<std::vector<int>> half =
        ComputeOpOrder(graph, "optimal", {}, {.work_limit = 3'000});
    ASSERT_TRUE(half.ok()) << half.status();
    EXPECT_EQ(plan->op_order, *half);
    absl::StatusOr<std::vector<int>> unlimited =
        ComputeOpOrder(graph, "optimal");
    ASSERT_TRUE(unlimited.ok()) << unlimited.status();
    differs += plan->op_order != *unlimited;
  }
  EXPECT_GT(differs, 0);  // the limit reaches the ordering
}

TEST(OrderEffortTest, PlacedSharesItsLimitsAmongTheCandidates) {
  for (uint64_t seed = 0; seed < 6; ++seed) {
    const Graph graph = WithWrites(testing::RandomGraph(seed, 60), seed);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    PlanMemoryOptions options;
    options.reorder = kPlacedOrdering;
    options.plan.work_limit = 8'000;
    absl::StatusOr<GraphPlan> plan = PlanMemory(graph, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_TRUE(VerifyPlan(plan->problem, plan->plan).ok());
    // The two searching orderings share half of the work limit.
    std::vector<int> own(graph.ops.size());
    std::iota(own.begin(), own.end(), 0);
    std::set<std::vector<int>> candidates = {own};
    for (const char* name : {"memory", "window", "optimal"}) {
      absl::StatusOr<std::vector<int>> order =
          ComputeOpOrder(graph, name, {}, {.work_limit = 2'000});
      ASSERT_TRUE(order.ok()) << order.status();
      candidates.insert(*order);
    }
    EXPECT_TRUE(candidates.contains(plan->op_order));
  }
}

}  // namespace
}  // namespace memplan
