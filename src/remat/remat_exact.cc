// RematerializeExact (remat/remat_exact.h): the model of the graph's
// stages, the branch and bound search over the stages each op runs again
// at, the rewrite of a solution and the loop that places it.
//
// The search decides the ops from the last to the first, so that when an
// op is decided every reader of its outputs is known: the graph's own and
// the recomputations of its consumers, decided before it; and for each op,
// stage by stage, whether it runs again there (a bound at each). It keeps
// the live bytes of every step with the undecided ops' outputs kept alive
// from their op to their last known reader. A node is cut when some
// step's bytes cannot come within the budget even if every undecided op
// dropped its outputs wherever it may, or when the cost so far plus a
// lower bound of the cost of dropping the worst step's excess is no less
// than the best cost found: the larger of a fractional knapsack of the
// undecided ops' costs and the least cost of as many of them as that
// excess needs at the fewest. A recomputation is not
// tried where no step it would drop its outputs over can need it (the
// bytes there, plus what recomputations may still keep alive, fit with
// its outputs kept).

#include "remat/remat_exact.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/remat.h"
#include "remat/eligible.h"

namespace memplan {
namespace {

constexpr int kNone = -1;
// Steps or decisions the search looks at per work unit.
constexpr int64_t kStepsPerUnit = 16;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// An op the search decides: where it may run again.
struct Decision {
  int op = 0;
  // The least cost of running it again: its own and its views' made
  // before its first stage.
  double cost = 0;
  Bytes bytes = 0;           // the sum of its outputs' buffer sizes
  std::vector<int> outputs;  // tensor indices
  std::vector<int> inputs;   // tensor indices (their groups'), distinct
  std::vector<int> stages;   // ascending
  // A lower bound of the cost of each byte it frees at a step
  // (CostPerByte).
  double per_byte = 0;
  // Over those options that free bytes: the fewest bytes freed and the
  // least cost (an option frees whole outputs).
  Bytes least_freed = 0;
  double least_cost = 0;
  // The ops making views of its outputs (ascending) and their costs: run
  // again with it at a stage when made before that stage.
  std::vector<std::pair<int, double>> views;

  // The cost of running it again at stage b.
  double CostAt(int b) const {
    double sum = own_cost;
    for (const auto& [v, c] : views) {
      if (v < b) sum += c;
    }
    return sum;
  }
  double own_cost = 0;
};

// The stages at which each decision runs again: one vector per decision.
using Choice = std::vector<std::vector<int>>;

// The graph as the search sees it. Steps are the slots of the stages: in
// stage t, the ops that may run again there (ascending), then op t.
struct Model {
  int num_ops = 0;
  bool views = false;               // some decision runs views again with it
  std::vector<Decision> decisions;  // descending op index
  std::vector<int> decision_of_tensor;  // the decision making it, or kNone
  // A decision's output for each tensor sharing its bytes (its views), the
  // tensor itself for the others: what the search reads when one is read.
  std::vector<int> group_of;
  std::vector<int> producer;       // op index or kNone
  std::vector<Bytes> size;         // its buffer's size (decisions')
  std::vector<int> buffer_of;      // tensor -> other buffer, or kNone
  std::vector<Bytes> buffer_size;  // per problem buffer
  std::vector<int> buffer_first, buffer_last;  // steps, inclusive
  std::vector<bool> searched;  // a decision's output: the search counts it
  // Decisions' outputs: the steps of the graph's readers of them and of
  // their views, ascending.
  std::vector<std::vector<int>> reads;
  std::vector<std::vector<int>> stage_ops;
  std::vector<int> stage_base;
  std::vector<int> stage_of_step;
  int num_steps = 0;
  // The decisions, cheapest per byte first.
  std::vector<int> by_ratio;
  // Per step: the most bytes that recomputations may yet keep alive there
  // beyond the graph's own last readers (their inputs), once the
  // decisions before k are decided: Ext(k).
  std::vector<std::vector<Bytes>> ext;

  const std::vector<Bytes>& Ext(size_t k) const {
    return ext[ext.size() == 1 ? 0 : k];
  }

