// Rematerialize and RematSweep (memplan/remat.h): a greedy search over the
// live bytes of the graph's own order, updated for each rewrite it keeps,
// and the placement of the rewritten graph.
//
// Time is counted in slots: slot 2s+1 is op s, slot 2s the ops run again
// just before it (its "pre-phase"). A tensor made by op p and last read by
// op c is live over slots [2p+1, 2c+2). The search keeps, for each op it
// may run again, the slots at which its outputs are read ("events": the
// op's own slot, its readers', and the pre-phases that read them again),
// and the stretches between two events it has dropped: the outputs are
// dead after the first event and made again in the pre-phase of the
// second. An op run again needs its inputs live in that pre-phase: an
// input still live is read there; a dead one is kept alive longer, or,
// when it is dropped there or keeping it would hold bytes at the step the
// search lowers, made again itself (a chain). An op whose outputs are
// read through views runs again with them: each output and its views are
// one buffer, read wherever any of them is read.

#include "remat/remat.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
#include "memplan/problem.h"
#include "remat/eligible.h"

namespace memplan {
namespace {

constexpr int kNone = -1;
// How many producers deep an op's dead inputs are made again with it.
constexpr int kChainDepth = 8;
// Placements of rewritten graphs before the last, which goes as far as
// the search can.
constexpr int kPlacements = 8;
// Limits on the live bytes the last take-back tries from the budget down,
// each with a placement.
constexpr int kPruneTries = 3;

// The pre-phase a recomputation before the read at event slot `y` runs in.
int RecSlot(int y) { return y - (y & 1); }

// Live bytes per slot: adds to ranges of slots, the most and where.
class Profile {
 public:
  // Counts the nodes it visits into *work.
  Profile(int slots, int64_t* work) : n_(std::max(slots, 1)), work_(work) {
    size_ = 1;
    while (size_ < n_) size_ *= 2;
    max_.assign(2 * size_, 0);
    add_.assign(2 * size_, 0);
    count_.assign(2 * size_, 0);
    for (int i = 0; i < size_; ++i) count_[size_ + i] = i < n_ ? 1 : 0;
    for (int v = size_ - 1; v >= 1; --v) Pull(v);
  }

  // Adds `delta` to slots [from, to).
  void Add(int from, int to, Bytes delta) {
    from = std::max(from, 0);
    to = std::min(to, n_);
    if (from < to && delta != 0) Add(1, 0, size_, from, to, delta);
  }
  Bytes Max() const { return max_[1]; }
  int64_t Count() const { return count_[1]; }  // slots at the most
  int ArgMax() const {                         // the first slot at the most
    int v = 1;
    Bytes want = max_[1];
    while (v < size_) {
      want -= add_[v];
      v = max_[2 * v] == want ? 2 * v : 2 * v + 1;
    }
    return v - size_;
  }
  Bytes At(int slot) const {
    Bytes sum = 0;
    for (int v = slot + size_; v >= 1; v /= 2) sum += add_[v];
    return sum;
  }

 private:
  void Pull(int v) {
    const Bytes l = max_[2 * v], r = max_[2 * v + 1];
    max_[v] = std::max(l, r) + add_[v];
    count_[v] = (l == std::max(l, r) ? count_[2 * v] : 0) +
                (r == std::max(l, r) ? count_[2 * v + 1] : 0);
  }
  void Add(int v, int lo, int hi, int from, int to, Bytes delta) {
    ++*work_;
    if (from <= lo && hi <= to) {
      add_[v] += delta;
      max_[v] += delta;
      return;
    }
    const int mid = (lo + hi) / 2;
    if (from < mid) Add(2 * v, lo, mid, from, to, delta);
    if (mid < to) Add(2 * v + 1, mid, hi, from, to, delta);
    Pull(v);
  }

