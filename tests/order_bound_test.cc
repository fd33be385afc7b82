// The lower bound over op orders: against every valid order of small random
// graphs (enumerated independently of the library's DAG), hand cases where
// it is exact, and the bundled graphs.

#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "test_util.h"
#include "valid_orders.h"

namespace memplan {
namespace {

using testing::O;
using testing::T;

using testing::BestValidBound;
using testing::Identity;
using testing::OrderBound;
using testing::ValidOrders;

Bytes BoundOf(const Graph& graph, const BuildOptions& options = {}) {
  absl::StatusOr<std::optional<OrderLowerBound>> bound =
      LowerBoundOverOrders(graph, options);
  EXPECT_TRUE(bound.ok()) << bound.status();
  if (!bound.ok() || !bound->has_value()) {
    ADD_FAILURE() << "no bound";
    return -1;
  }
  return (*bound)->bytes;
}

// Every order of small random graphs (views, in-place hints, scratch,
// writes, pinned ops, alignment, outputs) needs at least the bound; the
// bound is reached by one of them on most graphs, and never exceeds the
// graph's own order's.
TEST(OrderBoundTest, NoValidOrderOfARandomGraphIsBelowTheBound) {
  int exact = 0;
  int graphs = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Graph graph = testing::RandomGraph(seed, 6);
    std::mt19937_64 rng(seed);
    for (Op& op : graph.ops) {
      if (rng() % 4 == 0)
        op.writes = {static_cast<int>(rng() % op.inputs.size())};
    }
    // Pins from their own stream, so the graphs are those the bound was
    // first proven on, with pins on some.
    std::mt19937_64 pins(seed + 1000);
    for (Op& op : graph.ops) op.pinned = pins() % 4 == 0;
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    ++graphs;
    const Bytes bound = BoundOf(graph);
    const ValidOrders valid(graph);
    const std::vector<int> own_order = Identity(graph.ops.size());
    ASSERT_TRUE(valid.Valid(own_order));
    const Bytes own = OrderBound(graph, own_order);
    const Bytes best = BestValidBound(graph, valid);
    EXPECT_LE(bound, best);
    EXPECT_LE(bound, own);
    EXPECT_GT(bound, 0);
    if (bound == best) ++exact;
  }
  EXPECT_GT(graphs, 250);
  // Exact on 65 of 300 with what is alive in every order alone, on 74 with
  // a cut per op, on 82 with the pairs of ops too.
  EXPECT_GT(exact, 78) << exact << " of " << graphs << " exact";
}

// Two independent chains, each a large tensor consumed into a small one,
// interleaved by the compiler: its order holds both large tensors at once.
// The best order runs one chain after the other (x, a1 and a2 alive at fa2:
// 1011 bytes). What every order holds is 1010, x and a1 at fa1: at fa2
// either x or b1 is also alive, whichever order, but neither is alive there
// in every order, and running fb1 and fb2 before fa2 holds only b2 (1 byte)
// there, which one cut at fa2 finds. The pair (fa1, fb1) finds 1011: with
// fb1 first, fa1 runs beside x and b1; with fa1 first, fb1 runs beside x
// and a1. Aligned to 64, b2 holds as much as x: one cut at fa2 finds the
// best order's peak.
Graph InterleavedChains() {
  Graph g;
  g.tensors = {T("x", 10, TensorKind::kInput),
               T("a1", 1000),
               T("b1", 1000),
               T("a2", 1),
               T("b2", 1),
               T("y", 1, TensorKind::kOutput)};
  g.ops = {O("fa1", {"x"}, {"a1"}), O("fb1", {"x"}, {"b1"}),
           O("fa2", {"a1"}, {"a2"}), O("fb2", {"b1"}, {"b2"}),
           O("join", {"a2", "b2"}, {"y"})};
  return g;
}

TEST(OrderBoundTest, InterleavedChainsCanHalveTheirPeak) {
  const Graph g = InterleavedChains();
  EXPECT_EQ(OrderBound(g, {0, 1, 2, 3, 4}), 10 + 2000);
  EXPECT_EQ(OrderBound(g, {0, 2, 1, 3, 4}), 10 + 1000 + 1);
  absl::StatusOr<std::optional<OrderLowerBound>> bound =
      LowerBoundOverOrders(g);
  ASSERT_TRUE(bound.ok() && bound->has_value());
  EXPECT_EQ((*bound)->bytes, 10 + 1000 + 1);
  EXPECT_EQ((*bound)->op, 0);  // fa1, of the pair
  // Alignment counts as BuildProblem counts it: a1 and a2 at fa2, with x
  // (fb1 not run yet) or b2 (fb2 run), 64 bytes either way.
  EXPECT_EQ(BoundOf(g, {.alignment = 64}), 1024 + 64 + 64);
  EXPECT_EQ(OrderBound(g, {0, 2, 1, 3, 4}, {.alignment = 64}), 1024 + 64 + 64);
}

// Sizes near the limit BuildProblem allows (their sum within kMaxBytes):
// the cuts' arithmetic stays inside int64 and still finds the best order's
// peak, a1, a2 and x (or b2) at fa2.
TEST(OrderBoundTest, TheCutsHoldAtTheLargestSizes) {
  constexpr Bytes kSmall = Bytes{1} << 58;
  constexpr Bytes kLarge = Bytes{1} << 60;
  Graph g;
  g.tensors = {T("x", kSmall, TensorKind::kInput),
               T("a1", kLarge),
               T("b1", kLarge),
               T("a2", kSmall),
               T("b2", kSmall),
               T("y", 1, TensorKind::kOutput)};
  g.ops = {O("fa1", {"x"}, {"a1"}), O("fb1", {"x"}, {"b1"}),
           O("fa2", {"a1"}, {"a2"}), O("fb2", {"b1"}, {"b2"}),
           O("join", {"a2", "b2"}, {"y"})};
  ASSERT_TRUE(BuildProblem(g).ok());
  EXPECT_EQ(BoundOf(g), kLarge + 2 * kSmall);
  EXPECT_EQ(OrderBound(g, {0, 2, 1, 3, 4}), kLarge + 2 * kSmall);
}

// Two branches each ending in a large graph output, as a training step's
// gradients: no op follows both producers, so no op's sum holds both, but
// both are alive at the last step of every order. The pair (ha, hb) adds
// the input of whichever runs last.
TEST(OrderBoundTest, EveryGraphOutputIsAliveAtTheLastStep) {
  Graph g;
  g.tensors = {T("x", 10, TensorKind::kInput), T("a", 1),
               T("ga", 1000, TensorKind::kOutput), T("b", 1),
               T("gb", 1000, TensorKind::kOutput)};
  g.ops = {O("fa", {"x"}, {"a"}), O("ha", {"a"}, {"ga"}), O("fb", {"x"}, {"b"}),
           O("hb", {"b"}, {"gb"})};
  const ValidOrders valid(g);
  EXPECT_EQ(BestValidBound(g, valid), 1000 + 1000 + 1);
  absl::StatusOr<std::optional<OrderLowerBound>> bound =
      LowerBoundOverOrders(g);
  ASSERT_TRUE(bound.ok() && bound->has_value());
  EXPECT_EQ((*bound)->bytes, 1000 + 1000 + 1);
  EXPECT_EQ((*bound)->op, 1);  // ha, of the pair
  EXPECT_EQ(BoundOf(g, {.alignment = 64}), 2 * 1024 + 64);
}

// A fan: every branch's result is read by one op, so all are alive there in
// every order.
TEST(OrderBoundTest, AFanInHoldsEveryBranch) {
  Graph g;
  g.tensors = {T("x", 8, TensorKind::kInput), T("y", 8, TensorKind::kOutput)};
  std::vector<std::string> branches;
  for (int i = 0; i < 5; ++i) {
    const std::string name = absl::StrCat("b", i);
    g.tensors.push_back(Tensor{.name = name, .size = 100});
    g.ops.push_back(
        Op{.name = absl::StrCat("f", i), .inputs = {"x"}, .outputs = {name}});
    branches.push_back(name);
  }
  g.ops.push_back(Op{.name = "sum", .inputs = branches, .outputs = {"y"}});
  EXPECT_EQ(BoundOf(g), 500 + 8);
}

// A write keeps a reader before it: the reader's input must outlive the
// branch that would otherwise run first, and the bound says so.
TEST(OrderBoundTest, WritesNarrowTheOrdersAndRaiseTheBound) {
  Graph g;
  g.tensors = {T("x", 10, TensorKind::kInput),
               T("a", 1000),
               T("r", 1),
               T("big", 500),
               T("w", 1000),
               T("y", 1, TensorKind::kOutput)};
  // read: a -> r; make: x -> big; write: a is written in place (w is a view
  // of a) after big is made; join reads r, big and w.
  g.ops = {O("fa", {"x"}, {"a"}), O("make", {"x"}, {"big"}),
           O("read", {"a"}, {"r"}),
           Op{.name = "write",
              .inputs = {"a", "big"},
              .outputs = {"w"},
              .alias = {{.output = 0, .input = 0}},
              .writes = {0}},
           O("join", {"r", "big", "w"}, {"y"})};
  const Bytes with_write = BoundOf(g);
  Graph free = g;
  free.ops[3].writes.clear();
  const Bytes without = BoundOf(free);
  EXPECT_GE(with_write, without);
  // Brute force agrees that no valid order is below either.
  for (const Graph* graph : {&g, &free}) {
    const ValidOrders valid(*graph);
    EXPECT_LE(graph == &g ? with_write : without,
              BestValidBound(*graph, valid));
  }
}

TEST(OrderBoundTest, GivesUpBeyondItsWork) {
  const Graph g = InterleavedChains();
  absl::StatusOr<std::optional<OrderLowerBound>> none =
      LowerBoundOverOrders(g, {}, {.work_limit = 1});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  Graph bad = g;
  bad.ops[0].inputs = {"nope"};
  absl::StatusOr<std::optional<OrderLowerBound>> error =
      LowerBoundOverOrders(bad);
  ASSERT_FALSE(error.ok());
  EXPECT_NE(std::string(error.status().message()).find("nope"),
            std::string::npos);
}

// On every bundled graph: positive, at most its own order's bound and at
// most the bound of the order "memory" finds.
TEST(OrderBoundTest, BundledGraphsAreBelowEveryOrderFound) {
  std::vector<std::string> paths = testing::ModelGraphs();
  for (const std::string& path : testing::TrainingGraphs())
    paths.push_back(path);
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    absl::StatusOr<std::string> text = ReadFile(testing::DataPath(path));
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<Graph> graph = ParseGraphJson(*text);
    ASSERT_TRUE(graph.ok()) << graph.status();
    const Bytes bound = BoundOf(*graph);
    const Problem own = *BuildProblem(*graph);
    EXPECT_GT(bound, 0);
    EXPECT_LE(bound, LowerBound(own));
    for (const std::string& name : OrderingNames()) {
      absl::StatusOr<Graph> reordered = ReorderGraph(*graph, name);
      ASSERT_TRUE(reordered.ok()) << reordered.status();
      EXPECT_LE(bound, LowerBound(*BuildProblem(*reordered))) << name;
    }
  }
}

}  // namespace
}  // namespace memplan
