// The cut refinement of the bound over op orders. See order/cut_bound.h.
//
// For op u, with D the set of ops before it, a free op x (neither an
// ancestor nor a descendant of u) is in D or not; every ancestor is, no
// descendant (nor u) is. A group g counts while u runs when
//   - u starts it: always (it is being written);
//   - otherwise started: from the start, by an ancestor, or by a free op
//     of D ("some of S_g in D", a cost of g's size);
//   - and not ended: every op ending it in D ("all of E_g in D", a gain of
//     its size), never for a graph output or a group u or a descendant
//     ends.
// Minimising the costs minus the gains over the free sets closed under
// predecessors is a minimum-weight closure (Picard): a node per free op,
// per cost (required by each op of S_g) and per gain (requiring each op of
// E_g); from the source to each gain and from each cost to the sink an arc
// of its size, and an unbounded arc for each requirement. A minimum cut
// leaves on the source's side the closure of the least weight, which is
// the cut's capacity less every gain.

#include "order/cut_bound.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "memplan/problem.h"
#include "order/op_dag.h"

namespace memplan::internal {
namespace {

constexpr int kSource = 0;
constexpr int kSink = 1;

// Maximum flow by Dinic's blocking flows, with iterative augmenting paths.
// The arcs are added to one array and laid out per node (in the order they
// were added) once the network is complete: a network is built for each
// op, where lists per node cost an allocation each, and the flow reads
// each node's arcs side by side.
class FlowNetwork {
 public:
  void Reset() {
    added_.clear();
    nodes_ = 2;
  }
  int AddNode() { return nodes_++; }
  void AddArc(int from, int to, Bytes capacity) {
    added_.push_back(Added{from, to, capacity});
  }
  int arcs() const { return 2 * static_cast<int>(added_.size()); }

  // The maximum flow from the source to the sink; false when `work` (the
  // arcs looked at, counted) would pass `max_work` first.
  bool MaxFlow(int64_t max_work, int64_t& work, Bytes& flow) {
    LayOut();
    flow = 0;
    while (Levels(work)) {
      if (work > max_work) return false;
      next_.assign(first_.begin(), first_.end() - 1);
      flow += BlockingFlow(work);
      if (work > max_work) return false;
    }
    return work <= max_work;
  }

 private:
  struct Added {
    int from;
    int to;
    Bytes capacity;
  };

  // Node v's arcs, each added arc and then its reverse as added: positions
  // [first_[v], first_[v + 1]) of to_, capacity_ (what is left) and
  // reverse_ (the reverse arc's position).
  void LayOut() {
    first_.assign(nodes_ + 1, 0);
    for (const Added& arc : added_) {
      ++first_[arc.from + 1];
      ++first_[arc.to + 1];
    }
    for (int v = 0; v < nodes_; ++v) first_[v + 1] += first_[v];
    const size_t arcs = 2 * added_.size();
    to_.resize(arcs);
    capacity_.resize(arcs);
    reverse_.resize(arcs);
    next_.assign(first_.begin(), first_.end() - 1);
    for (const Added& arc : added_) {
      const int forward = next_[arc.from]++;
      const int back = next_[arc.to]++;
      to_[forward] = arc.to;
      capacity_[forward] = arc.capacity;
      reverse_[forward] = back;
      to_[back] = arc.from;
      capacity_[back] = 0;
      reverse_[back] = forward;
    }
  }

  bool Levels(int64_t& work) {
    level_.assign(nodes_, -1);
    level_[kSource] = 0;
    queue_.assign(1, kSource);
    for (size_t i = 0; i < queue_.size(); ++i) {
      const int v = queue_[i];
      work += first_[v + 1] - first_[v];
      for (int k = first_[v]; k < first_[v + 1]; ++k) {
        if (capacity_[k] > 0 && level_[to_[k]] < 0) {
          level_[to_[k]] = level_[v] + 1;
          queue_.push_back(to_[k]);
        }
      }
    }
    return level_[kSink] >= 0;
  }