  int n_;
  int size_;
  std::vector<Bytes> max_, add_;
  std::vector<int64_t> count_;
  int64_t* work_;
};

using remat::Eligible;
using remat::GraphIndex;
using remat::IndexGraph;

// Inserts v into the ascending vector `s` unless there.
void InsertSorted(std::vector<int>& s, int v) {
  auto it = std::lower_bound(s.begin(), s.end(), v);
  if (it == s.end() || *it != v) s.insert(it, v);
}
bool HasSorted(const std::vector<int>& s, int v) {
  return std::binary_search(s.begin(), s.end(), v);
}

// The output of an op that may run again: where it is read and live.
struct OutputState {
  int tensor = 0;
  Bytes size = 0;
  std::vector<int> events;                // ascending slots
  std::vector<std::pair<int, int>> live;  // disjoint [from, to), sorted
};
// An op that may run again: its outputs, the union of their events, and
// the event slots ending a dropped stretch (it runs again in RecSlot).
struct OpState {
  std::vector<int> outputs;  // into Search::outputs_
  std::vector<int> events;
  std::vector<int> dropped;
};

class Search {
 public:
  // `in_sequence`: a chain's intermediates counted as made and freed one
  // after the other (AddTransient), else as live together.
  Search(const Graph& graph, const Problem& problem, const BuildOptions& build,
         bool in_sequence)
      : in_sequence_(in_sequence),
        graph_(graph),
        index_(IndexGraph(graph)),
        profile_(2 * static_cast<int>(graph.ops.size()) + 2, &work_),
        op_of_(graph.ops.size(), kNone),
        output_of_(graph.tensors.size(), kNone),
        buffer_of_(graph.tensors.size(), kNone) {
    (void)build;
    for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b) {
      const Buffer& buffer = problem.buffers[b];
      const int from = 2 * static_cast<int>(buffer.lifetime.start) + 1;
      const int to = 2 * static_cast<int>(buffer.lifetime.end);
      profile_.Add(from, to, buffer.size);
      buffer_size_.push_back(buffer.size);
      buffer_end_.push_back(to);
      for (const std::string& name : buffer.tensors) {
        if (const int t = index_.Of(name); t != kNone) buffer_of_[t] = b;
      }
    }
    std::vector<int> views;
    for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
      if (Eligible(graph, i, index_, buffer_of_, views)) AddOp(i, views);
    }
    initial_ = Initial{profile_, outputs_, ops_, buffer_end_};
  }

  Bytes MaxLive() const { return profile_.Max(); }
  int64_t work() const { return work_; }

  // Keeps rewrites while the most live bytes exceed `target`; false when
  // no rewrite lowers them further or `budget` is spent.
  bool LowerTo(Bytes target, Budget& budget) {
    while (profile_.Max() > target) {
      const int64_t before = work();
      const bool lowered = Step();
      budget.Tick(work() - before);
      if (!lowered || budget.Expired()) return profile_.Max() <= target;
    }
    return true;
  }

  // Takes back, the costliest first, each kept rewrite without which the
  // most live bytes stay at most `limit`, while `budget` lasts.
  void Prune(Bytes limit, Budget& budget) {
    ReorderChosen(limit, budget);
    std::vector<int> by_cost(chosen_.size());
    for (size_t c = 0; c < chosen_.size(); ++c) by_cost[c] = c;
    std::stable_sort(by_cost.begin(), by_cost.end(), [&](int a, int b) {
      return chosen_[a].cost > chosen_[b].cost;
    });
    std::vector<bool> kept(chosen_.size(), true);
    for (int c : by_cost) {
      if (budget.Expired()) break;
      kept[c] = false;
      const int64_t before = work();
      Replay(kept);
      budget.Tick(work() - before);
      if (profile_.Max() > limit) kept[c] = true;
    }
    Replay(kept);
    std::vector<Choice> left;
    for (size_t c = 0; c < chosen_.size(); ++c) {
      if (kept[c]) left.push_back(chosen_[c]);
    }
    chosen_ = std::move(left);
  }

  // The kept rewrites replayed with later ops' first, kept when the most
  // live bytes stay at most `limit` at a lower cost: an op dropped after
  // a later op run again reads it has a stretch ending at that run, and
  // runs again once where, dropped before, it runs again for that run and
  // for its own readers.
  void ReorderChosen(Bytes limit, Budget& budget) {
    if (chosen_.size() < 2 || budget.Expired()) return;
    const std::vector<bool> all(chosen_.size(), true);
    const int64_t before = work();
    Replay(all);
    const double in_order = cost_;
    std::vector<Choice> reordered = chosen_;
    std::stable_sort(reordered.begin(), reordered.end(),
                     [&](const Choice& a, const Choice& b) {
                       return op_index_[a.k] > op_index_[b.k];
                     });
    std::swap(chosen_, reordered);
    Replay(all);
    budget.Tick(work() - before);
    if (profile_.Max() > limit || cost_ >= in_order) {
      std::swap(chosen_, reordered);
      Replay(all);
    }
  }

  // The graph with every kept recomputation inserted; `recomputed` gets
  // the inserted ops' names and `cost` their costs' sum.
  Graph Build(std::vector<std::string>& recomputed, double& cost) const;

 private:
  struct LogEntry {
    enum Kind { kOutput, kOp, kEnd, kAdd, kCost, kTransient } kind = kAdd;
    int id = 0;
    OutputState output;
    OpState op;
    int from = 0, to = 0;
    Bytes delta = 0;
    double cost = 0;
  };

