// The op orderings' targets, with --memplan_order_targets (see the top of
// memplan_bench.cc).

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench_util.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"

namespace memplan::bench {
namespace {

// A RandWire-style graph (Xie et al. 2019): `stages` Watts-Strogatz
// small-world DAGs of `nodes` ops each (every node wired to its k = 4 ring
// neighbours, each edge rewired with probability 0.75, edges from the lower
// index), a node summing its predecessors' tensors into one of its own. A
// stage's sources read the previous stage's output, its sinks are summed
// into the stage's output; tensors halve per stage and vary fourfold per
// node. The ops come in index order, as a tracer would record them. With
// `two_ops`, a node is two ops, as traced: one sums its inputs into a
// tensor of the node's size, one (the convolution) makes the node's
// output from it.
Graph RandWireGraph(uint64_t seed, int stages, int nodes,
                    bool two_ops = false) {
  std::mt19937_64 rng(seed);
  Graph g;
  g.name = absl::StrCat("randwire_", seed);
  g.tensors.push_back(
      Tensor{.name = "input", .size = 1 << 20, .kind = TensorKind::kInput});
  std::string previous = "input";
  for (int s = 0; s < stages; ++s) {
    const Bytes base = Bytes{1 << 18} >> s;
    std::vector<std::vector<int>> pred(nodes);
    const int k = 4;
    for (int i = 0; i < nodes; ++i) {
      for (int d = 1; d <= k / 2; ++d) {
        int a = i;
        int b = (i + d) % nodes;
        if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.75) {
          b = static_cast<int>(rng() % nodes);
        }
        if (a == b) continue;
        if (a > b) std::swap(a, b);
        if (std::find(pred[b].begin(), pred[b].end(), a) == pred[b].end()) {
          pred[b].push_back(a);
        }
      }
    }
    std::vector<bool> has_succ(nodes, false);
    for (int i = 0; i < nodes; ++i) {
      for (int p : pred[i]) has_succ[p] = true;
    }
    auto name = [&](int i) { return absl::StrCat("s", s, "n", i); };
    for (int i = 0; i < nodes; ++i) {
      Op op{.name = name(i), .type = "Node"};
      if (pred[i].empty()) op.inputs.push_back(previous);
      std::sort(pred[i].begin(), pred[i].end());
      for (int p : pred[i]) op.inputs.push_back(name(p));
      const Bytes size = base * (1 + static_cast<int>(rng() % 4));
      if (two_ops) {
        const std::string sum = absl::StrCat(name(i), "sum");
        g.tensors.push_back(Tensor{.name = sum, .size = size});
        g.ops.push_back(Op{
            .name = sum, .type = "Sum", .inputs = op.inputs, .outputs = {sum}});
        op.type = "Conv";
        op.inputs = {sum};
      }
      op.outputs.push_back(name(i));
      g.tensors.push_back(Tensor{.name = name(i), .size = size});
      g.ops.push_back(std::move(op));
    }
    Op out{.name = absl::StrCat("s", s, "out"), .type = "Sum"};
    for (int i = 0; i < nodes; ++i) {
      if (!has_succ[i]) out.inputs.push_back(name(i));
    }
    out.outputs.push_back(out.name);
    g.tensors.push_back(Tensor{.name = out.name,
                               .size = base,
                               .kind = s + 1 == stages
                                           ? TensorKind::kOutput
                                           : TensorKind::kActivation});
    previous = out.name;
    g.ops.push_back(std::move(out));
  }
  return g;
}

// A cell-based network as neural architecture search finds them, traced:
// `cells` cells, each reading the outputs of the two cells before it (the
// stem's for the first), each input first brought to the cell's size by one
// op. Then `blocks` blocks, each adding two of the cell's states (its two
// inputs or an earlier block) each passed through an operation: a
// separable convolution (two ops, ReLU then the convolution) or a pooling
// or identity (one op). The cell's output concatenates the blocks (DARTS:
// all; NASNet: those no block of the cell reads). The cells a third and two
// thirds in reduce: their states are half the bytes. Random choices from
// `seed`.
Graph CellGraph(uint64_t seed, int cells, int blocks, bool nasnet) {
  std::mt19937_64 rng(seed);
  Graph g;
  g.name = absl::StrCat(nasnet ? "nasnet_" : "darts_", seed);
  Bytes size = Bytes{1} << 18;
  g.tensors.push_back(
      Tensor{.name = "input", .size = 1 << 18, .kind = TensorKind::kInput});
  g.tensors.push_back(Tensor{.name = "stem", .size = 2 * size});
  g.ops.push_back(Op{.name = "stem",
                     .type = "Conv",
                     .inputs = {"input"},
                     .outputs = {"stem"}});
  std::string before = "stem";
  std::string last = "stem";
  for (int c = 0; c < cells; ++c) {
    if (c == cells / 3 || c == 2 * cells / 3) size /= 2;
    auto add = [&](const std::string& name, Bytes bytes, const char* type,
                   std::vector<std::string> inputs) {
      g.tensors.push_back(Tensor{.name = name, .size = bytes});
      g.ops.push_back(Op{.name = name,
                         .type = type,
                         .inputs = std::move(inputs),
                         .outputs = {name}});
    };
    const std::string cell = absl::StrCat("c", c);
    std::vector<std::string> states = {cell + "p0", cell + "p1"};
    add(states[0], size, "Conv", {before});
    add(states[1], size, "Conv", {last});
    std::vector<bool> read(2 + blocks, false);
    for (int b = 0; b < blocks; ++b) {
      const std::string block = absl::StrCat(cell, "b", b);
      std::vector<std::string> edges;
      const int choices = static_cast<int>(states.size());
      int x = static_cast<int>(rng() % choices);
      int y = static_cast<int>(rng() % (choices - 1));
      if (y >= x) ++y;
      for (int from : {x, y}) {
        read[from] = true;
        const std::string edge = absl::StrCat(block, "e", edges.size());
        if (rng() % 2 == 0) {
          add(edge + "relu", size, "Relu", {states[from]});
          add(edge, size, "SepConv", {edge + "relu"});
        } else {
          add(edge, size, "Pool", {states[from]});
        }
        edges.push_back(edge);
      }
      add(block, size, "Add", edges);
      states.push_back(block);
    }
    std::vector<std::string> concat;
    for (int b = 0; b < blocks; ++b) {
      if (!nasnet || !read[2 + b]) concat.push_back(states[2 + b]);
    }
    add(cell, size * static_cast<Bytes>(concat.size()), "Concat", concat);
    before = last;
    last = cell;
  }
  g.tensors.push_back(
      Tensor{.name = "logits", .size = 4096, .kind = TensorKind::kOutput});
  g.ops.push_back(Op{.name = "head",
                     .type = "Linear",
                     .inputs = {last},
                     .outputs = {"logits"}});
  return g;
}

// `width` branches from one input, each a large tensor reduced to a small
// one, joined at the end; the compiler runs every branch's first op first.
Graph FanGraph(int width) {
  Graph g;
  g.name = absl::StrCat("fan_", width);
  g.tensors.push_back(
      Tensor{.name = "x", .size = 64, .kind = TensorKind::kInput});
  Op join{.name = "join", .type = "Concat", .outputs = {"y"}};
  for (int b = 0; b < width; ++b) {
    g.tensors.push_back(Tensor{.name = absl::StrCat("big", b), .size = 4096});
    g.tensors.push_back(Tensor{.name = absl::StrCat("small", b), .size = 64});
    g.ops.push_back(Op{.name = absl::StrCat("up", b),
                       .type = "Up",
                       .inputs = {"x"},
                       .outputs = {absl::StrCat("big", b)}});
    join.inputs.push_back(absl::StrCat("small", b));
  }
  for (int b = 0; b < width; ++b) {
    g.ops.push_back(Op{.name = absl::StrCat("down", b),
                       .type = "Down",
                       .inputs = {absl::StrCat("big", b)},
                       .outputs = {absl::StrCat("small", b)}});
  }
  g.tensors.push_back(
      Tensor{.name = "y", .size = 64, .kind = TensorKind::kOutput});
  g.ops.push_back(std::move(join));
  return g;
}

// A chain of DARTS-style cells (Liu et al. 2019): each cell reads the two
// cells before it and has four nodes; a node sums two branches, each an op
// on an earlier state of the cell (its two inputs or an earlier node)
// chosen at random, of a random kind (one to four times the cell's size
// while it runs: a scratch of that size); the cell's output is a
// projection of its four nodes. The ops come branch by branch, node by
// node, as a tracer would record them.
Graph CellChainGraph(uint64_t seed, int cells) {
  std::mt19937_64 rng(seed);
  Graph g;
  g.name = absl::StrCat("cells_", seed);
  const Bytes size = 1 << 16;
  g.tensors.push_back(
      Tensor{.name = "input", .size = size, .kind = TensorKind::kInput});
  std::string before = "input";
  std::string last = "input";
  for (int c = 0; c < cells; ++c) {
    std::vector<std::string> state = {before, last};
    for (int node = 0; node < 4; ++node) {
      Op sum{.name = absl::StrCat("c", c, "n", node), .type = "Add"};
      for (int b = 0; b < 2; ++b) {
        const std::string& in = state[rng() % state.size()];
        const std::string out = absl::StrCat(sum.name, "b", b);
        const Bytes mult = 1 + static_cast<Bytes>(rng() % 4);
        Op op{.name = out, .type = "Branch", .inputs = {in}, .outputs = {out}};
        if (mult > 1) {
          const std::string scratch = absl::StrCat(out, "_scratch");
          g.tensors.push_back(Tensor{.name = scratch,
                                     .size = size * (mult - 1),
                                     .kind = TensorKind::kScratch});
          op.scratch.push_back(scratch);
        }
        g.tensors.push_back(Tensor{.name = out, .size = size});
        sum.inputs.push_back(out);
        g.ops.push_back(std::move(op));
      }
      sum.outputs.push_back(sum.name);
      g.tensors.push_back(Tensor{.name = sum.name, .size = size});
      state.push_back(sum.name);
      g.ops.push_back(std::move(sum));
    }
    Op proj{.name = absl::StrCat("c", c), .type = "Project"};
    proj.inputs.assign(state.begin() + 2, state.end());
    proj.outputs.push_back(proj.name);
    g.tensors.push_back(Tensor{.name = proj.name,
                               .size = size,
                               .kind = c + 1 == cells
                                           ? TensorKind::kOutput
                                           : TensorKind::kActivation});
    before = last;
    last = proj.name;
    g.ops.push_back(std::move(proj));
  }
  return g;
}

void OneRun(benchmark::internal::Benchmark* b) {
  b->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
}

Bytes BoundOf(const Graph& graph, const std::vector<int>& order) {
  absl::StatusOr<Problem> problem = BuildProblem(PermuteOps(graph, order));
  return problem.ok() ? LowerBound(*problem) : -1;
}

// One ordering of one graph: the time of ComputeOpOrder (or, for
// "optimal", ComputeOptimalOpOrder; "optimal_1e10" with 10^10 work; for
// "window", ComputeWindowOpOrder); counters: ops, traced (the graph's own
// order's lower bound), peak (the order's), ratio (peak / traced), any_order
// (LowerBoundOverOrders with work for 10^5 ops, -1 beyond it), placed (the
// peak of the default planner's plan of the order, verified; -1 when it
// fails), proven, bound and work for "optimal", passes and work for
// "window". Three runs (medians), or one when `once`.
void AddOrderRun(const std::string& label, const Graph* graph,
                 const std::string& ordering, bool once = false) {
  benchmark::RegisterBenchmark(
      absl::StrCat("BM_order_", ordering, "_", label).c_str(),
      [graph, ordering, once](benchmark::State& state) {
        std::vector<int> order;
        std::optional<OptimalOrder> optimal;
        std::optional<WindowOrder> window;
        for (auto _ : state) {
          if (ordering == "optimal" || ordering == "optimal_1e10") {
            // "optimal_1e10": 10^10 steps for the search (10^9 units) and
            // as many for the beams.
            PlanOptions effort;
            if (ordering != "optimal") effort.work_limit = 2'000'000'000;
            absl::StatusOr<OptimalOrder> result =
                ComputeOptimalOpOrder(*graph, {}, effort);
            if (!result.ok()) {
              state.SkipWithError(result.status().ToString().c_str());
              return;
            }
            order = result->order;
            optimal = std::move(*result);
          } else if (ordering == "window") {
            absl::StatusOr<WindowOrder> result = ComputeWindowOpOrder(*graph);
            if (!result.ok()) {
              state.SkipWithError(result.status().ToString().c_str());
              return;
            }
            order = result->order;
            window = std::move(*result);
          } else if (ordering == "traced") {
            order.resize(graph->ops.size());
            std::iota(order.begin(), order.end(), 0);
          } else {
            absl::StatusOr<std::vector<int>> result =
                ComputeOpOrder(*graph, ordering);
            if (!result.ok()) {
              state.SkipWithError(result.status().ToString().c_str());
              return;
            }
            order = *std::move(result);
          }
        }
        std::vector<int> identity(graph->ops.size());
        std::iota(identity.begin(), identity.end(), 0);
        const Bytes traced = BoundOf(*graph, identity);
        const Bytes peak = BoundOf(*graph, order);
        absl::StatusOr<std::optional<OrderLowerBound>> any =
            LowerBoundOverOrders(*graph, {}, {.work_limit = 1'000'000'000});
        // Placed by the default planner: whether placement reaches the
        // order's bound (graphs of up to 2,500 ops, and every traced one).
        double placed = -1;
        if (graph->ops.size() <= 2'501 || once) {
          absl::StatusOr<Problem> problem =
              BuildProblem(PermuteOps(*graph, order));
          absl::StatusOr<Plan> plan =
              problem.ok() ? PlanMemory(*problem) : problem.status();
          if (plan.ok()) placed = static_cast<double>(plan->peak);
        }
        state.counters["placed"] = placed;
        state.counters["ops"] = static_cast<double>(graph->ops.size());
        state.counters["traced"] = static_cast<double>(traced);
        state.counters["peak"] = static_cast<double>(peak);
        state.counters["ratio"] =
            traced > 0 ? static_cast<double>(peak) / traced : 1.0;
        state.counters["any_order"] = any.ok() && any->has_value()
                                          ? static_cast<double>((*any)->bytes)
                                          : -1.0;
        if (optimal.has_value()) {
          state.counters["proven"] = optimal->proven ? 1 : 0;
          state.counters["bound"] = static_cast<double>(optimal->bound);
          state.counters["work"] = static_cast<double>(optimal->work);
        }
        if (window.has_value()) {
          state.counters["passes"] = window->passes;
          state.counters["work"] = static_cast<double>(window->work);
        }
      })
      ->Apply(once ? OneRun : ThreeRuns);
}

// The limited rows: ComputeOptimalOpOrder with `limit` of wall-clock time
// on `graph`; its CPU time (counter cpu_over_limit: CPU seconds over the
// limit, which should stay below about 1.1) and the order's figures.
void AddLimitedOptimalRun(const std::string& label, const Graph* graph,
                          absl::Duration limit) {
  benchmark::RegisterBenchmark(
      absl::StrCat("BM_order_optimal_limited_", label).c_str(),
      [graph, limit](benchmark::State& state) {
        std::optional<OptimalOrder> optimal;
        for (auto _ : state) {
          PlanOptions effort;
          effort.time_limit = limit;
          absl::StatusOr<OptimalOrder> result =
              ComputeOptimalOpOrder(*graph, {}, effort);
          if (!result.ok()) {
            state.SkipWithError(result.status().ToString().c_str());
            return;
          }
          optimal = *std::move(result);
        }
        std::vector<int> identity(graph->ops.size());
        std::iota(identity.begin(), identity.end(), 0);
        const Bytes traced = BoundOf(*graph, identity);
        state.counters["limit_s"] = absl::ToDoubleSeconds(limit);
        state.counters["ops"] = static_cast<double>(graph->ops.size());
        state.counters["ratio"] =
            traced > 0 ? static_cast<double>(optimal->peak) / traced : 1.0;
        state.counters["cut"] = optimal->cut ? 1 : 0;
        state.counters["work"] = static_cast<double>(optimal->work);
      })
      ->Iterations(1)
      ->MeasureProcessCPUTime()
      ->Unit(benchmark::kMillisecond);
}

// The generated graphs of 99-195 ops and the bundled training steps.
std::vector<std::pair<std::string, Graph>>* SmallGraphs() {
  auto* out = new std::vector<std::pair<std::string, Graph>>();
  for (const char* name : {"mlp_train", "resnet18_train", "mobilenet_v2_train",
                           "transformer_lm_train"}) {
    absl::StatusOr<std::string> text = ReadFile(
        absl::StrCat(settings().data_dir, "/training/", name, ".json"));
    if (!text.ok()) continue;
    absl::StatusOr<Graph> graph = ParseGraphJson(*text);
    if (graph.ok()) out->emplace_back(name, *std::move(graph));
  }
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    out->emplace_back(absl::StrCat("randwire_", seed),
                      RandWireGraph(seed, 3, 32));
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    out->emplace_back(absl::StrCat("randwire64_", seed),
                      RandWireGraph(seed, 3, 64));
  }
  // Irregular graphs of 150-200 ops: RandWire-style with two ops per
  // node (3 stages of 32 nodes: 195 ops), DARTS-like cells (4 blocks,
  // 9 cells) and NASNet-like cells (5 blocks, 7 cells).
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    out->emplace_back(absl::StrCat("randwire2op_", seed),
                      RandWireGraph(seed, 3, 32, /*two_ops=*/true));
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    out->emplace_back(absl::StrCat("darts_", seed),
                      CellGraph(seed, 9, 4, /*nasnet=*/false));
  }
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    out->emplace_back(absl::StrCat("nasnet_", seed),
                      CellGraph(seed, 7, 5, /*nasnet=*/true));
  }
  return out;
}

