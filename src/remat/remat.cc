// Rematerialize (remat/remat.h): the greedy rewrite of the op list and the
// plan of each graph it makes.

#include "remat/remat.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"

namespace memplan {
namespace {

constexpr int kNone = -1;
// Candidates whose rewritten graph is built and measured in one round.
constexpr int kTriesPerRound = 16;
// How many producers deep an op's dead inputs are made again with it.
constexpr int kChainDepth = 2;

// The bytes live at each step of a problem built in the graph's own order
// (op i runs at step i).
std::vector<Bytes> LiveBytes(const Problem& problem, size_t num_steps) {
  std::vector<Bytes> delta(num_steps + 1, 0);
  for (const Buffer& b : problem.buffers) {
    const size_t start = std::min<size_t>(b.lifetime.start, num_steps);
    const size_t end = std::min<size_t>(b.lifetime.end, num_steps);
    delta[start] += b.size;
    delta[end] -= b.size;
  }
  std::vector<Bytes> live(num_steps, 0);
  Bytes sum = 0;
  for (size_t s = 0; s < num_steps; ++s) live[s] = sum += delta[s];
  return live;
}

// The most live bytes and the steps that have them: a rewrite is kept when
// it lowers the most, or keeps it at fewer steps.
struct Peak {
  Bytes bytes = 0;
  std::vector<int> steps;  // ascending
  bool BetterThan(const Peak& o) const {
    return bytes < o.bytes ||
           (bytes == o.bytes && steps.size() < o.steps.size());
  }
};

Peak PeakOf(const std::vector<Bytes>& live) {
  Peak peak;
  for (size_t s = 0; s < live.size(); ++s) {
    if (live[s] > peak.bytes) peak = Peak{.bytes = live[s], .steps = {}};
    if (live[s] == peak.bytes) peak.steps.push_back(static_cast<int>(s));
  }
  return peak;
}

// Who makes and reads each tensor, and which tensors share bytes: the
// groups that alias and in-place hints join, and the ops writing each.
struct GraphIndex {
  absl::flat_hash_map<std::string, int> tensor;
  std::vector<int> producer;
  std::vector<std::vector<int>> readers;  // ascending op indices
  std::vector<int> parent;                // union-find over tensors
  std::vector<bool> shared;               // per group root
  std::vector<std::vector<int>> writers;  // per group root, ascending
  absl::flat_hash_set<std::string> in_conflicts;

  int Find(int t) {
    while (parent[t] != t) t = parent[t] = parent[parent[t]];
    return t;
  }
  int Of(const std::string& name) const {
    auto it = tensor.find(name);
    return it == tensor.end() ? kNone : it->second;
  }
  // The last op reading tensor t, else its producer, else kNone.
  int LastUse(int t) const {
    return readers[t].empty() ? producer[t] : readers[t].back();
  }
};

void JoinPairs(const Op& op, const std::vector<OperandPair>& pairs,
               GraphIndex& index, std::vector<bool>& paired) {
  for (const OperandPair& p : pairs) {
    const int out = index.Of(op.outputs[p.output]);
    const int in = index.Of(op.inputs[p.input]);
    if (out == kNone || in == kNone) continue;
    paired[out] = paired[in] = true;
    index.parent[index.Find(out)] = index.Find(in);
  }
}

GraphIndex IndexGraph(const Graph& graph) {
  GraphIndex index;
  const int n = static_cast<int>(graph.tensors.size());
  for (int t = 0; t < n; ++t) index.tensor.emplace(graph.tensors[t].name, t);
  index.producer.assign(n, kNone);
  index.readers.resize(n);
  index.parent.resize(n);
  for (int t = 0; t < n; ++t) index.parent[t] = t;
  std::vector<bool> paired(n, false);
  std::vector<std::pair<int, int>> writes;  // (tensor, op)
  for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
    const Op& op = graph.ops[i];
    for (const std::string& name : op.inputs) {
      const int t = index.Of(name);
      if (t != kNone &&
          (index.readers[t].empty() || index.readers[t].back() != i))
        index.readers[t].push_back(i);
    }
    for (const std::string& name : op.outputs) {
      if (const int t = index.Of(name); t != kNone) index.producer[t] = i;
    }
    JoinPairs(op, op.inplace, index, paired);
    JoinPairs(op, op.alias, index, paired);
    for (int j : op.writes) writes.emplace_back(index.Of(op.inputs[j]), i);
  }
  index.shared.assign(n, false);
  index.writers.resize(n);
  for (int t = 0; t < n; ++t) {
    if (paired[t]) index.shared[index.Find(t)] = true;
  }
  for (const auto& [t, op] : writes) {
    if (t == kNone) continue;
    index.shared[index.Find(t)] = true;
    index.writers[index.Find(t)].push_back(op);
  }
  for (const TensorConflict& c : graph.conflicts) {
    index.in_conflicts.insert(c.a);
    index.in_conflicts.insert(c.b);
  }
  return index;
}

// One recomputation: ops run again right before op `at` (the first reader
// of the last op's outputs after a stretch without one), each reading its
// `inputs`: the last op, after those of its inputs that would otherwise
// be kept alive over the stretch, when they can be made again too.
struct Run {
  int op = 0;
  std::vector<std::string> inputs;
};
struct Candidate {
  int op = 0;  // the op whose outputs are dropped over the stretch
  int at = 0;
  Bytes gain = 0;  // bytes freed at a peak step, less inputs kept longer
  double cost = 0;
  std::vector<Run> runs;          // in order; the last runs `op`
  std::vector<std::string> kept;  // inputs kept alive longer
};

// Candidates rank by bytes freed per unit of cost (a free op first), then
// by bytes, then by position (deterministic).
bool Before(const Candidate& a, const Candidate& b) {
  const double left = a.gain * b.cost;
  const double right = b.gain * a.cost;
  if (left != right) return left > right;
  return std::tie(b.gain, a.op, a.at) < std::tie(a.gain, b.op, b.at);
}

class Rewriter {
 public:
  Rewriter(const Graph& graph, const BuildOptions& build)
      : graph_(graph), build_(build) {
    for (const Tensor& t : graph.tensors) tensor_names_.insert(t.name);
    for (const Op& op : graph.ops) op_names_.insert(op.name);
  }

