// Rematerialization on small hand-made training steps: each rewritten graph
// computes what the original does (checked by running both on hashed
// values), keeps the write rules, and its verified plan fits the budget.

#include "remat/remat.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "effort/budget.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/verify.h"
#include "remat_test_util.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A chain of three layers, forward then backward: f1..f3 make a1..a3,
// which b3..b1 read again; x is read by f1 and b1, the constant w by f2.
// `write_w`: an op after f3 updates w in place (as an optimizer step or a
// batch-norm statistic would), so f2 cannot run again after it.
Graph TrainingChain(bool write_w) {
  auto act = [](const char* name, Bytes size) {
    return Tensor{.name = name, .size = size};
  };
  Graph g{.name = "chain"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput},
               {.name = "w", .size = 8, .kind = TensorKind::kConstant},
               act("a1", 100),
               act("a2", 100),
               act("a3", 100),
               act("loss", 10),
               act("g3", 100),
               act("g2", 100),
               act("g1", 100),
               {.name = "gx", .size = 100, .kind = TensorKind::kOutput}};
  auto op = [](const char* name, std::vector<std::string> in,
               std::vector<std::string> out, double cost) {
    return Op{.name = name,
              .type = "f",
              .inputs = std::move(in),
              .outputs = std::move(out),
              .cost = cost,
              .recomputable = true};
  };
  g.ops = {op("f1", {"x"}, {"a1"}, 5), op("f2", {"a1", "w"}, {"a2"}, 20),
           op("f3", {"a2"}, {"a3"}, 40), op("f4", {"a3"}, {"loss"}, 1)};
  if (write_w) {
    g.ops.push_back(Op{.name = "update_",
                       .type = "update_",
                       .inputs = {"w"},
                       .writes = {0},
                       .cost = 1});
  }
  for (Op o :
       {op("b4", {"loss"}, {"g3"}, 1), op("b3", {"g3", "a3"}, {"g2"}, 40),
        op("b2", {"g2", "a2"}, {"g1"}, 20),
        op("b1", {"g1", "a1", "x"}, {"gx"}, 5)}) {
    o.recomputable = false;  // the backward pass is not run again
    g.ops.push_back(o);
  }
  return g;
}

// What every rewrite must keep (remat_test_util.h), and a graph that did
// not fit as given.
void ExpectSound(const Graph& original, const RematResult& result,
                 Bytes budget) {
  testing::ExpectSoundRewrite(original, result, budget);
  EXPECT_GT(result.peak_without, budget);
}

TEST(RematTest, FitsTheChainIntoSmallerBudgets) {
  const Graph graph = TrainingChain(false);
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const Bytes peak = plain->plan.peak;
  EXPECT_EQ(peak, 600);  // x, a1, a2, a3, g3, g2 at b3
  for (Bytes budget : {peak - 100, peak - 200}) {
    absl::StatusOr<RematResult> result = Rematerialize(graph, budget);
    ASSERT_TRUE(result.ok()) << budget << ": " << result.status();
    EXPECT_EQ(result->peak_without, peak);
    EXPECT_FALSE(result->recomputed.empty());
    ExpectSound(graph, *result, budget);
  }
}

// Every budget from the peak down to the smallest reached gives a sound
// rewrite, the smaller budgets at a higher cost.
TEST(RematTest, SweepsTheBudgetsOfALongChain) {
  const Graph graph = testing::LongChain(8);
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  double last_cost = 0;
  Bytes smallest = plain->plan.peak;
  for (Bytes budget = plain->plan.peak - 100; budget > 0; budget -= 100) {
    absl::StatusOr<RematResult> result = Rematerialize(graph, budget);
    if (!result.ok()) {
      EXPECT_THAT(result.status().message(),
                  HasSubstr(absl::StrCat("the smallest peak found is ")));
      break;
    }
    ExpectSound(graph, *result, budget);
    EXPECT_GE(result->added_cost, last_cost) << budget;
    last_cost = result->added_cost;
    smallest = result->plan.plan.peak;
  }
  // Without recomputation every activation is alive at the loss: 10 of
  // them and the input; with it, well under half.
  EXPECT_EQ(plain->plan.peak, 1000);
  EXPECT_LE(smallest, 500) << smallest;
}

