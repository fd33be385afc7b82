// The "optimal" op ordering: a best-first search over the sets of executed
// ops. See memplan/reorder.h.
//
// The search runs on a model of the peak that never exceeds the lower bound
// of BuildProblem() for the same order (the measure every ordering is judged
// by): per view group (model/op_dag.h, sizes aligned as BuildProblem's
// buffers), alive from the first op that starts it (graph inputs from the
// start) to the last op that ends it (graph outputs to the end). The one
// thing the order decides besides lifetimes, an in-place merge, is counted
// as if it always happened: at the op whose input group dies there and
// whose output group starts there, the output adds only the bytes it has
// beyond the input. So the model's minimum over all orders is a lower bound
// over all orders, and an order whose real bound meets it is optimal.
//
// The bytes alive after a set of executed ops depend on the set alone, so a
// state is the set; of two paths to one set the one with the smaller running
// peak dominates. States leave the queue by running peak (then more ops
// executed, then fewer live bytes, then creation), so the first complete set
// to leave holds a minimal peak; states that cannot beat the best order known
// (the graph's own and "memory"'s, in the model) are never queued.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "model/op_dag.h"

namespace memplan {
namespace {

using internal::BuildDag;
using internal::ByteGroups;
using internal::Dag;
using internal::ViewGroup;
using internal::ViewGroups;

constexpr int kNone = -1;
// The operations one queued state counts for besides its set's words: about
// the bytes it holds (the state, its set's hash entry and queue entry).
constexpr int64_t kStateWork = 64;
// The states per step of the beam tried when the search does not finish.
constexpr int kBeamWidth = 16;

// The model of the peak: how one op changes the bytes alive.
class PeakModel {
 public:
  PeakModel(const Graph& graph, const std::vector<ViewGroup>& groups,
            const std::vector<int>& group_of, const Dag& dag)
      : groups_(groups),
        n_(static_cast<int>(graph.ops.size())),
        words_((n_ + 63) / 64) {
    starts_.assign(n_, {});
    ends_.assign(n_, {});
    pred_.assign(n_, {});
    inplace_.assign(n_, {});
    for (int x = 0; x < n_; ++x) {
      for (int s : dag.succ[x]) pred_[s].push_back(x);
    }
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
      const ViewGroup& group = groups_[g];
      if (group.from_start && group.ends.empty() && !group.to_end) {
        first_only_ += group.size;  // an input nobody reads: the first step
      } else if (group.from_start) {
        initial_ += group.size;
      } else {
        for (int s : group.starts) starts_[s].push_back(g);
      }
      if (!group.to_end) {
        for (int e : group.ends) ends_[e].push_back(g);
      }
    }
    absl::flat_hash_map<std::string, int> index;
    for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
      index.emplace(graph.tensors[t].name, t);
    }
    // What keeps BuildProblem from merging whatever the order: a fixed
    // placement, an explicit conflict, an output larger than an input that
    // is its own buffer (one that is itself no in-place output).
    const int g_count = static_cast<int>(groups_.size());
    std::vector<Bytes> raw_size(g_count, 0);
    std::vector<bool> fixed(g_count, false);
    for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
      const int g = group_of[t];
      if (g == kNone) continue;
      raw_size[g] = std::max(raw_size[g], graph.tensors[t].size);
      if (graph.tensors[t].fixed.has_value()) fixed[g] = true;
    }
    std::vector<bool> inplace_output(g_count, false);
    for (const Op& op : graph.ops) {
      for (const OperandPair& pair : op.inplace) {
        const int out = group_of[index.at(op.outputs[pair.output])];
        if (out != kNone) inplace_output[out] = true;
      }
    }
    absl::flat_hash_set<std::pair<int, int>> conflicts;
    for (const TensorConflict& c : graph.conflicts) {
      auto a = index.find(c.a);
      auto b = index.find(c.b);
      if (a == index.end() || b == index.end()) continue;
      const int ga = group_of[a->second];
      const int gb = group_of[b->second];
      if (ga == kNone || gb == kNone) continue;
      conflicts.emplace(std::min(ga, gb), std::max(ga, gb));
    }
    for (int i = 0; i < n_; ++i) {
      const Op& op = graph.ops[i];
      for (const OperandPair& pair : op.inplace) {
        const int in = group_of[index.at(op.inputs[pair.input])];
        const int out = group_of[index.at(op.outputs[pair.output])];
        if (in == kNone || out == kNone || in == out) continue;
        if (groups_[in].from_start || groups_[in].to_end) continue;
        if (fixed[in] || fixed[out]) continue;
        if (conflicts.contains({std::min(in, out), std::max(in, out)})) continue;
        if (!inplace_output[in] && raw_size[out] > raw_size[in]) continue;
        inplace_[i].emplace_back(in, out);
      }
    }
  }

  int ops() const { return n_; }
  int words() const { return words_; }
  Bytes initial() const { return initial_; }

  static bool Has(const uint64_t* set, int op) {
    return (set[op / 64] >> (op % 64)) & 1;
  }
  static void Set(uint64_t* set, int op) {
    set[op / 64] |= uint64_t{1} << (op % 64);
  }

  bool Ready(const uint64_t* executed, int op) const {
    if (Has(executed, op)) return false;
    for (int p : pred_[op]) {
      if (!Has(executed, p)) return false;
    }
    return true;
  }

  // Runs `op` after the ops of `executed` (which holds `live` bytes): the
  // bytes alive while it runs, and after. `work` counts the operations.
  std::pair<Bytes, Bytes> Run(const uint64_t* executed, int op, Bytes live,
                              bool first, int64_t& work) const {
    Bytes started = first ? first_only_ : 0;
    Bytes discount = 0;
    for (int g : starts_[op]) {
      ++work;
      if (!AnyIn(executed, groups_[g].starts, work)) started += groups_[g].size;
    }
    Bytes ended = 0;
    for (int g : ends_[op]) {
      ++work;
      if (AllIn(executed, groups_[g].ends, op, work)) ended += groups_[g].size;
    }
    // An input dying here may hold outputs starting here: each output at most
    // once, as much of it as the input has bytes (BuildProblem merges an
    // output no larger than its input, several into one input's bytes).
    std::vector<int> used;
    for (const auto& [in, out] : inplace_[op]) {
      ++work;
      if (std::find(used.begin(), used.end(), out) != used.end()) continue;
      if (!AllIn(executed, groups_[in].ends, op, work)) continue;
      if (groups_[out].from_start || AnyIn(executed, groups_[out].starts, work) ||
          !std::binary_search(groups_[out].starts.begin(),
                              groups_[out].starts.end(), op)) {
        continue;
      }
      discount += std::min(groups_[in].size, groups_[out].size);
      used.push_back(out);
    }
    return {live + started - discount,
            live + started - ended - (first ? first_only_ : 0)};
  }

  // The model's peak of a whole order.
  Bytes PeakOf(const std::vector<int>& order) const {
    std::vector<uint64_t> executed(words_, 0);
    Bytes live = initial_;
    Bytes peak = initial_;
    int64_t work = 0;
    for (int op : order) {
      const auto [during, after] =
          Run(executed.data(), op, live, op == order.front(), work);
      peak = std::max(peak, during);
      live = after;
      Set(executed.data(), op);
    }
    return peak;
  }

 private:
  static bool AnyIn(const uint64_t* set, const std::vector<int>& ops,
                    int64_t& work) {
    for (int x : ops) {
      ++work;
      if (Has(set, x)) return true;
    }
    return false;
  }
  // Every op of `ops` but `op` is in `set`.
  static bool AllIn(const uint64_t* set, const std::vector<int>& ops, int op,
                    int64_t& work) {
    for (int x : ops) {
      ++work;
      if (x != op && !Has(set, x)) return false;
    }
    return true;
  }

  const std::vector<ViewGroup>& groups_;
  int n_;
  int words_;
  Bytes initial_ = 0;     // graph inputs, alive until their last reader
  Bytes first_only_ = 0;  // graph inputs nobody reads
  std::vector<std::vector<int>> starts_;  // per op: groups it may start
  std::vector<std::vector<int>> ends_;    // per op: groups it may end
  std::vector<std::vector<int>> pred_;
  std::vector<std::vector<std::pair<int, int>>> inplace_;  // (in, out) groups
};