  const Graph& graph() const { return graph_; }
  double added_cost() const { return added_cost_; }
  const std::vector<std::string>& recomputed() const { return recomputed_; }

  // Keeps the first of the best candidates whose rewritten graph has a
  // better peak of live bytes than `problem` (the current graph's);
  // false when none has.
  absl::StatusOr<bool> Round(const Problem& problem) {
    const Peak peak = PeakOf(LiveBytes(problem, graph_.ops.size()));
    GraphIndex index = IndexGraph(graph_);
    std::vector<Candidate> candidates = Candidates(index, peak);
    std::sort(candidates.begin(), candidates.end(), Before);
    const int tries =
        std::min<int>(kTriesPerRound, static_cast<int>(candidates.size()));
    for (int k = 0; k < tries; ++k) {
      Rewrite next = Apply(candidates[k], index);
      MEMPLAN_ASSIGN_OR_RETURN(Problem built, BuildProblem(next.graph, build_));
      if (!PeakOf(LiveBytes(built, next.graph.ops.size())).BetterThan(peak))
        continue;
      Commit(std::move(next), candidates[k].cost);
      return true;
    }
    return false;
  }

 private:
  struct Rewrite {
    Graph graph;
    std::vector<std::string> op_names;
    std::vector<std::pair<std::string, std::string>> versions;  // new, old
  };

  bool Eligible(const Op& op, GraphIndex& index) const {
    if (!op.recomputable || op.pinned || !op.writes.empty() ||
        !op.scratch.empty() || !op.inplace.empty() || !op.alias.empty() ||
        op.outputs.empty() || copies_.contains(op.name)) {
      return false;
    }
    for (const std::string& name : op.outputs) {
      const int t = index.Of(name);
      if (t == kNone) return false;
      const Tensor& tensor = graph_.tensors[t];
      if (tensor.kind != TensorKind::kActivation || tensor.fixed.has_value() ||
          index.shared[index.Find(t)] || index.in_conflicts.contains(name)) {
        return false;
      }
    }
    return true;
  }

  bool Planned(const Tensor& t) const {
    switch (t.kind) {
      case TensorKind::kConstant:
        return build_.plan_constants;
      case TensorKind::kInput:
        return build_.plan_inputs;
      default:
        return true;
    }
  }

