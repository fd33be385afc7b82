// GapIndex: insertions and the three searches (see the header).

#include "placement/gap_index.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <utility>

#include "base/arith.h"
#include "placement/gaps_by_length.h"

namespace memplan::internal {

namespace {

constexpr Offset kNone = std::numeric_limits<Offset>::max();

// Steps along a run set before a lookup instead.
constexpr int kSteps = 4;

// The best fit among free ranges met in any order: the smallest gap wins,
// then the lowest offset (FindOffset meets gaps in offset order and keeps
// the first of equal ones).
struct BestFit {
  BestFit(Bytes size, Bytes alignment) : size(size), alignment(alignment) {}

  Bytes size;
  Bytes alignment;
  std::optional<Offset> offset;
  Bytes gap = 0;

  // The free range [begin, end).
  void Consider(Offset begin, Offset end) {
    const Offset candidate = RoundUp(begin, alignment);
    if (candidate + size > end) return;
    const Bytes length = end - candidate;
    if (!offset.has_value() || length < gap ||
        (length == gap && candidate < *offset)) {
      offset = candidate;
      gap = length;
    }
  }
};

// FindBest's way through the runs of the large set: `reached`, the top of
// the bytes taken so far, and `above`, the first run that begins above it.
// Most moves are to the next run or two; a lookup takes the longer ones.
struct LargeSetWalk {
  explicit LargeSetWalk(const Runs& runs) : runs(runs), above(runs.begin()) {}

  // Moves `reached` over a run that holds it or starts there and returns
  // where the next run begins (kNone when there is none): [reached, that)
  // is free in the large set.
  Offset Settle() {
    for (int steps = 0; above != runs.end() && above->first <= reached;
         ++steps) {
      if (steps == kSteps) {
        above = runs.upper_bound(reached);
        reached = std::max(reached, std::prev(above)->second);
        break;
      }
      reached = std::max(reached, above->second);
      ++above;
    }
    return above == runs.end() ? kNone : above->first;
  }

  // The last run that begins at or below `begin`, which is at or above
  // the begin of `above` (not the end).
  Runs::const_iterator LastAtOrBelow(Offset begin) const {
    auto under = above;
    for (int steps = 0;
         std::next(under) != runs.end() && std::next(under)->first <= begin;
         ++steps) {
      if (steps == kSteps) return std::prev(runs.upper_bound(begin));
      ++under;
    }
    return under;
  }

