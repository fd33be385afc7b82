// Seeded synthetic workloads (see memplan/synthetic.h).

#include "memplan/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/problem.h"

namespace memplan {
namespace {

absl::Status CheckOptions(const SyntheticOptions& o) {
  if (o.buffers < 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic workloads need at least 4 buffers, not ", o.buffers));
  }
  if (o.buffers > (int64_t{1} << 30)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "synthetic workloads have at most 2^30 buffers, not ", o.buffers));
  }
  if (o.granule <= 0 || (o.granule & (o.granule - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the granule ", o.granule, " is not a power of two"));
  }
  if (o.min_size <= 0 || o.max_size < o.min_size ||
      o.max_size > (Bytes{1} << 40)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sizes must satisfy 0 < min_size <= max_size <= 2^40, not [",
        o.min_size, ", ", o.max_size, "]"));
  }
  if (o.max_lifetime < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_lifetime must be positive, not ", o.max_lifetime));
  }
  return absl::OkStatus();
}

// Random draws shared by every family. Sizes stay multiples of the granule
// inside [min, max] after rounding both bounds up to the granule.
class Draw {
 public:
  explicit Draw(const SyntheticOptions& o)
      : rng_(o.seed),
        granule_(o.granule),
        min_(RoundUp(o.min_size)),
        max_(RoundUp(o.max_size)) {}

  int64_t Int(int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  double Real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  // Log-uniform in [lo, hi] (integers).
  int64_t LogUniform(int64_t lo, int64_t hi) {
    if (lo >= hi) return lo;
    const double x = std::exp(Real(std::log(static_cast<double>(lo)),
                                   std::log(static_cast<double>(hi) + 1.0)));
    return std::clamp(static_cast<int64_t>(x), lo, hi);
  }
  // A size around `target`, jittered by [0.5, 1], clamped and rounded.
  Bytes SizeNear(double target) { return Clamp(target * Real(0.5, 1.0)); }
  Bytes AnySize() { return Clamp(static_cast<double>(LogUniform(min_, max_))); }
  Bytes Clamp(double bytes) const {
    const Bytes b = std::clamp(static_cast<Bytes>(bytes), min_, max_);
    return std::min(RoundUp(b), max_);
  }
  Bytes max() const { return max_; }
  std::mt19937_64& rng() { return rng_; }

 private:
  Bytes RoundUp(Bytes b) const {
    return (b + granule_ - 1) / granule_ * granule_;
  }

  std::mt19937_64 rng_;
  Bytes granule_;
  Bytes min_;
  Bytes max_;
};

// Appends tensors and ops; tensors are referred to by index until the end.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name, int64_t reserve) {
    graph_.name = std::move(name);
    graph_.tensors.reserve(reserve);
    graph_.ops.reserve(reserve);
  }
  int64_t Tensor(std::string_view prefix, Bytes size,
                 TensorKind kind = TensorKind::kActivation) {
    const int64_t id = static_cast<int64_t>(graph_.tensors.size());
    memplan::Tensor tensor;
    tensor.name = absl::StrCat(std::string(prefix), id);
    tensor.size = size;
    tensor.kind = kind;
    graph_.tensors.push_back(std::move(tensor));
    return id;
  }
  Op& AddOp(std::string type, const std::vector<int64_t>& inputs,
            const std::vector<int64_t>& outputs) {
    Op op;
    op.name = absl::StrCat("op", graph_.ops.size());
    op.type = std::move(type);
    for (int64_t t : inputs) op.inputs.push_back(graph_.tensors[t].name);
    for (int64_t t : outputs) op.outputs.push_back(graph_.tensors[t].name);
    graph_.ops.push_back(std::move(op));
    return graph_.ops.back();
  }
  void AddScratch(Op& op, int64_t t) {
    op.scratch.push_back(graph_.tensors[t].name);
  }
  int64_t tensors() const {
    return static_cast<int64_t>(graph_.tensors.size());
  }
  void SetKind(int64_t t, TensorKind kind) { graph_.tensors[t].kind = kind; }
  Graph Finish() { return std::move(graph_); }

 private:
  Graph graph_;
};

// CNN stages: activations shrink by 4x per stage (spatial /2, channels x2).
double StageTarget(const Draw& draw, int64_t i, int64_t n) {
  constexpr int kStages = 5;
  const int stage = static_cast<int>(i * kStages / std::max<int64_t>(n, 1));
  return static_cast<double>(draw.max()) /
         static_cast<double>(int64_t{1} << (2 * stage));
}

}  // namespace