// The search. Returns the order of the smallest model peak below `incumbent`,
// nullopt when there is none; `exhausted` false when it stopped at
// `max_work` before knowing.
class Search {
 public:
  Search(const PeakModel& model, int64_t max_work)
      : model_(model), words_(model.words()), max_work_(max_work) {}

  std::optional<std::vector<int>> Run(Bytes incumbent, bool& exhausted,
                                      Bytes& peak) {
    exhausted = false;
    const int n = model_.ops();
    std::vector<uint64_t> empty(words_, 0);
    Add(empty.data(), model_.initial(), model_.initial(), 0, kNone, kNone);
    while (!queue_.empty()) {
      const auto [state_peak, neg_count, live, id] = queue_.top();
      queue_.pop();
      const State state = states_[id];
      if (state.peak != state_peak) continue;  // a better path replaced it
      if (state.count == n) {
        exhausted = true;
        peak = state.peak;
        return Path(id);
      }
      for (int op = 0; op < n; ++op) {
        work_ += 1;
        if (!model_.Ready(&sets_[Offset(id)], op)) continue;
        const auto [during, after] =
            model_.Run(&sets_[Offset(id)], op, state.live, state.count == 0,
                       work_);
        const Bytes next_peak = std::max(state.peak, during);
        if (next_peak >= incumbent) continue;
        std::vector<uint64_t> next(sets_.begin() + Offset(id),
                                   sets_.begin() + Offset(id) + words_);
        PeakModel::Set(next.data(), op);
        Add(next.data(), next_peak, after, state.count + 1, id, op);
        work_ += kStateWork + words_;
      }
      if (work_ > max_work_) return std::nullopt;
    }
    exhausted = true;
    return std::nullopt;
  }

