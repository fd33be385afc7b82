// The "window" op ordering: large-neighbourhood search over the order,
// re-ordering the segments around its peak steps by a beam, and moving the
// ops that make graph outputs to the end. See memplan/reorder.h.
//
// The bytes alive are counted on the model "optimal" searches on
// (order/order_model.h): per view group (order/op_dag.h), alive from the first
// op that starts it to the last op that ends it, an in-place merge counted
// as if it happened wherever the order allows it. The order it returns is
// judged by the real measure, LowerBound(BuildProblem()), at the end.
//
// A beam state is a set of executed ops that is the order's first f
// positions plus some of the next 64 (a position and a 64-bit mask), so a
// state is two words whatever the graph's size, and a step looks at
// `width` positions whatever the graph's width. Re-ordering positions
// [begin, end) leaves the set run before every other step, and so its
// bytes alive, unchanged: a segment that keeps its own steps below the
// peak lowers the peak there and nowhere raises it.

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "order/op_dag.h"
#include "order/order_bound.h"
#include "order/order_effort.h"
#include "order/order_model.h"

namespace memplan {
namespace {

using internal::BuildLiveModel;
using internal::BuildOrderGraph;
using internal::Dag;
using internal::LiveModel;
using internal::OrderGraph;
using internal::OrderPeak;
using internal::ViewGroup;

constexpr int kNone = -1;
// Positions a state's mask holds beyond its prefix.
constexpr int kMaskBits = 64;

// Compressed lists: items of row r are items[begin[r], begin[r + 1]).
struct Rows {
  std::vector<int> begin;
  std::vector<int> items;
  int size(int r) const { return begin[r + 1] - begin[r]; }
  const int* row(int r) const { return items.data() + begin[r]; }
};

Rows ToRows(const std::vector<std::vector<int>>& lists) {
  Rows rows;
  rows.begin.reserve(lists.size() + 1);
  rows.begin.push_back(0);
  for (const std::vector<int>& list : lists) {
    rows.items.insert(rows.items.end(), list.begin(), list.end());
    rows.begin.push_back(static_cast<int>(rows.items.size()));
  }
  return rows;
}

// A set of executed ops: the current order's positions [0, f) and those p
// in [f, f + 64) whose bit p - f of `mask` is set. Bit 0 is never set.
struct Frontier {
  int f = 0;
  uint64_t mask = 0;
  bool Has(int p) const {
    if (p < f) return true;
    const int d = p - f;
    return d < kMaskBits && ((mask >> d) & 1);
  }
  // With position p (not in the set) executed too.
  Frontier With(int p) const {
    Frontier next = *this;
    next.mask |= uint64_t{1} << (p - f);
    while (next.mask & 1) {
      next.mask >>= 1;
      ++next.f;
    }
    return next;
  }
  bool operator==(const Frontier&) const = default;
};

// The model of the bytes alive (order/order_model.h): what each op starts,
// may end and may write in place, by op index; and, for one current order,
// the same by position.
class Model {
 public:
  Model(const Graph& graph, const std::vector<ViewGroup>& groups,
        const std::vector<int>& group_of, const Dag& dag)
      : groups_(groups), n_(static_cast<int>(graph.ops.size())) {
    const LiveModel live = BuildLiveModel(graph, groups_, group_of, dag);
    initial_ = live.initial;
    first_only_ = live.first_only;
    starts_ = ToRows(live.starts);
    ends_ = ToRows(live.ends);
    pred_ = ToRows(live.pred);
    inplace_begin_.push_back(0);
    for (int op = 0; op < n_; ++op) {
      inplace_.insert(inplace_.end(), live.inplace[op].begin(),
                      live.inplace[op].end());
      inplace_begin_.push_back(static_cast<int>(inplace_.size()));
    }
  }

  int ops() const { return n_; }
  Bytes initial() const { return initial_; }
  Bytes first_only() const { return first_only_; }