  // Op i, run again with `views` (the ops making views of its outputs):
  // each output's group of tensors sharing its bytes is one OutputState,
  // read wherever any of them is read.
  void AddOp(int i, const std::vector<int>& views) {
    OpState state;
    const int k = static_cast<int>(ops_.size());
    const int slot = 2 * i + 1;
    state.events.push_back(slot);
    for (const std::string& name : graph_.ops[i].outputs) {
      const int t = index_.Of(name);
      OutputState out{.tensor = t, .size = 0, .events = {slot}, .live = {}};
      const int b = buffer_of_[t];
      if (b != kNone) out.size = buffer_size_[b];
      const int root = index_.Find(t);
      const std::vector<int> alone = {t};
      for (int u : index_.shared[root] ? index_.group[root] : alone) {
        for (int r : index_.readers[u]) {
          InsertSorted(out.events, 2 * r + 1);
          InsertSorted(state.events, 2 * r + 1);
        }
        output_of_[u] = static_cast<int>(outputs_.size());
      }
      out.live.push_back({slot, out.events.back() + 1});
      state.outputs.push_back(static_cast<int>(outputs_.size()));
      outputs_.push_back(std::move(out));
    }
    for (int v : views) op_of_[v] = k;
    op_of_[i] = k;
    op_index_.push_back(i);
    views_.push_back(views);
    ops_.push_back(std::move(state));
  }

  // The cost of running op k again in pre-phase r: its own and that of
  // its views made before r.
  double RunCost(int k, int r) const {
    double cost = graph_.ops[op_index_[k]].cost.value_or(0);
    for (int v : views_[k]) {
      if (2 * v + 1 < r) cost += graph_.ops[v].cost.value_or(0);
    }
    return cost;
  }

  // --- changes, each logged so that Rollback() undoes it.
  LogEntry& Log(LogEntry::Kind kind, int id) {
    log_.emplace_back();
    log_.back().kind = kind;
    log_.back().id = id;
    return log_.back();
  }
  void AddBytes(int from, int to, Bytes delta) {
    if (from >= to || delta == 0) return;
    profile_.Add(from, to, delta);
    LogEntry& e = Log(LogEntry::kAdd, 0);
    e.from = from;
    e.to = to;
    e.delta = delta;
  }
  OutputState& TouchOutput(int o) {
    Log(LogEntry::kOutput, o).output = outputs_[o];
    return outputs_[o];
  }
  OpState& TouchOp(int k) {
    Log(LogEntry::kOp, k).op = ops_[k];
    return ops_[k];
  }
  void AddCost(double c) {
    Log(LogEntry::kCost, 0).cost = cost_;
    cost_ += c;
  }
  void Rollback(size_t mark) {
    while (log_.size() > mark) {
      LogEntry& e = log_.back();
      switch (e.kind) {
        case LogEntry::kOutput:
          outputs_[e.id] = std::move(e.output);
          break;
        case LogEntry::kOp:
          ops_[e.id] = std::move(e.op);
          break;
        case LogEntry::kEnd:
          buffer_end_[e.id] = e.from;
          break;
        case LogEntry::kAdd:
          profile_.Add(e.from, e.to, -e.delta);
          break;
        case LogEntry::kCost:
          cost_ = e.cost;
          break;
        case LogEntry::kTransient:
          transient_[e.id] = e.delta;
          break;
      }
      log_.pop_back();
    }
  }

  // Output o live over [from, to) / dead there; the profile follows.
  void MakeLive(int o, int from, int to) {
    OutputState& out = TouchOutput(o);
    std::vector<std::pair<int, int>> merged;
    int lo = from, hi = to;
    int cursor = from;
    for (const auto& [a, b] : out.live) {
      if (b < from || a > to) {
        merged.push_back({a, b});
        continue;
      }
      if (a > cursor) AddBytes(cursor, std::min(a, to), out.size);
      cursor = std::max(cursor, b);
      lo = std::min(lo, a);
      hi = std::max(hi, b);
    }
    if (cursor < to) AddBytes(cursor, to, out.size);
    merged.push_back({lo, hi});
    std::sort(merged.begin(), merged.end());
    outputs_[o].live = std::move(merged);
  }
  void MakeDead(int o, int from, int to) {
    OutputState& out = TouchOutput(o);
    std::vector<std::pair<int, int>> kept;
    for (const auto& [a, b] : out.live) {
      const int x = std::max(a, from), y = std::min(b, to);
      if (x >= y) {
        kept.push_back({a, b});
        continue;
      }
      AddBytes(x, y, -out.size);
      if (a < x) kept.push_back({a, x});
      if (y < b) kept.push_back({y, b});
    }
    outputs_[o].live = std::move(kept);
  }
  bool LiveAt(int o, int slot) const {
    for (const auto& [a, b] : outputs_[o].live) {
      if (a <= slot && slot < b) return true;
    }
    return false;
  }
  // The end of o's last live stretch that starts at or before `slot`.
  int LiveEndBefore(int o, int slot) const {
    int end = 0;
    for (const auto& [a, b] : outputs_[o].live) {
      if (a <= slot) end = std::max(end, b);
    }
    return end;
  }
  bool RunsAgainAt(int k, int slot) const {
    const std::vector<int>& d = ops_[k].dropped;
    return HasSorted(d, slot) || HasSorted(d, slot + 1);
  }