  const Runs& runs;
  Offset reached = 0;
  Runs::const_iterator above;
};

// FindBest's second part: the gaps of the large set that lie inside one
// of `windows` (ascending offset ranges that no other run meets) are gaps
// of the union. From the shortest length classes on, until no longer gap
// can be tighter than the best.
void ConsiderUntouchedGaps(const GapsByLength& gaps,
                           std::span<const std::pair<Offset, Offset>> windows,
                           BestFit& best, int64_t& ops) {
  // Rounding up a begin loses at most alignment - 1 bytes: a longer gap can
  // still tie with the best (and win by its lower offset) up to best.gap +
  // alignment - 1 bytes. Classes come by length, and the best is the
  // smallest (gap, offset) whatever the order within one.
  auto beyond = [&](Bytes length) {
    return best.offset.has_value() && length - (best.alignment - 1) > best.gap;
  };
  for (int c = gaps.NextClass(GapsByLength::ClassOf(best.size));
       c < GapsByLength::kClasses && !windows.empty();
       c = gaps.NextClass(c + 1)) {
    if (beyond(GapsByLength::ClassMin(c))) break;
    for (const GapsByLength::Gap& gap : gaps.Class(c)) {
      ++ops;
      if (gap.length < best.size || beyond(gap.length)) continue;
      auto w =
          std::upper_bound(windows.begin(), windows.end(), gap.begin(),
                           [](Offset o, const std::pair<Offset, Offset>& r) {
                             return o < r.first;
                           });
      if (w == windows.begin() || std::prev(w)->second < gap.owner) continue;
      best.Consider(gap.begin(), gap.owner);
    }
  }
}

}  // namespace

GapIndex::GapIndex(const PlacementIndex& index)
    : index_(index),
      leaves_(static_cast<int32_t>(
          std::bit_ceil(std::max<size_t>(index.steps().size(), 2) - 1))),
      cover_(2 * leaves_, nullptr),
      whole_(2 * leaves_, nullptr),
      pending_(2 * leaves_, nullptr),
      sub_(2 * leaves_, nullptr),
      searches_(2 * leaves_, 0),
      starts_(index.num_nonempty()),
      ends_(index.num_nonempty()) {
  const std::vector<Buffer>& buffers = index.problem().buffers;
  for (BufferId b = 0; b < static_cast<BufferId>(buffers.size()); ++b) {
    if (buffers[b].size > 0)
      ForEachCanonical(b, [&](int32_t node) { ++searches_[node]; });
  }
}

template <typename Visit>
void GapIndex::ForEachStraddling(int32_t first, int32_t last,
                                 Visit&& visit) const {
  auto straddles = [&](int32_t node, int level) {
    const int64_t lo = (int64_t{node} << level) - leaves_;
    const int64_t hi = (int64_t{node + 1} << level) - leaves_;
    return lo < last && hi > first && (lo < first || hi > last);
  };
  int level = 1;
  int32_t a = (first + leaves_) >> 1;
  int32_t b = (last - 1 + leaves_) >> 1;
  for (; a >= 1; a >>= 1, b >>= 1, ++level) {
    if (straddles(a, level)) visit(a, true, a == b);
    if (b != a && straddles(b, level)) visit(b, false, true);
  }
}

void GapIndex::Insert(BufferId buffer, Offset begin, Offset end) {
  starts_.Mark(index_.start_rank(buffer));
  ends_.Mark(index_.end_rank(buffer));
  const int32_t first = index_.keys(buffer).first_slice;
  const int32_t last = index_.keys(buffer).last_slice;
  // sub() is read by the searches of the buffers stored at the node (see
  // searches_), this one's no more: once none is left, the node's sub()
  // is not kept up.
  ForEachCanonical(buffer, [&](int32_t node) {
    --searches_[node];
    ops_ += 2 * kOpsPerStep;
    const int level = Level(node);
    if (level > kWholeLevel) {
      AddRun(Set(pending_, node), begin, end);
    } else if (level == kWholeLevel) {
      AddRun(Set(whole_, node), begin, end);
    } else if (level > 0) {
      // A leaf never straddles a window: its cover() would go unread.
      AddRun(Set(cover_, node), begin, end);
    }
    if (searches_[node] > 0) AddRun(Set(sub_, node), begin, end);
  });
  // The straddling nodes, up the paths from the first and the last slice:
  // an ancestor's sub() holds its descendants', so once one of them
  // already held the range (it was taken by buffers alive elsewhere in
  // its slices), none above on that path needs it.
  bool held_left = false, held_right = false;
  ForEachStraddling(first, last, [&](int32_t node, bool left, bool right) {
    ops_ += kOpsPerStep;
    if ((left && held_left) || (right && held_right)) return;
    if (searches_[node] == 0) return;
    if (!AddRun(Set(sub_, node), begin, end)) {
      held_left |= left;
      held_right |= right;
    }
  });
}

std::optional<Offset> GapIndex::Find(
    BufferId buffer, std::span<const std::pair<Offset, Offset>> extra,
    Bytes size, Bytes alignment, Bytes capacity, Fit fit) {
  const bool best_fit = fit == Fit::kBest && capacity <= 0;
  Gather(buffer, extra, best_fit);
  if (best_fit) {
    if (RunSet* pivot = ChoosePivot(size); pivot != nullptr)
      return FindBestAround(*pivot, size, alignment);
    if (const int32_t largest = LargestCursor(); largest >= 0)
      return FindBest(largest, size, alignment);
  }
  return Sweep(size, alignment, capacity, fit);
}

void GapIndex::Gather(BufferId buffer,
                      std::span<const std::pair<Offset, Offset>> extra,
                      bool best_fit) {
  const int32_t first = index_.keys(buffer).first_slice;
  const int32_t last = index_.keys(buffer).last_slice;
  // The whole() nodes at both ends first: pushing pending ranges down may
  // create run sets, which must exist before cursors point into sets_.
  const int32_t lowest[2] = {WholeNode(first), WholeNode(last - 1)};
  for (int32_t node : lowest) {
    if (node > 0) PushDownTo(node);
  }
  pivots_.clear();
  if (best_fit) {
    auto add_pivot = [&](int32_t node) {
      if (node <= 0) return;
      PushDownTo(node);
      if (whole_[node] != nullptr && !whole_[node]->runs.empty())
        pivots_.push_back(whole_[node]);
    };
    // The node of level kWholeLevel at the middle of the window, when it
    // lies inside: nested lifetimes all cover the middle.
    const int32_t middle = WholeNode((first + last) / 2);
    const int64_t lo = (int64_t{middle} << kWholeLevel) - leaves_;
    const int64_t hi = (int64_t{middle + 1} << kWholeLevel) - leaves_;
    if (middle > 0 && lo >= first && hi <= last) add_pivot(middle);
    add_pivot(lowest[0]);
    if (lowest[1] != lowest[0]) add_pivot(lowest[1]);
  }
  cursors_.clear();
  ForEachStraddling(first, last, [&](int32_t node, bool, bool) {
    if (Level(node) < kWholeLevel) AddCursor(cover_[node]);
  });
  ForEachCanonical(buffer, [&](int32_t node) { AddCursor(sub_[node]); });
  if (lowest[0] > 0) AddCursor(whole_[lowest[0]]);
  if (lowest[1] > 0 && lowest[1] != lowest[0]) AddCursor(whole_[lowest[1]]);
  if (!extra.empty())
    cursors_.emplace_back(extra.data(), extra.data() + extra.size());
  ops_ += static_cast<int64_t>(cursors_.size() + pivots_.size());
}

RunSet* GapIndex::ChoosePivot(Bytes size) const {
  // The fewest gaps long enough, then the highest top (less space above).
  RunSet* pivot = nullptr;
  int32_t pivot_gaps = kPivotGapsUpTo + 1;
  for (RunSet* set : pivots_) {
    const int32_t count = set->Gaps().CountAtLeast(size, kPivotGapsUpTo);
    if (count > kPivotGapsUpTo) continue;
    if (pivot == nullptr || count < pivot_gaps ||
        (count == pivot_gaps &&
         set->runs.rbegin()->second > pivot->runs.rbegin()->second)) {
      pivot = set;
      pivot_gaps = count;
    }
  }
  return pivot;
}

int32_t GapIndex::LargestCursor() const {
  int32_t largest = -1;
  size_t largest_runs = kGapsByLengthFrom - 1;
  for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
    const RunSet* set = cursors_[i].set();
    if (set != nullptr && set->runs.size() > largest_runs) {
      largest = i;
      largest_runs = set->runs.size();
    }
  }
  return largest;
}