  int Step(int stage, int op) const {
    const std::vector<int>& ops = stage_ops[stage];
    return stage_base[stage] +
           static_cast<int>(std::lower_bound(ops.begin(), ops.end(), op) -
                            ops.begin());
  }
  int OpStep(int op) const { return Step(op, op); }
};

using remat::GraphIndex;

// The tensors sharing the bytes of tensor t: its group, or t alone.
const std::vector<int>& GroupOf(GraphIndex& s, int t) {
  const int root = s.Find(t);
  return s.shared[root] ? s.group[root] : s.group[t];
}

// Whether op `i` may run again at all (before its stages are known): the
// rules of remat/eligible.h (`views` gets the ops making views of its
// outputs), for an op whose outputs' buffers hold only them and their
// views, and whose inputs are all tensors of the graph.
bool Eligible(const Graph& graph, int i, GraphIndex& s,
              const std::vector<int>& buffer_of, const Problem& problem,
              std::vector<int>& views) {
  if (!remat::Eligible(graph, i, s, buffer_of, views)) return false;
  for (const std::string& name : graph.ops[i].inputs) {
    if (s.Of(name) == kNone) return false;
  }
  for (const std::string& name : graph.ops[i].outputs) {
    const int t = s.Of(name);
    if (buffer_of[t] == kNone ||
        problem.buffers[buffer_of[t]].tensors.size() != GroupOf(s, t).size()) {
      return false;
    }
  }
  return true;
}

// The last stage before which each tensor may be read: its last reader's
// when it is merged in place into that reader's output, else unlimited.
std::vector<int> ReadLimits(const Graph& graph, GraphIndex& s,
                            const std::vector<int>& buffer_of) {
  std::vector<int> limit(graph.tensors.size(), std::numeric_limits<int>::max());
  for (const Op& op : graph.ops) {
    for (const OperandPair& p : op.inplace) {
      const int in = s.Of(op.inputs[p.input]);
      const int out = s.Of(op.outputs[p.output]);
      if (in == kNone || out == kNone || buffer_of[in] == kNone ||
          buffer_of[in] != buffer_of[out] || s.readers[in].empty()) {
        continue;
      }
      limit[in] = s.readers[in].back();
    }
  }
  return limit;
}

// Whether op i may run again before op b: no write to its inputs' bytes
// in between, no input read past an in-place merge.
bool Allowed(const Graph& graph, int i, int b, GraphIndex& s,
             const std::vector<int>& limit) {
  for (const std::string& name : graph.ops[i].inputs) {
    const int t = s.Of(name);
    if (b > limit[t]) return false;
    const std::vector<int>& w = s.writers[s.Find(t)];
    auto it = std::upper_bound(w.begin(), w.end(), i);
    if (it != w.end() && *it < b) return false;
  }
  return true;
}

// The decisions, from the last op to the first: an op may run again at
// the stages where its outputs are read, by the graph's ops or by the
// recomputations of its consumers, at least two stages after it.
void FindDecisions(const Graph& graph, const Problem& problem, GraphIndex& s,
                   bool with_views, Model& m) {
  const int n = m.num_ops;
  const std::vector<int> limit = ReadLimits(graph, s, m.buffer_of);
  std::vector<int> decision_of_op(n, kNone);
  std::vector<int> views;
  for (int i = n - 1; i >= 0; --i) {
    if (!Eligible(graph, i, s, m.buffer_of, problem, views) ||
        (!with_views && !views.empty())) {
      continue;
    }
    std::vector<int> read;
    for (const std::string& name : graph.ops[i].outputs) {
      for (int u : GroupOf(s, s.Of(name))) {
        for (int r : s.readers[u]) {
          read.push_back(r);
          if (decision_of_op[r] == kNone) continue;
          const std::vector<int>& more = m.decisions[decision_of_op[r]].stages;
          read.insert(read.end(), more.begin(), more.end());
        }
      }
    }
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    Decision d;
    d.op = i;
    d.own_cost = graph.ops[i].cost.value_or(0);
    for (int b : read) {
      if (b >= i + 2 && Allowed(graph, i, b, s, limit)) d.stages.push_back(b);
    }
    if (d.stages.empty()) continue;
    for (int v : views) d.views.push_back({v, graph.ops[v].cost.value_or(0)});
    d.cost = d.CostAt(d.stages.front());
    for (const std::string& name : graph.ops[i].outputs) {
      const int t = s.Of(name);
      d.outputs.push_back(t);
      d.bytes += problem.buffers[m.buffer_of[t]].size;
    }
    for (const std::string& name : graph.ops[i].inputs) {
      const int t = s.Of(name);
      if (std::find(d.inputs.begin(), d.inputs.end(), t) == d.inputs.end())
        d.inputs.push_back(t);
    }
    decision_of_op[i] = static_cast<int>(m.decisions.size());
    m.decisions.push_back(std::move(d));
  }
}

void LayOutSteps(Model& m) {
  m.stage_ops.assign(m.num_ops, {});
  for (const Decision& d : m.decisions) {
    for (int b : d.stages) m.stage_ops[b].push_back(d.op);
  }
  m.stage_base.assign(m.num_ops, 0);
  int base = 0;
  for (int t = 0; t < m.num_ops; ++t) {
    std::vector<int>& ops = m.stage_ops[t];
    std::sort(ops.begin(), ops.end());
    ops.push_back(t);
    m.stage_base[t] = base;
    base += static_cast<int>(ops.size());
    m.stage_of_step.insert(m.stage_of_step.end(), ops.size(), t);
  }
  m.num_steps = base;
}

// Model::ext: each input of a decision may be read up to the decision's
// last stage: its bytes from its last reader in the graph to there; for
// the decisions from each one on (the search decides them in order, and
// those decided are in its live bytes), or all of them when that would
// take more than kExtensionCells steps in all.
constexpr int64_t kExtensionCells = int64_t{1} << 22;

void ExtensionBound(Model& m) {
  // (first step past the graph's last reader, last step) and bytes per
  // tensor of a decision, per buffer otherwise.
  absl::flat_hash_map<int64_t, std::pair<int, int>> span;
  absl::flat_hash_map<int64_t, Bytes> bytes;
  const int num = static_cast<int>(m.decisions.size());
  const bool each = int64_t{num + 1} * m.num_steps <= kExtensionCells;
  m.ext.assign(each ? num + 1 : 1, std::vector<Bytes>(m.num_steps, 0));
  for (int k = num - 1; k >= 0; --k) {
    const Decision& d = m.decisions[k];
    const int end = m.Step(d.stages.back(), d.op);
    for (int t : d.inputs) {
      int64_t key;
      int from;
      if (m.decision_of_tensor[t] != kNone) {
        key = t;
        from = m.reads[t].empty() ? m.OpStep(m.producer[t]) : m.reads[t].back();
        bytes[key] = m.size[t];
      } else if (const int b = m.buffer_of[t]; b != kNone) {
        key = -1 - int64_t{b};
        from = m.buffer_last[b];
        bytes[key] = m.buffer_size[b];
      } else {
        continue;
      }
      auto [it, added] = span.try_emplace(key, from + 1, end);
      it->second.second = std::max(it->second.second, end);
    }
    if (!each && k > 0) continue;
    std::vector<Bytes> delta(m.num_steps + 1, 0);
    for (const auto& [key, range] : span) {
      if (range.first > range.second) continue;
      delta[range.first] += bytes[key];
      delta[range.second + 1] -= bytes[key];
    }
    std::vector<Bytes>& ext = m.ext[each ? k : 0];
    Bytes sum = 0;
    for (int s = 0; s < m.num_steps; ++s) ext[s] = sum += delta[s];
  }
}

// Decision::per_byte. Dropping a decision's outputs over a step frees
// their bytes there at its cost; but an input that nothing reads after the
// decision's op in the graph, and no other decision reads, is then alive
// over that step too (kept alive up to the run again), unless it is made
// again as well (a chain, at its producer's cost at least). So each byte
// freed costs at least the least, over keeping or making again each such
// input, of the cost over the bytes freed net (no option freeing bytes:
// infinite). The bound over a step (Search::Droppable) charges each
// decision that, per byte it drops there: each such input is then dead
// there, alive only if this decision keeps it, and charged to it alone.
constexpr int kMostPrivateInputs = 4;

void CostPerByte(Model& m) {
  absl::flat_hash_map<int, int> readers;  // input -> decisions reading it
  for (const Decision& d : m.decisions) {
    for (int t : d.inputs) ++readers[t];
  }
  for (Decision& d : m.decisions) {
    const int step = m.OpStep(d.op);
    std::vector<std::pair<Bytes, double>> own;  // (bytes, cost made again)
    for (int t : d.inputs) {
      if (readers[t] != 1) continue;
      if (const int k = m.decision_of_tensor[t]; k != kNone) {
        const int last =
            m.reads[t].empty() ? m.OpStep(m.producer[t]) : m.reads[t].back();
        if (last <= step) own.push_back({m.size[t], m.decisions[k].cost});
      } else if (const int b = m.buffer_of[t];
                 b != kNone && m.buffer_last[b] <= step) {
        own.push_back({m.buffer_size[b], kInfinity});
      }
    }
    d.least_freed = d.bytes;
    d.least_cost = d.cost;
    if (d.bytes <= 0) continue;
    d.per_byte = d.cost / static_cast<double>(d.bytes);
    if (own.empty() || own.size() > kMostPrivateInputs) continue;
    double best = kInfinity;
    d.least_freed = std::numeric_limits<Bytes>::max();
    d.least_cost = kInfinity;
    for (uint32_t mask = 0; mask < (1u << own.size()); ++mask) {
      Bytes freed = d.bytes;  // inputs in mask made again, others kept
      double cost = d.cost;
      for (size_t j = 0; j < own.size(); ++j) {
        if (mask >> j & 1) {
          cost += own[j].second;
        } else {
          freed -= own[j].first;
        }
      }
      if (freed <= 0) continue;
      best = std::min(best, cost / static_cast<double>(freed));
      d.least_freed = std::min(d.least_freed, freed);
      d.least_cost = std::min(d.least_cost, cost);
    }
    d.per_byte = best;
  }
}

// The model of `graph`, whose problem (built in the graph's own order) is
// `problem`.
Model ModelOf(const Graph& graph, const Problem& problem, bool with_views) {
  Model m;
  m.num_ops = static_cast<int>(graph.ops.size());
  GraphIndex s = remat::IndexGraph(graph);
  const int num_tensors = static_cast<int>(graph.tensors.size());
  m.buffer_of.assign(num_tensors, kNone);
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b) {
    for (const std::string& name : problem.buffers[b].tensors) {
      if (const int t = s.Of(name); t != kNone) m.buffer_of[t] = b;
    }
  }
  FindDecisions(graph, problem, s, with_views, m);
  for (const Decision& d : m.decisions) m.views = m.views || !d.views.empty();
  LayOutSteps(m);
  m.decision_of_tensor.assign(num_tensors, kNone);
  m.producer.assign(num_tensors, kNone);
  m.size.assign(num_tensors, 0);
  m.reads.resize(num_tensors);
  m.searched.assign(problem.buffers.size(), false);
  for (int i = 0; i < m.num_ops; ++i) {
    for (const std::string& name : graph.ops[i].outputs) {
      if (const int t = s.Of(name); t != kNone) m.producer[t] = i;
    }
  }
  m.group_of.resize(num_tensors);
  for (int t = 0; t < num_tensors; ++t) m.group_of[t] = t;
  for (int k = 0; k < static_cast<int>(m.decisions.size()); ++k) {
    for (int t : m.decisions[k].outputs) {
      m.decision_of_tensor[t] = k;
      m.size[t] = problem.buffers[m.buffer_of[t]].size;
      m.searched[m.buffer_of[t]] = true;
      std::vector<int>& reads = m.reads[t];
      for (int u : GroupOf(s, t)) {
        for (int r : s.readers[u]) reads.push_back(m.OpStep(r));
        m.group_of[u] = t;
        m.buffer_of[u] = kNone;  // the search counts it
      }
      std::sort(reads.begin(), reads.end());
      reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    }
  }
  // A decision reading a view reads its group.
  for (Decision& d : m.decisions) {
    std::vector<int> inputs;
    for (int t : d.inputs) {
      const int g = m.group_of[t];
      if (std::find(inputs.begin(), inputs.end(), g) == inputs.end())
        inputs.push_back(g);
    }
    d.inputs = std::move(inputs);
  }
  const int last = m.num_ops - 1;
  for (const Buffer& b : problem.buffers) {
    const int first = static_cast<int>(std::min<Step>(b.lifetime.start, last));
    const int end = static_cast<int>(std::min<Step>(b.lifetime.end - 1, last));
    m.buffer_size.push_back(b.size);
    m.buffer_first.push_back(m.OpStep(first));
    m.buffer_last.push_back(m.OpStep(std::max(first, end)));
  }
  ExtensionBound(m);
  CostPerByte(m);
  for (int k = 0; k < static_cast<int>(m.decisions.size()); ++k)
    m.by_ratio.push_back(k);
  std::stable_sort(m.by_ratio.begin(), m.by_ratio.end(), [&](int a, int b) {
    return m.decisions[a].per_byte < m.decisions[b].per_byte;
  });
  return m;
}

enum class Goal { kLeastCost, kLeastPeak };

// The branch and bound search over one model: the least cost within
// `bound` live bytes, or the least live peak.
class Search {
 public:
  // `below`: only rewrites costing less are sought.
  Search(const Model& m, Goal goal, Bytes bound,
         const std::vector<Choice>& excluded, Budget& effort,
         double below = kInfinity)
      : m_(m),
        goal_(goal),
        bound_(bound),
        excluded_(excluded),
        effort_(effort) {
    best_cost_ = below;
    keep_.assign(m.num_steps, 0);
    exists_.assign(m.num_steps, 0);
    buffer_last_ = m.buffer_last;
    reads_ = m.reads;
    current_.assign(m.decisions.size(), {});
    choices_.assign(m.decisions.size(), {});
    for (int t = 0; t < m.num_ops; ++t) ++exists_[m.OpStep(t)];
    for (size_t b = 0; b < m.buffer_size.size(); ++b) {
      if (!m.searched[b])
        Add(m.buffer_first[b], m.buffer_last[b], m.buffer_size[b]);
    }
    for (const Decision& d : m.decisions) {
      for (int t : d.outputs) Add(m.OpStep(d.op), Last(t), m.size[t]);
    }
    journal_.clear();
  }

