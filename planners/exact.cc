// exact: branch-and-bound over canonical placements (see exact.h).

#include "exact.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "memplan/internal/planner_util.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/verify.h"

namespace memplan {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
constexpr int kNumOrders = 4;
// Minimising mode: probes between the bounds that may run out of nodes in
// one round of the node limit.
constexpr int kUnknownProbesPerRound = 2;

// Work units (PlanOptions::work_limit) of one search node in a part of `n`
// buffers: a node looks at about every item and time section, and the
// count ends about when the clock would (kWorkPerSecond).
int64_t NodeWork(int64_t n) { return 8 * n + 64; }

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

int64_t RoundUpTo(int64_t value, int64_t multiple) {
  return multiple == 1 ? value : (value + multiple - 1) / multiple * multiple;
}

// One buffer to place, in units of the problem's granule.
struct Item {
  BufferId buffer = 0;
  int64_t size = 0;
  int64_t align = 1;
  int s0 = 0, s1 = 0;         // the sections it spans, [s0, s1)
  int group = 0;              // items that are interchangeable share a group
  int64_t fixed_top = 0;      // highest top of fixed buffers it conflicts with
  std::vector<int> partners;  // explicit conflicts outside its lifetime
};

using StateKey = std::pair<uint64_t, uint64_t>;

// A set of buffers between which no point in time is crossed by anything
// else: it is planned on its own.
struct Part {
  std::vector<Item> items;
  std::vector<Step> times;               // section s is [times[s], times[s+1])
  std::vector<std::vector<int>> starts;  // items whose span starts at s
  std::vector<int64_t> base;             // initial floor (fixed buffers)
  std::vector<int64_t> load;             // sizes of the items over s
  std::vector<std::vector<int>> ranks;   // per static order: rank of each item
  int64_t lower = 0;                     // max over s of base + load
  int64_t room = 0;      // the highest base plus every item's size: no height
                         // above it constrains the search
  bool complete = true;  // the search proves what it fails

  // Results across probes.
  int64_t lo = 0;     // proven: no plan below this height (complete parts)
  int64_t hi = kInf;  // height of `offsets`
  std::vector<int64_t> offsets;
  int64_t exhausted_at = -1;  // incomplete parts: search failed at this height

  absl::flat_hash_set<StateKey> failed;  // states with no completion
  int64_t failed_height = -1;            // `failed` holds for heights <= this
};

enum class Outcome { kFound, kExhausted, kLimit };

// The maximum of an array over ranges in O(log n), kept up to date by
// refreshing the ranges whose values changed. Leaves beyond the array hold
// `empty`.
class RangeMax {
 public:
  void Reset(const std::vector<int64_t>& values, int64_t empty) {
    size_ = 1;
    while (size_ < static_cast<int>(values.size())) size_ *= 2;
    tree_.assign(2 * size_, empty);
    std::copy(values.begin(), values.end(), tree_.begin() + size_);
    for (int i = size_ - 1; i >= 1; --i)
      tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  // values[lo, hi) changed.
  void Refresh(const std::vector<int64_t>& values, int lo, int hi) {
    if (lo >= hi) return;
    for (int i = lo; i < hi; ++i) tree_[size_ + i] = values[i];
    for (int a = (size_ + lo) / 2, b = (size_ + hi - 1) / 2; a >= 1;
         a /= 2, b /= 2) {
      for (int i = a; i <= b; ++i)
        tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
    }
  }
  // The maximum over [lo, hi), lo < hi.
  int64_t Max(int lo, int hi) const {
    int64_t m = std::numeric_limits<int64_t>::min();
    for (int a = lo + size_, b = hi + size_; a < b; a /= 2, b /= 2) {
      if (a & 1) m = std::max(m, tree_[a++]);
      if (b & 1) m = std::max(m, tree_[--b]);
    }
    return m;
  }

 private:
  int size_ = 1;
  std::vector<int64_t> tree_;
};

// Depth-first search of one part at one height, iterative so that parts of
// tens of thousands of buffers need no deep native stack.
class PartSearch {
 public:
  PartSearch(Part& part, const ExactOptions& options)
      : part_(part), options_(options) {
    const int n = static_cast<int>(part.items.size());
    const int sections = static_cast<int>(part.base.size());
    for (int i = 0; i < n; ++i) {
      item_key_.push_back({Mix(2 * i + 1), Mix(2 * i + 1 + (1ULL << 40))});
    }
    node_work_ = NodeWork(n);
    eff_.resize(sections);
    rem_.resize(sections);
    eff_tree_size_ = 1;
    while (eff_tree_size_ < sections) eff_tree_size_ *= 2;
    low_.resize(2 * eff_tree_size_);
    placed_.resize(n);
    offset_.resize(n);
  }