  // The tensor holding, at op `at`, the bytes `name` held when it was made:
  // its newest recomputed version made before `at`, else itself.
  std::string VersionAt(const std::string& name, int at,
                        const GraphIndex& index) const {
    auto origin = origin_.find(name);
    const std::string& first = origin == origin_.end() ? name : origin->second;
    std::string best = first;
    int best_producer = index.producer[index.Of(first)];
    auto versions = versions_.find(first);
    if (versions == versions_.end()) return best;
    for (const std::string& v : versions->second) {
      const int p = index.producer[index.Of(v)];
      if (p < at && p > best_producer) best = v, best_producer = p;
    }
    return best;
  }

  // Whether a write to the bytes of tensor t falls between ops i and `at`.
  static bool WrittenBetween(int t, int i, int at, GraphIndex& index) {
    const std::vector<int>& w = index.writers[index.Find(t)];
    auto it = std::upper_bound(w.begin(), w.end(), i);
    return it != w.end() && *it < at;
  }

  // Adds to `c` op i run again before op `at`, after the runs of the
  // producers of its inputs that are dead at `step` (up to `depth` deep),
  // or else keeping those inputs alive; false when an input's bytes are
  // written in between (the op would read other bytes).
  bool AddRun(int i, int at, int step, int depth, GraphIndex& index,
              Candidate& c) const {
    const Op& op = graph_.ops[i];
    Run run{.op = i, .inputs = {}};
    for (const std::string& name : op.inputs) {
      const std::string v = VersionAt(name, at, index);
      const int t = index.Of(v);
      if (v == name && WrittenBetween(t, i, at, index)) return false;
      run.inputs.push_back(v);
      // Read at op i, so made before the step: it is live there when it
      // is read there or later.
      const Tensor& tensor = graph_.tensors[t];
      if (!Planned(tensor) || tensor.kind == TensorKind::kOutput ||
          index.LastUse(t) >= step || Contains(c.kept, v) || Made(c, v, index))
        continue;
      const int q = index.producer[t];
      if (depth > 0 && q != kNone && Eligible(graph_.ops[q], index)) {
        Candidate with = c;
        if (AddRun(q, at, step, depth - 1, index, with)) {
          c = std::move(with);
          continue;
        }
      }
      c.gain -= tensor.size;
      c.kept.push_back(v);
    }
    c.cost += op.cost.value_or(0);
    c.runs.push_back(std::move(run));
    return true;
  }

  static bool Contains(const std::vector<std::string>& names,
                       const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  }

  // Whether tensor v is an output of an op `c` runs again.
  bool Made(const Candidate& c, const std::string& v, GraphIndex& index) const {
    const int p = index.producer[index.Of(v)];
    return std::any_of(c.runs.begin(), c.runs.end(),
                       [p](const Run& r) { return r.op == p; });
  }

  // The candidate of op i running again before op `at`, its first reader
  // after a stretch holding `step` (a peak step), when it frees bytes there.
  bool Measure(int i, int at, int step, GraphIndex& index, Candidate& c) const {
    c = Candidate{
        .op = i, .at = at, .gain = 0, .cost = 0, .runs = {}, .kept = {}};
    for (const std::string& name : graph_.ops[i].outputs)
      c.gain += graph_.tensors[index.Of(name)].size;
    return AddRun(i, at, step, kChainDepth, index, c) && c.gain > 0;
  }

  std::vector<Candidate> Candidates(GraphIndex& index, const Peak& peak) const {
    std::vector<Candidate> out;
    for (int i = 0; i < static_cast<int>(graph_.ops.size()); ++i) {
      if (!Eligible(graph_.ops[i], index)) continue;
      std::vector<int> events = {i};
      for (const std::string& name : graph_.ops[i].outputs) {
        const std::vector<int>& r = index.readers[index.Of(name)];
        events.insert(events.end(), r.begin(), r.end());
      }
      std::sort(events.begin(), events.end());
      events.erase(std::unique(events.begin(), events.end()), events.end());
      for (size_t k = 0; k + 1 < events.size(); ++k) {
        const int from = events[k], at = events[k + 1];
        auto step =
            std::upper_bound(peak.steps.begin(), peak.steps.end(), from);
        if (step == peak.steps.end() || *step >= at) continue;
        Candidate c;
        if (Measure(i, at, *step, index, c)) out.push_back(std::move(c));
      }
    }
    return out;
  }