  // Whether a write to the bytes of tensor t falls after op i and before
  // op `before`.
  bool WrittenBetween(int t, int i, int before) {
    const std::vector<int>& w = index_.writers[index_.Find(t)];
    auto it = std::upper_bound(w.begin(), w.end(), i);
    return it != w.end() && *it < before;
  }

  // The outputs of ops run again in pre-phase r only for other ops run
  // again there (a chain's intermediates) are made and freed one after
  // the other: pre-phase r holds `need` bytes more than the outputs that
  // outlive it, the most of any such op there, not the sum.
  void AddTransient(int r, Bytes need) {
    Bytes& have = transient_[r];
    if (need <= have) return;
    Log(LogEntry::kTransient, r).delta = have;
    const Bytes more = need - have;
    have = need;
    AddBytes(r, r + 1, more);
  }

  // Op k (an op that may run again) runs again in pre-phase `r` for the
  // ops run again there, its outputs made there, its inputs needed there.
  bool RunAgain(int k, int r, int depth) {
    OpState& op = TouchOp(k);
    InsertSorted(op.events, r);
    InsertSorted(op.dropped, r);
    Bytes transient = 0;
    for (int o : ops_[k].outputs) {
      const bool touches =
          std::any_of(outputs_[o].live.begin(), outputs_[o].live.end(),
                      [r](const std::pair<int, int>& s) {
                        return s.first <= r + 1 && r <= s.second;
                      });
      if (touches || !in_sequence_) {
        MakeLive(o, r, r + 1);
        continue;
      }
      OutputState& out = TouchOutput(o);
      out.live.push_back({r, r + 1});
      std::sort(out.live.begin(), out.live.end());
      transient += out.size;
    }
    AddTransient(r, transient);
    AddCost(RunCost(k, r));
    return NeedInputs(k, r, depth);
  }

  bool NeedInputs(int k, int r, int depth) {
    const int i = op_index_[k];
    for (const std::string& name : graph_.ops[i].inputs) {
      if (!Need(index_.Of(name), r, i, depth)) return false;
    }
    return true;
  }

  // Tensor t, read by op `reader`, holds the same bytes in pre-phase r.
  bool Need(int t, int r, int reader, int depth) {
    if (t == kNone) return false;
    const int o = output_of_[t];
    if (o == kNone) {
      if (WrittenBetween(t, reader, r / 2)) return false;
      const int b = buffer_of_[t];
      if (b != kNone && buffer_end_[b] <= r) {
        AddBytes(buffer_end_[b], r + 1, buffer_size_[b]);
        Log(LogEntry::kEnd, b).from = buffer_end_[b];
        buffer_end_[b] = r + 1;
      }
      return true;
    }
    const int k = op_of_[index_.producer[t]];
    if (RunsAgainAt(k, r)) return true;
    const std::vector<int>& events = ops_[k].events;
    auto next = std::upper_bound(events.begin(), events.end(), r);
    const bool is_event = next != events.begin() && *std::prev(next) == r;
    const bool in_dropped =
        !is_event && next != events.end() && HasSorted(ops_[k].dropped, *next);
    if (LiveAt(o, r) && !in_dropped) {
      InsertSorted(TouchOutput(o).events, r);
      InsertSorted(TouchOp(k).events, r);
      return true;
    }
    if (in_dropped) {
      if (depth == 0) return false;
      InsertSorted(TouchOutput(o).events, r);
      return RunAgain(k, r, depth - 1);
    }
    const int end = LiveEndBefore(o, r);
    const bool after_all = next == events.end() && !is_event;
    if (after_all && depth > 0 && outputs_[o].size >= keep_below_ &&
        end <= focus_ && focus_ <= r) {
      const size_t mark = log_.size();
      InsertSorted(TouchOutput(o).events, r);
      if (RunAgain(k, r, depth - 1)) return true;
      Rollback(mark);
    }
    MakeLive(o, end, r + 1);
    InsertSorted(TouchOutput(o).events, r);
    InsertSorted(TouchOp(k).events, r);
    return true;
  }

