// exact's search of one part at one height (not public): depth-first over
// canonical placements, one cell (a section of a valley, at its floor) per
// node; see exact.h for the branching and the prunings.

#ifndef MEMPLAN_PLANNERS_EXACT_SEARCH_H_
#define MEMPLAN_PLANNERS_EXACT_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "effort/budget.h"
#include "exact.h"
#include "exact_part.h"
#include "exact_trees.h"
#include "memplan/planner.h"

namespace memplan::internal::exact {

// Iterative, so that parts of tens of thousands of buffers need no deep
// native stack. Reusable for several runs on the same part; failed states
// go to part.failed when options.failure_cache is on.
class PartSearch {
 public:
  PartSearch(Part& part, const ExactOptions& options);

  // Searches for a plan of height <= `height` with the static order `rank`
  // (and "fill the run first" when `fill_first`), ticking `budget` per node
  // and stopping at `node_limit` nodes (a node with a long list of
  // candidates counts as several) or when its clock runs out.
  // `collapse_raises`: a cell with no candidate is not a node; every
  // section of its run that no item inside the run crosses rises to the
  // lower neighbour at once (RaiseUncovered). Otherwise such a cell rises
  // alone, as far as a branch's raise (RaiseCell), one node per raise.
  Outcome Run(int64_t height, const std::vector<int>& rank, bool fill_first,
              bool collapse_raises, int64_t node_limit, Budget& budget);

  // Nodes of the last run, and its offsets when it found a plan.
  int64_t nodes() const { return nodes_; }
  const std::vector<int64_t>& offsets() const { return offset_; }

 private:
  // A node on the path: the cell it decides and the branches left.
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
    size_t cand_mark;  // cand_trail_'s size before the raise
  };
  enum class Step { kExpand, kBranch, kFail };

  void Reset(int64_t height);
  void Begin(Frame& fr);
  Step Expand(Frame& fr);
  Step Branch(int& depth);
  bool PlaceNextCandidate(int& depth);
  bool RaiseCell(Frame& fr);
  bool RaiseUncovered(const Frame& fr);
  bool Backtrack(int& depth);

  StateKey Key() const;
  void ToggleFloor(int s, int64_t floor);
  bool SectionsFit();
  void FindRun(Frame& fr) const;
  void CollectCandidates(Frame& fr);
  void KeepOnePerGroup(std::vector<int>& cands);
  void Place(int c, int64_t off, int64_t floor);
  void Unplace(int c, int64_t floor);
  void Raise(int r0, int r1, int64_t from, int64_t to);
  void RaiseCandidates(int r0, int r1, int64_t floor);
  void RestoreCandidates(size_t mark);
  void Dirty(int lo, int hi);
  // Calls visit(c) for every unplaced item c whose span meets [lo, hi)
  // (lo < hi), until it returns false; false then.
  template <typename Visit>
  bool ForEachUnplacedOver(int lo, int hi, Visit&& visit);

  Part& part_;
  const ExactOptions& options_;
  std::vector<StateKey> item_key_;
  const std::vector<int>* rank_ = nullptr;
  bool fill_first_ = false;
  bool collapse_raises_ = true;
  bool inference_ = true;
  bool use_cache_ = true;
  // A node of more candidates than the work between two readings of the
  // clock counts them as nodes (Run): one whose candidates could take
  // `budget` past its work limit is not begun, so that the Solve's count
  // stays within the limit at any size (the first node of 10^5 buffers
  // alive together costs about 70 nodes). The search then ends as if its
  // nodes were spent.
  bool MayOverrun(const Budget& budget) const;
  int64_t node_work_ = 1;
  int64_t height_ = 0;
  int64_t nodes_ = 0;
  // The last CollectCandidates' work: the items it scanned, and k log k
  // for sorting its k candidates.
  int64_t candidate_work_ = 0;
  std::vector<char> group_seen_;  // by group: KeepOnePerGroup's marks
  // eff_[s]: the floor of section s when items still cross it, else kInf.
  std::vector<int64_t> eff_, start_eff_;  // start_eff_: at Reset
  std::vector<int64_t> rem_;  // sizes of the unplaced items crossing s
  MinMarks low_;              // scratch of SectionsFit
  // The tree nodes of low_ that cover item c's span: cover_[cover_at_[c] ..
  // cover_at_[c + 1]).
  std::vector<int> cover_, cover_at_;
  // The items by tree node: node_items_[node_items_at_[node] ..
  // node_items_at_[node + 1]) hold the items whose cover has the node.
  std::vector<int> node_items_, node_items_at_;
  // cand_[c]: the unplaced item c's candidate, the highest floor over its
  // span (at least its fixed_top). Floors only rise on the way down, each
  // rise over a range to one value, so a rise lifts the candidates of the
  // unplaced items that cross the range to that value; cand_trail_ keeps
  // the values it replaced (item, candidate), undone in reverse on the way
  // back. place_marks_: cand_trail_'s size before each placement.
  std::vector<int64_t> cand_, start_cand_;  // start_cand_: at Reset
  std::vector<std::pair<int, int64_t>> cand_trail_;
  std::vector<size_t> place_marks_;
  // [dirty_lo_, dirty_hi_) holds every section whose lowest candidate may
  // have risen, or whose sizes still to place changed, since the last
  // SectionsFit: the placed item's span and the spans of the items whose
  // candidate rose. Elsewhere the state is as in the last state that
  // passed (a state that fails is only ever left by undoing back to one
  // that passed), so SectionsFit checks only there.
  int dirty_lo_ = 0, dirty_hi_ = 0;
  // The unplaced items: the first num_unplaced_ of unplaced_, where
  // unplaced_at_ is each item's index (the placed ones follow them).
  std::vector<int> unplaced_, unplaced_at_;
  int num_unplaced_ = 0;
  bool placed(int c) const { return unplaced_at_[c] >= num_unplaced_; }
  std::vector<int64_t> offset_;
  std::vector<int> covered_;  // scratch of RaiseUncovered, by section
  StateKey floor_hash_, unplaced_hash_;
  std::vector<Frame> frames_;
  std::vector<RaiseRecord> raises_;
  std::vector<StateKey> hashes_;
};

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_SEARCH_H_