  Bytes BlockingFlow(int64_t& work) {
    Bytes total = 0;
    std::vector<int>& path = queue_;  // arcs from the source
    path.clear();
    int v = kSource;
    while (true) {
      if (v == kSink) {
        Bytes pushed = std::numeric_limits<Bytes>::max();
        for (int k : path) pushed = std::min(pushed, capacity_[k]);
        size_t saturated = path.size();
        for (size_t i = 0; i < path.size(); ++i) {
          capacity_[path[i]] -= pushed;
          capacity_[reverse_[path[i]]] += pushed;
          if (capacity_[path[i]] == 0 && saturated == path.size()) {
            saturated = i;
          }
        }
        total += pushed;
        path.resize(saturated);  // back to the tail of the first saturated
        v = path.empty() ? kSource : to_[path.back()];
        continue;
      }
      bool advanced = false;
      for (int& k = next_[v]; k < first_[v + 1]; ++k) {
        ++work;
        if (capacity_[k] > 0 && level_[to_[k]] == level_[v] + 1) {
          path.push_back(k);
          v = to_[k];
          advanced = true;
          break;
        }
      }
      if (advanced) continue;
      if (v == kSource) return total;
      level_[v] = -1;  // a dead end for the rest of this phase
      path.pop_back();
      v = path.empty() ? kSource : to_[path.back()];
      ++next_[v];
    }
  }

  int nodes_ = 2;
  std::vector<Added> added_;
  std::vector<int> first_;
  std::vector<int> to_;
  std::vector<Bytes> capacity_;
  std::vector<int> reverse_;
  std::vector<int> level_;
  std::vector<int> next_;
  std::vector<int> queue_;  // Levels' queue, BlockingFlow's path
};

// Per op, the ops it precedes (its descendants, itself included) and
// those that precede it (its ancestors, itself included), as bitsets: x
// precedes y in every order when y is in x's row of descendants, x in y's
// row of ancestors.
class Ancestry {
 public:
  Ancestry(const Dag& dag, const std::vector<std::vector<int>>& pred,
           int64_t& work)
      : pred_(pred),
        n_(static_cast<int>(dag.succ.size())),
        words_((n_ + 63) / 64),
        descendants_(static_cast<size_t>(n_) * words_, 0),
        column_(words_, 0) {
    // Every edge points forward in the graph's order.
    for (int x = n_ - 1; x >= 0; --x) {
      uint64_t* d = &descendants_[static_cast<size_t>(x) * words_];
      d[x / 64] |= uint64_t{1} << (x % 64);
      for (int s : dag.succ[x]) {
        const uint64_t* ds = Descendants(s);
        for (int w = 0; w < words_; ++w) d[w] |= ds[w];
      }
      work += static_cast<int64_t>(dag.succ[x].size() + 1) * words_;
    }
  }

  int words() const { return words_; }
  const uint64_t* Descendants(int x) const {
    return &descendants_[static_cast<size_t>(x) * words_];
  }
  // Op x's row of ancestors, valid until the next call. The first
  // kColumns rows asked for are read off the descendants' rows, a bit of
  // each; the next call makes every op's row at once. Neither is counted:
  // the work stays that of the descendants alone, whose rows were once the
  // only ones. A refinement its work cuts short asks for few
  // (densenet121's training step: 2 of 6093 ops, where the whole table
  // took 5-8 ms, most of the refinement's time).
  const uint64_t* Ancestors(int x) const {
    if (ancestors_.empty() && asked_ < kColumns) {
      ++asked_;
      std::fill(column_.begin(), column_.end(), 0);
      for (int y = 0; y <= x; ++y) {  // no later op precedes x
        if (Has(Descendants(y), x)) column_[y / 64] |= uint64_t{1} << (y % 64);
      }
      return column_.data();
    }
    if (ancestors_.empty()) MakeAncestors();
    return &ancestors_[static_cast<size_t>(x) * words_];
  }
  bool Precedes(int x, int y) const { return Has(Descendants(x), y); }

  static bool Has(const uint64_t* bits, int x) {
    return (bits[x / 64] >> (x % 64)) & 1;
  }

 private:
  static constexpr int kColumns = 16;

  void MakeAncestors() const {
    ancestors_.assign(static_cast<size_t>(n_) * words_, 0);
    for (int x = 0; x < n_; ++x) {
      uint64_t* a = &ancestors_[static_cast<size_t>(x) * words_];
      a[x / 64] |= uint64_t{1} << (x % 64);
      for (int p : pred_[x]) {
        const uint64_t* ap = &ancestors_[static_cast<size_t>(p) * words_];
        for (int w = 0; w < words_; ++w) a[w] |= ap[w];
      }
    }
  }

  const std::vector<std::vector<int>>& pred_;
  int n_;
  int words_;
  std::vector<uint64_t> descendants_;
  // Made on use (Ancestors()).
  mutable std::vector<uint64_t> ancestors_;
  mutable std::vector<uint64_t> column_;
  mutable int asked_ = 0;
};

// The groups OpCut counts, their fields side by side and their ops in one
// array: the footprint of every op reads them.
struct CountedGroups {
  struct Group {
    Bytes size;
    bool from_start;
    bool to_end;
    int starts;  // its starts are ops[starts, ends), its ends ops[ends, end)
    int ends;
    int end;
  };