// A traced training step (views, in-place hints, a loss): every op that
// writes nothing is made recomputable at a cost of the bytes it makes.
TEST(RematTest, FitsATracedTrainingStep) {
  // 0.55 of the peak is about the least the heuristic reaches on it.
  const std::string name = "resnet18_train";
  const Graph step = testing::TrainingStepWithByteCosts(name);
  const Graph* graph = &step;
  PlanMemoryOptions options{.planner = "greedy_by_size"};
  absl::StatusOr<GraphPlan> plain = PlanMemory(*graph, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (double fraction : {0.9, 0.75, 0.6}) {
    const Bytes budget = static_cast<Bytes>(plain->plan.peak * fraction);
    absl::StatusOr<RematResult> result = Rematerialize(*graph, budget, options);
    ASSERT_TRUE(result.ok())
        << name << " " << fraction << ": " << result.status();
    ExpectSound(*graph, *result, budget);
  }
}

// EfficientNet-B0's training step as memplan.torch traces it (FLOPs,
// recomputable ops, batch-norm statistics written after their ops):
// fitted into 0.4 of its peak soundly, no op that writes, and no op whose
// inputs are written before the backward pass, run twice.
TEST(RematTest, FitsATracedStepWithCostsIntoALowBudget) {
  absl::StatusOr<LoadedInput> input = LoadInput(
      testing::DataPath("remat/efficientnet_b0_train_b8.json.gz"), {});
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->graph.has_value());
  const Graph& graph = *input->graph;
  // The quickest planner: the test is about the rewrite.
  const PlanMemoryOptions options{.planner = "greedy_by_size"};
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const Bytes budget = plain->plan.peak * 2 / 5;
  absl::StatusOr<RematResult> result = Rematerialize(graph, budget, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *result, budget);
  EXPECT_GT(result->recomputed.size(), 50u);
}

// resnet18's joint forward and backward graph (as AOTAutograd hands it to
// torch's partitioner, bench/remat_vs_torch.py): a budget 256 bytes above
// 54568496 is met by a rewrite placed at exactly 54568496, so that budget
// itself is met at no higher cost (the search's live bytes of the cheaper
// rewrite and its placed peak differ: the take-back tries the budget).
TEST(RematTest, APlacedPeakIsMetAsCheaplyAsTheBudgetThatReachedIt) {
  absl::StatusOr<LoadedInput> input =
      LoadInput(testing::DataPath("remat/resnet18_joint_b4.json.gz"), {});
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->graph.has_value());
  const Graph& graph = *input->graph;
  const Bytes peak = 54568496;
  absl::StatusOr<RematResult> above = Rematerialize(graph, peak + 256);
  ASSERT_TRUE(above.ok()) << above.status();
  ExpectSound(graph, *above, peak + 256);
  EXPECT_EQ(above->plan.plan.peak, peak);
  absl::StatusOr<RematResult> at = Rematerialize(graph, peak);
  ASSERT_TRUE(at.ok()) << at.status();
  ExpectSound(graph, *at, peak);
  EXPECT_LE(at->added_cost, above->added_cost);
  // torch's partition at activation_memory_budget 1.0 reaches this peak
  // recomputing 3,096,664 FLOPs.
  EXPECT_LT(at->added_cost, 3096664);
}

TEST(RematTest, AGraphThatFitsIsPlannedAsGiven) {
  const Graph graph = TrainingChain(false);
  absl::StatusOr<RematResult> result = Rematerialize(graph, 600);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->graph, graph);
  EXPECT_TRUE(result->recomputed.empty());
  EXPECT_EQ(result->added_cost, 0);
  EXPECT_EQ(result->plan.plan.peak, 600);
}

