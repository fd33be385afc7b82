// GapIndex: one pool's placed buffers over a segment tree of time slices,
// to find a buffer's gap without listing its obstacles (not public API).
//
//   offset                                    the tree over 8 slices:
//   40..60 |        bbbbbbbb                             1
//   20..40 |aaaaaaaaaaaaaaaaaaaaaaaaaaaa            2           3
//    0..20 |                cccccccc             4     5     6     7
//          +---+---+---+---+---+---+---+--->    8 9  10 11 12 13 14 15
//          0   1   2   3   4   5   6   7   slices (leaf 8 + i is slice i)
//
//   a (slices [0, 7)) is stored at its canonical nodes 2, 6 and 14, b
//   (slices [2, 4)) at 5, c (slices [4, 6)) at 6. To place x, alive over
//   slices [1, 6): its canonical nodes are 9, 5, 6 and the nodes that
//   straddle its window 4, 2, 3, 1. The bytes taken during x are sub(9) =
//   {}, sub(5) = {[40, 60)}, sub(6) = {[0, 40)} (a and c merged into one
//   run) and what is stored at the straddling node 2, {[20, 40)}: the
//   union is [0, 60), so x goes on top, at 60.
//
// The tree is a perfect binary tree (node 1 the root, node v's children 2v
// and 2v+1; a node's level is its height above the leaves). A buffer is
// stored at its canonical nodes: the largest nodes whose slices lie inside
// its lifetime. Each node may hold run sets (run_set.h):
//   * sub(v): the union of the byte ranges stored in v's subtree.
//   * whole(v), for the nodes of level kWholeLevel: the union of the ranges
//     stored at v and at its ancestors, the bytes taken throughout v's
//     slices. Kept lazily: a range stored at a higher node waits in
//     pending(node) until a search passes there and pushes it one level
//     down, into both children's pending() (whole() at kWholeLevel).
//   * cover(v), for lower nodes: the ranges stored at v.
// A buffer alive during a window W is stored in the subtree of one of W's
// canonical nodes w (so in sub(w)), or above one, at a node that straddles
// W's boundary. The straddling nodes are on the two paths from the root to
// the first and the last slice of W; on each path, whole() of the node of
// level kWholeLevel holds every range stored at it and above. So the bytes
// taken during W are the union of O(log n) run sets: sub() of W's canonical
// nodes, whole() of two nodes and cover() of the low straddling nodes (the
// cursors of a search, run_cursor.h).
//
// The searches, each giving what FindOffset gives on the listed obstacles:
//   1. First fit, or a pool with a capacity: one sweep of all cursors
//      together by offset, gap by gap, up to the first that fits.
//   2. Best fit around a pivot: a set whose bytes are all taken during W
//      and that has few gaps long enough for the buffer (whole() of the
//      node of level kWholeLevel at W's middle, when inside W, or of the
//      two at W's ends). A gap of the union lies in a gap of the pivot or
//      above its top, so only those regions are searched, each cut by the
//      cursors' runs while a piece could still hold the buffer. Nested
//      lifetimes (training steps) all cover the middle: there the pivot
//      holds them.
//   3. Best fit by sweep: the largest set stays out of the sweep of the
//      others, which steps over its runs with lookups; its gaps that no
//      other run touches are whole gaps of the union, taken from its gaps
//      by length (gaps_by_length.h), the shortest length classes first.
// Limits: not a worst-case bound: a sweep still visits the runs of the
// smaller sets. Ranges are only ever added: taking a buffer out needs a
// new index (PlacementState then lists obstacles instead).
//
// Why whole(): the buffers alive at one time are stored at many nodes of a
// path, so their ranges, packed side by side, interleave between the
// nodes' sets and the sweep would step through each of them; in whole()
// they are merged into a few runs. Only at kWholeLevel, where a node spans
// 2^kWholeLevel slices: pushing pending ranges down every level would copy
// each long-lived buffer into most of the tree, and a whole() at every
// level above would take each range pushed once more per level.

#ifndef MEMPLAN_PLACEMENT_GAP_INDEX_H_
#define MEMPLAN_PLACEMENT_GAP_INDEX_H_

#include <bit>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "memplan/placement.h"
#include "memplan/types.h"
#include "placement/counter.h"
#include "placement/cover_nodes.h"
#include "placement/node_pool.h"
#include "placement/placement_index.h"
#include "placement/run_cursor.h"
#include "placement/run_set.h"

namespace memplan::internal {

using ::memplan::Fit;

class GapIndex {
 public:
  // Nothing placed; every non-empty buffer of the index may search it.
  // `index` must outlive this.
  explicit GapIndex(const PlacementIndex& index);
  GapIndex(const GapIndex&) = delete;
  GapIndex& operator=(const GapIndex&) = delete;

  // `buffer` (non-empty) now holds [begin, end).
  void Insert(BufferId buffer, Offset begin, Offset end);

  // `buffer` (non-empty) is placed, here or in another pool: it will not
  // search this index.
  void Release(BufferId buffer) {
    ForEachCanonical(buffer, [&](int32_t node) { --searches_[node]; });
  }

  // Placed buffers of the pool whose lifetime overlaps that of `buffer`
  // (non-empty).
  int64_t CountOverlapping(BufferId buffer) const {
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    return starts_.Before(keys.starts_before_end) -
           ends_.Before(keys.ends_by_start);
  }