  // Drops op k's outputs over the stretch ending at event y (from event
  // x) and runs it again before y.
  bool Drop(int k, int x, int y) {
    const int r = RecSlot(y);
    OpState& op = TouchOp(k);
    InsertSorted(op.dropped, y);
    for (int o : ops_[k].outputs) {
      MakeDead(o, x + 1, r);
      MakeLive(o, r, r + 1);
    }
    AddCost(RunCost(k, r));
    return NeedInputs(k, r, kChainDepth);
  }

  // The stretch of op k's outputs holding slot p that may be dropped.
  std::optional<std::pair<int, int>> StretchAt(int k, int p) const {
    const std::vector<int>& events = ops_[k].events;
    auto next = std::upper_bound(events.begin(), events.end(), p);
    if (next == events.begin() || next == events.end()) return std::nullopt;
    const int x = *std::prev(next), y = *next;
    if (x == p || p >= RecSlot(y) || HasSorted(ops_[k].dropped, y))
      return std::nullopt;
    for (int o : ops_[k].outputs) {
      if (LiveAt(o, p)) return std::pair{x, y};
    }
    return std::nullopt;
  }

  // Drops op k's stretch holding slot p; when that alone frees nothing
  // there (an input it needs would be kept alive over p), drops with it
  // the stretches at p of the other ops reading its inputs, which then
  // share that input. The ops dropped go to `group` (op k first); false
  // when op k's drop fails.
  bool DropAt(int k, int p, std::vector<int>& group) {
    const std::optional<std::pair<int, int>> stretch = StretchAt(k, p);
    const Bytes before = profile_.At(p);
    if (!stretch.has_value() || !Drop(k, stretch->first, stretch->second))
      return false;
    group.push_back(k);
    if (profile_.At(p) < before) return true;
    for (const std::string& name : graph_.ops[op_index_[k]].inputs) {
      const int t = index_.Of(name);
      if (t == kNone) continue;
      for (int reader : index_.readers[t]) {
        const int j = op_of_[reader];
        if (j == kNone || op_index_[j] != reader ||
            std::find(group.begin(), group.end(), j) != group.end()) {
          continue;
        }
        ++work_;
        const std::optional<std::pair<int, int>> at = StretchAt(j, p);
        if (!at.has_value()) continue;
        const size_t mark = log_.size();
        if (Drop(j, at->first, at->second)) {
          group.push_back(j);
        } else {
          Rollback(mark);
        }
      }
    }
    return true;
  }

  // The keep_below_ of search mode `mode` (0-2) for dropping op k.
  Bytes KeepBelow(int k, int mode) const {
    if (mode == 0) return 0;
    if (mode == 1) return std::numeric_limits<Bytes>::max();
    Bytes made = 0;
    for (int o : ops_[k].outputs) made += outputs_[o].size;
    return made / 16;
  }

  // Keeps the rewrite of the most bytes freed at the first slot of the
  // most live bytes per unit of cost that leaves fewer slots at least as
  // high; false when there is none.
  bool Step() {
    const int p = profile_.ArgMax();
    const Bytes peak = profile_.Max();
    const int64_t count = profile_.Count();
    focus_ = p;
    struct Best {
      int k = kNone;
      Bytes gain = 0;
      double cost = 0;
      Bytes keep_below = 0;
    } best;
    std::vector<int> group;
    // Each op three times: its dead inputs made again with it where they
    // would hold bytes at p; kept alive instead (a small input kept may
    // spare a costly chain); kept alive when under 1/16 of its outputs'
    // bytes, made again otherwise.
    for (int m = 0; m < 3 * static_cast<int>(ops_.size()); ++m) {
      const int k = m / 3;
      keep_below_ = KeepBelow(k, m % 3);
      ++work_;
      if (!StretchAt(k, p).has_value()) continue;
      const size_t mark = log_.size();
      const double cost_before = cost_;
      group.clear();
      const bool ok = DropAt(k, p, group);
      const Bytes gain = peak - profile_.At(p);
      const double cost = cost_ - cost_before;
      const bool lower = profile_.Max() < peak ||
                         (profile_.Max() == peak && profile_.Count() < count);
      Rollback(mark);
      if (!ok || !lower || gain <= 0) continue;
      // More bytes per unit of cost first (a free op first), then more
      // bytes, then the earlier op (deterministic).
      const double left = static_cast<double>(gain) * best.cost;
      const double right = static_cast<double>(best.gain) * cost;
      if (best.k == kNone || left > right ||
          (left == right && gain > best.gain)) {
        best = {k, gain, cost, keep_below_};
      }
    }
    if (best.k == kNone) return false;
    const double cost_before = cost_;
    group.clear();
    keep_below_ = best.keep_below;
    const bool ok = DropAt(best.k, p, group);
    log_.clear();
    // Each op of the group is taken back on its own (Prune).
    for (size_t g = 0; g < group.size(); ++g) {
      chosen_.push_back(
          {group[g], p, g == 0 ? cost_ - cost_before : 0.0, best.keep_below});
    }
    return ok;
  }