std::optional<Offset> GapIndex::Sweep(Bytes size, Bytes alignment,
                                      Bytes capacity, Fit fit) {
  // Upwards from offset 0 through the runs of every cursor in order of
  // begin: `reached` is the top of the bytes taken so far; a run that
  // begins above it closes the free gap [reached, begin).
  using Head = std::pair<Offset, int32_t>;  // (begin, cursor)
  heap_.clear();
  for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
    cursors_[i].Start();
    heap_.push_back({cursors_[i].begin(), i});
  }
  const auto later = std::greater<Head>();
  std::make_heap(heap_.begin(), heap_.end(), later);
  Offset reached = 0;
  std::optional<Offset> best;
  Bytes best_gap = 0;
  while (!heap_.empty()) {
    ops_ += kOpsPerStep;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    RunCursor& c = cursors_[heap_.back().second];
    heap_.pop_back();
    if (c.end() <= reached) {
      c.SeekForward(reached);  // skip every run below `reached`
    } else {
      if (c.begin() > reached) {
        const Offset candidate = RoundUp(reached, alignment);
        // Later gaps and the top start higher still.
        if (capacity > 0 && candidate + size > capacity) return best;
        if (c.begin() >= candidate + size) {
          if (fit == Fit::kFirst) return candidate;
          const Bytes gap = c.begin() - candidate;
          if (!best.has_value() || gap < best_gap) {
            best = candidate;
            best_gap = gap;
            if (gap == size) return best;  // no gap can be tighter
          }
        }
      }
      reached = c.end();
      c.Next();
    }
    if (!c.done()) {
      heap_.push_back({c.begin(), static_cast<int32_t>(&c - &cursors_[0])});
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  if (best.has_value()) return best;
  const Offset top = RoundUp(reached, alignment);
  if (capacity <= 0 || top + size <= capacity) return top;
  return std::nullopt;
}

Offset GapIndex::PivotRegions(RunSet& pivot, Bytes size, Bytes alignment) {
  auto fits = [&](Offset begin, Offset end) {
    return RoundUp(begin, alignment) + size <= end;
  };
  regions_.clear();
  const GapsByLength& gaps = pivot.Gaps();
  for (int c = gaps.NextClass(GapsByLength::ClassOf(size));
       c < GapsByLength::kClasses; c = gaps.NextClass(c + 1)) {
    for (const GapsByLength::Gap& gap : gaps.Class(c)) {
      ++ops_;
      if (gap.length >= size && fits(gap.begin(), gap.owner))
        regions_.push_back({gap.begin(), gap.owner});
    }
  }
  Offset top = pivot.runs.rbegin()->second;
  const Offset pivot_top = top;
  for (const RunCursor& c : cursors_) top = std::max(top, c.last_end());
  if (fits(pivot_top, top)) regions_.push_back({pivot_top, top});
  std::sort(regions_.begin(), regions_.end());
  return top;
}

// A free gap of the union lies in a gap of the pivot or above its top, so
// only those regions are searched: each is cut by the runs of every cursor
// in turn, keeping the pieces that can still hold `size` bytes, and what
// survives all cursors is a gap of the union.
std::optional<Offset> GapIndex::FindBestAround(RunSet& pivot, Bytes size,
                                               Bytes alignment) {
  auto fits = [&](Offset begin, Offset end) {
    return RoundUp(begin, alignment) + size <= end;
  };
  const Offset top = PivotRegions(pivot, size, alignment);
  // Largest sets first: they are the likeliest to cover a region.
  order_.resize(cursors_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    const int64_t na = cursors_[a].size();
    const int64_t nb = cursors_[b].size();
    return na != nb ? na > nb : a < b;
  });
  std::optional<Offset> best;
  Bytes best_gap = 0;
  for (const auto& region : regions_) {
    pieces_.assign(1, region);
    for (int32_t i : order_) {
      RunCursor& c = cursors_[i];
      cut_.clear();
      auto keep = [&](Offset begin, Offset end) {
        if (fits(begin, end)) cut_.push_back({begin, end});
      };
      for (const auto& [begin, end] : pieces_) {
        c.Seek(begin);
        ++ops_;
        Offset from = begin;
        while (!c.done() && c.begin() < end) {
          ++ops_;
          if (c.begin() > from) keep(from, c.begin());
          from = std::max(from, c.end());
          if (from >= end) break;
          c.Next();
        }
        if (from < end) keep(from, end);
      }
      pieces_.swap(cut_);
      if (pieces_.empty()) break;
    }
    // Survivors are gaps of the union; among equal gaps the lowest wins,
    // as in FindOffset, and regions come in offset order.
    for (const auto& [begin, end] : pieces_) {
      const Offset candidate = RoundUp(begin, alignment);
      const Bytes gap = end - candidate;
      if (!best.has_value() || gap < best_gap) {
        best = candidate;
        best_gap = gap;
      }
    }
  }
  if (best.has_value()) return best;
  return RoundUp(top, alignment);
}

