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
// peak dominates. The graph is searched segment by segment (Segments()),
// the segment of the highest peak in the best order known first. States
// leave the queue by running peak raised to the floor (the largest bound
// known on the whole order: below it, no order is better than another),
// then more ops executed, then fewer live bytes, then creation; so the
// first complete set to leave holds a minimal peak, and below the floor the
// search runs depth-first. States that cannot beat the best order known
// (the graph's own, "memory"'s or "window"'s, in the model) are never
// queued.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <queue>
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
#include "model/order_model.h"

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
// The operations one queued state counts for besides its set's words: about
// the bytes it holds (the state, its set's hash entry and queue entry).
constexpr int64_t kStateWork = 64;
// The states per step of the first beam tried when the search does not
// finish; the next ones keep 4 times as many, up to the last.
constexpr int kBeamWidth = 16;
constexpr int64_t kMaxBeamWidth = 1 << 20;

// The ops [begin, end) of a graph whose ops before `begin` all run before
// them and whose ops from `end` on all run after (Segments()): a segment.
struct Segment {
  int begin = 0;
  int end = 0;
};

// The model of the peak: how one op changes the bytes alive.
class PeakModel {
 public:
  PeakModel(const Graph& graph, const std::vector<ViewGroup>& groups,
            const std::vector<int>& group_of, const Dag& dag)
      : groups_(groups),
        n_(static_cast<int>(graph.ops.size())),
        words_((n_ + 63) / 64) {
    LiveModel live = BuildLiveModel(graph, groups_, group_of, dag);
    initial_ = live.initial;
    first_only_ = live.first_only;
    starts_ = std::move(live.starts);
    ends_ = std::move(live.ends);
    pred_ = std::move(live.pred);
    inplace_ = std::move(live.inplace);
  }

  int ops() const { return n_; }
  // Whether every group `op` may start has no other op to start it.
  bool StartsAlone(int op) const {
    for (int g : starts_[op]) {
      if (groups_[g].starts.size() != 1) return false;
    }
    return true;
  }
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

