// exact's segment tree over time sections (not public): "at most" marks
// over ranges of sections.

#ifndef MEMPLAN_PLANNERS_EXACT_TREES_H_
#define MEMPLAN_PLANNERS_EXACT_TREES_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "placement/cover_nodes.h"

namespace memplan::internal::exact {

// The nodes of a tree over `leaves` leaves (a power of two) that cover the
// positions [lo, hi), lo < hi: the ones MinMarks::Mark visits. A search
// that marks the same ranges at every node keeps them.
inline void AppendCover(int leaves, int lo, int hi, std::vector<int>& nodes) {
  ForEachCoverNode(leaves, lo, hi,
                   [&](int32_t node) { nodes.push_back(node); });
}

// The least of the values marked over each position: Mark() puts a value on
// the O(log n) nodes covering a range (AppendCover); SettleAndClear() reads
// each position's least mark and clears the tree for the next round of
// marks.
class MinMarks {
 public:
  explicit MinMarks(int n = 0, int64_t empty = 0) : empty_(empty) {
    while (size_ < n) size_ *= 2;
    tree_.assign(2 * size_, empty_);
  }
  int leaves() const { return size_; }
  // Without SettleAndClear (marks abandoned halfway).
  void Clear() {
    for (int node : marked_) tree_[node] = empty_;
    marked_.clear();
  }
  // Every position that `nodes` cover (AppendCover) is at most `value`.
  void Mark(const int* nodes, const int* end, int64_t value) {
    for (; nodes != end; ++nodes) {
      int64_t& mark = tree_[*nodes];
      if (value >= mark) continue;
      if (mark == empty_) marked_.push_back(*nodes);
      mark = value;
    }
  }
  // Calls ok(position, least mark) for the positions in [lo, hi), in
  // order (`empty` where none is), and leaves the tree cleared (marks cover
  // only the first `n` positions); true when every call was.
  template <typename Ok>
  bool SettleAndClear(int n, int lo, int hi, Ok ok) {
    bool all = true;
    if (4 * (hi - lo) < size_) {
      // Few positions (most rounds): down the tree to them alone, each
      // with the least mark above it, then the marked nodes cleared.
      Settle(1, 0, size_, empty_, lo, hi, ok, all);
      for (int node : marked_) tree_[node] = empty_;
      marked_.clear();
      return all;
    }
    // Every mark pushed down to the positions.
    for (int i = 1; i < size_; ++i) {
      if (tree_[i] == empty_) continue;
      tree_[2 * i] = std::min(tree_[2 * i], tree_[i]);
      tree_[2 * i + 1] = std::min(tree_[2 * i + 1], tree_[i]);
      tree_[i] = empty_;
    }
    for (int p = lo; p < hi; ++p) all &= ok(p, tree_[size_ + p]);
    std::fill(tree_.begin() + size_, tree_.begin() + size_ + n, empty_);
    marked_.clear();
    return all;
  }

 private:
  // The positions of [lo, hi) under `node` (over [node_lo, node_hi)), with
  // `above` the least mark of its ancestors.
  template <typename Ok>
  void Settle(int node, int node_lo, int node_hi, int64_t above, int lo, int hi,
              Ok& ok, bool& all) const {
    const int64_t least = std::min(above, tree_[node]);
    if (node >= size_) {
      all &= ok(node_lo, least);
      return;
    }
    const int mid = node_lo + (node_hi - node_lo) / 2;
    if (lo < mid) Settle(2 * node, node_lo, mid, least, lo, hi, ok, all);
    if (hi > mid) Settle(2 * node + 1, mid, node_hi, least, lo, hi, ok, all);
  }

  int64_t empty_;
  int size_ = 1;
  std::vector<int64_t> tree_;
  // The nodes marked since the last clearing: every node not empty.
  std::vector<int> marked_;
};

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_TREES_H_