  // The live bytes of each of the graph's own steps before any decision.
  std::vector<Bytes> RootLive() const {
    std::vector<Bytes> live;
    for (int t = 0; t < m_.num_ops; ++t) live.push_back(keep_[m_.OpStep(t)]);
    return live;
  }

  void Run() {
    if (Promising(0)) Decide(0);
  }

  bool found() const { return found_; }
  bool complete() const { return !stopped_; }
  double best_cost() const { return best_cost_; }
  Bytes best_peak() const { return best_peak_; }
  const Choice& best() const { return best_; }

 private:
  struct Undo {
    enum Kind { kRange, kExists, kLast, kRead } kind;
    int a = 0, b = 0;
    Bytes v = 0;
  };

  // Counts `n` steps or decisions looked at: kStepsPerUnit of them make a
  // work unit (about as long as a unit of the placement's searches).
  void Count(int64_t n) const {
    looked_ += n;
    if (looked_ >= kStepsPerUnit) {
      effort_.Tick(looked_ / kStepsPerUnit);
      looked_ %= kStepsPerUnit;
    }
  }

  int Last(int t) const {
    return reads_[t].empty() ? m_.OpStep(m_.producer[t]) : reads_[t].back();
  }

  void Add(int lo, int hi, Bytes v) {
    for (int s = lo; s <= hi; ++s) keep_[s] += v;
    Count(1 + hi - lo);
    journal_.push_back({.kind = Undo::kRange, .a = lo, .b = hi, .v = v});
  }