  int64_t work() const { return work_; }

 private:
  struct State {
    Bytes peak;
    Bytes live;
    int count;
    int parent;
    int op;
  };
  struct SetHash {
    const Search* search;
    size_t operator()(int id) const {
      const uint64_t* s = &search->sets_[search->Offset(id)];
      return absl::HashOf(absl::MakeSpan(s, search->words_));
    }
  };
  struct SetEq {
    const Search* search;
    bool operator()(int a, int b) const {
      return std::equal(&search->sets_[search->Offset(a)],
                        &search->sets_[search->Offset(a)] + search->words_,
                        &search->sets_[search->Offset(b)]);
    }
  };

  size_t Offset(int id) const { return static_cast<size_t>(id) * words_; }

  void Add(const uint64_t* set, Bytes peak, Bytes live, int count, int parent,
           int op) {
    const int id = static_cast<int>(states_.size());
    sets_.insert(sets_.end(), set, set + words_);
    states_.push_back(State{peak, live, count, parent, op});
    auto [it, inserted] = known_.insert(id);
    if (!inserted) {
      const int old = *it;
      sets_.resize(sets_.size() - words_);
      states_.pop_back();
      if (states_[old].peak <= peak) return;
      states_[old].peak = peak;  // the live bytes are the set's
      states_[old].parent = parent;
      states_[old].op = op;
      queue_.emplace(peak, -count, live, old);
      return;
    }
    queue_.emplace(peak, -count, live, id);
  }

  std::vector<int> Path(int id) const {
    std::vector<int> order;
    for (; states_[id].parent != kNone; id = states_[id].parent) {
      order.push_back(states_[id].op);
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

  const PeakModel& model_;
  int words_;
  int64_t max_work_;
  int64_t work_ = 0;
  std::vector<uint64_t> sets_;  // words_ per state
  std::vector<State> states_;
  absl::flat_hash_set<int, SetHash, SetEq> known_{0, SetHash{this},
                                                  SetEq{this}};
  // (peak, -ops executed, live, id): the smallest first.
  std::priority_queue<std::tuple<Bytes, int, Bytes, int>,
                      std::vector<std::tuple<Bytes, int, Bytes, int>>,
                      std::greater<>>
      queue_;
};

// A beam over the model: of the states with k ops run, the `width` of the
// smallest running peak (then live bytes) are expanded by every ready op,
// states reaching one set merged. Returns the order of the best complete
// state, nullopt past `max_work` (counted as the search counts it).
std::optional<std::vector<int>> BeamOrder(const PeakModel& model, int width,
                                          int64_t max_work, int64_t& work) {
  const int n = model.ops();
  const int words = model.words();
  struct Entry {
    Bytes peak;
    Bytes live;
    int parent;  // index in the previous level
    int op;
  };
  std::vector<std::vector<Entry>> levels(n + 1);
  std::vector<std::vector<uint64_t>> sets(n + 1);
  levels[0].push_back(Entry{model.initial(), model.initial(), kNone, kNone});
  sets[0].assign(words, 0);
  for (int k = 0; k < n; ++k) {
    std::vector<Entry> next;
    std::vector<uint64_t> next_sets;
    absl::flat_hash_map<std::vector<uint64_t>, int> seen;
    for (int e = 0; e < static_cast<int>(levels[k].size()); ++e) {
      const Entry entry = levels[k][e];
      const uint64_t* set = &sets[k][static_cast<size_t>(e) * words];
      for (int op = 0; op < n; ++op) {
        ++work;
        if (!model.Ready(set, op)) continue;
        const auto [during, after] =
            model.Run(set, op, entry.live, k == 0, work);
        std::vector<uint64_t> key(set, set + words);
        PeakModel::Set(key.data(), op);
        work += kStateWork + words;
        const Entry candidate{std::max(entry.peak, during), after, e, op};
        auto [it, inserted] =
            seen.emplace(std::move(key), static_cast<int>(next.size()));
        if (inserted) {
          next.push_back(candidate);
          next_sets.insert(next_sets.end(), it->first.begin(), it->first.end());
        } else if (candidate.peak < next[it->second].peak) {
          next[it->second] = candidate;
        }
      }
      if (work > max_work) return std::nullopt;
    }
    std::vector<int> keep(next.size());
    std::iota(keep.begin(), keep.end(), 0);
    std::sort(keep.begin(), keep.end(), [&](int a, int b) {
      return std::tie(next[a].peak, next[a].live, a) <
             std::tie(next[b].peak, next[b].live, b);
    });
    if (static_cast<int>(keep.size()) > width) keep.resize(width);
    for (int i : keep) {
      levels[k + 1].push_back(next[i]);
      sets[k + 1].insert(sets[k + 1].end(),
                         next_sets.begin() + static_cast<size_t>(i) * words,
                         next_sets.begin() + static_cast<size_t>(i + 1) * words);
    }
    work += static_cast<int64_t>(next.size());
  }
  std::vector<int> order(n);
  int e = 0;  // the best complete state comes first
  for (int k = n; k > 0; --k) {
    order[k - 1] = levels[k][e].op;
    e = levels[k][e].parent;
  }
  return order;
}

absl::StatusOr<Bytes> OrderPeak(const Graph& graph,
                                const std::vector<int>& order,
                                const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem,
                           BuildProblem(PermuteOps(graph, order), options));
  return LowerBound(problem);
}

}  // namespace

