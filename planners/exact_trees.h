// exact's segment trees over time sections (not public): a range maximum of
// the section floors, and "at most" marks over ranges of sections.

#ifndef MEMPLAN_PLANNERS_EXACT_TREES_H_
#define MEMPLAN_PLANNERS_EXACT_TREES_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace memplan::internal::exact {

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

// The least of the values marked over each position: Mark() puts a value on
// the O(log n) nodes covering a range, Settle() pushes every node's mark down
// to the leaves, after which At() is the least mark over a position (`empty`
// where none is).
class MinMarks {
 public:
  explicit MinMarks(int n = 0, int64_t empty = 0) : empty_(empty) {
    while (size_ < n) size_ *= 2;
    tree_.assign(2 * size_, empty_);
  }
  void Clear() { std::fill(tree_.begin(), tree_.end(), empty_); }
  // Every position in [lo, hi) is at most `value`.
  void Mark(int lo, int hi, int64_t value) {
    for (int a = lo + size_, b = hi + size_; a < b; a /= 2, b /= 2) {
      if (a & 1) tree_[a] = std::min(tree_[a], value), ++a;
      if (b & 1) --b, tree_[b] = std::min(tree_[b], value);
    }
  }
  void Settle() {
    for (int i = 2; i < 2 * size_; ++i)
      tree_[i] = std::min(tree_[i], tree_[i / 2]);
  }
  int64_t At(int position) const { return tree_[size_ + position]; }

 private:
  int64_t empty_;
  int size_ = 1;
  std::vector<int64_t> tree_;
};

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_TREES_H_