TEST(RematTest, NothingIsRecomputedAcrossAWriteOfItsInput) {
  Graph graph = TrainingChain(true);
  // w is planned here: the write keeps f2 from running again after it,
  // whatever it would free.
  PlanMemoryOptions options;
  options.build.plan_constants = true;
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph, options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<RematResult> result =
      Rematerialize(graph, plain->plan.peak - 100, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *result, plain->plan.peak - 100);
  for (const std::string& name : result->recomputed) {
    EXPECT_NE(name, std::string("f2") + kRecomputeSuffix);
  }
  // With every op but f2 made unfit, no rewrite is left (f2 would keep w,
  // 8 bytes, alive longer: the budget leaves room for that).
  const Bytes budget = plain->plan.peak - 90;
  for (Op& op : graph.ops) op.recomputable = op.name == "f2";
  absl::StatusOr<RematResult> none = Rematerialize(graph, budget, options);
  EXPECT_THAT(none.status().message(),
              AllOf(HasSubstr("no recomputation found fits graph \"chain\""),
                    HasSubstr(absl::StrCat("the smallest peak found is ",
                                           plain->plan.peak, " bytes"))));
  // Without the write, f2 alone fits the same budget.
  Graph unwritten = TrainingChain(false);
  for (Op& op : unwritten.ops) op.recomputable = op.name == "f2";
  absl::StatusOr<RematResult> f2 = Rematerialize(unwritten, budget, options);
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_EQ(f2->recomputed,
            std::vector<std::string>{std::string("f2") + kRecomputeSuffix});
  ExpectSound(unwritten, *f2, budget);
}

TEST(RematTest, AnInfeasibleBudgetGivesTheSmallestPeakFound) {
  const Graph graph = TrainingChain(false);
  absl::StatusOr<RematResult> result = Rematerialize(graph, 50);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              AllOf(HasSubstr("into 50 bytes"),
                    HasSubstr("the smallest peak found is "),
                    HasSubstr("(600 without recomputation)")));
  EXPECT_THAT(Rematerialize(graph, 0).status().message(),
              HasSubstr("give a positive number of bytes"));
  EXPECT_THAT(
      Rematerialize(graph, 500, {.reorder = "memory"}).status().message(),
      HasSubstr("leave reorder empty"));
}

// x -> conv (costly) -> c -> relu (cheap) -> r -> ... -> loss, and the
// backward pass reads r, then c: dropping r and running relu again (c is
// live for its own reader) costs 1; dropping c would cost the conv's 100.
Graph ConvRelu() {
  Graph g{.name = "conv_relu"};
  g.tensors = {{.name = "x", .size = 10, .kind = TensorKind::kInput},
               {.name = "c", .size = 100},
               {.name = "r", .size = 100},
               {.name = "h", .size = 100},
               {.name = "loss", .size = 10},
               {.name = "gr", .size = 10},
               {.name = "gx", .size = 10, .kind = TensorKind::kOutput}};
  auto op = [](const char* name, std::vector<std::string> in, const char* out,
               double cost, bool recomputable) {
    return Op{.name = name,
              .inputs = std::move(in),
              .outputs = {out},
              .cost = cost,
              .recomputable = recomputable};
  };
  g.ops = {op("conv", {"x"}, "c", 100, true),
           op("relu", {"c"}, "r", 1, true),
           op("fc", {"r"}, "h", 50, true),
           op("head", {"h"}, "loss", 5, true),
           op("b_fc", {"loss", "r"}, "gr", 50, false),
           op("b_conv", {"gr", "c", "x"}, "gx", 100, false)};
  return g;
}

TEST(RematTest, PrefersTheCheapOp) {
  const Graph graph = ConvRelu();
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  // x, c, r, h and the loss live at the head (320 bytes): dropping c
  // (cost 100) or r (cost 1, c being live) frees 100 bytes there; then fc
  // has the most (310).
  EXPECT_EQ(plain->plan.peak, 320);
  const Bytes budget = 310;
  absl::StatusOr<RematResult> result = Rematerialize(graph, budget);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *result, budget);
  EXPECT_EQ(result->recomputed,
            std::vector<std::string>{std::string("relu") + kRecomputeSuffix});
  EXPECT_EQ(result->added_cost, 1);
}

// Under 250 bytes fc's step needs c dropped too, which alone is enough:
// relu, taken first for the head, is taken back.
TEST(RematTest, TakesBackARewriteALaterOneMadeUnneeded) {
  const Graph graph = ConvRelu();
  absl::StatusOr<RematResult> result = Rematerialize(graph, 250);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *result, 250);
  EXPECT_EQ(result->recomputed,
            std::vector<std::string>{std::string("conv") + kRecomputeSuffix});
  EXPECT_EQ(result->added_cost, 100);
}