absl::StatusOr<OptimalOrder> ComputeOptimalOpOrder(const Graph& graph,
                                                   const BuildOptions& options,
                                                   int64_t max_work) {
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  absl::flat_hash_map<std::string, int> index;
  for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
    index.emplace(graph.tensors[t].name, t);
  }
  const Dag dag = BuildDag(graph, index, ByteGroups(graph, problem, index));
  std::vector<int> group_of;
  const std::vector<ViewGroup> groups =
      ViewGroups(graph, problem, options, index, &group_of);
  const PeakModel model(graph, groups, group_of, dag);

  // The incumbent: the graph's own order or "memory"'s, whichever is lower.
  OptimalOrder result;
  result.order.resize(graph.ops.size());
  std::iota(result.order.begin(), result.order.end(), 0);
  result.peak = LowerBound(problem);
  MEMPLAN_ASSIGN_OR_RETURN(const std::vector<int> memory,
                           ComputeOpOrder(graph, "memory", options));
  MEMPLAN_ASSIGN_OR_RETURN(const Bytes memory_peak,
                           OrderPeak(graph, memory, options));
  if (memory_peak < result.peak) {
    result.order = memory;
    result.peak = memory_peak;
  }
  // At the bound over all orders already (every bundled inference graph):
  // nothing to search.
  MEMPLAN_ASSIGN_OR_RETURN(const std::optional<OrderLowerBound> any_order,
                           LowerBoundOverOrders(graph, options));
  const Bytes any_bound = any_order.has_value() ? any_order->bytes : 0;
  if (any_bound >= result.peak) {
    result.bound = result.peak;
    result.proven = true;
    return result;
  }
  // The model's peak of an order is at most its real one: searching below
  // the smaller of the two never misses a better order.
  const Bytes incumbent = std::min(result.peak, model.PeakOf(result.order));

  Search search(model, max_work);
  bool exhausted = false;
  Bytes found_peak = 0;
  const std::optional<std::vector<int>> found =
      search.Run(incumbent, exhausted, found_peak);
  result.work = search.work();
  Bytes model_minimum = 0;  // no order's model peak is below it, when known
  if (found.has_value()) {
    model_minimum = found_peak;
    MEMPLAN_ASSIGN_OR_RETURN(const Bytes peak,
                             OrderPeak(graph, *found, options));
    if (peak < result.peak) {
      result.order = *found;
      result.peak = peak;
    }
  } else if (exhausted) {
    model_minimum = incumbent;
  } else {
    // Unfinished: a beam over the same model may still find a better order.
    int64_t beam_work = 0;
    const std::optional<std::vector<int>> beam =
        BeamOrder(model, kBeamWidth, max_work, beam_work);
    result.work += beam_work;
    if (beam.has_value()) {
      MEMPLAN_ASSIGN_OR_RETURN(const Bytes peak,
                               OrderPeak(graph, *beam, options));
      if (peak < result.peak) {
        result.order = *beam;
        result.peak = peak;
      }
    }
  }
  result.bound = std::max(model_minimum, any_bound);
  result.bound = std::min(result.bound, result.peak);
  result.proven = result.bound == result.peak;
  return result;
}

}  // namespace memplan
