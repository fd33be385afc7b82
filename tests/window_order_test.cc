// The "window" op ordering: valid orders (checked independently of the
// library's DAG) on random graphs with writes, never worse than the graph's
// order or "memory"'s, the same order for the same graph, its work limit,
// and a graph of 10^4 ops ordered and planned under counted work.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "test_util.h"
#include "valid_orders.h"

namespace memplan {
namespace {

using testing::BestValidBound;
using testing::Identity;
using testing::OrderBound;
using testing::OwnOrMemoryBound;
using testing::ValidOrders;
using testing::WithWrites;

bool IsPermutation(std::vector<int> order) {
  std::sort(order.begin(), order.end());
  return order == Identity(order.size());
}

// Random graphs (views, in-place hints, scratch, writes, outputs,
// alignment, planned constants): a valid order whose peak is its lower
// bound, at most the graph's order's and "memory"'s, and at least the bound
// over all orders.
TEST(WindowOrderTest, ValidAndNeverWorseThanTracedOrMemory) {
  int graphs = 0;
  int below_memory = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const Graph graph =
        WithWrites(testing::RandomGraph(seed, 6 + seed % 40), seed);
    const BuildOptions options{.plan_constants = seed % 3 == 0,
                               .alignment = Bytes{1} << (seed % 5)};
    if (!BuildProblem(graph, options).ok()) continue;
    ++graphs;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    absl::StatusOr<WindowOrder> window = ComputeWindowOpOrder(graph, options);
    ASSERT_TRUE(window.ok()) << window.status();
    ASSERT_TRUE(IsPermutation(window->order));
    EXPECT_TRUE(ValidOrders(graph).Valid(window->order));
    EXPECT_EQ(window->peak, OrderBound(graph, window->order, options));
    EXPECT_LE(window->peak,
              OrderBound(graph, Identity(graph.ops.size()), options));
    absl::StatusOr<std::vector<int>> memory =
        ComputeOpOrder(graph, "memory", options);
    ASSERT_TRUE(memory.ok()) << memory.status();
    const Bytes memory_peak = OrderBound(graph, *memory, options);
    EXPECT_LE(window->peak, memory_peak);
    if (window->peak < memory_peak) ++below_memory;
    absl::StatusOr<std::optional<OrderLowerBound>> any =
        LowerBoundOverOrders(graph, options);
    ASSERT_TRUE(any.ok() && any->has_value());
    EXPECT_GE(window->peak, (*any)->bytes);
    // ComputeOpOrder gives the same order by name.
    absl::StatusOr<std::vector<int>> named =
        ComputeOpOrder(graph, "window", options);
    ASSERT_TRUE(named.ok()) << named.status();
    EXPECT_EQ(*named, window->order);
  }
  EXPECT_GT(graphs, 250);
  EXPECT_GT(below_memory, 0);  // the passes do lower peaks
}

// Past its work it stops, with an order no worse than the graph's or
// "memory"'s, and the work counted stays near the limit; the same graph
// and limit give the same order and work.
TEST(WindowOrderTest, StopsAtItsWorkAndIsDeterministic) {
  int cut = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const Graph graph =
        WithWrites(testing::RandomGraph(seed, 200), seed, /*one_in=*/8);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Bytes incumbent = OwnOrMemoryBound(graph);
    for (int64_t limit : {20'000, 200'000, 5'000'000}) {
      absl::StatusOr<WindowOrder> a =
          ComputeWindowOpOrder(graph, {}, {.work_limit = limit});
      absl::StatusOr<WindowOrder> b =
          ComputeWindowOpOrder(graph, {}, {.work_limit = limit});
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->order, b->order);
      EXPECT_EQ(a->work, b->work);
      EXPECT_EQ(a->passes, b->passes);
      EXPECT_TRUE(ValidOrders(graph).Valid(a->order));
      EXPECT_LE(a->peak, incumbent);
      EXPECT_EQ(a->peak, OrderBound(graph, a->order));
      // It stops within one step of the widest beam past the limit: 256
      // states, each trying 64 positions and looking at their lists.
      EXPECT_LE(a->work, limit + 256 * 64 * 64);
      if (a->cut) ++cut;
    }
  }
  EXPECT_GT(cut, 0);  // the limit bites
}