// The other cursors are swept as in Sweep, stepping over the large set's
// runs and gaps with lookups instead of visiting them. The union gaps met
// on the way are the gaps of the large set that the other runs touch, cut
// by them. Every other union gap is a gap of the large set that no other
// run touches; those are taken from its gaps by length, the shortest
// classes first, until no longer gap can be tighter than the best found.
std::optional<Offset> GapIndex::FindBest(int32_t large, Bytes size,
                                         Bytes alignment) {
  RunSet& set = *cursors_[large].set();
  BestFit best(size, alignment);
  LargeSetWalk walk(set.runs);
  using Head = std::pair<Offset, int32_t>;  // (begin, cursor)
  heap_.clear();
  for (int32_t i = 0; i < static_cast<int32_t>(cursors_.size()); ++i) {
    if (i == large) continue;
    cursors_[i].Start();
    heap_.push_back({cursors_[i].begin(), i});
  }
  const auto later = std::greater<Head>();
  std::make_heap(heap_.begin(), heap_.end(), later);
  // Offset ranges, ascending, that no run of the other cursors meets: the
  // gaps of the large set inside one are gaps of the union.
  windows_.clear();
  Offset next = walk.Settle();
  while (!heap_.empty()) {
    ops_ += kOpsPerStep;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    RunCursor& c = cursors_[heap_.back().second];
    heap_.pop_back();
    if (c.end() <= walk.reached) {
      c.SeekForward(walk.reached);
    } else {
      const Offset begin = c.begin();
      if (begin > walk.reached && begin <= next) {
        best.Consider(walk.reached, begin);
      } else if (begin > walk.reached) {
        // The gaps of the large set in between are untouched so far: left
        // to the search by length, but for the one `begin` is in.
        best.Consider(walk.reached, next);
        windows_.push_back({next, begin});
        const auto under = walk.LastAtOrBelow(begin);
        if (under->second < begin) best.Consider(under->second, begin);
      }
      walk.reached = std::max(walk.reached, c.end());
      c.Next();
      next = walk.Settle();
    }
    if (!c.done()) {
      heap_.push_back({c.begin(), static_cast<int32_t>(&c - &cursors_[0])});
      std::push_heap(heap_.begin(), heap_.end(), later);
    }
  }
  if (next != kNone) {
    best.Consider(walk.reached, next);
    windows_.push_back({next, kNone});
  }
  const Offset top = std::max(walk.reached, set.runs.rbegin()->second);
  ConsiderUntouchedGaps(set.Gaps(), windows_, best, ops_);
  if (best.offset.has_value()) return best.offset;
  return RoundUp(top, alignment);
}

void GapIndex::PushDownTo(int32_t node) {
  for (int shift = std::bit_width(static_cast<uint32_t>(node)) - 1; shift > 0;
       --shift) {
    const int32_t a = node >> shift;
    if (Level(a) <= kWholeLevel) break;
    if (pending_[a] == nullptr || pending_[a]->runs.empty()) continue;
    RunSet& pending = *pending_[a];  // a deque: Set() keeps it valid
    for (int32_t child : {2 * a, 2 * a + 1}) {
      RunSet& to = Level(child) > kWholeLevel ? Set(pending_, child)
                                              : Set(whole_, child);
      for (const auto& [b, e] : pending.runs) AddRun(to, b, e);
      ops_ += kOpsPerStep * static_cast<int64_t>(pending.runs.size());
    }
    pending.Clear();
  }
}

}  // namespace memplan::internal