  // A rewrite kept: op k's stretch holding slot `focus` dropped (while the
  // search lowered the live bytes there).
  struct Choice {
    int k = 0, focus = 0;
    double cost = 0;
    Bytes keep_below = 0;  // the dead inputs kept alive, not made again
  };
  // The state before any rewrite.
  struct Initial {
    Profile profile;
    std::vector<OutputState> outputs;
    std::vector<OpState> ops;
    std::vector<int> buffer_end;
  };

  // The state of the chosen rewrites that `kept` marks, applied in order
  // from the start (a rewrite whose op has no stretch holding its slot
  // any more is skipped).
  void Replay(const std::vector<bool>& kept) {
    profile_ = initial_->profile;
    outputs_ = initial_->outputs;
    ops_ = initial_->ops;
    buffer_end_ = initial_->buffer_end;
    transient_.clear();
    cost_ = 0;
    log_.clear();
    for (size_t c = 0; c < chosen_.size(); ++c) {
      if (!kept[c]) continue;
      const Choice& choice = chosen_[c];
      const std::optional<std::pair<int, int>> stretch =
          StretchAt(choice.k, choice.focus);
      if (!stretch.has_value()) continue;
      focus_ = choice.focus;
      keep_below_ = choice.keep_below;
      if (!Drop(choice.k, stretch->first, stretch->second)) Rollback(0);
      log_.clear();
    }
  }

  bool in_sequence_;
  int64_t work_ = 0;  // profile nodes visited and ops scanned
  const Graph& graph_;
  GraphIndex index_;
  Profile profile_;
  std::vector<OutputState> outputs_;
  std::vector<OpState> ops_;
  std::vector<int> op_of_;               // graph op -> ops_ index, or kNone
  std::vector<int> op_index_;            // ops_ index -> graph op
  std::vector<std::vector<int>> views_;  // ops_ index -> its view ops
  std::vector<int> output_of_;           // tensor -> outputs_ index, or kNone
  std::vector<int> buffer_of_;           // tensor -> problem buffer, or kNone
  std::vector<Bytes> buffer_size_;
  std::vector<int> buffer_end_;  // slot after the last one live
  std::vector<LogEntry> log_;
  // Pre-phase slot -> the bytes added there for a chain's intermediates.
  absl::flat_hash_map<int, Bytes> transient_;
  double cost_ = 0;
  int focus_ = 0;
  // A dead input of an op run again smaller than this is kept alive
  // rather than made again (unless it is dropped there).
  Bytes keep_below_ = 0;
  std::vector<Choice> chosen_;
  std::optional<Initial> initial_;
};

// A name like `base` that is none of `taken`; taken then holds it.
std::string FreshName(const std::string& base,
                      absl::flat_hash_set<std::string>& taken) {
  std::string name = base;
  for (int k = 2; taken.contains(name); ++k) name = absl::StrCat(base, "_", k);
  taken.insert(name);
  return name;
}