  // What FindOffset returns on the obstacles of `buffer` (non-empty, not
  // inserted) plus `extra` (sorted, merged byte ranges).
  std::optional<Offset> Find(BufferId buffer,
                             std::span<const std::pair<Offset, Offset>> extra,
                             Bytes size, Bytes alignment, Bytes capacity,
                             Fit fit);

  // The operations done so far: runs added to sets, runs and gaps visited
  // by the searches, cursors set up. What the index costs, as opposed to
  // the obstacles a listed search would examine (PlacementState::work(),
  // the same on both ways); a pass bounds its cost with it.
  int64_t ops() const { return ops_; }

 private:
  // Lower levels fill more whole() sets, higher ones leave longer cover()
  // sets to sweep (bench/NOTES.md).
  static constexpr int kWholeLevel = 8;
  // ops() of a step of a sweep's heap or an addition to a run set: each
  // takes about as long as four obstacles of a listed search (10^5
  // buffers alive together: 4x10^8 steps in 30 s, 75-100 ns each).
  static constexpr int64_t kOpsPerStep = 4;
  // Best fit indexes the gaps of the largest run set by length from this
  // many runs on.
  static constexpr size_t kGapsByLengthFrom = 32;
  // Best fit searches around a pivot with at most this many gaps that are
  // long enough.
  static constexpr int32_t kPivotGapsUpTo = 16;

  // Find's steps: the run sets to read (pivots_ and cursors_), the pivot
  // of a best-fit search (null when none has few enough gaps), the cursor
  // of the largest set (-1 when none is large), and the three searches.
  void Gather(BufferId buffer, std::span<const std::pair<Offset, Offset>> extra,
              bool best_fit);
  RunSet* ChoosePivot(Bytes size) const;
  int32_t LargestCursor() const;
  std::optional<Offset> Sweep(Bytes size, Bytes alignment, Bytes capacity,
                              Fit fit);
  std::optional<Offset> FindBestAround(RunSet& pivot, Bytes size,
                                       Bytes alignment);
  std::optional<Offset> FindBest(int32_t large, Bytes size, Bytes alignment);
  // FindBestAround's regions: the pivot's gaps that can hold `size` bytes
  // and the space above its top, in offset order; returns the top of all
  // cursors' runs.
  Offset PivotRegions(RunSet& pivot, Bytes size, Bytes alignment);

  RunSet& Set(std::vector<RunSet*>& slot, int32_t node) {
    if (slot[node] == nullptr) slot[node] = &sets_.emplace_back(&pool_);
    return *slot[node];
  }
  // The node of level kWholeLevel above `slice`; 0 when the tree is lower.
  int32_t WholeNode(int32_t slice) const {
    return Level(1) >= kWholeLevel ? (slice + leaves_) >> kWholeLevel : 0;
  }
  int Level(int32_t node) const {
    return std::bit_width(static_cast<uint32_t>(leaves_)) -
           std::bit_width(static_cast<uint32_t>(node));
  }
  // Pushes the pending ranges of `node`'s ancestors down, from the root, so
  // that whole(node) is complete.
  void PushDownTo(int32_t node);
  void AddCursor(RunSet* set) {
    if (set != nullptr && !set->runs.empty()) cursors_.emplace_back(set);
  }
  // Calls visit(node) for each canonical node of `buffer` (non-empty).
  template <typename Visit>
  void ForEachCanonical(BufferId buffer, Visit&& visit) const {
    const PlacementIndex::LifetimeKeys& keys = index_.keys(buffer);
    ForEachCoverNode(leaves_, keys.first_slice, keys.last_slice, visit);
  }
  // Calls visit(node, left, right) for every node whose slices overlap
  // [first, last) without lying inside it: the ancestors of the canonical
  // nodes, all on the paths from the leaves `first` (left) and `last - 1`
  // (right) to the root, bottom up; a node on both paths is visited once.
  template <typename Visit>
  void ForEachStraddling(int32_t first, int32_t last, Visit&& visit) const;

  const PlacementIndex& index_;
  int32_t leaves_;
  NodePool pool_;  // before sets_: destroyed after them
  // Per node: its run set (in sets_), or null.
  std::vector<RunSet*> cover_;
  std::vector<RunSet*> whole_;
  std::vector<RunSet*> pending_;
  std::vector<RunSet*> sub_;
  // Per node: the buffers not placed yet that have it among their
  // canonical nodes. Only their searches read the node's sub(): at 0 it
  // will never be read again (about half the additions to sub() at 10^5
  // dense training-like buffers went to such nodes).
  std::vector<int32_t> searches_;
  std::deque<RunSet> sets_;  // a deque: the sets never move
  Counter starts_;           // placed buffers by start rank
  Counter ends_;             // by end rank
  // The working space of the searches, kept between them.
  std::vector<RunCursor> cursors_;
  std::vector<std::pair<Offset, int32_t>> heap_;
  std::vector<std::pair<Offset, Offset>> windows_;
  std::vector<RunSet*> pivots_;
  std::vector<std::pair<Offset, Offset>> regions_;
  std::vector<std::pair<Offset, Offset>> pieces_;
  std::vector<std::pair<Offset, Offset>> cut_;
  std::vector<int32_t> order_;
  int64_t ops_ = 0;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_GAP_INDEX_H_
