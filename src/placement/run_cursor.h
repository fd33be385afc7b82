// RunCursor: a position in one sorted list of runs, for the sweeps of the
// gap index (not public API).
//
//   offset   0    10   20   30   40   50   60
//   set A         [====)         [====)            cursor at [40, 50)
//   set B              [====)         [====)       cursor at [20, 30)
//   extra                              [=)         cursor at [52, 56)
//   Seek(45) on A stays at [40, 50): the first run that ends above 45.
//
// A search of the gap index sweeps several run sets (and the sorted, merged
// ranges of explicit-conflict partners) together by offset: one cursor
// each, read through one interface whatever it walks.
//
// How it works: over a run set it holds a btree iterator; over the ranges
// a pointer into their array. Next() steps to the next run. Seek(reached)
// jumps to the first run that ends above `reached`: a btree lookup, or a
// binary search of the array from the current run on (over the ranges a
// cursor only moves forward). SeekForward(reached) from a started cursor
// first tries two steps, as most seeks in a sweep move a run or two.
// Limits: read-only; a cursor is invalidated by any change to its set
// (the searches change none while they sweep).

#ifndef MEMPLAN_PLACEMENT_RUN_CURSOR_H_
#define MEMPLAN_PLACEMENT_RUN_CURSOR_H_

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>

#include "memplan/types.h"
#include "placement/run_set.h"

namespace memplan::internal {

class RunCursor {
 public:
  // Start() or Seek() before reading: a search around a pivot seeks
  // straight to its regions and never needs the lowest run.
  explicit RunCursor(RunSet* set) : set_(set), runs_(&set->runs) {}
  // Over the ranges [begin, end): sorted, disjoint, not empty.
  RunCursor(const std::pair<Offset, Offset>* begin,
            const std::pair<Offset, Offset>* end)
      : first_(begin), at_(begin), end_(end) {}

  // To the lowest run.
  void Start() {
    if (runs_) {
      it_ = runs_->begin();
    } else {
      at_ = first_;
    }
  }
  // The number of runs, and the end of the highest one (not done()).
  int64_t size() const { return runs_ ? runs_->size() : end_ - first_; }
  Offset last_end() const {
    return runs_ ? runs_->rbegin()->second : (end_ - 1)->second;
  }
  // The run set, or null for the explicit-conflict ranges.
  RunSet* set() const { return set_; }
  bool done() const { return runs_ ? it_ == runs_->end() : at_ == end_; }
  // The current run (not done()).
  Offset begin() const { return runs_ ? it_->first : at_->first; }
  Offset end() const { return runs_ ? it_->second : at_->second; }
  void Next() {
    if (runs_) {
      ++it_;
    } else {
      ++at_;
    }
  }
  // Seek(reached) from a started cursor: a few steps before a lookup.
  void SeekForward(Offset reached) {
    for (int steps = 0; steps < 2; ++steps) {
      Next();
      if (done() || end() > reached) return;
    }
    Seek(reached);
  }
  // Moves to the first run that ends above `reached`.
  void Seek(Offset reached) {
    if (runs_) {
      it_ = runs_->upper_bound(reached);
      if (it_ != runs_->begin() && std::prev(it_)->second > reached) --it_;
    } else {
      at_ =
          std::upper_bound(at_, end_, reached,
                           [](Offset r, const std::pair<Offset, Offset>& run) {
                             return r < run.second;
                           });
    }
  }

 private:
  RunSet* set_ = nullptr;
  const Runs* runs_ = nullptr;
  Runs::const_iterator it_;
  const std::pair<Offset, Offset>* first_ = nullptr;
  const std::pair<Offset, Offset>* at_ = nullptr;
  const std::pair<Offset, Offset>* end_ = nullptr;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_RUN_CURSOR_H_