std::string_view SyntheticKindName(SyntheticKind kind) {
  switch (kind) {
    case SyntheticKind::kChain:
      return "chain";
    case SyntheticKind::kBranchy:
      return "branchy";
    case SyntheticKind::kTraining:
      return "training";
    case SyntheticKind::kIntervals:
      return "intervals";
    case SyntheticKind::kDenseTraining:
      return "dense_training";
  }
  return "unknown";
}

std::vector<SyntheticKind> AllSyntheticKinds() {
  return {SyntheticKind::kChain, SyntheticKind::kBranchy,
          SyntheticKind::kTraining, SyntheticKind::kIntervals,
          SyntheticKind::kDenseTraining};
}

absl::StatusOr<Graph> SyntheticChainGraph(const SyntheticOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t n = options.buffers;
  Draw draw(options);
  GraphBuilder g(absl::StrCat("chain_", n, "_seed", options.seed), n);
  int64_t block_start =
      g.Tensor("t", draw.SizeNear(StageTarget(draw, 0, n)), TensorKind::kInput);
  int64_t block_left = draw.Int(2, 4);
  while (g.tensors() < n) {
    const int64_t prev = g.tensors() - 1;
    const int64_t t =
        g.Tensor("t", draw.SizeNear(StageTarget(draw, prev + 1, n)));
    if (--block_left == 0) {
      // The residual Add reads the block's input: its lifetime spans the block.
      g.AddOp("Add", {prev, block_start}, {t});
      block_start = t;
      block_left = draw.Int(2, 4);
    } else {
      g.AddOp(draw.Int(0, 1) == 0 ? "Conv" : "Relu", {prev}, {t});
    }
  }
  g.SetKind(n - 1, TensorKind::kOutput);
  return g.Finish();
}

absl::StatusOr<Graph> SyntheticBranchyGraph(const SyntheticOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t n = options.buffers;
  Draw draw(options);
  GraphBuilder g(absl::StrCat("branchy_", n, "_seed", options.seed), n);
  int64_t current =
      g.Tensor("t", draw.SizeNear(StageTarget(draw, 0, n)), TensorKind::kInput);
  std::vector<int64_t> depths;
  std::vector<int64_t> ends;
  while (g.tensors() < n) {
    const double target = StageTarget(draw, g.tensors(), n);
    depths.assign(draw.Int(2, 4), 0);
    int64_t block = 1;  // the Concat's output
    for (int64_t& d : depths) block += d = draw.Int(1, 3);
    if (block > n - g.tensors()) {
      // Not enough buffers left for a whole block: finish with a chain.
      const int64_t t = g.Tensor("t", draw.SizeNear(target));
      g.AddOp("Conv", {current}, {t});
      current = t;
      continue;
    }
    ends.clear();
    double concat = 0;
    for (int64_t d : depths) {
      int64_t prev = current;
      for (int64_t k = 0; k < d; ++k) {
        const int64_t t = g.Tensor("t", draw.SizeNear(target / depths.size()));
        g.AddOp(k == 0 ? "Conv1x1" : "Conv3x3", {prev}, {t});
        prev = t;
      }
      ends.push_back(prev);
      concat += target / depths.size();
    }
    const int64_t t = g.Tensor("t", draw.SizeNear(concat));
    g.AddOp("Concat", ends, {t});
    current = t;
  }
  g.SetKind(n - 1, TensorKind::kOutput);
  return g.Finish();
}