  // Searches for a plan of height <= `height` with the static order `order`.
  Outcome Run(int64_t height, const std::vector<int>& rank, bool fill_first,
              int64_t node_limit, Budget& budget) {
    Reset(height);
    rank_ = &rank;
    fill_first_ = fill_first;
    // Under a height that every item could stack to, nothing is pruned.
    inference_ = options_.section_inference && height < part_.room;
    nodes_ = 0;
    const bool use_cache = options_.failure_cache;
    int depth = 0;
    if (frames_.empty()) frames_.emplace_back();
    Begin(frames_[0]);
    enum { kExpand, kNext, kFail } step = kExpand;
    while (true) {
      Frame& fr = frames_[depth];
      if (step == kExpand) {
        if (num_placed_ == static_cast<int>(part_.items.size()))
          return Outcome::kFound;
        budget.Tick(node_work_);
        if (nodes_ >= node_limit || budget.OutOfTime()) return Outcome::kLimit;
        ++nodes_;
        const StateKey key = Key();
        if (use_cache && part_.failed.contains(key)) {
          step = kFail;
          continue;
        }
        if (use_cache) hashes_.push_back(key);
        if (inference_ && !SectionsFit()) {
          step = kFail;
          continue;
        }
        FindRun(fr);
        CollectCandidates(fr);
        step = kNext;
        continue;
      }
      if (step == kNext) {
        bool descended = false;
        while (fr.next < fr.cands.size()) {
          const int c = fr.cands[fr.next++];
          const Item& item = part_.items[c];
          int64_t off = std::max(fr.f, item.fixed_top);
          for (int p : item.partners) {
            if (placed_[p])
              off = std::max(off, offset_[p] + part_.items[p].size);
          }
          off = RoundUpTo(off, item.align);
          if (off + item.size > height_) continue;
          if (off > fr.f && inference_) {
            bool fits = true;
            for (int s = item.s0; s < item.s1 && fits; ++s) {
              fits = off + rem_[s] <= height_;
            }
            if (!fits) continue;
          }
          Place(c, off, fr.f);
          fr.child = c;
          ++depth;
          if (depth == static_cast<int>(frames_.size())) frames_.emplace_back();
          Begin(frames_[depth]);
          descended = true;
          break;
        }
        if (descended) {
          step = kExpand;
          continue;
        }
        // Nothing sits on the cell (r0, f): every buffer crossing r0 lies
        // higher, on a buffer inside the run (at least f + its size) or
        // across a neighbour (at least h). Raise r0 to the lowest of those.
        if (fr.raise_to >= kInf ||
            (inference_ && fr.raise_to + rem_[fr.cell] > height_)) {
          step = kFail;
          continue;
        }
        // With nothing at all inside the run, the whole run rises to h.
        const bool whole = fr.raise_to == fr.h && fr.inner_empty;
        const int lo = whole ? fr.r0 : fr.cell,
                  hi = whole ? fr.r1 : fr.cell + 1;
        if (whole && inference_) {
          bool fits = true;
          for (int t = lo; t < hi && fits; ++t)
            fits = fr.h + rem_[t] <= height_;
          if (!fits) {
            step = kFail;
            continue;
          }
        }
        Raise(lo, hi, fr.f, fr.raise_to);
        raises_.push_back({lo, hi, fr.f, fr.raise_to});
        step = kExpand;
        continue;
      }
      // kFail: undo this frame and go on with the parent's next child.
      while (raises_.size() > fr.raise_mark) {
        const RaiseRecord& r = raises_.back();
        Raise(r.r0, r.r1, r.to, r.from);
        raises_.pop_back();
      }
      if (use_cache) {
        for (size_t i = fr.hash_mark; i < hashes_.size(); ++i) {
          if (static_cast<int64_t>(part_.failed.size()) >=
              options_.failure_cache_entries)
            break;
          part_.failed.insert(hashes_[i]);
        }
        hashes_.resize(fr.hash_mark);
      }
      if (depth == 0) return Outcome::kExhausted;
      --depth;
      Frame& parent = frames_[depth];
      const int c = parent.child;
      Unplace(c, parent.f);
      step = kNext;
    }
  }

  int64_t nodes() const { return nodes_; }
  const std::vector<int64_t>& offsets() const { return offset_; }

 private:
  struct Frame {
    int64_t f = 0, h = kInf, raise_to = kInf;
    bool inner_empty = false;
    int r0 = 0, r1 = 0, cell = 0;
    std::vector<int> cands;
    size_t next = 0;
    size_t raise_mark = 0, hash_mark = 0;
    int child = -1;
  };
  struct RaiseRecord {
    int r0, r1;
    int64_t from, to;
  };

  void Reset(int64_t height) {
    height_ = height;
    std::fill(placed_.begin(), placed_.end(), 0);
    num_placed_ = 0;
    rem_ = part_.load;
    floor_hash_ = {0, 0};
    unplaced_hash_ = {0, 0};
    for (size_t s = 0; s < eff_.size(); ++s) {
      eff_[s] = rem_[s] > 0 ? part_.base[s] : kInf;
      if (rem_[s] > 0) ToggleFloor(static_cast<int>(s), eff_[s]);
    }
    eff_max_.Reset(eff_, 0);
    for (const StateKey& k : item_key_) {
      unplaced_hash_.first ^= k.first;
      unplaced_hash_.second ^= k.second;
    }
    raises_.clear();
    hashes_.clear();
  }

  void Begin(Frame& fr) {
    fr.raise_mark = raises_.size();
    fr.hash_mark = hashes_.size();
    fr.child = -1;
  }

  StateKey Key() const {
    return {floor_hash_.first ^ unplaced_hash_.first,
            floor_hash_.second ^ unplaced_hash_.second};
  }