Graph Search::Build(std::vector<std::string>& recomputed, double& cost) const {
  // (pre-phase slot, graph op) of every run again, in order.
  std::vector<std::pair<int, int>> runs;
  for (int k = 0; k < static_cast<int>(ops_.size()); ++k) {
    for (int y : ops_[k].dropped) runs.push_back({RecSlot(y), op_index_[k]});
  }
  std::sort(runs.begin(), runs.end());
  runs.erase(std::unique(runs.begin(), runs.end()), runs.end());
  Graph out = graph_;
  out.ops.clear();
  absl::flat_hash_set<std::string> op_names, tensor_names;
  for (const Op& op : graph_.ops) op_names.insert(op.name);
  for (const Tensor& t : graph_.tensors) tensor_names.insert(t.name);
  // tensor -> (slot made again, its name), ascending.
  absl::flat_hash_map<int, std::vector<std::pair<int, std::string>>> versions;
  auto version_at = [&](const std::string& name, int slot) {
    auto it = versions.find(index_.Of(name));
    if (it == versions.end()) return name;
    std::string best = name;
    for (const auto& [made, v] : it->second) {
      if (made <= slot) best = v;
    }
    return best;
  };
  auto read = [&](Op& op, int slot) {
    for (std::string& in : op.inputs) in = version_at(in, slot);
  };
  // Op i run again in pre-phase `slot`, reading the versions made by then.
  auto emit = [&](int i, int slot) {
    Op copy = graph_.ops[i];
    read(copy, slot);
    copy.name = FreshName(copy.name + kRecomputeSuffix, op_names);
    for (std::string& o : copy.outputs) {
      Tensor tensor = graph_.tensors[index_.Of(o)];
      tensor.name = FreshName(o + kRecomputeSuffix, tensor_names);
      versions[index_.Of(o)].push_back({slot, tensor.name});
      o = tensor.name;
      out.tensors.push_back(std::move(tensor));
    }
    cost += copy.cost.value_or(0);
    recomputed.push_back(copy.name);
    out.ops.push_back(std::move(copy));
  };
  size_t next = 0;
  cost = 0;
  for (int s = 0; s < static_cast<int>(graph_.ops.size()); ++s) {
    for (; next < runs.size() && runs[next].first == 2 * s; ++next) {
      const int k = op_of_[runs[next].second];
      emit(runs[next].second, 2 * s);
      for (int v : views_[k]) {
        if (v < s) emit(v, 2 * s);
      }
    }
    Op op = graph_.ops[s];
    read(op, 2 * s + 1);
    out.ops.push_back(std::move(op));
  }
  return out;
}

absl::Status CheckArguments(Bytes budget, const PlanMemoryOptions& options) {
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
  return absl::OkStatus();
}

// `best`, or the rewrite of `search` with the rewrites that live bytes of
// at most `limit` do not need taken back (Search::Prune), when that one
// still fits the budget at a lower cost. `placed` gets the placed peak of
// the pruned rewrite, or 0 when it was not placed (not cheaper).
absl::Status PruneTo(const PlanMemoryOptions& options, Search& search,
                     Budget& effort, Bytes budget, Bytes limit,
                     RematResult& best, Bytes& placed) {
  placed = 0;
  search.Prune(limit, effort);
  RematResult pruned;
  pruned.peak_without = best.peak_without;
  pruned.graph = search.Build(pruned.recomputed, pruned.added_cost);
  if (pruned.added_cost >= best.added_cost) return absl::OkStatus();
  MEMPLAN_ASSIGN_OR_RETURN(pruned.plan, PlanMemory(pruned.graph, options));
  placed = pruned.plan.plan.peak;
  if (placed <= budget) best = std::move(pruned);
  return absl::OkStatus();
}

// `fitted` with the rewrites it no longer needs taken back, each limit on
// the live bytes tried on a copy of the search from the loosest: the
// budget itself, lowered by what the placement of the last try went above
// it (the live bytes of the search and the placed peak may differ by a
// few bytes either way); the live bytes plus the room the placement of
// `fitted` left under the budget; the live bytes as they are.
absl::StatusOr<RematResult> Pruned(const PlanMemoryOptions& options,
                                   Search& search, Budget& effort, Bytes budget,
                                   RematResult fitted) {
  const Bytes live = search.MaxLive();
  const Bytes room = budget - fitted.plan.plan.peak;
  Bytes placed = 0;
  Bytes limit = budget;
  for (int t = 0; t < kPruneTries && limit > live + room; ++t) {
    Search loose = search;
    MEMPLAN_RETURN_IF_ERROR(
        PruneTo(options, loose, effort, budget, limit, fitted, placed));
    if (placed <= budget) break;
    limit -= placed - budget;
  }
  if (room > 0) {
    Search loose = search;
    MEMPLAN_RETURN_IF_ERROR(
        PruneTo(options, loose, effort, budget, live + room, fitted, placed));
  }
  MEMPLAN_RETURN_IF_ERROR(
      PruneTo(options, search, effort, budget, live, fitted, placed));
  return fitted;
}