absl::StatusOr<Graph> SyntheticTrainingGraph(const SyntheticOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t n = options.buffers;
  Draw draw(options);
  // Layers L give 3L + 1 tensors: activations a0..aL, the loss gradient, the
  // gradients g(L-1)..g1 and the weight gradients dw1..dwL; the remainder
  // becomes scratch tensors of forward ops.
  const int64_t layers = (n - 1) / 3;
  const int64_t scratch = (n - 1) % 3;
  GraphBuilder g(absl::StrCat("training_", n, "_seed", options.seed), n);
  std::vector<int64_t> act(layers + 1);
  act[0] = g.Tensor("act", draw.SizeNear(StageTarget(draw, 0, layers)),
                    TensorKind::kInput);
  std::vector<int64_t> scratch_tensors(scratch);
  for (int64_t j = 0; j < scratch; ++j) {
    scratch_tensors[j] =
        g.Tensor("scratch", draw.AnySize(), TensorKind::kScratch);
  }
  for (int64_t i = 1; i <= layers; ++i) {
    act[i] = g.Tensor("act", draw.SizeNear(StageTarget(draw, i, layers + 1)));
    Op& op =
        g.AddOp(draw.Int(0, 1) == 0 ? "Conv" : "Relu", {act[i - 1]}, {act[i]});
    for (int64_t j = 0; j < scratch; ++j) {
      if (j % layers == i - 1) g.AddScratch(op, scratch_tensors[j]);
    }
  }
  int64_t grad =
      g.Tensor("grad", draw.SizeNear(StageTarget(draw, layers, layers + 1)));
  g.AddOp("Loss", {act[layers]}, {grad});
  for (int64_t i = layers; i >= 1; --i) {
    // Backward of layer i reads its saved input a(i-1): a(i-1) stays alive
    // from the forward pass until here, so lifetimes nest.
    const int64_t dw = g.Tensor("dw", draw.AnySize(), TensorKind::kOutput);
    if (i > 1) {
      const int64_t next =
          g.Tensor("grad", draw.SizeNear(StageTarget(draw, i - 1, layers + 1)));
      g.AddOp("Backward", {grad, act[i - 1]}, {next, dw});
      grad = next;
    } else {
      g.AddOp("Backward", {grad, act[0]}, {dw});
    }
  }
  return g.Finish();
}

absl::StatusOr<Problem> SyntheticIntervalProblem(
    const SyntheticOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t n = options.buffers;
  Draw draw(options);
  Problem problem;
  problem.name = absl::StrCat("intervals_", n, "_seed", options.seed);
  problem.pools.push_back({.name = "default", .capacity = 0, .alignment = 1});
  problem.buffers.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    Buffer b;
    b.name = absl::StrCat("b", i);
    b.tensors = {b.name};
    b.lifetime.start = draw.Int(0, n - 1);
    b.lifetime.end =
        b.lifetime.start + draw.LogUniform(1, options.max_lifetime);
    b.size = draw.AnySize();
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

absl::StatusOr<Problem> SyntheticDenseTrainingProblem(
    const SyntheticOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t n = options.buffers;
  Draw draw(options);
  Problem problem;
  problem.name = absl::StrCat("dense_training_", n, "_seed", options.seed);
  problem.pools.push_back({.name = "default", .capacity = 0, .alignment = 1});
  problem.buffers.reserve(n);
  // Steps 0..L-1 run the forward pass, L..2L-1 the backward pass; backward
  // step 2L-1-i reads activation i.
  const int64_t layers = n / 2;
  for (int64_t i = 0; i < layers; ++i) {
    Buffer b;
    b.name = absl::StrCat("act", i);
    b.tensors = {b.name};
    b.lifetime = {.start = i, .end = 2 * layers - i};
    b.size = draw.SizeNear(StageTarget(draw, i, layers));
    problem.buffers.push_back(std::move(b));
  }
  // Gradients and temporaries: produced by a backward step, read by one of
  // the next few, about as large as the activations of that layer.
  for (int64_t j = 0; j < n - layers; ++j) {
    const int64_t step = layers + j % layers;
    Buffer b;
    b.name = absl::StrCat("grad", j);
    b.tensors = {b.name};
    b.lifetime = {.start = step, .end = step + draw.Int(1, 3)};
    b.size = draw.SizeNear(StageTarget(draw, 2 * layers - 1 - step, layers));
    problem.buffers.push_back(std::move(b));
  }
  return problem;
}

absl::StatusOr<Graph> SyntheticGraph(SyntheticKind kind,
                                     const SyntheticOptions& options) {
  switch (kind) {
    case SyntheticKind::kChain:
      return SyntheticChainGraph(options);
    case SyntheticKind::kBranchy:
      return SyntheticBranchyGraph(options);
    case SyntheticKind::kTraining:
      return SyntheticTrainingGraph(options);
    case SyntheticKind::kIntervals:
    case SyntheticKind::kDenseTraining:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the synthetic family \"", std::string(SyntheticKindName(kind)),
      "\" is a Problem, not a Graph"));
}

absl::StatusOr<Problem> SyntheticProblem(SyntheticKind kind,
                                         const SyntheticOptions& options) {
  if (kind == SyntheticKind::kIntervals)
    return SyntheticIntervalProblem(options);
  if (kind == SyntheticKind::kDenseTraining)
    return SyntheticDenseTrainingProblem(options);
  MEMPLAN_ASSIGN_OR_RETURN(Graph graph, SyntheticGraph(kind, options));
  return BuildProblem(graph);
}

}  // namespace memplan