// Traced PyTorch graphs whose order matters (bench/data/order, made by
// scripts/make_order_graphs.py).
std::vector<std::pair<std::string, Graph>>* TracedGraphs() {
  auto* out = new std::vector<std::pair<std::string, Graph>>();
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& e :
       fs::directory_iterator(settings().data_dir + "/order", ec)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json") || name.ends_with(".json.gz")) {
      paths.push_back(e.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadFile(path);
    absl::StatusOr<Graph> graph =
        text.ok() ? ParseGraphJson(*text) : text.status();
    if (!graph.ok()) {
      fprintf(stderr, "memplan_bench: skipping %s: %s\n", path.c_str(),
              std::string(graph.status().message()).c_str());
      continue;
    }
    std::string name = fs::path(path).filename().string();
    name = name.substr(0, name.find('.'));
    out->emplace_back("order_" + name, *std::move(graph));
  }
  return out;
}

// The scalable ordering's sizes: 2,500 and 10^5 ops.
std::vector<std::pair<std::string, Graph>>* LargeGraphs() {
  auto* out = new std::vector<std::pair<std::string, Graph>>();
  out->emplace_back("randwire_wide_2500", RandWireGraph(1, 4, 624));
  out->emplace_back("cells_2500", CellChainGraph(1, 192));
  out->emplace_back("fan_2500", FanGraph(1250));
  out->emplace_back("randwire_wide_100000", RandWireGraph(1, 4, 24999));
  out->emplace_back("cells_100000", CellChainGraph(1, 7692));
  out->emplace_back("fan_100000", FanGraph(50000));
  return out;
}