  // A recomputation at `step` reads tensor t.
  void Read(int t, int step) {
    if (m_.decision_of_tensor[t] != kNone) {
      const int last = Last(t);
      std::vector<int>& r = reads_[t];
      auto it = std::lower_bound(r.begin(), r.end(), step);
      if (it != r.end() && *it == step) return;
      r.insert(it, step);
      journal_.push_back({.kind = Undo::kRead, .a = t, .b = step});
      if (step > last) Add(last + 1, step, m_.size[t]);
      return;
    }
    const int b = m_.buffer_of[t];
    if (b == kNone || step <= buffer_last_[b]) return;
    Add(buffer_last_[b] + 1, step, m_.buffer_size[b]);
    journal_.push_back({.kind = Undo::kLast, .a = b, .b = buffer_last_[b]});
    buffer_last_[b] = step;
  }

  // Decision k runs again at stage b, after the stages it already runs
  // again at (current_[k], all before b): each output is dropped from its
  // last read (or making) before the new step to it, or made there only
  // when it is not read after; the inputs are read at the new step.
  void Drop(int k, int b) {
    const Decision& d = m_.decisions[k];
    const int made = m_.Step(b, d.op);
    const int before = current_[k].empty() ? m_.OpStep(d.op)
                                           : m_.Step(current_[k].back(), d.op);
    for (int t : d.outputs) {
      const std::vector<int>& r = reads_[t];
      if (made > Last(t)) {
        Add(made, made, m_.size[t]);
        continue;
      }
      auto it = std::lower_bound(r.begin(), r.end(), made);
      const int from =
          std::max(before, it == r.begin() ? before : *std::prev(it));
      if (from + 1 <= made - 1) Add(from + 1, made - 1, -m_.size[t]);
    }
    ++exists_[made];
    journal_.push_back({.kind = Undo::kExists, .a = made});
    for (int t : d.inputs) Read(t, made);
  }