  CountedGroups(const std::vector<ViewGroup>& groups,
                const std::vector<int>& counted) {
    for (int g : counted) {
      const ViewGroup& group = groups[g];
      Group c{.size = group.size,
              .from_start = group.from_start,
              .to_end = group.to_end,
              .starts = static_cast<int>(ops.size()),
              .ends = 0,
              .end = 0};
      ops.insert(ops.end(), group.starts.begin(), group.starts.end());
      c.ends = static_cast<int>(ops.size());
      ops.insert(ops.end(), group.ends.begin(), group.ends.end());
      c.end = static_cast<int>(ops.size());
      list.push_back(c);
      work += c.end - c.starts + 1;
    }
  }

  std::vector<Group> list;
  std::vector<int> ops;
  int64_t work = 0;  // that of reading every group's ops
};

// The footprint of op `u` (see the file comment), or -1 past `max_work`.
class OpCut {
 public:
  OpCut(const std::vector<std::vector<int>>& pred,
        const std::vector<ViewGroup>& groups, const std::vector<int>& counted,
        const Ancestry& ancestry)
      : pred_first_(pred.size() + 1, 0),
        ancestry_(ancestry),
        n_(static_cast<int>(pred.size())),
        groups_(groups, counted),
        node_(n_, -1),
        after_(ancestry.words()),
        before_(ancestry.words()) {
    for (int x = 0; x < n_; ++x) {
      pred_first_[x + 1] = pred_first_[x] + static_cast<int>(pred[x].size());
      pred_.insert(pred_.end(), pred[x].begin(), pred[x].end());
    }
  }

  // With `before` (an op, or -1) run before u and `after` not: orders
  // that run them so.
  Bytes Footprint(int u, Bytes best, int64_t max_work, int64_t& work,
                  int before = -1, int after = -1) {
    if (before < 0 && after < 0 && Tabulated(u) && fixed_[u] <= best) {
      work += n_ + groups_.work;  // as the sides and the terms count
      return fixed_[u];
    }
    // Where each op stands against u: before it in every order, after it
    // (or u), or free. After wins over before.
    const int words = ancestry_.words();
    const uint64_t* du = ancestry_.Descendants(u);
    const uint64_t* au = ancestry_.Ancestors(u);
    for (int w = 0; w < words; ++w) {
      after_[w] = du[w];
      before_[w] = au[w];
    }
    if (after >= 0) {
      const uint64_t* d = ancestry_.Descendants(after);
      for (int w = 0; w < words; ++w) after_[w] |= d[w];
    }
    if (before >= 0) {
      const uint64_t* a = ancestry_.Ancestors(before);
      for (int w = 0; w < words; ++w) before_[w] |= a[w];
    }
    for (int w = 0; w < words; ++w) before_[w] &= ~after_[w];
    const int free = Sides();
    work += n_;
    // The groups' terms; the footprint is at most `fixed` (D holding no
    // free op: no cost, no gain).
    Bytes fixed = 0;
    terms_.clear();
    for (int c = 0; c < static_cast<int>(groups_.list.size()); ++c) {
      fixed += Term(c, u);
    }
    work += groups_.work;
    if (fixed <= best) return fixed;
    network_.Reset();
    for (int x = 0; x < free; ++x) network_.AddNode();
    Bytes gains = 0;
    for (const GroupTerm& term : terms_) {
      const CountedGroups::Group& group = groups_.list[term.group];
      if (term.gain) {
        const int z = network_.AddNode();
        network_.AddArc(kSource, z, group.size);
        gains += group.size;
        for (int i = group.ends; i < group.end; ++i) {
          if (node_[groups_.ops[i]] >= 0)
            network_.AddArc(z, node_[groups_.ops[i]], kUnbounded);
        }
      }
      if (term.cost) {
        const int y = network_.AddNode();
        network_.AddArc(y, kSink, group.size);
        for (int i = group.starts; i < group.ends; ++i) {
          if (node_[groups_.ops[i]] >= 0)
            network_.AddArc(node_[groups_.ops[i]], y, kUnbounded);
        }
      }
    }
    for (int x = 0; x < n_; ++x) {
      if (node_[x] < 0) continue;
      for (int i = pred_first_[x]; i < pred_first_[x + 1]; ++i) {
        const int p = pred_[i];
        if (node_[p] >= 0) network_.AddArc(node_[x], node_[p], kUnbounded);
      }
    }
    work += network_.arcs();
    Bytes cut = 0;
    if (!network_.MaxFlow(max_work, work, cut)) return -1;
    return fixed - (gains - cut);  // the cut is at most the gains
  }