  // The model's peak of a whole order (ops by index); per step the bytes
  // alive while its op runs in `during` and before it in `before`, when
  // given.
  Bytes PeakOf(const std::vector<int>& order,
               std::vector<Bytes>* during = nullptr,
               std::vector<Bytes>* before = nullptr) const {
    std::vector<int> pos(n_);
    for (int k = 0; k < n_; ++k) pos[order[k]] = k;
    const int g_count = static_cast<int>(groups_.size());
    std::vector<int> first(g_count, n_), last(g_count, kNone);
    for (int g = 0; g < g_count; ++g) {
      for (int s : groups_[g].starts) first[g] = std::min(first[g], pos[s]);
      for (int e : groups_[g].ends) last[g] = std::max(last[g], pos[e]);
    }
    Bytes live = initial_;
    Bytes peak = initial_;
    if (during != nullptr) during->assign(n_, 0);
    if (before != nullptr) before->assign(n_, 0);
    for (int k = 0; k < n_; ++k) {
      const int op = order[k];
      if (before != nullptr) (*before)[k] = live;
      Bytes started = k == 0 ? first_only_ : 0;
      Bytes ended = k == 0 ? first_only_ : 0;
      for (const int* g = starts_.row(op); g != starts_.row(op + 1); ++g) {
        if (first[*g] == k) started += groups_[*g].size;
      }
      for (const int* g = ends_.row(op); g != ends_.row(op + 1); ++g) {
        if (last[*g] == k) ended += groups_[*g].size;
      }
      Bytes discount = 0;
      absl::InlinedVector<int, 8> used;  // outputs counted once
      for (int i = inplace_begin_[op]; i < inplace_begin_[op + 1]; ++i) {
        const auto [in, out] = inplace_[i];
        if (std::find(used.begin(), used.end(), out) != used.end()) {
          continue;
        }
        if (last[in] != k || first[out] != k || groups_[out].from_start) {
          continue;
        }
        discount += std::min(groups_[in].size, groups_[out].size);
        used.push_back(out);
      }
      const Bytes now = live + started - discount;
      if (during != nullptr) (*during)[k] = now;
      peak = std::max(peak, now);
      live += started - ended;
    }
    return peak;
  }

  // The current order: positions, and per group and op the positions of
  // its starts, ends and predecessors, sorted.
  void Place(const std::vector<int>& order) {
    order_ = order;
    pos_.assign(n_, 0);
    for (int k = 0; k < n_; ++k) pos_[order[k]] = k;
    const int g_count = static_cast<int>(groups_.size());
    std::vector<std::vector<int>> starts(g_count), ends(g_count), pred(n_);
    for (int g = 0; g < g_count; ++g) {
      for (int s : groups_[g].starts) starts[g].push_back(pos_[s]);
      for (int e : groups_[g].ends) ends[g].push_back(pos_[e]);
      std::sort(starts[g].begin(), starts[g].end());
      std::sort(ends[g].begin(), ends[g].end());
    }
    for (int op = 0; op < n_; ++op) {
      for (const int* p = pred_.row(op); p != pred_.row(op + 1); ++p) {
        pred[op].push_back(pos_[*p]);
      }
      std::sort(pred[op].begin(), pred[op].end());
    }
    start_pos_ = ToRows(starts);
    end_pos_ = ToRows(ends);
    pred_pos_ = ToRows(pred);
  }

  int OpAt(int p) const { return order_[p]; }

  // Whether the op at position p may run after the set `s`.
  bool Ready(const Frontier& s, int p, int64_t& work) const {
    const int op = order_[p];
    // Predecessors come earlier in the order: look from the latest down to
    // the first before the prefix's end.
    for (const int* q = pred_pos_.row(op + 1); q != pred_pos_.row(op);) {
      --q;
      ++work;
      if (*q < s.f) return true;
      if (!s.Has(*q)) return false;
    }
    return true;
  }

  // The op at position p run after the set `s`, which holds `live` bytes:
  // the bytes alive while it runs, and after.
  std::pair<Bytes, Bytes> Run(const Frontier& s, int p, Bytes live,
                              int64_t& work) const {
    const int op = order_[p];
    const bool first = s.f == 0 && s.mask == 0;
    Bytes started = first ? first_only_ : 0;
    Bytes ended = first ? first_only_ : 0;
    for (const int* g = starts_.row(op); g != starts_.row(op + 1); ++g) {
      ++work;
      if (!AnyIn(s, start_pos_, *g, work)) started += groups_[*g].size;
    }
    for (const int* g = ends_.row(op); g != ends_.row(op + 1); ++g) {
      ++work;
      if (AllIn(s, end_pos_, *g, p, work)) ended += groups_[*g].size;
    }
    Bytes discount = 0;
    absl::InlinedVector<int, 8> used;  // outputs counted once
    for (int i = inplace_begin_[op]; i < inplace_begin_[op + 1]; ++i) {
      ++work;
      const auto [in, out] = inplace_[i];
      if (std::find(used.begin(), used.end(), out) != used.end()) {
        continue;
      }
      if (groups_[out].from_start || !AllIn(s, end_pos_, in, p, work) ||
          AnyIn(s, start_pos_, out, work) || !Starts(out, p)) {
        continue;
      }
      discount += std::min(groups_[in].size, groups_[out].size);
      used.push_back(out);
    }
    return {live + started - discount, live + started - ended};
  }