  void Revert(size_t mark) {
    while (journal_.size() > mark) {
      const Undo u = journal_.back();
      journal_.pop_back();
      switch (u.kind) {
        case Undo::kRange:
          for (int s = u.a; s <= u.b; ++s) keep_[s] -= u.v;
          break;
        case Undo::kExists:
          --exists_[u.a];
          break;
        case Undo::kLast:
          buffer_last_[u.a] = u.b;
          break;
        case Undo::kRead: {
          std::vector<int>& r = reads_[u.a];
          r.erase(std::lower_bound(r.begin(), r.end(), u.b));
          break;
        }
      }
    }
  }

  // Over every step above `target`: the bytes the decisions `from` on
  // (undecided, or being branched on) may drop there (their outputs alive
  // there but neither made nor read there, and for the one being branched
  // on, past the spans decided), and a lower bound of the cost of dropping
  // the excess. A decision each of whose options frees at least the excess
  // covers it alone: such a cover costs at least the least of their costs;
  // any other takes only the others, at least the fractional knapsack of
  // their bytes (each at its cost per byte, the cheapest per byte first).
  void Droppable(size_t from, Bytes target) {
    left_.assign(m_.num_steps, 0);
    dropped_.assign(m_.num_steps, 0);
    need_.assign(m_.num_steps, 0);
    whole_.assign(m_.num_steps, kInfinity);
    for (int s = 0; s < m_.num_steps; ++s) {
      if (exists_[s] > 0 && keep_[s] > target) left_[s] = keep_[s] - target;
    }
    excess_ = left_;
    item_of_.assign(m_.num_steps, kNone);
    items_.assign(m_.num_steps, 0);
    const size_t width = m_.decisions.size();
    item_bytes_.resize(m_.num_steps * width);
    item_cost_.resize(m_.num_steps * width);
    for (int k : m_.by_ratio) {
      if (static_cast<size_t>(k) < from) continue;
      const Decision& d = m_.decisions[k];
      // For the one being branched on, a gap of an output ending at or
      // before the stage of its last decided choice is decided; one ending
      // after it may yet be dropped whole (a later run drops each output
      // from its last read before, whichever choices it passed).
      const int decided =
          k == partial_ ? m_.stage_of_step[partial_upto_] : kNone;
      for (int t : d.outputs) {
        int before = m_.OpStep(d.op);
        for (int r : reads_[t]) {
          const bool open = decided == kNone || m_.stage_of_step[r] > decided;
          for (int s = open ? before + 1 : r; s < r; ++s) {
            dropped_[s] += m_.size[t];
            if (excess_[s] > 0 && item_of_[s] != k) {
              item_of_[s] = k;
              const size_t at = s * width + items_[s]++;
              item_bytes_[at] = d.bytes;
              item_cost_[at] = d.least_cost;
            }
            if (d.least_freed >= excess_[s]) {
              whole_[s] = std::min(whole_[s], d.least_cost);
              continue;
            }
            const Bytes take = std::min(left_[s], m_.size[t]);
            if (take > 0) need_[s] += d.per_byte * static_cast<double>(take);
            left_[s] -= take;
          }
          Count(r - before);
          before = r;
        }
      }
    }
    for (int s = 0; s < m_.num_steps; ++s) {
      need_[s] = std::min(left_[s] > 0 ? kInfinity : need_[s], whole_[s]);
      if (excess_[s] > 0) need_[s] = std::max(need_[s], FewestItems(s));
    }
  }

  // A lower bound of the cost of dropping the excess at step s counted in
  // items: each decision droppable there is one item, freeing at most its
  // bytes at no less than its least cost (the cost of an option freeing
  // bytes). A cover takes at least as many items as the fewest of the
  // largest that free the excess, so it costs at least as much as that
  // many of the cheapest; none covers it: infinite.
  double FewestItems(int s) {
    const size_t width = m_.decisions.size();
    Bytes* bytes = item_bytes_.data() + s * width;
    double* costs = item_cost_.data() + s * width;
    const int n = items_[s];
    Count(8 * int64_t{n});
    std::sort(bytes, bytes + n, std::greater<Bytes>());
    int count = 0;
    for (Bytes freed = 0; freed < excess_[s]; ++count) {
      if (count == n) return kInfinity;
      freed += bytes[count];
    }
    std::partial_sort(costs, costs + count, costs + n);
    double sum = 0;
    for (int i = 0; i < count; ++i) sum += costs[i];
    return sum;
  }

  // Whether a completion of the decisions before `from` may beat the best.
  bool Promising(size_t from) {
    const Bytes target = goal_ == Goal::kLeastCost ? bound_ : best_peak_ - 1;
    Count(m_.num_steps);
    Droppable(from, target);
    double need = 0;
    for (int s = 0; s < m_.num_steps; ++s) {
      if (exists_[s] == 0 || keep_[s] <= target) continue;
      if (dropped_[s] < keep_[s] - target) return false;
      need = std::max(need, need_[s]);
    }
    return goal_ == Goal::kLeastPeak || cost_ + need * (1 - 1e-9) < best_cost_;
  }

  void Leaf() {
    Count(m_.num_steps);
    Bytes peak = 0;
    for (int s = 0; s < m_.num_steps; ++s) {
      if (exists_[s] > 0) peak = std::max(peak, keep_[s]);
    }
    if (goal_ == Goal::kLeastCost ? peak > bound_ || cost_ >= best_cost_
                                  : peak >= best_peak_) {
      return;
    }
    for (const Choice& c : excluded_) {
      if (c == current_) return;
    }
    found_ = true;
    best_ = current_;
    best_peak_ = peak;
    if (goal_ == Goal::kLeastCost) best_cost_ = cost_;
  }

