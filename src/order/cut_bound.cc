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
class FlowNetwork {
 public:
  void Reset() {
    edges_.clear();
    out_.assign(2, {});
  }
  int AddNode() {
    out_.emplace_back();
    return static_cast<int>(out_.size()) - 1;
  }
  void AddArc(int from, int to, Bytes capacity) {
    out_[from].push_back(static_cast<int>(edges_.size()));
    edges_.push_back(Arc{to, capacity});
    out_[to].push_back(static_cast<int>(edges_.size()));
    edges_.push_back(Arc{from, 0});
  }
  int arcs() const { return static_cast<int>(edges_.size()); }

  // The maximum flow from the source to the sink; false when `work` (the
  // arcs looked at, counted) would pass `max_work` first.
  bool MaxFlow(int64_t max_work, int64_t& work, Bytes& flow) {
    flow = 0;
    while (Levels(work)) {
      if (work > max_work) return false;
      next_.assign(out_.size(), 0);
      flow += BlockingFlow(work);
      if (work > max_work) return false;
    }
    return work <= max_work;
  }

 private:
  struct Arc {
    int to;
    Bytes capacity;  // left; arc e ^ 1 is e's reverse
  };

  bool Levels(int64_t& work) {
    level_.assign(out_.size(), -1);
    level_[kSource] = 0;
    std::vector<int> queue = {kSource};
    for (size_t i = 0; i < queue.size(); ++i) {
      const int v = queue[i];
      for (int e : out_[v]) {
        ++work;
        if (edges_[e].capacity > 0 && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[v] + 1;
          queue.push_back(edges_[e].to);
        }
      }
    }
    return level_[kSink] >= 0;
  }

  Bytes BlockingFlow(int64_t& work) {
    Bytes total = 0;
    std::vector<int> path;  // arcs from the source
    int v = kSource;
    while (true) {
      if (v == kSink) {
        Bytes pushed = std::numeric_limits<Bytes>::max();
        for (int e : path) pushed = std::min(pushed, edges_[e].capacity);
        size_t saturated = path.size();
        for (size_t i = 0; i < path.size(); ++i) {
          edges_[path[i]].capacity -= pushed;
          edges_[path[i] ^ 1].capacity += pushed;
          if (edges_[path[i]].capacity == 0 && saturated == path.size()) {
            saturated = i;
          }
        }
        total += pushed;
        path.resize(saturated);  // back to the tail of the first saturated
        v = path.empty() ? kSource : edges_[path.back()].to;
        continue;
      }
      bool advanced = false;
      for (; next_[v] < static_cast<int>(out_[v].size()); ++next_[v]) {
        ++work;
        const Arc& arc = edges_[out_[v][next_[v]]];
        if (arc.capacity > 0 && level_[arc.to] == level_[v] + 1) {
          path.push_back(out_[v][next_[v]]);
          v = arc.to;
          advanced = true;
          break;
        }
      }
      if (advanced) continue;
      if (v == kSource) return total;
      level_[v] = -1;  // a dead end for the rest of this phase
      path.pop_back();
      v = path.empty() ? kSource : edges_[path.back()].to;
      ++next_[v];
    }
  }

  std::vector<Arc> edges_;
  std::vector<std::vector<int>> out_;
  std::vector<int> level_;
  std::vector<int> next_;
};

// Per op, the ops it precedes (its descendants, itself included), as a
// bitset: x precedes y in every order when y is in x's row.
class Ancestry {
 public:
  Ancestry(const Dag& dag, int64_t& work)
      : n_(static_cast<int>(dag.succ.size())),
        words_((n_ + 63) / 64),
        descendants_(static_cast<size_t>(n_) * words_, 0) {
    // Every edge points forward in the graph's order.
    for (int x = n_ - 1; x >= 0; --x) {
      uint64_t* d = &descendants_[static_cast<size_t>(x) * words_];
      d[x / 64] |= uint64_t{1} << (x % 64);
      for (int s : dag.succ[x]) {
        const uint64_t* ds = &descendants_[static_cast<size_t>(s) * words_];
        for (int w = 0; w < words_; ++w) d[w] |= ds[w];
      }
      work += static_cast<int64_t>(dag.succ[x].size() + 1) * words_;
    }
  }

  bool Precedes(int x, int y) const {
    return (descendants_[static_cast<size_t>(x) * words_ + y / 64] >>
            (y % 64)) &
           1;
  }

 private:
  int n_;
  int words_;
  std::vector<uint64_t> descendants_;
};

// Where an op stands against u: before it in every order, after it (or u),
// or free.
enum class Side { kBefore, kAfter, kFree };