 private:
  // Some position of row g is in `s`.
  static bool AnyIn(const Frontier& s, const Rows& rows, int g, int64_t& work) {
    for (const int* q = rows.row(g); q != rows.row(g + 1); ++q) {
      ++work;
      if (*q >= s.f + kMaskBits) return false;
      if (s.Has(*q)) return true;
    }
    return false;
  }
  // Every position of row g but p is in `s`.
  static bool AllIn(const Frontier& s, const Rows& rows, int g, int p,
                    int64_t& work) {
    for (const int* q = rows.row(g + 1); q != rows.row(g);) {
      --q;
      ++work;
      if (*q < s.f) return true;
      if (*q != p && !s.Has(*q)) return false;
    }
    return true;
  }
  bool Starts(int g, int p) const {
    return std::binary_search(start_pos_.row(g), start_pos_.row(g + 1), p);
  }

  const std::vector<ViewGroup>& groups_;
  int n_;
  Bytes initial_ = 0;     // graph inputs, alive until their last reader
  Bytes first_only_ = 0;  // graph inputs nobody reads: the first step
  Rows starts_;           // per op: groups it may start
  Rows ends_;             // per op: groups it may end
  Rows pred_;             // per op: the ops that must run before it
  std::vector<std::pair<int, int>> inplace_;  // (in, out) groups
  std::vector<int> inplace_begin_;            // per op, into inplace_
  // The current order.
  std::vector<int> order_;
  std::vector<int> pos_;
  Rows start_pos_;  // per group
  Rows end_pos_;    // per group
  Rows pred_pos_;   // per op
};

// The ops that run after `op` in every order (its descendants in `dag`)
// with it, in `order`'s order: at most `limit` of them, or empty.
std::vector<int> Closure(const Dag& dag, const std::vector<int>& pos, int op,
                         int limit) {
  std::vector<int> found = {op};
  for (size_t i = 0; i < found.size(); ++i) {
    for (int s : dag.succ[found[i]]) {
      if (std::find(found.begin(), found.end(), s) != found.end()) continue;
      if (static_cast<int>(found.size()) == limit) return {};
      found.push_back(s);
    }
  }
  std::sort(found.begin(), found.end(),
            [&](int a, int b) { return pos[a] < pos[b]; });
  return found;
}

// Ops that produce graph outputs (on a training step, the gradients), run
// last: an op whose descendants are few and which starts a group alive to
// the end may move, with them, to the end of the order, where the bytes it
// adds for good no longer stand beside everything alive in between. The
// move costs what its inputs keep alive meanwhile. Each move is kept when
// it lowers the model's peak, or keeps it and lowers the bytes alive summed
// over the steps; ops are tried from the last to the first, in rounds
// while a round moves one. A move never breaks an order: what follows an op
// in every order moves with it.
std::vector<int> DeferOutputs(const Model& model, const Dag& dag,
                              const std::vector<ViewGroup>& groups,
                              std::vector<int> order, Budget& budget) {
  constexpr int kMaxMoved = 8;
  const int n = static_cast<int>(order.size());
  std::vector<bool> starts_output(n, false);
  for (const ViewGroup& g : groups) {
    if (!g.to_end || g.from_start) continue;
    for (int s : g.starts) starts_output[s] = true;
  }
  std::vector<Bytes> during;
  auto measure = [&](const std::vector<int>& o) {
    const Bytes peak = model.PeakOf(o, &during);
    budget.Tick(4 * static_cast<int64_t>(n));
    Bytes area = 0;
    for (Bytes b : during) area += b;
    return std::make_pair(peak, area);
  };
  std::pair<Bytes, Bytes> best = measure(order);
  std::vector<int> pos(n);  // of each op in `order`
  for (int k = 0; k < n; ++k) pos[order[k]] = k;
  bool moved = true;
  while (moved && !budget.Expired()) {
    moved = false;
    std::vector<int> tried;
    for (int k = n - 1; k >= 0; --k) {
      if (starts_output[order[k]]) tried.push_back(order[k]);
    }
    for (int op : tried) {
      if (budget.Expired()) break;
      const std::vector<int> moving = Closure(dag, pos, op, kMaxMoved);
      if (moving.empty()) continue;  // too many to move
      const int size = static_cast<int>(moving.size());
      if (pos[moving.front()] == n - size) continue;  // the last already
      std::vector<int> next;
      next.reserve(n);
      std::vector<bool> in_moving(n, false);
      for (int m : moving) in_moving[m] = true;
      for (int o : order) {
        if (!in_moving[o]) next.push_back(o);
      }
      next.insert(next.end(), moving.begin(), moving.end());
      const std::pair<Bytes, Bytes> score = measure(next);
      if (score < best) {
        best = score;
        order = std::move(next);
        for (int k = 0; k < n; ++k) pos[order[k]] = k;
        moved = true;
      }
    }
  }
  return order;
}

struct PassOptions {
  int width = 32;    // positions past the prefix a step may take
  int beam = 8;      // states kept per step
  int radius = 128;  // positions each side of a peak step
  Bytes target = 0;  // running peaks up to it count as equal
};

// A pass over the positions [begin, end) of the order `model` holds, whose
// bytes alive before `begin` are `live`: their ops in an order whose bytes
// alive stay below `ceiling` at every step, or nullopt. The ops before and
// after keep their steps, and so their bytes alive: the set run after the
// segment is the same.
std::optional<std::vector<int>> Pass(const Model& model,
                                     const PassOptions& options, int begin,
                                     int end, Bytes live, Bytes ceiling,
                                     Budget& budget) {
  struct State {
    Frontier set;
    Bytes peak;
    Bytes live;
    int parent;  // index in the previous step's states
    int op;
  };
  const int length = end - begin;
  // Per step the (parent, op) of its states, to read the order back.
  std::vector<std::vector<std::pair<int, int>>> steps(length + 1);
  std::vector<State> states = {
      State{Frontier{begin, 0}, 0, live, kNone, kNone}};
  steps[0].emplace_back(kNone, kNone);
  std::vector<State> next;
  auto key = [&](const State& s) {
    return std::make_tuple(std::max(s.peak, options.target), s.live, s.peak,
                           s.set.f, s.set.mask);
  };
  for (int k = 0; k < length; ++k) {
    if (budget.Expired()) return std::nullopt;
    next.clear();
    int64_t work = 0;
    for (int e = 0; e < static_cast<int>(states.size()); ++e) {
      const State& s = states[e];
      const int last = std::min(end, s.set.f + options.width);
      for (int p = s.set.f; p < last; ++p) {
        ++work;
        if (s.set.Has(p) || !model.Ready(s.set, p, work)) continue;
        const auto [during, after] = model.Run(s.set, p, s.live, work);
        const Bytes peak = std::max(s.peak, during);
        if (peak >= ceiling) continue;
        next.push_back(State{s.set.With(p), peak, after, e, model.OpAt(p)});
      }
    }
    budget.Tick(work + static_cast<int64_t>(next.size()) * 4);
    if (next.empty()) return std::nullopt;
    // One state per set, the smaller running peak (then the first found).
    std::sort(next.begin(), next.end(), [](const State& a, const State& b) {
      return std::tie(a.set.f, a.set.mask, a.peak, a.parent, a.op) <
             std::tie(b.set.f, b.set.mask, b.peak, b.parent, b.op);
    });
    next.erase(std::unique(next.begin(), next.end(),
                           [](const State& a, const State& b) {
                             return a.set == b.set;
                           }),
               next.end());
    const int keep = std::min<int>(options.beam, next.size());
    std::partial_sort(
        next.begin(), next.begin() + keep, next.end(),
        [&](const State& a, const State& b) { return key(a) < key(b); });
    next.resize(keep);
    for (const State& s : next) steps[k + 1].emplace_back(s.parent, s.op);
    std::swap(states, next);
  }
  std::vector<int> order(length);
  for (int j = length, e = 0; j > 0; --j) {
    order[j - 1] = steps[j][e].second;
    e = steps[j][e].first;
  }
  return order;
}

// Rounds of re-ordering the segments around the peak steps of `order` (on
// `model`), each kept when every peak step came down, until one fails or
// the budget is spent; `target`: running peaks up to it count as equal.
// Returns the rounds kept.
int Rounds(Model& model, Bytes target, std::vector<int>& order,
           Budget& budget) {
  const int n = model.ops();
  int rounds = 0;
  // A segment that finds nothing is tried again wider, with more states.
  constexpr PassOptions kLevels[] = {{.width = 32, .beam = 8, .radius = 128},
                                     {.width = 64, .beam = 32, .radius = 256},
                                     {.width = 64, .beam = 128, .radius = 256},
                                     {.width = 64, .beam = 256, .radius = 512}};
  std::vector<Bytes> during, before;
  bool lowered = true;
  while (lowered && !budget.Expired()) {
    // Every step at the peak must come down: each in a segment of its own
    // (segments that meet are one), the rest of the order unchanged.
    const Bytes ceiling = model.PeakOf(order, &during, &before);
    model.Place(order);
    budget.Tick(4 * static_cast<int64_t>(n));
    std::vector<int> peaks;
    for (int k = 0; k < n; ++k) {
      if (during[k] == ceiling) peaks.push_back(k);
    }
    std::vector<int> next = order;
    lowered = true;
    int floor = 0;  // segments do not overlap: each is read in `order`
    for (size_t i = 0; i < peaks.size() && lowered;) {
      lowered = false;
      for (PassOptions level : kLevels) {
        level.target = target;
        // The peak steps within reach of this one share its segment.
        const int begin = std::max(floor, peaks[i] - level.radius);
        size_t j = i + 1;
        while (j < peaks.size() && peaks[j] - peaks[j - 1] <= 2 * level.radius)
          ++j;
        const int end = std::min(n, peaks[j - 1] + level.radius + 1);
        std::optional<std::vector<int>> segment =
            Pass(model, level, begin, end, before[begin], ceiling, budget);
        if (!segment.has_value()) continue;
        std::copy(segment->begin(), segment->end(), next.begin() + begin);
        floor = end;
        lowered = true;
        i = j;
        break;
      }
    }
    if (lowered) {
      order = std::move(next);
      ++rounds;
    }
  }
  return rounds;
}

}  // namespace

absl::StatusOr<WindowOrder> ComputeWindowOpOrder(const Graph& graph,
                                                 const BuildOptions& options,
                                                 const PlanOptions& effort) {
  // With a limit, the bound gets a tenth of it and the rounds the rest.
  const bool limited = internal::HasLimit(effort);
  Budget budget(
      internal::WithDefaultWork(effort, internal::WindowDefaultWork(graph)));
  Budget bound_budget(
      internal::PartEffort(budget, limited, internal::kBoundDefaultWork, 0.1));
  MEMPLAN_ASSIGN_OR_RETURN(
      const std::optional<internal::OrderBounds> bounds,
      internal::ComputeOrderBounds(graph, options, bound_budget));
  if (limited) budget.Carry(bound_budget.work_done());
  MEMPLAN_ASSIGN_OR_RETURN(
      WindowOrder window,
      internal::ComputeWindowOpOrder(graph, options, budget, bounds));
  if (!limited) window.work += bound_budget.work_done();
  return window;
}

namespace internal {

absl::StatusOr<WindowOrder> ComputeWindowOpOrder(
    const Graph& graph, const BuildOptions& options, Budget& budget,
    const std::optional<OrderBounds>& bounds,
    const std::pair<std::vector<int>, Bytes>* memory) {
  const int64_t start = budget.work_done();
  WindowOrder result;
  if (memory != nullptr) {
    result.order = memory->first;
    result.peak = memory->second;
    if (budget.OutOfTimeNow()) {  // not even the model's set-up
      result.cut = true;
      return result;
    }
  }
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  if (memory == nullptr) {
    MEMPLAN_ASSIGN_OR_RETURN(result.order,
                             ComputeOpOrder(graph, "memory", options));
    MEMPLAN_ASSIGN_OR_RETURN(result.peak,
                             OrderPeak(graph, result.order, options));
  }
  if (graph.ops.size() < 2) return result;
  if (budget.OutOfTimeNow()) {  // not even the model's set-up
    result.cut = true;
    return result;
  }
  const OrderGraph grouped = BuildOrderGraph(graph, problem, options);
  Model model(graph, grouped.groups, grouped.group_of, grouped.dag);
  if (bounds.has_value() && bounds->bound.bytes >= result.peak) {
    return result;  // no order does better
  }
  // Running peaks up to what every order holds count as equal.
  const Bytes target = bounds.has_value() ? bounds->sums : 0;

  // The rounds from "memory"'s order; then from theirs with the outputs
  // deferred (DeferOutputs()), when that moves any. The lower of the two
  // by the real measure is kept.
  std::vector<int> order = result.order;
  result.passes += Rounds(model, target, order, budget);
  std::vector<int> deferred =
      DeferOutputs(model, grouped.dag, grouped.groups, order, budget);
  std::vector<std::vector<int>> found;
  if (result.passes > 0) found.push_back(order);
  if (deferred != order) {
    result.passes += 1 + Rounds(model, target, deferred, budget);
    found.push_back(std::move(deferred));
  }
  for (std::vector<int>& candidate : found) {
    MEMPLAN_ASSIGN_OR_RETURN(const Bytes peak,
                             OrderPeak(graph, candidate, options));
    if (peak < result.peak) {
      result.order = std::move(candidate);
      result.peak = peak;
    }
  }
  result.work = budget.work_done() - start;
  result.cut = budget.WorkSpent() || budget.OutOfTimeNow();
  return result;
}

}  // namespace internal

}  // namespace memplan