  // The stages decision k may run again at now: read there, not read at
  // the stage before (nor made there).
  std::vector<int> Choices(int k) {
    const Decision& d = m_.decisions[k];
    std::vector<int> events = {d.op};
    for (int t : d.outputs) {
      for (int s : reads_[t]) events.push_back(m_.stage_of_step[s]);
    }
    std::sort(events.begin(), events.end());
    events.erase(std::unique(events.begin(), events.end()), events.end());
    std::vector<int> out;
    for (int b : d.stages) {
      if (std::binary_search(events.begin(), events.end(), b) &&
          !std::binary_search(events.begin(), events.end(), b - 1) &&
          (goal_ == Goal::kLeastPeak || !excluded_.empty() || Needed(k, b)))
        out.push_back(b);
    }
    return out;
  }

  // Whether decision k running again at stage b may be needed: some step
  // its outputs would be dropped over may yet hold more than the bound
  // with them. Else a solution with it is no cheaper than the same without
  // it, which fits as well (dropping it only keeps the outputs alive over
  // those steps, and frees its inputs' extra span), so the search skips it;
  // not once rewrites are excluded for their placement (the one without it
  // may be among them).
  bool Needed(int k, int b) const {
    const Decision& d = m_.decisions[k];
    const int made = m_.Step(b, d.op);
    int from = m_.OpStep(d.op);
    for (int t : d.outputs) {
      const std::vector<int>& r = reads_[t];
      auto it = std::lower_bound(r.begin(), r.end(), made);
      if (it != r.begin()) from = std::max(from, *std::prev(it));
    }
    Count(made - from);
    const std::vector<Bytes>& ext = m_.Ext(k);
    for (int s = from + 1; s < made; ++s) {
      if (keep_[s] + ext[s] > bound_) return true;
    }
    return false;
  }

  void Decide(size_t k) {
    if (k == m_.decisions.size()) return Leaf();
    choices_[k] = Choices(static_cast<int>(k));
    Branch(k, 0);
  }

  // Decides whether decision k runs again at its j-th choice, and goes on:
  // the least cost runs it again last, the least peak first.
  void Branch(size_t k, size_t j) {
    const std::vector<int>& choices = choices_[k];
    if (j == choices.size()) {
      if (Promising(k + 1)) Decide(k + 1);
      return;
    }
    const double cost = m_.decisions[k].CostAt(choices[j]);
    const int op = m_.decisions[k].op;
    for (int x = 0; x < 2 && !stopped_; ++x) {
      const bool again = (x == 1) == (goal_ == Goal::kLeastCost);
      if (again && cost_ + cost >= best_cost_) continue;
      const size_t mark = journal_.size();
      if (again) {
        Drop(static_cast<int>(k), choices[j]);
        current_[k].push_back(choices[j]);
        cost_ += cost;
      }
      const int partial = partial_, upto = partial_upto_;
      partial_ = static_cast<int>(k);
      partial_upto_ = m_.Step(choices[j], op);
      if (effort_.Expired()) stopped_ = true;
      if (!stopped_ && Promising(k)) Branch(k, j + 1);
      partial_ = partial;
      partial_upto_ = upto;
      if (again) {
        cost_ -= cost;
        current_[k].pop_back();
      }
      Revert(mark);
    }
  }

  const Model& m_;
  const Goal goal_;
  const Bytes bound_;
  const std::vector<Choice>& excluded_;
  Budget& effort_;
  mutable int64_t looked_ = 0;
  // Droppable()'s, per step.
  std::vector<Bytes> left_, dropped_, excess_;
  // FewestItems()'s: per step, how many decisions are droppable there and
  // the last one counted; their bytes and least costs, a row of
  // decisions.size() per step.
  std::vector<int> items_, item_of_;
  std::vector<Bytes> item_bytes_;
  std::vector<double> item_cost_;
  std::vector<double> need_, whole_;
  std::vector<Bytes> keep_;
  std::vector<int> exists_;
  std::vector<int> buffer_last_;
  std::vector<std::vector<int>> reads_;
  std::vector<Undo> journal_;
  Choice current_;
  Choice choices_;  // per decision, its choices once decided
  // The decision being branched on, and the last step of the spans its
  // branching decided (not droppable any more).
  int partial_ = kNone;
  int partial_upto_ = 0;
  double cost_ = 0;
  bool found_ = false;
  bool stopped_ = false;
  double best_cost_ = std::numeric_limits<double>::infinity();
  Bytes best_peak_ = std::numeric_limits<Bytes>::max();
  Choice best_;
};

// The name of the k-th recomputation of `name`, or of the next k free.
std::string FreeName(const std::string& name, int& k,
                     absl::flat_hash_set<std::string>& taken) {
  auto named = [&](int i) {
    return i == 1 ? absl::StrCat(name, kRecomputeSuffix)
                  : absl::StrCat(name, kRecomputeSuffix, "_", i);
  };
  std::string out = named(k);
  while (taken.contains(out)) out = named(++k);
  taken.insert(out);
  return out;
}

struct Rewritten {
  Graph graph;
  std::vector<std::string> recomputed;
  double cost = 0;
};

// The graph with `choice`'s recomputations inserted: stage by stage, each
// op run again followed by the views of its outputs made before that
// stage, each reader reading the newest version of what it reads.
Rewritten RewriteOf(const Graph& graph, const Model& m, const Choice& choice) {
  std::vector<std::vector<int>> at(m.num_ops);  // decisions, by op
  for (size_t k = 0; k < choice.size(); ++k) {
    for (int b : choice[k]) at[b].push_back(static_cast<int>(k));
  }
  absl::flat_hash_set<std::string> op_names, tensor_names;
  absl::flat_hash_map<std::string, int> index;
  for (const Op& op : graph.ops) op_names.insert(op.name);
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    tensor_names.insert(graph.tensors[t].name);
    index.emplace(graph.tensors[t].name, static_cast<int>(t));
  }
  absl::flat_hash_map<std::string, std::string> newest;
  auto rename = [&](std::vector<std::string>& inputs) {
    for (std::string& in : inputs) {
      if (auto it = newest.find(in); it != newest.end()) in = it->second;
    }
  };
  std::vector<int> next(m.num_ops, 1);
  Rewritten out{.graph = graph, .recomputed = {}, .cost = 0};
  out.graph.ops.clear();
  auto emit = [&](int j) {
    Op copy = graph.ops[j];
    int k = next[j];
    copy.name = FreeName(copy.name, k, op_names);
    next[j] = k + 1;
    rename(copy.inputs);
    for (std::string& o : copy.outputs) {
      Tensor tensor = graph.tensors[index.at(o)];
      tensor.fixed.reset();
      int kt = k;
      tensor.name = FreeName(o, kt, tensor_names);
      newest[o] = tensor.name;
      o = tensor.name;
      out.graph.tensors.push_back(std::move(tensor));
    }
    out.recomputed.push_back(copy.name);
    out.cost += copy.cost.value_or(0);
    out.graph.ops.push_back(std::move(copy));
  };
  for (int t = 0; t < m.num_ops; ++t) {
    std::sort(at[t].begin(), at[t].end(), [&](int x, int y) {
      return m.decisions[x].op < m.decisions[y].op;
    });
    for (int k : at[t]) {
      emit(m.decisions[k].op);
      for (const auto& [v, cost] : m.decisions[k].views) {
        if (v < t) emit(v);
      }
    }
    Op op = graph.ops[t];
    rename(op.inputs);
    out.graph.ops.push_back(std::move(op));
  }
  return out;
}