  // The work each footprint counts before its network.
  int64_t FixedWork() const { return n_ + groups_.work; }

  // Footprint()'s `fixed` (the groups' terms) at the first `count` ops of
  // `ops`, for all of them at once, from the descendants' rows: group g
  // counts at u when u starts it, or when one of its starts precedes u
  // (or it is a graph input) and not every op ending it does (nor is it a
  // graph output). Summed into fixed_ for the ops whose footprints
  // Footprint() may then return without looking at the groups one by one.
  void Tabulate(const std::vector<int>& ops, int64_t count) {
    const int words = ancestry_.words();
    std::vector<uint64_t> wanted(words, 0);
    for (int i = 0; i < static_cast<int>(std::min<int64_t>(count, ops.size()));
         ++i) {
      wanted[ops[i] / 64] |= uint64_t{1} << (ops[i] % 64);
    }
    fixed_.assign(n_, 0);
    std::vector<uint64_t> counts(words);
    for (const CountedGroups::Group& group : groups_.list) {
      // Started: a start precedes u (or u starts it).
      for (int w = 0; w < words; ++w) counts[w] = group.from_start ? ~0ull : 0;
      for (int i = group.starts; i < group.ends; ++i) {
        const uint64_t* d = ancestry_.Descendants(groups_.ops[i]);
        for (int w = 0; w < words; ++w) counts[w] |= d[w];
      }
      // Less ended: every end precedes u, none is u.
      if (!group.to_end) {
        std::vector<uint64_t>& ended = ended_;
        ended.assign(words, ~0ull);
        for (int i = group.ends; i < group.end; ++i) {
          const uint64_t* d = ancestry_.Descendants(groups_.ops[i]);
          for (int w = 0; w < words; ++w) ended[w] &= d[w];
        }
        for (int i = group.ends; i < group.end; ++i) {
          const int e = groups_.ops[i];
          ended[e / 64] &= ~(uint64_t{1} << (e % 64));
        }
        for (int w = 0; w < words; ++w) counts[w] &= ~ended[w];
      }
      for (int i = group.starts; i < group.ends; ++i) {
        const int s = groups_.ops[i];
        counts[s / 64] |= uint64_t{1} << (s % 64);
      }
      for (int w = 0; w < words; ++w) {
        for (uint64_t bits = counts[w] & wanted[w]; bits != 0;
             bits &= bits - 1) {
          fixed_[w * 64 + __builtin_ctzll(bits)] += group.size;
        }
      }
    }
    tabulated_ = std::move(wanted);
  }

 private:
  // Above the sum of every size (BuildProblem keeps it within kMaxBytes),
  // so never cut, and with that sum added still inside int64.
  static constexpr Bytes kUnbounded = kMaxBytes + 1;

  struct GroupTerm {
    int group;  // in groups_.list
    bool cost;  // started only if a free op of D starts it
    bool gain;  // ended if every op that ends it is in D, free ones too
  };

  // node_[x]: kBefore, kAfter, or for a free op its node in the network.
  static constexpr int kBefore = -1;
  static constexpr int kAfter = -2;

  // Each op's side from after_ and before_ into node_, the free ops
  // numbered from the first node after the source and the sink, in order;
  // returns how many are free.
  int Sides() {
    int free = 0;
    for (int x = 0; x < n_; ++x) {
      const uint64_t bit = uint64_t{1} << (x % 64);
      node_[x] = (after_[x / 64] & bit)    ? kAfter
                 : (before_[x / 64] & bit) ? kBefore
                                           : 2 + free++;
    }
    return free;
  }

  bool Tabulated(int u) const {
    return !tabulated_.empty() && Ancestry::Has(tabulated_.data(), u);
  }

  // Group c's bytes at u with no free op in D; records its cost
  // and gain.
  Bytes Term(int c, int u) {
    const CountedGroups::Group& group = groups_.list[c];
    const int* ops = groups_.ops.data();
    const int* node = node_.data();
    bool started = group.from_start;
    bool free_start = false;
    for (int i = group.starts; i < group.ends; ++i) {
      const int s = ops[i];
      if (s == u) return group.size;  // written while u runs
      started = started || node[s] == kBefore;
      free_start = free_start || node[s] >= 0;
    }
    if (!started && !free_start) return 0;  // started after u
    // Whether every op ending it may be in D: not for a graph output, nor
    // when u or a descendant ends it.
    bool may_end = !group.to_end;
    bool free_end = false;
    for (int i = group.ends; i < group.end; ++i) {
      const int e = ops[i];
      if (node[e] == kAfter) may_end = false;
      free_end = free_end || node[e] >= 0;
    }
    if (may_end && !free_end) return 0;  // ended before u in every order
    if (!started || may_end) terms_.push_back(GroupTerm{c, !started, may_end});
    return started ? group.size : 0;
  }