  // Runs a whole order: per segment, the bytes alive where it starts and
  // its peak (at least those). As Run() counts, but with a count of the
  // ends still to run per group instead of a look at each: Run() would
  // take a fan's width per branch.
  void Profile(const std::vector<int>& order,
               const std::vector<Segment>& segments,
               std::vector<Bytes>& start_live,
               std::vector<Bytes>& peak) const {
    std::vector<bool> started(groups_.size(), false);
    std::vector<int> remaining(groups_.size(), 0);
    for (int g = 0; g < static_cast<int>(groups_.size()); ++g) {
      remaining[g] = static_cast<int>(groups_[g].ends.size());
    }
    Bytes live = initial_;
    size_t s = 0;
    std::vector<int> used;
    for (int k = 0; k < static_cast<int>(order.size()); ++k) {
      if (k == segments[s].end) ++s;
      if (k == segments[s].begin) peak[s] = start_live[s] = live;
      const int op = order[k];
      Bytes first = k == 0 ? first_only_ : 0;
      Bytes added = first;
      for (int g : starts_[op]) {
        if (!started[g]) added += groups_[g].size;
      }
      Bytes ended = 0;
      for (int g : ends_[op]) {
        if (remaining[g] == 1) ended += groups_[g].size;
      }
      Bytes discount = 0;
      used.clear();
      for (const auto& [in, out] : inplace_[op]) {
        if (std::find(used.begin(), used.end(), out) != used.end()) continue;
        const bool reads = std::binary_search(groups_[in].ends.begin(),
                                              groups_[in].ends.end(), op);
        if (remaining[in] != (reads ? 1 : 0) || groups_[out].from_start ||
            started[out] ||
            !std::binary_search(groups_[out].starts.begin(),
                                groups_[out].starts.end(), op)) {
          continue;
        }
        discount += std::min(groups_[in].size, groups_[out].size);
        used.push_back(out);
      }
      peak[s] = std::max(peak[s], live + added - discount);
      live = live + added - ended - first;
      for (int g : starts_[op]) started[g] = true;
      for (int g : ends_[op]) --remaining[g];
    }
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

// The segments of a graph: split after every op that each other op
// precedes or follows in the DAG every ordering keeps (an articulation op:
// a stage's output every later op descends from). Every valid order runs
// the segments one after another, and the bytes alive where one starts are
// those of its executed set, which every order shares: the peak of an
// order is the largest of its segments', each of which depends on the
// order within that segment alone. So the best order is the segments' best
// orders put together, and each may be searched on its own.
//
// Op v splits when no edge passes over it (every edge points forward in the
// graph's order), no op before it is a sink and no op after it a source:
// then every op before it reaches it, and it reaches every op after.
std::vector<Segment> Segments(const Dag& dag) {
  const int n = static_cast<int>(dag.succ.size());
  std::vector<int> over(n + 1, 0);  // edges passing over an op, as deltas
  for (int a = 0; a < n; ++a) {
    for (int b : dag.succ[a]) {
      if (b > a + 1) {
        ++over[a + 1];
        --over[b];
      }
    }
  }
  std::vector<bool> source_after(n + 1, false);
  for (int v = n - 1; v >= 0; --v) {
    source_after[v] =
        source_after[v + 1] || (v + 1 < n && dag.indegree[v + 1] == 0);
  }
  std::vector<Segment> segments;
  int begin = 0;
  int passing = 0;
  bool sink_before = false;
  for (int v = 0; v < n; ++v) {
    passing += over[v];
    if (passing == 0 && !sink_before && !source_after[v]) {
      segments.push_back(Segment{begin, v + 1});
      begin = v + 1;
    }
    sink_before = sink_before || dag.succ[v].empty();
  }
  if (begin < n) segments.push_back(Segment{begin, n});
  return segments;
}

// What the search of one segment knows.
struct SegmentSearch {
  std::vector<int> order;  // the segment's ops, when one was found
  Bytes peak = 0;          // its peak, raised to the floor, when found
  bool finished = false;   // no order below the incumbent, when none found
  Bytes frontier = 0;      // unfinished: no order of the segment is below
                           // it (raised to the floor)
};

// The best-first search over the executed sets of one segment, from the set
// of every op before it (holding `start_live` bytes). A state's key is its
// running peak raised to `floor`, a bound already known on the whole
// order's peak: below it, peaks make no difference to the result, and the
// ties go to the states with more ops run, so the search dives to a
// complete order instead of widening every cheap prefix. The first complete
// state to leave the queue has the smallest key; states whose key reaches
// `incumbent` (the best order known, in the model) are never queued.
class Search {
 public:
  Search(const PeakModel& model, Segment segment, Bytes floor,
         Bytes incumbent, int64_t max_work)
      : model_(model),
        words_(model.words()),
        segment_(segment),
        floor_(floor),
        incumbent_(incumbent),
        max_work_(max_work) {}

  SegmentSearch Run(Bytes start_live) {
    SegmentSearch result;
    std::vector<uint64_t> start(words_, 0);
    for (int op = 0; op < segment_.begin; ++op) {
      PeakModel::Set(start.data(), op);
    }
    Add(start.data(), std::max(start_live, floor_), start_live,
        segment_.begin, kNone, kNone);
    while (!queue_.empty()) {
      const auto [key, neg_count, live, id] = queue_.top();
      if (work_ > max_work_) {
        // Every order of the segment passes through a queued set with a
        // key at most its own: the least key bounds them all.
        result.frontier = key;
        return result;
      }
      queue_.pop();
      const State state = states_[id];
      if (state.peak != key) continue;  // a better path replaced it
      if (state.count == segment_.end) {
        result.order = Path(id);
        result.peak = state.peak;
        return result;
      }
      children_.clear();
      int forced = kNone;
      for (int op = segment_.begin; op < segment_.end; ++op) {
        work_ += 1;
        if (!model_.Ready(&sets_[Offset(id)], op)) continue;
        const auto [during, after] =
            model_.Run(&sets_[Offset(id)], op, state.live, state.count == 0,
                       work_);
        const Bytes next_peak = std::max(state.peak, during);
        if (next_peak >= incumbent_) continue;
        children_.push_back({op, next_peak, after});
        // An op that frees at least what it allocates and stays within the
        // running peak may run first: moved to the front of any completion
        // it lowers the bytes alive at every step it passes by the same
        // amount or more (a group it ends can only end sooner, an in-place
        // merge of a later op can only become possible), unless one of the
        // groups it starts could be started by another op instead. So every
        // completion is matched by one that starts with it, at no higher
        // peak: the state's only child.
        if (forced == kNone && state.count > 0 && after <= state.live &&
            next_peak == state.peak && model_.StartsAlone(op)) {
          forced = static_cast<int>(children_.size()) - 1;
        }
      }
      for (int c = 0; c < static_cast<int>(children_.size()); ++c) {
        if (forced != kNone && c != forced) continue;
        const Child child = children_[c];
        std::vector<uint64_t> next(sets_.begin() + Offset(id),
                                   sets_.begin() + Offset(id) + words_);
        PeakModel::Set(next.data(), child.op);
        Add(next.data(), child.peak, child.live, state.count + 1, id,
            child.op);
        work_ += kStateWork + words_;
      }
    }
    result.finished = true;
    return result;
  }

  int64_t work() const { return work_; }


 private:
  struct State {
    Bytes peak;  // the running peak, raised to the floor
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
  Segment segment_;
  Bytes floor_;
  Bytes incumbent_;
  int64_t max_work_;
  int64_t work_ = 0;
  struct Child {
    int op;
    Bytes peak;
    Bytes live;
  };
  std::vector<Child> children_;  // of the state being expanded
  std::vector<uint64_t> sets_;  // words_ per state
  std::vector<State> states_;
  absl::flat_hash_set<int, SetHash, SetEq> known_{0, SetHash{this},
                                                  SetEq{this}};
  // (key, -ops executed, live, id): the smallest first.
  std::priority_queue<std::tuple<Bytes, int, Bytes, int>,
                      std::vector<std::tuple<Bytes, int, Bytes, int>>,
                      std::greater<>>
      queue_;
};

// A beam over one segment of the model, from the set of every op before it
// (holding `start_live` bytes): of the states with k ops run, the `width` of
// the smallest running peak (then live bytes) are expanded by every ready
// op, states reaching one set merged. Returns the segment's order of the
// best complete state and its peak, nullopt past `max_work` (counted as the
// search counts it).
std::optional<std::pair<std::vector<int>, Bytes>> BeamOrder(
    const PeakModel& model, Segment segment, Bytes start_live, int width,
    int64_t max_work, int64_t& work) {
  const int m = segment.end - segment.begin;
  const int words = model.words();
  struct Entry {
    Bytes peak;
    Bytes live;
    int parent;  // index in the previous level
    int op;
  };
  std::vector<std::vector<Entry>> levels(m + 1);
  std::vector<std::vector<uint64_t>> sets(m + 1);
  levels[0].push_back(Entry{start_live, start_live, kNone, kNone});
  sets[0].assign(words, 0);
  for (int op = 0; op < segment.begin; ++op) PeakModel::Set(sets[0].data(), op);
  for (int k = 0; k < m; ++k) {
    std::vector<Entry> next;
    std::vector<uint64_t> next_sets;
    absl::flat_hash_map<std::vector<uint64_t>, int> seen;
    for (int e = 0; e < static_cast<int>(levels[k].size()); ++e) {
      const Entry entry = levels[k][e];
      const uint64_t* set = &sets[k][static_cast<size_t>(e) * words];
      for (int op = segment.begin; op < segment.end; ++op) {
        ++work;
        if (!model.Ready(set, op)) continue;
        const auto [during, after] =
            model.Run(set, op, entry.live, segment.begin + k == 0, work);
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
  std::vector<int> order(m);
  int e = 0;  // the best complete state comes first
  for (int k = m; k > 0; --k) {
    order[k - 1] = levels[k][e].op;
    e = levels[k][e].parent;
  }
  return std::make_pair(std::move(order), levels[m][0].peak);
}


}  // namespace

absl::StatusOr<OptimalOrder> ComputeOptimalOpOrder(const Graph& graph,
                                                   const BuildOptions& options,
                                                   int64_t max_work) {
  MEMPLAN_ASSIGN_OR_RETURN(const Problem problem, BuildProblem(graph, options));
  const OrderGraph grouped = BuildOrderGraph(graph, problem, options);
  const Dag& dag = grouped.dag;
  const PeakModel model(graph, grouped.groups, grouped.group_of, dag);

  // The incumbent: the graph's own order, "memory"'s or "window"'s,
  // whichever is lowest.
  OptimalOrder result;
  result.order.resize(graph.ops.size());
  std::iota(result.order.begin(), result.order.end(), 0);
  result.peak = LowerBound(problem);
  MEMPLAN_ASSIGN_OR_RETURN(
      auto memory,
      internal::MemoryOrder(graph, options, result.peak, grouped.index, dag));
  if (memory.second < result.peak) {
    result.order = std::move(memory.first);
    result.peak = memory.second;
  }
  // At the bound over all orders already (every bundled inference graph):
  // nothing to search.
  MEMPLAN_ASSIGN_OR_RETURN(const std::optional<OrderLowerBound> any_order,
                           LowerBoundOverOrders(graph, options));
  const Bytes any_bound = any_order.has_value() ? any_order->bytes : 0;
  if (any_bound < result.peak) {
    // "window"'s order, where it is lower, is the incumbent instead: on
    // random stages too wide for the search below to finish, it is often
    // the lower one (a RandWire network of 980 ops: 0.816 of the traced
    // peak against the search's 0.896). Its work is its own, linear in the
    // ops, and not counted in `work`.
    MEMPLAN_ASSIGN_OR_RETURN(WindowOrder window,
                             ComputeWindowOpOrder(graph, options));
    if (window.peak < result.peak) {
      result.order = std::move(window.order);
      result.peak = window.peak;
    }
  }
  if (any_bound >= result.peak) {
    result.bound = result.peak;
    result.proven = true;
    return result;
  }
  // The segments, each searched on its own (Segments()); the incumbent's
  // model peak and starting bytes per segment. Every valid order runs the
  // segments in turn, so the incumbent's steps [begin, end) are the
  // segment's ops.
  const std::vector<Segment> segments = Segments(dag);
  const int s_count = static_cast<int>(segments.size());
  std::vector<Bytes> start_live(s_count, 0);
  std::vector<Bytes> segment_peak(s_count, 0);
  model.Profile(result.order, segments, start_live, segment_peak);
  std::vector<std::vector<int>> parts(s_count);

  for (int s = 0; s < s_count; ++s) {
    parts[s].assign(result.order.begin() + segments[s].begin,
                    result.order.begin() + segments[s].end);
  }
  // The segment of the highest peak first: once its minimum is known, the
  // others need only stay below it, which they mostly do at once.
  std::vector<int> by_peak(s_count);
  std::iota(by_peak.begin(), by_peak.end(), 0);
  std::stable_sort(by_peak.begin(), by_peak.end(), [&](int a, int b) {
    return segment_peak[a] > segment_peak[b];
  });
  // `floor`: no order's model peak, nor its real one, is below it (the
  // bound over op orders, then the segments' minima as they are known).
  Bytes floor = any_bound;
  std::vector<int> unfinished;
  for (int s : by_peak) {
    if (segment_peak[s] <= floor) continue;  // the incumbent's part will do
    // A search reaches a complete order no sooner than after looking at
    // the segment's ops once per op run: beyond the work left it cannot
    // finish (a wide fan), and is not started.
    const int64_t m = segments[s].end - segments[s].begin;
    if (m * m > max_work - result.work) {
      unfinished.push_back(s);
      continue;
    }
    Search search(model, segments[s], floor, segment_peak[s],
                  max_work - result.work);
    SegmentSearch found = search.Run(start_live[s]);
    result.work += search.work();
    if (!found.order.empty()) {
      parts[s] = std::move(found.order);
      segment_peak[s] = found.peak;
      floor = std::max(floor, found.peak);
    } else if (found.finished) {
      floor = std::max(floor, segment_peak[s]);
    } else {
      floor = std::max(floor, found.frontier);
      unfinished.push_back(s);
    }
  }
  // Unfinished segments: beams over the same model may still find a
  // better part, with as much work again in all: 16 states per step, then
  // 4 times as many while the work lasts (none when a segment is too wide
  // for a beam to finish).
  int64_t beam_work = 0;
  for (int s : unfinished) {
    const int64_t m = segments[s].end - segments[s].begin;
    for (int64_t width = kBeamWidth;
         width <= kMaxBeamWidth && segment_peak[s] > floor; width *= 4) {
      if (m * m * width > max_work - beam_work) break;
      const std::optional<std::pair<std::vector<int>, Bytes>> beam =
          BeamOrder(model, segments[s], start_live[s], static_cast<int>(width),
                    max_work - beam_work, beam_work);
      if (!beam.has_value()) break;
      if (beam->second < segment_peak[s]) {
        parts[s] = beam->first;
        segment_peak[s] = beam->second;
      }
    }
  }
  result.work += beam_work;
  std::vector<int> order;
  order.reserve(graph.ops.size());
  for (const std::vector<int>& part : parts) {
    order.insert(order.end(), part.begin(), part.end());
  }
  if (order != result.order) {
    MEMPLAN_ASSIGN_OR_RETURN(const Bytes peak,
                             OrderPeak(graph, order, options));
    if (peak < result.peak) {
      result.order = std::move(order);
      result.peak = peak;
    }
  }
  result.bound = std::min(floor, result.peak);
  result.proven = result.bound == result.peak;
  return result;
}

}  // namespace memplan