  void ToggleFloor(int s, int64_t floor) {
    const uint64_t x = static_cast<uint64_t>(s) * 0x100000001B3ULL ^
                       static_cast<uint64_t>(floor) * 0x9E3779B97F4A7C15ULL;
    floor_hash_.first ^= Mix(x);
    floor_hash_.second ^= Mix(x ^ 0xD6E8FEB86659FD93ULL);
  }

  // Every unplaced item will sit at or above its candidate (the highest
  // floor over its span), so in each section the items crossing it stack
  // from the lowest candidate among them upwards: that plus their sizes must
  // fit under the height.
  bool SectionsFit() {
    // low_ is a tree of "at most" marks over the sections: an item marks
    // the O(log n) nodes covering its span, and a section's low is the
    // least mark on its path to the root.
    const int size = eff_tree_size_;
    std::fill(low_.begin(), low_.end(), kInf);
    const int n = static_cast<int>(part_.items.size());
    for (int c = 0; c < n; ++c) {
      if (placed_[c]) continue;
      const Item& item = part_.items[c];
      const int64_t cand =
          std::max(eff_max_.Max(item.s0, item.s1), item.fixed_top);
      if (cand + item.size > height_) return false;
      for (int a = item.s0 + size, b = item.s1 + size; a < b; a /= 2, b /= 2) {
        if (a & 1) low_[a] = std::min(low_[a], cand), ++a;
        if (b & 1) --b, low_[b] = std::min(low_[b], cand);
      }
    }
    for (int i = 2; i < 2 * size; ++i) low_[i] = std::min(low_[i], low_[i / 2]);
    const int sections = static_cast<int>(rem_.size());
    for (int s = 0; s < sections; ++s) {
      if (low_[size + s] < kInf && low_[size + s] + rem_[s] > height_)
        return false;
    }
    return true;
  }

  // The cell to decide: a section of a "valley" (a run of equal floor whose
  // live neighbours are higher), the one with the least slack under the
  // height (fail first), ties to the lower floor, then leftmost. Also the
  // run around it and its lower neighbour's floor (kInf: both dead).
  void FindRun(Frame& fr) const {
    const int sections = static_cast<int>(eff_.size());
    int64_t best_slack = kInf, best_floor = kInf;
    int s = 0;
    while (s < sections) {
      if (eff_[s] >= kInf) {
        ++s;
        continue;
      }
      const int64_t f = eff_[s];
      int end = s + 1;
      while (end < sections && eff_[end] == f) ++end;
      const int64_t left = s > 0 ? eff_[s - 1] : kInf;
      const int64_t right = end < sections ? eff_[end] : kInf;
      if (left > f && right > f) {
        for (int t = s; t < end; ++t) {
          const int64_t slack = height_ - f - rem_[t];
          if (slack < best_slack || (slack == best_slack && f < best_floor)) {
            best_slack = slack;
            best_floor = f;
            fr.f = f;
            fr.r0 = s;
            fr.r1 = end;
            fr.cell = t;
            fr.h = std::min(left, right);
          }
        }
      }
      s = end;
    }
  }

  // The branches at the cell (r0, f): the items that start at r0 and fit in
  // the run (one per group of interchangeable items), in the static order;
  // and the floor r0 is raised to when none of them sits there.
  void CollectCandidates(Frame& fr) {
    fr.cands.clear();
    fr.next = 0;
    const int cell = fr.cell;
    int64_t inner = kInf;
    for (int s = fr.r0; s < fr.r1; ++s) {
      for (int c : part_.starts[s]) {
        if (placed_[c] || part_.items[c].s1 > fr.r1) continue;
        if (s <= cell && cell < part_.items[c].s1) {
          fr.cands.push_back(c);
        } else {
          inner = std::min(inner, part_.items[c].size);
        }
      }
    }
    const std::vector<int>& rank = *rank_;
    // Items that fill the whole run first: they leave no sliver beside them.
    auto fills = [&](int c) {
      return fill_first_ && part_.items[c].s0 == fr.r0 &&
                     part_.items[c].s1 == fr.r1
                 ? 0
                 : 1;
    };
    std::sort(fr.cands.begin(), fr.cands.end(), [&](int a, int b) {
      return fills(a) != fills(b) ? fills(a) < fills(b) : rank[a] < rank[b];
    });
    if (options_.symmetry) {
      size_t kept = 0;
      for (size_t i = 0; i < fr.cands.size(); ++i) {
        const int g = part_.items[fr.cands[i]].group;
        bool seen = false;
        for (size_t j = 0; j < kept && !seen; ++j)
          seen = part_.items[fr.cands[j]].group == g;
        if (!seen) fr.cands[kept++] = fr.cands[i];
      }
      fr.cands.resize(kept);
    }
    fr.inner_empty = inner >= kInf && fr.cands.empty();
    fr.raise_to = std::min(fr.h, inner >= kInf ? kInf : fr.f + inner);
  }

  // Every section of the item's span is live with floor `floor` before.
  void Place(int c, int64_t off, int64_t floor) {
    const Item& item = part_.items[c];
    const int64_t top = off + item.size;
    for (int s = item.s0; s < item.s1; ++s) {
      ToggleFloor(s, floor);
      rem_[s] -= item.size;
      if (rem_[s] > 0) {
        eff_[s] = top;
        ToggleFloor(s, top);
      } else {
        eff_[s] = kInf;
      }
    }
    eff_max_.Refresh(eff_, item.s0, item.s1);
    placed_[c] = 1;
    offset_[c] = off;
    ++num_placed_;
    unplaced_hash_.first ^= item_key_[c].first;
    unplaced_hash_.second ^= item_key_[c].second;
  }