// The bytes live at each step of a problem built in a graph's own order.
std::vector<Bytes> LiveBytes(const Problem& problem, size_t num_steps) {
  std::vector<Bytes> delta(num_steps + 1, 0);
  for (const Buffer& b : problem.buffers) {
    delta[std::min<size_t>(b.lifetime.start, num_steps)] += b.size;
    delta[std::min<size_t>(b.lifetime.end, num_steps)] -= b.size;
  }
  std::vector<Bytes> live(num_steps, 0);
  Bytes sum = 0;
  for (size_t s = 0; s < num_steps; ++s) live[s] = sum += delta[s];
  return live;
}

Bytes PeakOf(const std::vector<Bytes>& live) {
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

// The options' limits, the work limit divided by `share`.
PlanOptions Limits(const RematExactOptions& options, int share) {
  PlanOptions limits;
  limits.work_limit = options.work_limit;
  limits.work_limit = WorkLimit(limits) / share;
  limits.deadline = options.deadline;
  return limits;
}

absl::Status NoFitError(const Graph& graph, Bytes budget, bool proven,
                        Bytes smallest, Bytes peak_without) {
  return absl::InvalidArgumentError(absl::StrCat(
      "no recomputation fits graph \"", graph.name, "\" into ", budget,
      " bytes", proven ? " (proven)" : "", ": the smallest peak found is ",
      smallest, " bytes (", peak_without,
      " without recomputation); give a budget of at least that"));
}

// The error for a budget no rewrite met: the rewrite of the least live
// peak (searched with a quarter of the limits), placed.
absl::Status NoFit(const Graph& graph, const Model& m, Bytes budget,
                   Bytes peak_without, const RematExactOptions& options,
                   bool proven) {
  Budget effort(Limits(options, 4));
  const std::vector<Choice> none;
  Search least(m, Goal::kLeastPeak, 0, none, effort);
  least.Run();
  Bytes smallest = peak_without;
  if (least.found()) {
    Rewritten r = RewriteOf(graph, m, least.best());
    MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan, PlanMemory(r.graph, options.plan));
    smallest = std::min(smallest, plan.plan.peak);
  }
  return NoFitError(graph, budget, proven, smallest, peak_without);
}

absl::Status CheckArguments(Bytes budget, const RematExactOptions& options) {
  if (budget <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the budget is ", budget, " bytes: give a positive number of bytes"));
  }
  if (!options.plan.reorder.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rematerialization plans the graph's own order: leave reorder empty "
        "(it is \"",
        options.plan.reorder, "\")"));
  }
  if (options.work_limit < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the work limit is ", options.work_limit,
                     ": give 0 (the default) or a positive number"));
  }
  return absl::OkStatus();
}

// What the searches over one model and the placements of their rewrites
// found.
struct Solved {
  std::optional<RematExactResult> fitted;  // a rewrite placed in the budget
  // `fitted` is least, or, without one, no rewrite of the model fits.
  bool proven = false;
  bool spent = false;  // the limits ran out before any rewrite was found
};