// X, made by an op that may not run again, feeds A and B, whose outputs
// only the backward pass reads; X itself is dead after B. Dropping a or b
// alone would keep X alive to the backward pass (nothing gained at the
// loss); dropping both keeps X once for the two.
TEST(RematTest, DropsOpsThatShareAnInputTogether) {
  Graph g{.name = "siblings"};
  g.tensors = {{.name = "x", .size = 10, .kind = TensorKind::kInput},
               {.name = "X", .size = 100},
               {.name = "a", .size = 100},
               {.name = "b", .size = 100},
               {.name = "c", .size = 200},
               {.name = "loss", .size = 10},
               {.name = "gb", .size = 10},
               {.name = "ga", .size = 10},
               {.name = "gx", .size = 10, .kind = TensorKind::kOutput}};
  auto op = [](const char* name, std::vector<std::string> in, const char* out,
               bool recomputable) {
    return Op{.name = name,
              .inputs = std::move(in),
              .outputs = {out},
              .cost = 10,
              .recomputable = recomputable};
  };
  g.ops = {
      op("bn", {"x"}, "X", false),        op("A", {"X"}, "a", true),
      op("B", {"X"}, "b", true),          op("C", {"x"}, "c", false),
      op("g", {"c"}, "loss", false),      op("bb", {"loss", "b"}, "gb", false),
      op("ba", {"gb", "a"}, "ga", false), op("bx", {"ga", "x"}, "gx", false)};
  absl::StatusOr<GraphPlan> plain = PlanMemory(g);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->plan.peak, 420);  // x, a, b, c and the loss at g
  absl::StatusOr<RematResult> result = Rematerialize(g, 400);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(g, *result, 400);
  std::vector<std::string> recomputed = result->recomputed;
  std::sort(recomputed.begin(), recomputed.end());
  EXPECT_EQ(recomputed,
            (std::vector<std::string>{std::string("A") + kRecomputeSuffix,
                                      std::string("B") + kRecomputeSuffix}));
}

// Whether an inserted op reads a tensor another inserted op made.
bool HasChain(const RematResult& result) {
  for (const Op& op : result.graph.ops) {
    if (!absl::StrContains(op.name, kRecomputeSuffix)) continue;
    for (const std::string& in : op.inputs) {
      if (absl::StrContains(in, kRecomputeSuffix)) return true;
    }
  }
  return false;
}

// LongChain whose backward ops read only the even layers' activations:
// running f4 again for b4 needs a3, which nothing else keeps.
Graph SparseChain(int n) {
  Graph g = testing::LongChain(n);
  for (Op& op : g.ops) {
    if (op.name[0] != 'b') continue;
    const int i = std::stoi(op.name.substr(1));
    if (i % 2 == 1) op.inputs.pop_back();
    if (i % 2 == 0) op.inputs.back() = absl::StrCat("a", i);
  }
  g.ops.back().inputs.push_back("x");
  return g;
}

// Deep budgets are reached only by running producers of dropped inputs
// again too.
TEST(RematTest, RecomputesChains) {
  const Graph graph = SparseChain(12);
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const Bytes budget = plain->plan.peak - 200;
  absl::StatusOr<RematResult> result = Rematerialize(graph, budget);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectSound(graph, *result, budget);
  EXPECT_TRUE(HasChain(*result));
}

// LongChain(n) with each activation read back through views: v<i> is a
// view of a<i> (an alias op, as reshape or transpose), w<i> a view of
// v<i>, and b<i+1> reads w<i> instead of a<i>. `write_view`: the views of
// a2 are written in place, so a2 and its views are never made again.
Graph ViewChain(int n, bool write_view) {
  Graph g = testing::LongChain(n);
  std::vector<Op> ops;
  for (Op& op : g.ops) {
    if (op.name[0] == 'b') {
      const int i = std::stoi(op.name.substr(1)) - 1;
      op.inputs[1] = absl::StrCat("w", i);
    }
    ops.push_back(op);
    if (op.name[0] != 'f') continue;
    const std::string a = op.outputs[0], i = a.substr(1);
    for (const std::string& view : {"v" + i, "w" + i}) {
      g.tensors.push_back({.name = view, .size = 100});
      ops.push_back(Op{.name = "view_" + view,
                       .type = "view",
                       .inputs = {view[0] == 'v' ? a : "v" + i},
                       .outputs = {view},
                       .alias = {{.output = 0, .input = 0}},
                       .recomputable = true});
    }
    if (write_view && i == "2") {
      ops.push_back(Op{.name = "scale_", .inputs = {"w2"}, .writes = {0}});
    }
  }
  g.ops = std::move(ops);
  return g;
}