  void Unplace(int c, int64_t floor) {
    const Item& item = part_.items[c];
    const int64_t top = offset_[c] + item.size;
    for (int s = item.s0; s < item.s1; ++s) {
      if (rem_[s] > 0) ToggleFloor(s, top);
      rem_[s] += item.size;
      eff_[s] = floor;
      ToggleFloor(s, floor);
    }
    eff_max_.Refresh(eff_, item.s0, item.s1);
    placed_[c] = 0;
    --num_placed_;
    unplaced_hash_.first ^= item_key_[c].first;
    unplaced_hash_.second ^= item_key_[c].second;
  }

  void Raise(int r0, int r1, int64_t from, int64_t to) {
    for (int s = r0; s < r1; ++s) {
      ToggleFloor(s, from);
      ToggleFloor(s, to);
      eff_[s] = to;
    }
    eff_max_.Refresh(eff_, r0, r1);
  }

  Part& part_;
  const ExactOptions& options_;
  std::vector<StateKey> item_key_;
  const std::vector<int>* rank_ = nullptr;
  bool fill_first_ = false;
  bool inference_ = true;
  int64_t node_work_ = 1;
  int64_t height_ = 0;
  int64_t nodes_ = 0;
  // eff_[s]: the floor of section s when items still cross it, else kInf.
  std::vector<int64_t> eff_;
  std::vector<int64_t> rem_;  // sizes of the unplaced items crossing s
  RangeMax eff_max_;          // eff_ over ranges of sections
  int eff_tree_size_ = 1;
  std::vector<int64_t> low_;  // scratch of SectionsFit: a tree of marks
  std::vector<char> placed_;
  std::vector<int64_t> offset_;
  int num_placed_ = 0;
  StateKey floor_hash_, unplaced_hash_;
  std::vector<Frame> frames_;
  std::vector<RaiseRecord> raises_;
  std::vector<StateKey> hashes_;
};

// The problem cut into parts, in units of `granule` bytes.
struct Decomposition {
  Bytes granule = 1;
  std::vector<Part> parts;
  std::vector<BufferId> fixed;  // buffers with a fixed placement
  bool complete = true;
};

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(n) {
    std::iota(parent.begin(), parent.end(), 0);
  }
  int Find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

Decomposition Decompose(const Problem& problem, bool split) {
  Decomposition d;
  const int n = static_cast<int>(problem.buffers.size());
  // The unit: every size, fixed offset and alignment is a multiple of it or
  // divides it (alignments are powers of two), so canonical offsets - sums of
  // sizes rounded to alignments - stay multiples of it.
  Bytes g = 0;
  for (const Buffer& b : problem.buffers) {
    g = std::gcd(g, b.size);
    if (b.fixed.has_value()) g = std::gcd(g, b.fixed->offset);
  }
  if (g == 0) g = 1;
  std::vector<Bytes> align(n);
  for (BufferId b = 0; b < n; ++b) {
    align[b] = EffectiveAlignment(problem, b, 0);
    if (g % align[b] != 0) g = std::gcd(g, align[b]);
  }
  d.granule = g;

  std::vector<BufferId> members;  // sized buffers: items and fixed obstacles
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].fixed.has_value()) d.fixed.push_back(b);
    if (problem.buffers[b].size > 0) members.push_back(b);
  }
  // Components of the interval graph (a sweep), merged by explicit conflicts.
  UnionFind uf(n);
  std::vector<BufferId> by_start = members;
  std::sort(by_start.begin(), by_start.end(), [&](BufferId a, BufferId b) {
    const Lifetime& la = problem.buffers[a].lifetime;
    const Lifetime& lb = problem.buffers[b].lifetime;
    return la.start != lb.start ? la.start < lb.start : a < b;
  });
  Step reach = std::numeric_limits<Step>::min();
  BufferId head = -1;
  for (BufferId b : by_start) {
    const Lifetime& l = problem.buffers[b].lifetime;
    if (head >= 0 && (l.start < reach || !split)) {
      uf.Union(head, b);
    } else {
      head = b;
    }
    reach = std::max(reach, l.end);
  }
  std::vector<std::vector<int>> explicit_of(n);
  for (const BufferConflict& c : problem.conflicts) {
    if (c.a == c.b) continue;
    const Buffer& a = problem.buffers[c.a];
    const Buffer& b = problem.buffers[c.b];
    if (a.size == 0 || b.size == 0 || Overlaps(a.lifetime, b.lifetime))
      continue;
    uf.Union(c.a, c.b);
    explicit_of[c.a].push_back(c.b);
    explicit_of[c.b].push_back(c.a);
  }
  std::vector<int> part_of(n, -1);
  std::vector<std::vector<BufferId>> groups;
  for (BufferId b : members) {
    const int root = uf.Find(b);
    if (part_of[root] < 0) {
      part_of[root] = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[part_of[root]].push_back(b);
  }

  for (const std::vector<BufferId>& group : groups) {
    Part part;
    std::vector<BufferId> obstacles;
    for (BufferId b : group) {
      const Buffer& buf = problem.buffers[b];
      part.times.push_back(buf.lifetime.start);
      part.times.push_back(buf.lifetime.end);
      if (buf.fixed.has_value()) obstacles.push_back(b);
    }
    std::sort(part.times.begin(), part.times.end());
    part.times.erase(std::unique(part.times.begin(), part.times.end()),
                     part.times.end());
    const int sections = static_cast<int>(part.times.size()) - 1;
    auto section_of = [&](Step t) {
      return static_cast<int>(
          std::lower_bound(part.times.begin(), part.times.end(), t) -
          part.times.begin());
    };
    part.base.assign(sections, 0);
    part.load.assign(sections, 0);
    part.starts.assign(sections, {});
    for (BufferId b : obstacles) {
      const Buffer& buf = problem.buffers[b];
      const int64_t top = (buf.fixed->offset + buf.size) / g;
      for (int s = section_of(buf.lifetime.start);
           s < section_of(buf.lifetime.end); ++s) {
        part.base[s] = std::max(part.base[s], top);
      }
    }
    if (!obstacles.empty()) part.complete = false;
    for (BufferId b : group) {
      const Buffer& buf = problem.buffers[b];
      if (buf.fixed.has_value()) continue;
      Item item;
      item.buffer = b;
      item.size = buf.size / g;
      item.align = align[b] <= g ? 1 : align[b] / g;
      if (item.align != 1) part.complete = false;
      item.s0 = section_of(buf.lifetime.start);
      item.s1 = section_of(buf.lifetime.end);
      part.items.push_back(std::move(item));
    }
    // Explicit conflicts outside the lifetimes.
    std::vector<std::pair<BufferId, int>> local_ids;
    for (int i = 0; i < static_cast<int>(part.items.size()); ++i) {
      local_ids.push_back({part.items[i].buffer, i});
    }
    std::sort(local_ids.begin(), local_ids.end());
    auto local_of = [&](BufferId b) {
      auto it = std::lower_bound(local_ids.begin(), local_ids.end(),
                                 std::make_pair(b, -1));
      return it != local_ids.end() && it->first == b ? it->second : -1;
    };
    for (Item& item : part.items) {
      for (BufferId other : explicit_of[item.buffer]) {
        part.complete = false;
        const Buffer& o = problem.buffers[other];
        if (o.fixed.has_value()) {
          item.fixed_top =
              std::max(item.fixed_top, (o.fixed->offset + o.size) / g);
        } else {
          item.partners.push_back(local_of(other));
        }
      }
      std::sort(item.partners.begin(), item.partners.end());
      item.partners.erase(
          std::unique(item.partners.begin(), item.partners.end()),
          item.partners.end());
    }
    const int m = static_cast<int>(part.items.size());
    for (int i = 0; i < m; ++i) {
      const Item& item = part.items[i];
      for (int s = item.s0; s < item.s1; ++s) part.load[s] += item.size;
      part.starts[item.s0].push_back(i);
    }
    for (int s = 0; s < sections; ++s) {
      part.lower = std::max(part.lower, part.base[s] + part.load[s]);
      part.room = std::max(part.room, part.base[s]);
    }
    for (const Item& item : part.items) part.room += item.size;
    // Interchangeable items (same span, size, alignment, no explicit
    // conflicts) share a group: a ban on one is a ban on all.
    std::vector<int> order(m);
    std::iota(order.begin(), order.end(), 0);
    auto signature = [&](int i) {
      const Item& it = part.items[i];
      return std::make_tuple(it.s0, it.s1, it.size, it.align, it.fixed_top,
                             it.partners.empty() ? -1 : i);
    };
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return signature(a) != signature(b) ? signature(a) < signature(b) : a < b;
    });
    for (int k = 0; k < m; ++k) {
      const int i = order[k];
      part.items[i].group = k > 0 && signature(order[k - 1]) == signature(i)
                                ? part.items[order[k - 1]].group
                                : i;
    }
    // Static orders: by size, by area, by lifetime, by start; ties on id.
    for (int o = 0; o < kNumOrders; ++o) {
      std::vector<int> seq(m);
      std::iota(seq.begin(), seq.end(), 0);
      auto length = [&](int i) {
        const Lifetime& l = problem.buffers[part.items[i].buffer].lifetime;
        return l.end - l.start;
      };
      auto key = [&](int i) -> std::tuple<int64_t, int64_t, BufferId> {
        const Item& it = part.items[i];
        const Step start = problem.buffers[it.buffer].lifetime.start;
        switch (o) {
          case 0:
            return {-it.size, -length(i), it.buffer};
          case 1:
            return {-it.size * length(i), -it.size, it.buffer};
          case 2:
            return {-length(i), -it.size, it.buffer};
          default:
            return {start, -it.size, it.buffer};
        }
      };
      std::sort(seq.begin(), seq.end(),
                [&](int a, int b) { return key(a) < key(b); });
      std::vector<int> rank(m);
      for (int k = 0; k < m; ++k) rank[seq[k]] = k;
      part.ranks.push_back(std::move(rank));
    }
    part.lo = part.lower;
    if (!part.complete) d.complete = false;
    d.parts.push_back(std::move(part));
  }
  // Largest lower bound first: the part that decides the peak is probed
  // first, and a proof of infeasibility there spares the others.
  std::stable_sort(
      d.parts.begin(), d.parts.end(),
      [](const Part& a, const Part& b) { return a.lower > b.lower; });
  return d;
}