// The searches over model `m` and the placements of their rewrites: only
// rewrites costing less than `below` are sought.
absl::StatusOr<Solved> SolveModel(const Graph& graph, const GraphPlan& plain,
                                  const Model& m, Bytes budget,
                                  const RematExactOptions& options,
                                  Budget& effort, double below,
                                  RematExactResult& counts) {
  std::vector<Choice> excluded;
  // The model counts live bytes as BuildProblem does (else nothing is
  // claimed proven).
  Solved solved;
  solved.proven =
      Search(m, Goal::kLeastCost, budget, excluded, effort).RootLive() ==
      LiveBytes(plain.problem, graph.ops.size());
  Bytes bound = budget;
  for (int round = 0; bound > 0; ++round) {
    Search search(m, Goal::kLeastCost, bound, excluded, effort, below);
    search.Run();
    ++counts.searches;
    counts.work = effort.work_done();
    solved.proven = solved.proven && search.complete();
    if (!search.found()) {
      solved.spent = !search.complete();
      break;
    }
    Rewritten r = RewriteOf(graph, m, search.best());
    MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan, PlanMemory(r.graph, options.plan));
    const Bytes live = PeakOf(LiveBytes(plan.problem, r.graph.ops.size()));
    if (live != search.best_peak()) solved.proven = false;
    if (plan.plan.peak <= budget) {
      RematExactResult& result = solved.fitted.emplace();
      result.remat = RematResult{.graph = std::move(r.graph),
                                 .plan = std::move(plan),
                                 .added_cost = r.cost,
                                 .peak_without = plain.plan.peak,
                                 .recomputed = std::move(r.recomputed)};
      result.proven = solved.proven;
      result.live_peak = live;
      return solved;
    }
    if (round < kRematExactRetries) {
      excluded.push_back(search.best());
    } else {
      bound -= plan.plan.peak - budget;
      solved.proven = false;
    }
  }
  return solved;
}

// The search and the loop that places its rewrites (RematerializeExact
// but the comparison with the heuristic). When some op runs again with
// views, the model without those ops is searched first (smaller, and its
// least cost bounds the whole model's search); then the whole model, for
// a rewrite costing less.
absl::StatusOr<RematExactResult> SearchExact(const Graph& graph, Bytes budget,
                                             const RematExactOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plain, PlanMemory(graph, options.plan));
  RematExactResult result;
  result.remat.peak_without = plain.plan.peak;
  const size_t num_ops = graph.ops.size();
  if (plain.plan.peak <= budget) {
    result.remat.graph = graph;
    result.live_peak = PeakOf(LiveBytes(plain.problem, num_ops));
    result.remat.plan = std::move(plain);
    result.proven = true;
    return result;
  }
  if (plain.problem.pools.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph \"", graph.name, "\" has ", plain.problem.pools.size(),
        " pools: exact rematerialization plans graphs of one pool"));
  }
  if (graph.ops.empty()) {  // nothing to run again
    return NoFitError(graph, budget, true, plain.plan.peak, plain.plan.peak);
  }
  Budget effort(Limits(options, 1));
  const Model whole = ModelOf(graph, plain.problem, /*with_views=*/true);
  const Model narrow =
      whole.views ? ModelOf(graph, plain.problem, false) : Model{};
  Solved first;
  if (whole.views) {
    MEMPLAN_ASSIGN_OR_RETURN(
        first, SolveModel(graph, plain, narrow, budget, options, effort,
                          kInfinity, result));
  }
  const double below =
      first.fitted.has_value() ? first.fitted->remat.added_cost : kInfinity;
  MEMPLAN_ASSIGN_OR_RETURN(
      Solved second,
      SolveModel(graph, plain, whole, budget, options, effort, below, result));
  Solved& best = second.fitted.has_value() ? second : first;
  if (best.fitted.has_value()) {
    result.remat = std::move(best.fitted->remat);
    result.live_peak = best.fitted->live_peak;
    // Least when the whole model's search proved it, or proved that
    // nothing costs less than the first's rewrite.
    result.proven = second.proven;
    return result;
  }
  if (second.spent) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the search spent its limits (", effort.work_done(),
        " work units) before it found a rewrite of graph \"", graph.name,
        "\" within ", budget, " bytes: raise the work limit or the deadline"));
  }
  return NoFit(graph, whole.views ? narrow : whole, budget, plain.plan.peak,
               options, second.proven);
}

}  // namespace

RematExactOptions RematExactOptionsFor(const PlanMemoryOptions& options,
                                       absl::Time now) {
  RematExactOptions exact;
  exact.plan = options;
  exact.work_limit = WorkLimit(options.plan);
  if (options.plan.time_limit != absl::InfiniteDuration()) {
    exact.deadline = now + options.plan.time_limit;
  }
  return exact;
}

absl::StatusOr<RematExactResult> RematerializeExact(
    const Graph& graph, Bytes budget, const RematExactOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckArguments(budget, options));
  absl::StatusOr<RematExactResult> exact = SearchExact(graph, budget, options);
  if (exact.ok() && exact->remat.added_cost == 0) return exact;
  // Limits spent before any fit: the caller asked for the search's answer.
  if (!exact.ok() && !absl::IsInvalidArgument(exact.status())) return exact;
  // A rewrite outside the model (an op run again at a stage whose step
  // before read its outputs too, as a chain's second recomputation does)
  // may fit where none of the model does, or cost less.
  absl::StatusOr<RematResult> greedy =
      Rematerialize(graph, budget, options.plan);
  if (!greedy.ok() ||
      (exact.ok() && exact->remat.added_cost <= greedy->added_cost)) {
    return exact;
  }
  RematExactResult result;
  result.live_peak =
      PeakOf(LiveBytes(greedy->plan.problem, greedy->graph.ops.size()));
  result.remat = *std::move(greedy);
  result.proven = false;
  result.heuristic = true;
  if (exact.ok()) {
    result.work = exact->work;
    result.searches = exact->searches;
  }
  return result;
}

}  // namespace memplan