// Rematerialize by a search counting chains `in_sequence` or not, and the
// smallest placed peak it found on the way.
absl::StatusOr<RematResult> FitWith(const Graph& graph, Bytes budget,
                                    const PlanMemoryOptions& options,
                                    GraphPlan plan, bool in_sequence,
                                    Bytes& smallest) {
  const Bytes peak_without = plan.plan.peak;
  smallest = peak_without;
  if (peak_without <= budget) {
    return RematResult{.graph = graph,
                       .plan = std::move(plan),
                       .added_cost = 0,
                       .peak_without = peak_without,
                       .recomputed = {}};
  }
  Budget effort(options.plan);
  Search search(graph, plan.problem, options.build, in_sequence);
  Bytes target = budget;
  for (int round = 0; round < kPlacements; ++round) {
    // The last round goes as far as the search can.
    if (round == kPlacements - 1) target = 0;
    const bool reached = search.LowerTo(target, effort);
    RematResult result;
    result.peak_without = peak_without;
    result.graph = search.Build(result.recomputed, result.added_cost);
    MEMPLAN_ASSIGN_OR_RETURN(result.plan, PlanMemory(result.graph, options));
    const Bytes placed = result.plan.plan.peak;
    smallest = std::min(smallest, placed);
    if (placed <= budget)
      return Pruned(options, search, effort, budget, std::move(result));
    if (!reached || effort.Expired()) break;
    target = std::min(target, search.MaxLive()) - (placed - budget);
    if (target <= 0) target = 0;
  }
  const std::string limit =
      effort.WorkSpent()
          ? absl::StrCat(", or a work limit above ", effort.work_limit(),
                         " units (the search stopped at it)")
      : effort.OutOfTimeNow()
          ? ", or more time (the search stopped at its deadline)"
          : "";
  return absl::InvalidArgumentError(absl::StrCat(
      "no recomputation found fits graph \"", graph.name, "\" into ", budget,
      " bytes: the smallest peak found is ", smallest, " bytes (", peak_without,
      " without recomputation); give a budget of at least ", smallest,
      " bytes, ", limit.empty() ? "or " : "", "mark more ops \"recomputable\"",
      limit));
}

// The cheaper fit of the searches counting a chain's intermediates as
// made one after the other (closer to the placement when chains are
// linear) and as live together (when they are not); the smallest placed
// peak of both.
absl::StatusOr<RematResult> Fit(const Graph& graph, Bytes budget,
                                const PlanMemoryOptions& options,
                                const GraphPlan& plan, Bytes& smallest) {
  Bytes smallest_seq = 0, smallest_all = 0;
  absl::StatusOr<RematResult> seq =
      FitWith(graph, budget, options, plan, true, smallest_seq);
  if (!seq.ok() && !absl::IsInvalidArgument(seq.status())) return seq;
  smallest = smallest_seq;
  if (seq.ok() && seq->recomputed.empty()) return seq;
  absl::StatusOr<RematResult> all =
      FitWith(graph, budget, options, plan, false, smallest_all);
  if (!all.ok() && !absl::IsInvalidArgument(all.status())) return all;
  smallest = std::min(smallest_seq, smallest_all);
  if (seq.ok() && all.ok()) {
    return seq->added_cost <= all->added_cost ? seq : all;
  }
  if (seq.ok()) return seq;
  if (all.ok()) return all;
  return smallest_seq <= smallest_all ? seq : all;
}

}  // namespace

absl::StatusOr<RematResult> Rematerialize(const Graph& graph, Bytes budget,
                                          const PlanMemoryOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckArguments(budget, options));
  MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan, PlanMemory(graph, options));
  Bytes smallest = 0;
  return Fit(graph, budget, options, std::move(plan), smallest);
}

absl::StatusOr<std::vector<RematSweepPoint>> RematSweep(
    const Graph& graph, int points, const PlanMemoryOptions& options) {
  if (points < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a sweep of ", points, " budgets: give at least 2 points"));
  }
  MEMPLAN_RETURN_IF_ERROR(CheckArguments(1, options));
  MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan, PlanMemory(graph, options));
  const Bytes top = plan.plan.peak;
  Bytes smallest = top;
  // The smallest peak: the search run as far as it goes.
  (void)Fit(graph, 1, options, plan, smallest);
  std::vector<Bytes> budgets = {top};
  for (int k = 1; k < points; ++k) {
    const Bytes b =
        top - static_cast<Bytes>(static_cast<double>(top - smallest) * k /
                                 (points - 1));
    if (b < budgets.back()) budgets.push_back(b);
  }
  std::vector<RematSweepPoint> sweep;
  for (Bytes budget : budgets) {
    Bytes unused = 0;
    MEMPLAN_ASSIGN_OR_RETURN(RematResult fitted,
                             Fit(graph, budget, options, plan, unused));
    sweep.push_back({.budget = budget,
                     .peak = fitted.plan.plan.peak,
                     .added_cost = fitted.added_cost,
                     .recomputed = static_cast<int>(fitted.recomputed.size())});
  }
  return sweep;
}

}  // namespace memplan