  // The copy of run r: the op's name and outputs' with the suffix.
  Op Copy(const Run& r, const GraphIndex& index, Rewrite& next,
          absl::flat_hash_set<std::string>& made,
          absl::flat_hash_map<std::string, std::string>& renamed) const {
    Op copy = graph_.ops[r.op];
    const std::string op_base = copy.name + kRecomputeSuffix;
    copy.name = op_base;
    for (int k = 2; op_names_.contains(copy.name) || made.contains(copy.name);
         ++k) {
      copy.name = absl::StrCat(op_base, "_", k);
    }
    made.insert(copy.name);
    next.op_names.push_back(copy.name);
    copy.inputs = r.inputs;
    for (std::string& out : copy.outputs) {
      Tensor tensor = graph_.tensors[index.Of(out)];
      tensor.fixed.reset();
      const std::string base = out + kRecomputeSuffix;
      std::string name = base;
      for (int k = 2; tensor_names_.contains(name) || made.contains(name); ++k)
        name = absl::StrCat(base, "_", k);
      made.insert(name);
      tensor.name = name;
      next.graph.tensors.push_back(std::move(tensor));
      next.versions.emplace_back(name, out);
      renamed.emplace(out, name);
      out = name;
    }
    return copy;
  }

  // The graph with c's runs inserted before op c.at, and every reader from
  // there on (the runs included) reading the new outputs.
  Rewrite Apply(const Candidate& c, const GraphIndex& index) const {
    Rewrite next{.graph = graph_, .op_names = {}, .versions = {}};
    absl::flat_hash_map<std::string, std::string> renamed;
    absl::flat_hash_set<std::string> made;
    std::vector<Op> copies;
    for (const Run& r : c.runs) {
      copies.push_back(Copy(r, index, next, made, renamed));
    }
    std::vector<Op>& ops = next.graph.ops;
    ops.insert(ops.begin() + c.at, copies.begin(), copies.end());
    for (size_t j = c.at; j < ops.size(); ++j) {
      for (std::string& in : ops[j].inputs) {
        if (auto it = renamed.find(in); it != renamed.end()) in = it->second;
      }
    }
    return next;
  }

  void Commit(Rewrite next, double cost) {
    for (const auto& [made, old] : next.versions) {
      auto origin = origin_.find(old);
      const std::string first = origin == origin_.end() ? old : origin->second;
      origin_[made] = first;
      versions_[first].push_back(made);
      tensor_names_.insert(made);
    }
    for (const std::string& name : next.op_names) {
      op_names_.insert(name);
      copies_.insert(name);
      recomputed_.push_back(name);
    }
    added_cost_ += cost;
    graph_ = std::move(next.graph);
  }

  Graph graph_;
  BuildOptions build_;
  absl::flat_hash_set<std::string> tensor_names_;
  absl::flat_hash_set<std::string> op_names_;
  absl::flat_hash_set<std::string> copies_;
  // A recomputed tensor -> the tensor it stands in for, and back.
  absl::flat_hash_map<std::string, std::string> origin_;
  absl::flat_hash_map<std::string, std::vector<std::string>> versions_;
  std::vector<std::string> recomputed_;
  double added_cost_ = 0;
};

}  // namespace

absl::StatusOr<RematResult> Rematerialize(const Graph& graph, Bytes budget,
                                          const PlanMemoryOptions& options) {
  if (budget <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the budget is ", budget, " bytes: give a positive number of bytes"));
  }
  if (!options.reorder.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rematerialization plans the graph's own order: leave reorder empty "
        "(it is \"",
        options.reorder, "\")"));
  }
  MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan, PlanMemory(graph, options));
  const Bytes peak_without = plan.plan.peak;
  Bytes smallest = peak_without;
  Rewriter rewriter(graph, options.build);
  for (size_t round = 0; plan.plan.peak > budget && round < graph.ops.size();
       ++round) {
    MEMPLAN_ASSIGN_OR_RETURN(bool rewritten, rewriter.Round(plan.problem));
    if (!rewritten) break;
    MEMPLAN_ASSIGN_OR_RETURN(plan, PlanMemory(rewriter.graph(), options));
    smallest = std::min(smallest, plan.plan.peak);
  }
  if (plan.plan.peak > budget) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no recomputation found fits graph \"", graph.name, "\" into ", budget,
        " bytes: the smallest peak found is ", smallest, " bytes (",
        peak_without, " without recomputation)"));
  }
  return RematResult{.graph = rewriter.graph(),
                     .plan = std::move(plan),
                     .added_cost = rewriter.added_cost(),
                     .peak_without = peak_without,
                     .recomputed = rewriter.recomputed()};
}

}  // namespace memplan