enum class ProbeResult { kFeasible, kInfeasible, kUnknown };

class ExactPlanner : public SearchPlanner {
 public:
  ExactPlanner(const ExactOptions& options, ExactStats* stats)
      : options_(options), stats_(stats) {}

  std::string_view name() const override { return "exact"; }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& plan_options,
                              Incumbent& incumbent) const override {
    if (problem.pools.size() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "the exact planner handles a single pool; the problem has ",
          problem.pools.size(), " pools"));
    }
    Run run{
        .problem = problem,
        .options = options_,
        .budget = Budget(plan_options),
        .node_limit = options_.node_limit,
        .d = {}};
    if (run.node_limit <= 0) {
      run.node_limit = std::max<int64_t>(
          1, run.budget.work_limit() /
                 NodeWork(static_cast<int64_t>(problem.buffers.size())));
    }
    run.d = Decompose(problem, options_.decomposition);
    run.rng.seed(plan_options.seed);
    const Bytes capacity = problem.pools[0].capacity;
    absl::StatusOr<Plan> result = capacity > 0
                                      ? SolveUnder(run, capacity, incumbent)
                                      : Minimise(run, incumbent);
    if (stats_ != nullptr) {
      *stats_ = ExactStats{.nodes = run.nodes,
                           .parts = static_cast<int>(run.d.parts.size()),
                           .searches = run.searches,
                           .restarts = run.restarts};
    }
    return result;
  }

 private:
  struct Run {
    const Problem& problem;
    const ExactOptions& options;
    Budget budget;
    int64_t node_limit;  // over the whole solve
    Decomposition d;
    int64_t nodes = 0;
    int searches = 0;
    int restarts = 0;
    std::mt19937_64 rng{0};

    bool OutOfBudget() const {
      return nodes >= node_limit || budget.OutOfTimeNow();
    }
  };

  // Searches part `p` at `height`: every static order in turn (each without
  // and with "fill the run first") with `limit` nodes, then `restarts`
  // random orders with `restart_limit` nodes each.
  static Outcome SolvePart(Run& run, Part& part, int64_t height, int64_t limit,
                           int restarts = 0, int64_t restart_limit = 0) {
    if (part.failed_height >= 0 && height > part.failed_height)
      part.failed.clear();
    part.failed_height = height;
    PartSearch search(part, run.options);
    bool exhausted_all = true;
    std::vector<int> random_rank;
    for (int o = 0; o < 2 * kNumOrders + restarts; ++o) {
      const bool random = o >= 2 * kNumOrders;
      int64_t budget = random ? restart_limit : limit;
      budget = std::min(budget, run.node_limit - run.nodes);
      if (budget <= 0 || run.budget.OutOfTimeNow()) return Outcome::kLimit;
      if (random) {
        RandomRank(part, run.rng, random_rank);
        ++run.restarts;
      }
      const Outcome outcome =
          search.Run(height, random ? random_rank : part.ranks[o / 2],
                     o % 2 == 1, budget, run.budget);
      run.nodes += search.nodes();
      ++run.searches;
      if (outcome == Outcome::kFound) {
        int64_t top = 0;
        for (size_t i = 0; i < part.items.size(); ++i) {
          top = std::max(top, search.offsets()[i] + part.items[i].size);
        }
        for (int64_t b : part.base) top = std::max(top, b);
        if (top < part.hi) {
          part.hi = top;
          part.offsets = search.offsets();
        }
        return Outcome::kFound;
      }
      if (outcome == Outcome::kExhausted) {
        // A complete search fails under every order alike.
        if (part.complete) return Outcome::kExhausted;
      } else {
        exhausted_all = false;
      }
    }
    return exhausted_all ? Outcome::kExhausted : Outcome::kLimit;
  }

  // A random order between "largest first" and "largest area first": the
  // key is size * length^alpha (alpha drawn in [0, 1]) times a factor drawn
  // in [1, e^0.5), ties on the item. Tight parts that defeat every static
  // order (MiniMalloc's E: 131 buffers, 4 units of slack) are solved by one
  // of the first few dozen such orders within a thousand nodes each, while
  // a static order spends millions of nodes in one wrong early choice.
  static void RandomRank(const Part& part, std::mt19937_64& rng,
                         std::vector<int>& rank) {
    const int m = static_cast<int>(part.items.size());
    auto uniform = [&rng] {
      return static_cast<double>(rng() >> 11) * 0x1.0p-53;
    };
    const double alpha = uniform();
    std::vector<std::pair<double, int>> key(m);
    for (int i = 0; i < m; ++i) {
      const Item& item = part.items[i];
      key[i] = {-std::log(static_cast<double>(item.size)) -
                    alpha * std::log(static_cast<double>(item.s1 - item.s0)) -
                    0.5 * uniform(),
                i};
    }
    std::sort(key.begin(), key.end());
    rank.assign(m, 0);
    for (int k = 0; k < m; ++k) rank[key[k].second] = k;
  }

  // Is there a plan of height <= `height` (units)? Every part is tried, so
  // that one part's proof of infeasibility is found even when another part
  // runs out of nodes.
  static ProbeResult Probe(Run& run, int64_t height, int64_t limit,
                           bool* limit_hit) {
    ProbeResult result = ProbeResult::kFeasible;
    for (Part& part : run.d.parts) {
      if (part.hi <= height) continue;
      if (part.lo > height) return ProbeResult::kInfeasible;
      if (part.exhausted_at >= height) {
        result = ProbeResult::kUnknown;
        continue;
      }
      // Random orders get as many nodes as the static ones, in searches
      // that grow only as the square root of the round's limit: many short
      // tries are what solves the parts no static order does.
      // A descent takes a node per item at least: the limits of a large
      // part are scaled so that its first round can reach a plan at all.
      const int64_t m = static_cast<int64_t>(part.items.size());
      const int64_t first0 = std::max<int64_t>(1, run.options.first_node_limit);
      const int64_t scale = std::max<int64_t>(1, (2 * m + first0 - 1) / first0);
      const int64_t first = first0 * scale;
      const int64_t part_limit = limit * scale;
      const int64_t restart_limit = std::max(
          first,
          static_cast<int64_t>(std::sqrt(static_cast<double>(part_limit) *
                                         static_cast<double>(first))));
      const int restarts =
          run.options.restarts_per_round <= 0
              ? 0
              : static_cast<int>(std::max<int64_t>(
                    run.options.restarts_per_round,
                    2 * kNumOrders * part_limit / restart_limit));
      const Outcome outcome =
          SolvePart(run, part, height, part_limit, restarts, restart_limit);
      if (outcome == Outcome::kFound) continue;
      if (outcome == Outcome::kExhausted) {
        if (part.complete) {
          part.lo = height + 1;
          return ProbeResult::kInfeasible;
        }
        part.exhausted_at = height;
      } else {
        *limit_hit = true;
      }
      result = ProbeResult::kUnknown;
      if (run.OutOfBudget()) break;
    }
    return result;
  }

  static int64_t PartsHeight(const Run& run) {
    int64_t h = 0;
    for (const Part& part : run.d.parts) h = std::max(h, part.hi);
    return h;
  }

  static int64_t PartsLower(const Run& run) {
    int64_t h = 0;
    for (const Part& part : run.d.parts) h = std::max(h, part.lo);
    return h;
  }

  // The plan made of every part's best offsets (all parts have one).
  Plan Compose(const Run& run) const {
    const Problem& problem = run.problem;
    Plan plan;
    plan.planner = std::string(name());
    plan.assignments.resize(problem.buffers.size());
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      plan.assignments[b] = Assignment{.buffer = b, .pool = 0, .offset = 0};
    }
    for (BufferId b : run.d.fixed)
      plan.assignments[b].offset = problem.buffers[b].fixed->offset;
    for (const Part& part : run.d.parts) {
      for (size_t i = 0; i < part.items.size(); ++i) {
        plan.assignments[part.items[i].buffer].offset =
            part.offsets[i] * run.d.granule;
      }
    }
    ComputePlanStatistics(problem, plan);
    return plan;
  }

  absl::StatusOr<Plan> Finish(const Run& run, Plan plan, bool proven) const {
    ComputePlanStatistics(run.problem, plan);
    plan.planner = std::string(name());
    plan.proven_optimal = proven || plan.peak <= plan.lower_bound;
    if (absl::Status status = VerifyPlan(run.problem, plan); !status.ok()) {
      return absl::InternalError(absl::StrCat(
          "the exact planner built an invalid plan: ", status.message()));
    }
    return plan;
  }

  // The error of a part whose max-live exceeds `capacity`.
  static absl::Status MaxLiveError(const Run& run, const Part& part,
                                   Bytes capacity) {
    int at = 0;
    for (size_t s = 0; s < part.load.size(); ++s) {
      if (part.base[s] + part.load[s] > part.base[at] + part.load[at])
        at = static_cast<int>(s);
    }
    BufferId largest = -1;
    for (const Item& item : part.items) {
      if (item.s0 <= at && at < item.s1 &&
          (largest < 0 || run.problem.buffers[item.buffer].size >
                              run.problem.buffers[largest].size)) {
        largest = item.buffer;
      }
    }
    std::string who =
        largest >= 0
            ? absl::StrCat("; the largest of them is ",
                           internal::DescribeBuffer(run.problem, largest))
            : "";
    return absl::ResourceExhaustedError(absl::StrCat(
        "no plan fits in capacity ", capacity, ": at step ", part.times[at],
        " ", (part.base[at] + part.load[at]) * run.d.granule, " bytes are live",
        who));
  }

  absl::StatusOr<Plan> SolveUnder(Run& run, Bytes capacity,
                                  Incumbent& incumbent) const {
    const Problem& problem = run.problem;
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      const Buffer& buf = problem.buffers[b];
      const Offset at = buf.fixed.has_value() ? buf.fixed->offset : 0;
      if (at + buf.size > capacity) {
        const Bytes usage[] = {0};
        return internal::NoFitError(problem, b, usage);
      }
    }
    const int64_t height = capacity / run.d.granule;
    for (const Part& part : run.d.parts) {
      if (part.lower > height) return MaxLiveError(run, part, capacity);
    }
    int64_t limit = options_.first_node_limit;
    while (true) {
      bool limit_hit = false;
      const ProbeResult r = Probe(run, height, limit, &limit_hit);
      if (r == ProbeResult::kFeasible) return Finish(run, Compose(run), false);
      if (r == ProbeResult::kInfeasible) {
        for (const Part& part : run.d.parts) {
          if (part.lo <= height) continue;
          return absl::ResourceExhaustedError(absl::StrCat(
              "no plan fits in capacity ", capacity,
              ": the exact search proved it for the ", part.items.size(),
              " buffers alive over steps [", part.times.front(), ", ",
              part.times.back(), ") (max-live there ",
              part.lower * run.d.granule, " bytes)"));
        }
      }
      if (run.OutOfBudget() || !limit_hit) break;
      limit *= options_.node_limit_growth;
    }
    // Nothing found and nothing proven: the incumbent may still fit.
    const absl::StatusOr<Plan>& heuristic = incumbent.Get();
    if (heuristic.ok()) return Finish(run, *heuristic, false);
    if (run.OutOfBudget()) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the exact planner found no plan within capacity ", capacity,
          " and proved none impossible before its time or node limit"));
    }
    return absl::ResourceExhaustedError(absl::StrCat(
        "the exact planner found no plan within capacity ", capacity,
        "; with fixed placements, explicit conflicts or mixed alignments its "
        "search is not complete, so this is not a proof (",
        heuristic.status().message(), ")"));
  }

  absl::StatusOr<Plan> Minimise(Run& run, Incumbent& incumbent) const {
    std::optional<Plan> best;
    if (const absl::StatusOr<Plan>& start = incumbent.Get(); start.ok()) {
      best = *start;
    }
    // A first descent per part (no backtracking is ever needed without a
    // height limit) gives every part a plan.
    for (Part& part : run.d.parts) {
      if (run.OutOfBudget()) break;
      bool ignored = false;
      Probe1(run, part, part.room, &ignored);
    }
    auto all_parts_planned = [&] {
      for (const Part& part : run.d.parts) {
        if (part.hi >= kInf) return false;
      }
      return true;
    };
    auto best_height = [&]() -> int64_t {
      int64_t h = kInf;
      if (all_parts_planned()) h = PartsHeight(run);
      if (best.has_value()) {
        h = std::min(h, (best->peak + run.d.granule - 1) / run.d.granule);
      }
      return h;
    };
    if (all_parts_planned()) {
      int64_t limit = options_.first_node_limit;
      while (!run.OutOfBudget()) {
        const int64_t lo = PartsLower(run);
        int64_t hi = best_height();
        if (lo >= hi) break;
        bool limit_hit = false;
        // The lower bound first: at a height without slack the inference
        // prunes hardest, so a plan there (MiniMalloc's K: 87 ms) is often
        // found where a looser probe wanders for a minute.
        if (Probe(run, lo, limit, &limit_hit) == ProbeResult::kFeasible) {
          hi = PartsHeight(run);
        }
        // Then down from the top, for as long as plans come: a plan found
        // under a loose height often lies well below it.
        int64_t a = PartsLower(run) > lo ? PartsLower(run) : lo + 1;
        while (a < hi && !run.OutOfBudget() &&
               Probe(run, hi - 1, limit, &limit_hit) ==
                   ProbeResult::kFeasible) {
          hi = PartsHeight(run);
        }
        // Then bisection in between. A probe that runs out of nodes costs
        // the whole round's limit, so only a few of them are made per round.
        int64_t top = hi - 2;
        for (int unknown = 0; a <= top && unknown < kUnknownProbesPerRound &&
                              !run.OutOfBudget();) {
          const int64_t mid = a + (top - a) / 2;
          const ProbeResult r = Probe(run, mid, limit, &limit_hit);
          if (r == ProbeResult::kFeasible) {
            hi = PartsHeight(run);
            top = hi - 1;
          } else {
            if (r == ProbeResult::kUnknown) ++unknown;
            a = mid + 1;
          }
        }
        if (!limit_hit) break;
        limit *= options_.node_limit_growth;
      }
    }
    const bool proven = run.d.complete && all_parts_planned() &&
                        PartsLower(run) >= PartsHeight(run);
    if (all_parts_planned()) {
      Plan composed = Compose(run);
      if (!best.has_value() || composed.peak <= best->peak)
        best = std::move(composed);
    }
    if (!best.has_value()) {
      return absl::DeadlineExceededError(
          "the exact planner ran out of time before finding any plan, and no "
          "heuristic planner gave one");
    }
    return Finish(run, *std::move(best),
                  proven && best->peak <= PartsHeight(run) * run.d.granule);
  }

  // A search of one part with no node limit but the run's budget.
  static void Probe1(Run& run, Part& part, int64_t height, bool* limit_hit) {
    const int64_t unlimited = std::numeric_limits<int64_t>::max() / 2;
    if (SolvePart(run, part, height, unlimited) == Outcome::kLimit)
      *limit_hit = true;
  }

  ExactOptions options_;
  ExactStats* stats_;
};

}  // namespace

std::unique_ptr<SearchPlanner> MakeExactPlanner(const ExactOptions& options,
                                                ExactStats* stats) {
  return std::make_unique<ExactPlanner>(options, stats);
}

}  // namespace memplan