// The footprint of op `u` (see the file comment), or -1 past `max_work`.
class OpCut {
 public:
  OpCut(const Dag& dag, const std::vector<std::vector<int>>& pred,
        const std::vector<ViewGroup>& groups, const std::vector<int>& counted,
        const Ancestry& ancestry)
      : dag_(dag),
        pred_(pred),
        groups_(groups),
        counted_(counted),
        ancestry_(ancestry),
        node_(dag.succ.size(), -1) {}

  // With `before` (an op, or -1) run before u and `after` not: orders
  // that run them so.
  Bytes Footprint(int u, Bytes best, int64_t max_work, int64_t& work,
                  int before = -1, int after = -1) {
    const int n = static_cast<int>(dag_.succ.size());
    side_.resize(n);
    for (int x = 0; x < n; ++x) {
      if (ancestry_.Precedes(u, x) ||
          (after >= 0 && ancestry_.Precedes(after, x))) {
        side_[x] = Side::kAfter;
      } else if (ancestry_.Precedes(x, u) ||
                 (before >= 0 && ancestry_.Precedes(x, before))) {
        side_[x] = Side::kBefore;
      } else {
        side_[x] = Side::kFree;
      }
    }
    work += n;
    // The groups' terms; the footprint is at most `fixed` (D holding no
    // free op: no cost, no gain).
    Bytes fixed = 0;
    terms_.clear();
    for (int g : counted_) {
      work += static_cast<int64_t>(groups_[g].starts.size() +
                                   groups_[g].ends.size() + 1);
      fixed += Term(g, u);
    }
    if (fixed <= best) return fixed;
    network_.Reset();
    for (int x = 0; x < n; ++x) {
      node_[x] = side_[x] == Side::kFree ? network_.AddNode() : -1;
    }
    Bytes gains = 0;
    for (const GroupTerm& term : terms_) {
      const ViewGroup& group = groups_[term.group];
      if (term.gain) {
        const int z = network_.AddNode();
        network_.AddArc(kSource, z, group.size);
        gains += group.size;
        for (int e : group.ends) {
          if (node_[e] >= 0) network_.AddArc(z, node_[e], kUnbounded);
        }
      }
      if (term.cost) {
        const int y = network_.AddNode();
        network_.AddArc(y, kSink, group.size);
        for (int s : group.starts) {
          if (node_[s] >= 0) network_.AddArc(node_[s], y, kUnbounded);
        }
      }
    }
    for (int x = 0; x < n; ++x) {
      if (node_[x] < 0) continue;
      for (int p : pred_[x]) {
        if (node_[p] >= 0) network_.AddArc(node_[x], node_[p], kUnbounded);
      }
    }
    work += network_.arcs();
    Bytes cut = 0;
    if (!network_.MaxFlow(max_work, work, cut)) return -1;
    return fixed - (gains - cut);  // the cut is at most the gains
  }

 private:
  // Above the sum of every size (BuildProblem keeps it within kMaxBytes),
  // so never cut, and with that sum added still inside int64.
  static constexpr Bytes kUnbounded = kMaxBytes + 1;

  struct GroupTerm {
    int group;
    bool cost;  // started only if a free op of D starts it
    bool gain;  // ended if every op that ends it is in D, free ones too
  };

  // Group g's bytes at u with no free op in D; records its cost and gain.
  Bytes Term(int g, int u) {
    const ViewGroup& group = groups_[g];
    bool started = group.from_start;
    bool free_start = false;
    for (int s : group.starts) {
      if (s == u) return group.size;  // written while u runs
      started = started || side_[s] == Side::kBefore;
      free_start = free_start || side_[s] == Side::kFree;
    }
    if (!started && !free_start) return 0;  // started after u
    // Whether every op ending it may be in D: not for a graph output, nor
    // when u or a descendant ends it.
    bool may_end = !group.to_end;
    bool free_end = false;
    for (int e : group.ends) {
      if (side_[e] == Side::kAfter) may_end = false;
      free_end = free_end || side_[e] == Side::kFree;
    }
    if (may_end && !free_end) return 0;  // ended before u in every order
    if (!started || may_end) terms_.push_back(GroupTerm{g, !started, may_end});
    return started ? group.size : 0;
  }

  const Dag& dag_;
  const std::vector<std::vector<int>>& pred_;
  const std::vector<ViewGroup>& groups_;
  const std::vector<int>& counted_;
  const Ancestry& ancestry_;
  std::vector<Side> side_;
  std::vector<int> node_;
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
  const Ancestry ancestry(dag, work);
  const std::vector<int> largest = Largest(groups);
  OpCut cut(dag, pred, groups, largest, ancestry);
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