// A graph of 10^4 ops (with writes): ordered under a counted work limit,
// then planned under counted work; the order is valid and the plan
// verified, and PlanMemory with reorder "window" plans the same order.
TEST(WindowOrderTest, ALargeGraphIsOrderedAndPlannedUnderCountedWork) {
  const Graph graph =
      WithWrites(testing::RandomGraph(7, 10'000), 7, /*one_in=*/50);
  ASSERT_TRUE(BuildProblem(graph).ok());
  const int64_t limit = 30'000'000;
  absl::StatusOr<WindowOrder> window =
      ComputeWindowOpOrder(graph, {}, {.work_limit = limit});
  ASSERT_TRUE(window.ok()) << window.status();
  ASSERT_TRUE(IsPermutation(window->order));
  EXPECT_TRUE(ValidOrders(graph).Valid(window->order));
  EXPECT_LE(window->work, limit + 256 * 64 * 64);
  EXPECT_EQ(window->peak, OrderBound(graph, window->order));
  EXPECT_LE(window->peak, OrderBound(graph, Identity(graph.ops.size())));

  absl::StatusOr<Problem> problem =
      BuildProblem(PermuteOps(graph, window->order));
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan = PlanMemory(
      *problem, {.planner = "greedy_by_size", .plan = testing::CountedWork(1)});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
  EXPECT_EQ(plan->lower_bound, window->peak);
  EXPECT_GE(plan->peak, window->peak);
}

// reorder "placed": the plan of the smallest placed peak among the graph's
// order, "memory"'s, "window"'s and "optimal"'s, carrying its order and the
// name of the ordering that gave it; the same plan as planning that
// ordering by name.
TEST(WindowOrderTest, PlacedKeepsThePlanOfTheSmallestPlacedPeak) {
  int reordered = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Graph graph =
        WithWrites(testing::RandomGraph(seed, 10 + seed % 30), seed);
    if (!BuildProblem(graph).ok()) continue;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const PlanMemoryOptions options{.planner = "greedy_by_size",
                                    .plan = testing::CountedWork(1),
                                    .reorder = kPlacedOrdering};
    absl::StatusOr<GraphPlan> placed = PlanMemory(graph, options);
    ASSERT_TRUE(placed.ok()) << placed.status();
    EXPECT_TRUE(VerifyPlan(placed->problem, placed->plan).ok());
    EXPECT_TRUE(ValidOrders(graph).Valid(placed->op_order));
    for (const char* name : {"", "memory", "window", "optimal"}) {
      PlanMemoryOptions one = options;
      one.reorder = name;
      absl::StatusOr<GraphPlan> plan = PlanMemory(graph, one);
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_TRUE(VerifyPlan(plan->problem, plan->plan).ok());
      EXPECT_EQ(plan->reorder, name);
      EXPECT_LE(placed->plan.peak, plan->plan.peak) << name;
      if (name == placed->reorder) {
        EXPECT_EQ(plan->op_order, placed->op_order);
        EXPECT_EQ(plan->plan.peak, placed->plan.peak);
        EXPECT_EQ(plan->problem, placed->problem);
      }
    }
    if (!placed->reorder.empty()) ++reordered;
  }
  EXPECT_GT(reordered, 0);  // another order than the graph's wins somewhere
}

// A training step in miniature, its backward pass `chain` ops long between
// the two layers: each weight gradient (a graph output, alive to the end)
// needs only small inputs. Produced where the backward pass reaches it,
// the second layer's gradient stands beside the first layer's activation
// and its large input gradient; run last, beside neither. "memory", one op
// at a time, runs it first (it adds less at once than the input gradient).
Graph TrainingStep(int chain) {
  using testing::O;
  using testing::T;
  Graph g;
  g.tensors = {T("x", 10, TensorKind::kInput),
               T("a1", 1000),
               T("s1", 10),
               T("a2", 1000),
               T("s2", 10),
               T("l", 10),
               T("d2", 4000),
               T("d1", 10, TensorKind::kOutput),
               T("w2", 3000, TensorKind::kOutput),
               T("w1", 3000, TensorKind::kOutput)};
  g.ops = {O("f1", {"x"}, {"a1", "s1"}), O("f2", {"a1"}, {"a2", "s2"}),
           O("loss", {"a2"}, {"l"}), O("gw2", {"l", "s2"}, {"w2"}),
           O("gx2", {"l", "a2"}, {"d2"})};
  std::string last = "d2";
  for (int i = 0; i < chain; ++i) {
    const std::string e = absl::StrCat("e", i);
    g.tensors.push_back(Tensor{.name = e, .size = 10});
    g.ops.push_back(
        Op{.name = absl::StrCat("c", i), .inputs = {last}, .outputs = {e}});
    last = e;
  }
  g.ops.push_back(O("gw1", {"d2", "s1"}, {"w1"}));
  g.ops.push_back(
      Op{.name = "gx1", .inputs = {last, "d2", "a1"}, .outputs = {"d1"}});
  return g;
}

// "window" defers the gradients: the best valid order's peak (by brute
// force on the short step), also where the step is too long for its
// segments to reach from the gradient to the peak.
TEST(WindowOrderTest, DefersTheGradientsOfATrainingStep) {
  const Graph short_step = TrainingStep(0);
  const Bytes best = BestValidBound(short_step, ValidOrders(short_step));
  for (int chain : {0, 100}) {
    SCOPED_TRACE(absl::StrCat("chain ", chain));
    const Graph g = TrainingStep(chain);
    absl::StatusOr<std::vector<int>> memory = ComputeOpOrder(g, "memory");
    ASSERT_TRUE(memory.ok()) << memory.status();
    EXPECT_GT(OrderBound(g, *memory), best);
    absl::StatusOr<WindowOrder> window = ComputeWindowOpOrder(g);
    ASSERT_TRUE(window.ok()) << window.status();
    EXPECT_TRUE(ValidOrders(g).Valid(window->order));
    EXPECT_EQ(window->peak, OrderBound(g, window->order));
    EXPECT_EQ(window->peak, best);
    // The second layer's gradient runs after the first layer's input
    // gradient.
    const auto step = [&](const char* name) {
      for (int k = 0; k < static_cast<int>(g.ops.size()); ++k) {
        if (g.ops[window->order[k]].name == name) return k;
      }
      return -1;
    };
    EXPECT_GT(step("gw2"), step("gx1"));
  }
}

}  // namespace
}  // namespace memplan