// A producer is run again with the views that its later readers read, the
// views' copies aliasing the producer's copy; a group written in place is
// never made again.
TEST(RematTest, RecomputesAProducerWithItsViews) {
  for (bool write_view : {false, true}) {
    SCOPED_TRACE(write_view);
    const Graph graph = ViewChain(8, write_view);
    absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
    ASSERT_TRUE(plain.ok()) << plain.status();
    const Bytes budget = plain->plan.peak - 300;
    absl::StatusOr<RematResult> result = Rematerialize(graph, budget);
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectSound(graph, *result, budget);
    int views = 0;
    for (const Op& op : result->graph.ops) {
      if (op.type != "view" || op.name == testing::Origin(op.name)) continue;
      ++views;
      // The copy reads the copy of what its original read.
      EXPECT_NE(op.inputs[0], testing::Origin(op.inputs[0])) << op.name;
      EXPECT_EQ(op.alias.size(), 1u) << op.name;
      if (write_view)
        EXPECT_NE(testing::Origin(op.name).back(), '2') << op.name;
    }
    EXPECT_GT(views, 0);
    for (const std::string& name : result->recomputed) {
      if (write_view) EXPECT_NE(testing::Origin(name), "f2") << "a2 is written";
    }
  }
}

// The sweep: budgets evenly spaced from the peak without recomputation
// down to the smallest reached, each fitted soundly, the cost never lower
// at a smaller budget.
TEST(RematTest, SweepGoesFromThePeakToTheSmallest) {
  const Graph graph = testing::LongChain(8);
  absl::StatusOr<std::vector<RematSweepPoint>> sweep = RematSweep(graph, 5);
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  ASSERT_EQ(sweep->size(), 5u);
  EXPECT_EQ(sweep->front().budget, 1000);
  EXPECT_EQ(sweep->front().peak, 1000);
  EXPECT_EQ(sweep->front().added_cost, 0);
  EXPECT_EQ(sweep->front().recomputed, 0);
  for (size_t k = 1; k < sweep->size(); ++k) {
    const RematSweepPoint& p = (*sweep)[k];
    EXPECT_LT(p.budget, (*sweep)[k - 1].budget);
    EXPECT_LE(p.peak, p.budget);
    EXPECT_GE(p.added_cost, (*sweep)[k - 1].added_cost);
    absl::StatusOr<RematResult> fitted = Rematerialize(graph, p.budget);
    ASSERT_TRUE(fitted.ok()) << fitted.status();
    ExpectSound(graph, *fitted, p.budget);
    EXPECT_EQ(fitted->plan.plan.peak, p.peak);
    EXPECT_EQ(fitted->added_cost, p.added_cost);
  }
  // The last point is the smallest peak: a byte less is an error saying so.
  const Bytes smallest = sweep->back().peak;
  EXPECT_LE(smallest, 500);
  EXPECT_THAT(Rematerialize(graph, smallest - 1).status().message(),
              HasSubstr(absl::StrCat("the smallest peak found is ", smallest,
                                     " bytes")));
  EXPECT_THAT(RematSweep(graph, 1).status().message(),
              HasSubstr("at least 2 points"));
}

// The search counts its work in the planners' unit: a work limit bounds
// it, and the same limit gives the same rewrite.
TEST(RematTest, WorkIsCountedAndBounded) {
  const Graph graph = testing::LongChain(12);
  internal::WorkMeter meter;
  absl::StatusOr<RematResult> full = Rematerialize(graph, 700);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_GT(meter.counted(), 0);
  PlanMemoryOptions limited;
  limited.plan.work_limit = 1;  // one step of the search, then placement
  absl::StatusOr<RematResult> cut = Rematerialize(graph, 700, limited);
  ASSERT_FALSE(cut.ok());
  EXPECT_THAT(cut.status().message(),
              AllOf(HasSubstr("the smallest peak found is "),
                    HasSubstr("or a work limit above 1 units (the search "
                              "stopped at it)")));
  absl::StatusOr<RematResult> again = Rematerialize(graph, 700);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->graph, full->graph);
}

}  // namespace
}  // namespace memplan
