// RunSet: a union of byte ranges, kept as disjoint runs (not public API).
//
//   offset   0    10   20   30   40   50   60
//   runs          [====)    [=========)            {10: 20, 30: 50}
//   AddRun(18, 34)
//   runs          [===================)            {10: 50}
//   AddRun(50, 55): touches [10, 50)
//   runs          [=====================)          {10: 55}
//
// The gap index stores the bytes that placed buffers take during some
// time slices as run sets: a union needs no more than one run per free gap
// however many buffers it holds, and the sweeps of a search step over runs,
// not buffers.
//
// How AddRun(begin, end) works:
//   1. The run before `begin` (the last that begins at or below it): when
//      it reaches `begin` and holds `end` too, nothing changes; when it
//      reaches `begin` and the next run begins above `end`, it grows to
//      `end` in place. Either way one lookup.
//   2. Otherwise every run from there that begins at or below `end` is
//      erased and the union of them and [begin, end) inserted in its place.
//   3. With gaps by length kept (Gaps() was asked for), the gap below each
//      run changed is resized, removed or added along the way.
// Runs that touch merge: a gap of zero bytes holds nothing. Limits: ranges
// are never taken out of a set (Clear empties it); a merge that swallows k
// runs costs k erasures.

#ifndef MEMPLAN_PLACEMENT_RUN_SET_H_
#define MEMPLAN_PLACEMENT_RUN_SET_H_

#include <algorithm>
#include <functional>
#include <iterator>
#include <memory>
#include <utility>

#include "absl/container/btree_map.h"
#include "memplan/types.h"
#include "placement/gaps_by_length.h"
#include "placement/node_pool.h"
#include "placement/pool_allocator.h"

namespace memplan::internal {

// Disjoint, non-adjacent byte ranges [begin, end) keyed by begin.
using Runs = absl::btree_map<Offset, Offset, std::less<Offset>,
                             PoolAllocator<std::pair<const Offset, Offset>>>;

// A run set, with its gaps by length once a best-fit search has asked for
// them (then kept up to date by AddRun).
struct RunSet {
  // Its btree's nodes come from `pool`, which must outlive the set.
  explicit RunSet(NodePool* pool)
      : runs(PoolAllocator<std::pair<const Offset, Offset>>(pool)) {}

  Runs runs;
  std::unique_ptr<GapsByLength> gaps;

  // The gaps between the runs, indexed on the first call.
  const GapsByLength& Gaps() {
    if (gaps == nullptr) IndexGaps();
    return *gaps;
  }
  void Clear() {
    runs.clear();
    if (gaps != nullptr) gaps->Clear();
  }

 private:
  void IndexGaps();
};

// Adds [begin, end) (begin < end) to `set`, merging it with the runs it
// overlaps or touches. False when one run already held it.
inline bool AddRun(RunSet& set, Offset begin, Offset end) {
  Runs& runs = set.runs;
  GapsByLength* gaps = set.gaps.get();
  auto it = runs.upper_bound(begin);
  if (it != runs.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) {
      // The common cases change one run in place: the range is inside it,
      // or extends it without reaching the next run.
      if (prev->second >= end) return false;
      if (it == runs.end() || it->first > end) {
        if (gaps != nullptr && it != runs.end())
          gaps->Resize(it->first, it->first - end);
        prev->second = end;
        return true;
      }
      begin = prev->first;
      it = prev;
    }
  }
  // Each run owns the gap below it, from the end of the run before (or 0).
  const Offset below = it == runs.begin() ? 0 : std::prev(it)->second;
  Offset prev_end = below;
  while (it != runs.end() && it->first <= end) {
    if (gaps != nullptr && it->first > prev_end) gaps->Remove(it->first);
    prev_end = it->second;
    end = std::max(end, it->second);
    it = runs.erase(it);
  }
  if (gaps != nullptr) {
    if (it != runs.end()) gaps->Resize(it->first, it->first - end);
    if (begin > below) gaps->Add(begin, begin - below);
  }
  runs.emplace_hint(it, begin, end);
  return true;
}

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_RUN_SET_H_