constexpr const char* kOrderings[] = {"traced", "reverse_postorder", "memory",
                                      "optimal", "window"};

}  // namespace

void RegisterOrderTargets() {
  static std::vector<std::pair<std::string, Graph>>* graphs = SmallGraphs();
  for (const auto& [label, graph] : *graphs) {
    for (const char* ordering : kOrderings) {
      AddOrderRun(label, &graph, ordering);
    }
    // 20 times the default work (some 10 s of CPU, 1 GB): what more work
    // proves.
    if (graph.ops.size() > 150) AddOrderRun(label, &graph, "optimal_1e10");
  }
  static const Graph* fan = new Graph(FanGraph(20000));
  for (const char* ordering : kOrderings) {
    AddOrderRun("fan_20000", fan, ordering);
  }
  static std::vector<std::pair<std::string, Graph>>* traced = TracedGraphs();
  for (const auto& [label, graph] : *traced) {
    for (const char* ordering : kOrderings) {
      AddOrderRun(label, &graph, ordering, /*once=*/true);
    }
  }
  static std::vector<std::pair<std::string, Graph>>* large = LargeGraphs();
  for (const auto& [label, graph] : *large) {
    for (const char* ordering : {"traced", "memory", "window"}) {
      AddOrderRun(label, &graph, ordering);
    }
  }
  // --time-limit's bound on "optimal" at 10^5 ops: CPU within about 1.1x.
  for (const auto& [label, graph] : *large) {
    if (graph.ops.size() < 10'000) continue;
    AddLimitedOptimalRun(absl::StrCat(label, "_1s"), &graph, absl::Seconds(1));
  }
}

}  // namespace memplan::bench