  std::vector<int> pred_first_;  // op x's predecessors: pred_[first_[x]..]
  std::vector<int> pred_;
  const Ancestry& ancestry_;
  int n_;
  CountedGroups groups_;
  std::vector<uint64_t> tabulated_;  // the ops whose fixed_ is known
  std::vector<Bytes> fixed_;
  std::vector<uint64_t> ended_;
  std::vector<int> node_;
  std::vector<uint64_t> after_;   // per op, bits: after u (or u)
  std::vector<uint64_t> before_;  // before u, not after
  std::vector<GroupTerm> terms_;
  FlowNetwork network_;
};

// Each merge set's largest group (the first of the largest).
std::vector<int> Largest(const std::vector<ViewGroup>& groups) {
  std::vector<int> of_set(groups.size(), -1);
  for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
    int& l = of_set[groups[g].merge_set];
    if (l < 0 || groups[g].size > groups[l].size) l = g;
  }
  std::vector<int> largest;
  for (int l : of_set) {
    if (l >= 0) largest.push_back(l);
  }
  return largest;
}

}  // namespace

void CutBound(const Dag& dag, const std::vector<ViewGroup>& groups,
              const std::vector<int>& ops_first, int64_t max_work,
              int64_t& work, Bytes& best, int& op) {
  const int n = static_cast<int>(dag.succ.size());
  if (n == 0 || n > kCutBoundOps) return;
  std::vector<std::vector<int>> pred(n);
  int64_t edges = 0;
  for (int x = 0; x < n; ++x) {
    for (int s : dag.succ[x]) pred[s].push_back(x);
    edges += static_cast<int64_t>(dag.succ[x].size());
  }
  if (work + (edges + n) * ((n + 63) / 64) > max_work) return;
  const Ancestry ancestry(dag, pred, work);
  const std::vector<int> largest = Largest(groups);
  OpCut cut(pred, groups, largest, ancestry);
  // The first pass can look at no more ops than this.
  cut.Tabulate(ops_first, (max_work - work) / cut.FixedWork() + 1);
  std::vector<std::pair<Bytes, int>> footprints;  // (-footprint, op)
  for (int u : ops_first) {
    const Bytes footprint = cut.Footprint(u, best, max_work, work);
    if (work > max_work) return;
    footprints.emplace_back(-footprint, u);
    if (footprint > best) {
      best = footprint;
      op = u;
    }
  }
  // Pairs of the ops of the largest footprints (those not above `best`
  // ranked by what they are known to be below): every order runs one of
  // two ops that do not depend on each other before the other, so it holds
  // at least the smaller of the two orientations' larger footprints.
  std::stable_sort(footprints.begin(), footprints.end());
  // The exact footprints of the first ones (most were only bounded above).
  const int ranked =
      std::min(4 * kCutBoundPairOps, static_cast<int>(footprints.size()));
  for (int i = 0; i < ranked; ++i) {
    footprints[i].first =
        -cut.Footprint(footprints[i].second, -1, max_work, work);
    if (work > max_work) return;
  }
  std::stable_sort(footprints.begin(), footprints.begin() + ranked);
  const int k = std::min(kCutBoundPairOps, ranked);
  for (int i = 0; i < k; ++i) {
    for (int j = i + 1; j < k; ++j) {
      const int u = footprints[i].second;
      const int w = footprints[j].second;
      if (ancestry.Precedes(u, w) || ancestry.Precedes(w, u)) continue;
      Bytes pair = best;
      for (const auto [first, second] : {std::pair{w, u}, std::pair{u, w}}) {
        // `first` before `second`: at `second` with `first` run, at
        // `first` with `second` not.
        const Bytes at_second =
            cut.Footprint(second, best, max_work, work, first, -1);
        const Bytes at_first =
            at_second > best
                ? at_second
                : cut.Footprint(first, best, max_work, work, -1, second);
        if (work > max_work) return;
        pair = first == w ? std::max(at_second, at_first)
                          : std::min(pair, std::max(at_second, at_first));
        if (pair <= best) break;
      }
      if (pair > best) {
        best = pair;
        op = u;
      }
    }
  }
}

}  // namespace memplan::internal
