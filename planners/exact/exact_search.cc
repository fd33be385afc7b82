// exact's search of one part at one height (see exact_search.h).

#include "exact_search.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace memplan::internal::exact {

PartSearch::PartSearch(Part& part, const ExactOptions& options)
    : part_(part), options_(options) {
  const int n = static_cast<int>(part.items.size());
  const int sections = static_cast<int>(part.base.size());
  for (int i = 0; i < n; ++i) {
    item_key_.push_back({Mix(2 * i + 1), Mix(2 * i + 1 + (1ULL << 40))});
  }
  node_work_ = NodeWork(n);
  int groups = 0;
  for (const Item& item : part.items) groups = std::max(groups, item.group + 1);
  group_seen_.assign(groups, 0);
  eff_.resize(sections);
  rem_.resize(sections);
  low_ = MinMarks(sections, kInf);
  cover_at_.push_back(0);
  for (const Item& item : part.items) {
    AppendCover(low_.leaves(), item.s0, item.s1, cover_);
    cover_at_.push_back(static_cast<int>(cover_.size()));
  }
  // The same, by node: the items each tree node holds.
  node_items_at_.assign(2 * low_.leaves() + 1, 0);
  for (int node : cover_) ++node_items_at_[node + 1];
  for (size_t i = 1; i < node_items_at_.size(); ++i)
    node_items_at_[i] += node_items_at_[i - 1];
  node_items_.resize(cover_.size());
  std::vector<int> fill(node_items_at_.begin(), node_items_at_.end() - 1);
  for (int c = 0; c < n; ++c) {
    for (int k = cover_at_[c]; k < cover_at_[c + 1]; ++k)
      node_items_[fill[cover_[k]]++] = c;
  }
  // Every search starts from the same floors (the part's base where items
  // cross), so from the same candidates: each span's highest floor,
  // read from a maximum tree of the floors on its cover nodes (not the
  // span's sections, whose sum can be the number of items times the number
  // of sections).
  start_eff_.resize(sections);
  for (int s = 0; s < sections; ++s)
    start_eff_[s] = part.load[s] > 0 ? part.base[s] : kInf;
  const int leaves = low_.leaves();
  std::vector<int64_t> floor_max(2 * static_cast<size_t>(leaves), 0);
  std::copy(start_eff_.begin(), start_eff_.end(), floor_max.begin() + leaves);
  for (int i = leaves - 1; i >= 1; --i)
    floor_max[i] = std::max(floor_max[2 * i], floor_max[2 * i + 1]);
  start_cand_.resize(n);
  for (int c = 0; c < n; ++c) {
    int64_t cand = part.items[c].fixed_top;
    for (int k = cover_at_[c]; k < cover_at_[c + 1]; ++k)
      cand = std::max(cand, floor_max[cover_[k]]);
    start_cand_[c] = cand;
  }
  offset_.resize(n);
  covered_.assign(sections + 1, 0);
  unplaced_.resize(n);
  unplaced_at_.resize(n);
}

Outcome PartSearch::Run(int64_t height, const std::vector<int>& rank,
                        bool fill_first, bool collapse_raises,
                        int64_t node_limit, Budget& budget) {
  Reset(height);
  collapse_raises_ = collapse_raises;
  rank_ = &rank;
  fill_first_ = fill_first;
  // Under a height that every item could stack to, nothing is pruned.
  inference_ = options_.section_inference && height < part_.room;
  use_cache_ = options_.failure_cache;
  nodes_ = 0;
  int depth = 0;
  if (frames_.empty()) frames_.emplace_back();
  Begin(frames_[0]);
  Step step = Step::kExpand;
  while (true) {
    switch (step) {
      case Step::kExpand:
        if (num_unplaced_ == 0) return Outcome::kFound;
        budget.Tick(node_work_);
        if (nodes_ >= node_limit || budget.OutOfTime()) return Outcome::kLimit;
        if (MayOverrun(budget)) {
          nodes_ = std::max(nodes_, node_limit);  // no node left to begin
          return Outcome::kLimit;
        }
        step = Expand(frames_[depth]);
        // A node whose candidates cost more than the work between two
        // readings of the clock (tens of thousands of items on one cell)
        // counts the rest as nodes: the limit bounds the work, not only
        // the nodes. Below that (every bundled input) nothing changes.
        if (candidate_work_ > Budget::kClockWork) {
          budget.Tick(candidate_work_ - node_work_);
          nodes_ += (candidate_work_ - node_work_) / node_work_;
        }
        break;
      case Step::kBranch:
        step = Branch(depth);
        break;
      case Step::kFail:
        if (!Backtrack(depth)) return Outcome::kExhausted;
        step = Step::kBranch;
        break;
    }
  }
}

bool PartSearch::MayOverrun(const Budget& budget) const {
  // At most every item scanned and every unplaced one sorted.
  const auto u = static_cast<uint64_t>(num_unplaced_);
  const int64_t most = static_cast<int64_t>(part_.items.size()) +
                       static_cast<int64_t>(u) * std::bit_width(u);
  return most > Budget::kClockWork &&
         budget.work_done() + most - node_work_ > budget.work_limit();
}

// A new node: cut when its state is known to fail or the sections cannot
// hold what is left; otherwise its cell and branches.
PartSearch::Step PartSearch::Expand(Frame& fr) {
  ++nodes_;
  candidate_work_ = 0;
  const StateKey key = Key();
  if (use_cache_ && part_.failed.contains(key)) return Step::kFail;
  if (use_cache_) hashes_.push_back(key);
  if (!collapse_raises_) {
    if (inference_ && !SectionsFit()) return Step::kFail;
    FindRun(fr);
    CollectCandidates(fr);
    return Step::kBranch;
  }
  FindRun(fr);
  CollectCandidates(fr);
  // No item inside the run crosses the cell: raising the sections that no
  // such item crosses is the only branch, taken here without a node of its
  // own (its work: the items scanned, twice, as RaiseUncovered scans them
  // again). Section inference then runs once, on the state the raises lead
  // to: raising floors only tightens it.
  int64_t forced_work = 0;
  while (fr.cands.empty()) {
    forced_work += 2 * candidate_work_;
    candidate_work_ = forced_work;
    if (!RaiseUncovered(fr)) return Step::kFail;
    const StateKey k = Key();
    if (use_cache_ && part_.failed.contains(k)) return Step::kFail;
    if (use_cache_) hashes_.push_back(k);
    FindRun(fr);
    CollectCandidates(fr);
  }
  candidate_work_ += forced_work;
  if (inference_ && !SectionsFit()) return Step::kFail;
  return Step::kBranch;
}

// The next branch of the node at `depth`: a candidate on the cell (one level
// down), else the cell raised (the same node, expanded again).
PartSearch::Step PartSearch::Branch(int& depth) {
  if (PlaceNextCandidate(depth)) return Step::kExpand;
  return RaiseCell(frames_[depth]) ? Step::kExpand : Step::kFail;
}

bool PartSearch::PlaceNextCandidate(int& depth) {
  Frame& fr = frames_[depth];
  while (fr.next < fr.cands.size()) {
    const int c = fr.cands[fr.next++];
    const Item& item = part_.items[c];
    int64_t off = std::max(fr.f, item.fixed_top);
    for (int p : item.partners) {
      if (placed(p)) off = std::max(off, offset_[p] + part_.items[p].size);
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
    // (fr is not used below: a new frame may move the others.)
    if (depth == static_cast<int>(frames_.size())) frames_.emplace_back();
    Begin(frames_[depth]);
    return true;
  }
  return false;
}

// Nothing sits on the cell (r0, f): every buffer crossing r0 lies higher, on
// a buffer inside the run (at least f + its size) or across a neighbour (at
// least h). Raises r0 to the lowest of those; false when that cannot fit.
bool PartSearch::RaiseCell(Frame& fr) {
  if (fr.raise_to >= kInf ||
      (inference_ && fr.raise_to + rem_[fr.cell] > height_)) {
    return false;
  }
  // With nothing at all inside the run, the whole run rises to h.
  const bool whole = fr.raise_to == fr.h && fr.inner_empty;
  const int lo = whole ? fr.r0 : fr.cell, hi = whole ? fr.r1 : fr.cell + 1;
  if (whole && inference_) {
    for (int t = lo; t < hi; ++t) {
      if (fr.h + rem_[t] > height_) return false;
    }
  }
  raises_.push_back({lo, hi, fr.f, fr.raise_to, cand_trail_.size()});
  Raise(lo, hi, fr.f, fr.raise_to);
  RaiseCandidates(lo, hi, fr.raise_to);
  return true;
}

// The cell has no candidate: every unplaced item crossing it reaches
// beyond the run, into a live neighbour, so it sits at h or higher. The same
// holds for every section of the run that no item inside the run crosses:
// all of them rise to h at once. False when that cannot fit.
bool PartSearch::RaiseUncovered(const Frame& fr) {
  if (fr.h >= kInf) return false;  // (rem > 0 there: never both dead)
  std::fill(covered_.begin() + fr.r0, covered_.begin() + fr.r1 + 1, 0);
  for (int s = fr.r0; s < fr.r1; ++s) {
    for (int c : part_.starts[s]) {
      if (placed(c) || part_.items[c].s1 > fr.r1) continue;
      ++covered_[s];
      --covered_[part_.items[c].s1];
    }
  }
  int depth = 0, begin = -1;
  for (int t = fr.r0; t <= fr.r1; ++t) {
    if (t < fr.r1) depth += covered_[t];
    const bool free = t < fr.r1 && depth == 0;
    if (free) {
      if (inference_ && fr.h + rem_[t] > height_) return false;
      if (begin < 0) begin = t;
    } else if (begin >= 0) {
      raises_.push_back({begin, t, fr.f, fr.h, cand_trail_.size()});
      Raise(begin, t, fr.f, fr.h);
      RaiseCandidates(begin, t, fr.h);
      begin = -1;
    }
  }
  return true;
}

// Undoes the node at `depth` (its raises; its states go to the failure
// cache) and the placement that led to it. False at the root.
bool PartSearch::Backtrack(int& depth) {
  Frame& fr = frames_[depth];
  while (raises_.size() > fr.raise_mark) {
    const RaiseRecord& r = raises_.back();
    Raise(r.r0, r.r1, r.to, r.from);
    RestoreCandidates(r.cand_mark);
    raises_.pop_back();
  }
  if (use_cache_) {
    for (size_t i = fr.hash_mark; i < hashes_.size(); ++i) {
      if (static_cast<int64_t>(part_.failed.size()) >=
          options_.failure_cache_entries)
        break;
      part_.failed.insert(hashes_[i]);
    }
    hashes_.resize(fr.hash_mark);
  }
  if (depth == 0) return false;
  --depth;
  const Frame& parent = frames_[depth];
  Unplace(parent.child, parent.f);
  return true;
}

void PartSearch::Reset(int64_t height) {
  height_ = height;
  num_unplaced_ = static_cast<int>(unplaced_.size());
  for (int c = 0; c < num_unplaced_; ++c) unplaced_[c] = unplaced_at_[c] = c;
  rem_ = part_.load;
  floor_hash_ = {0, 0};
  unplaced_hash_ = {0, 0};
  eff_ = start_eff_;
  for (size_t s = 0; s < eff_.size(); ++s) {
    if (rem_[s] > 0) ToggleFloor(static_cast<int>(s), eff_[s]);
  }
  cand_ = start_cand_;
  cand_trail_.clear();
  place_marks_.clear();
  dirty_lo_ = 0;
  dirty_hi_ = static_cast<int>(eff_.size());
  for (const StateKey& k : item_key_) {
    unplaced_hash_.first ^= k.first;
    unplaced_hash_.second ^= k.second;
  }
  raises_.clear();
  hashes_.clear();
}

void PartSearch::Begin(Frame& fr) {
  fr.raise_mark = raises_.size();
  fr.hash_mark = hashes_.size();
  fr.child = -1;
}

StateKey PartSearch::Key() const {
  return {floor_hash_.first ^ unplaced_hash_.first,
          floor_hash_.second ^ unplaced_hash_.second};
}

void PartSearch::ToggleFloor(int s, int64_t floor) {
  const uint64_t x = static_cast<uint64_t>(s) * 0x100000001B3ULL ^
                     static_cast<uint64_t>(floor) * 0x9E3779B97F4A7C15ULL;
  floor_hash_.first ^= Mix(x);
  floor_hash_.second ^= Mix(x ^ 0xD6E8FEB86659FD93ULL);
}

// The items that cross lo are those of the tree nodes above lo's leaf (each
// once: an item's cover nodes are disjoint); the others start inside.
template <typename Visit>
bool PartSearch::ForEachUnplacedOver(int lo, int hi, Visit&& visit) {
  for (int node = low_.leaves() + lo; node >= 1; node >>= 1) {
    for (int k = node_items_at_[node]; k < node_items_at_[node + 1]; ++k) {
      const int c = node_items_[k];
      if (!placed(c) && !visit(c)) return false;
    }
  }
  for (int s = lo + 1; s < hi; ++s) {
    for (int c : part_.starts[s]) {
      if (!placed(c) && !visit(c)) return false;
    }
  }
  return true;
}

void PartSearch::Dirty(int lo, int hi) {
  dirty_lo_ = std::min(dirty_lo_, lo);
  dirty_hi_ = std::max(dirty_hi_, hi);
}

// Every unplaced item will sit at or above its candidate (the highest floor
// over its span), so in each section the items crossing it stack from the
// lowest candidate among them upwards: that plus their sizes must fit under
// the height. Each candidate is kept up to date as floors rise
// (RaiseCandidates). Only the sections that changed since the last check
// (Dirty) are checked, with the unplaced items that cross them, each
// marking its candidate on the tree nodes kept for its span.
bool PartSearch::SectionsFit() {
  const int sections = static_cast<int>(rem_.size());
  const bool incremental = options_.incremental_inference;
  const int lo = incremental ? dirty_lo_ : 0;
  const int hi = incremental ? dirty_hi_ : sections;
  dirty_lo_ = sections;
  dirty_hi_ = 0;
  if (lo >= hi) return true;
  const bool items_fit = ForEachUnplacedOver(lo, hi, [&](int c) {
    const Item& item = part_.items[c];
    int64_t cand = cand_[c];
    if (!incremental) {
      cand = item.fixed_top;
      for (int t = item.s0; t < item.s1; ++t) cand = std::max(cand, eff_[t]);
    }
    if (cand + item.size > height_) return false;
    low_.Mark(cover_.data() + cover_at_[c], cover_.data() + cover_at_[c + 1],
              cand);
    return true;
  });
  if (!items_fit) {
    low_.Clear();
    return false;
  }
  return low_.SettleAndClear(sections, lo, hi, [this](int s, int64_t low) {
    return low >= kInf || low + rem_[s] <= height_;
  });
}

// The cell to decide: a section of a "valley" (a run of equal floor whose
// live neighbours are higher), the one with the least slack under the
// height (fail first), ties to the lower floor, then leftmost. Also the run
// around it and its lower neighbour's floor (kInf: both dead).
void PartSearch::FindRun(Frame& fr) const {
  const int sections = static_cast<int>(eff_.size());
  const int64_t* eff = eff_.data();
  const int64_t* rem = rem_.data();
  int64_t best_slack = kInf, best_floor = kInf;
  int s = 0;
  while (s < sections) {
    if (eff[s] >= kInf) {
      ++s;
      continue;
    }
    const int64_t f = eff[s];
    // Runs are long (a few thousand sections make a few dozen runs): four
    // sections at a time to the run's end.
    int end = s + 1;
    while (end + 4 <= sections &&
           ((eff[end] ^ f) | (eff[end + 1] ^ f) | (eff[end + 2] ^ f) |
            (eff[end + 3] ^ f)) == 0) {
      end += 4;
    }
    while (end < sections && eff[end] == f) ++end;
    const int64_t left = s > 0 ? eff[s - 1] : kInf;
    const int64_t right = end < sections ? eff[end] : kInf;
    if (left > f && right > f) {
      // The run's least slack is at its most remaining bytes, the leftmost
      // such section; it is the cell when it beats the best so far.
      int64_t most = rem[s];
      for (int t = s + 1; t < end; ++t) most = std::max(most, rem[t]);
      const int64_t slack = height_ - f - most;
      if (slack < best_slack || (slack == best_slack && f < best_floor)) {
        int t = s;
        while (rem[t] != most) ++t;
        best_slack = slack;
        best_floor = f;
        fr.f = f;
        fr.r0 = s;
        fr.r1 = end;
        fr.cell = t;
        fr.h = std::min(left, right);
      }
    }
    s = end;
  }
}

// The branches at the cell (r0, f): the items that start at r0 and fit in
// the run (one per group of interchangeable items), in the static order;
// and the floor r0 is raised to when none of them sits there.
void PartSearch::CollectCandidates(Frame& fr) {
  fr.cands.clear();
  fr.next = 0;
  const int cell = fr.cell;
  int64_t inner = kInf;
  int64_t scanned = 0;
  for (int s = fr.r0; s < fr.r1; ++s) {
    scanned += static_cast<int64_t>(part_.starts[s].size());
    for (int c : part_.starts[s]) {
      if (placed(c) || part_.items[c].s1 > fr.r1) continue;
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
  const auto k = static_cast<uint64_t>(fr.cands.size());
  candidate_work_ = scanned + static_cast<int64_t>(k) * std::bit_width(k);
  if (options_.symmetry) KeepOnePerGroup(fr.cands);
  fr.inner_empty = inner >= kInf && fr.cands.empty();
  fr.raise_to = std::min(fr.h, inner >= kInf ? kInf : fr.f + inner);
}

// The first candidate of each group of interchangeable items: a ban on one
// is a ban on all. Linear: the groups seen are marked, then unmarked.
void PartSearch::KeepOnePerGroup(std::vector<int>& cands) {
  size_t kept = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    char& seen = group_seen_[part_.items[cands[i]].group];
    if (!seen) cands[kept++] = cands[i];
    seen = 1;
  }
  cands.resize(kept);
  for (int c : cands) group_seen_[part_.items[c].group] = 0;
}

// Every section of the item's span is live with floor `floor` before.
void PartSearch::Place(int c, int64_t off, int64_t floor) {
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
  // The item leaves the unplaced list by swapping with its last entry;
  // Unplace undoes placements in reverse, so it finds it there again.
  const int k = unplaced_at_[c], last = unplaced_[--num_unplaced_];
  unplaced_[k] = last;
  unplaced_at_[last] = k;
  unplaced_[num_unplaced_] = c;
  unplaced_at_[c] = num_unplaced_;
  offset_[c] = off;
  unplaced_hash_.first ^= item_key_[c].first;
  unplaced_hash_.second ^= item_key_[c].second;
  place_marks_.push_back(cand_trail_.size());
  Dirty(item.s0, item.s1);
  RaiseCandidates(item.s0, item.s1, top);
}

void PartSearch::Unplace(int c, int64_t floor) {
  const Item& item = part_.items[c];
  const int64_t top = offset_[c] + item.size;
  for (int s = item.s0; s < item.s1; ++s) {
    if (rem_[s] > 0) ToggleFloor(s, top);
    rem_[s] += item.size;
    eff_[s] = floor;
    ToggleFloor(s, floor);
  }
  RestoreCandidates(place_marks_.back());
  place_marks_.pop_back();
  ++num_unplaced_;  // c is unplaced_[num_unplaced_ - 1] again
  unplaced_hash_.first ^= item_key_[c].first;
  unplaced_hash_.second ^= item_key_[c].second;
}

void PartSearch::Raise(int r0, int r1, int64_t from, int64_t to) {
  for (int s = r0; s < r1; ++s) {
    ToggleFloor(s, from);
    ToggleFloor(s, to);
    eff_[s] = to;
  }
}

// Floors over [r0, r1) rose to `floor`: so do the candidates of the
// unplaced items that cross them (every section those items cross is live).
void PartSearch::RaiseCandidates(int r0, int r1, int64_t floor) {
  if (!inference_) return;  // (Reset reads them afresh at every search.)
  ForEachUnplacedOver(r0, r1, [&](int c) {
    if (cand_[c] < floor) {
      cand_trail_.emplace_back(c, cand_[c]);
      cand_[c] = floor;
      Dirty(part_.items[c].s0, part_.items[c].s1);
    }
    return true;
  });
}

// Undoes the RaiseCandidates calls since cand_trail_ held `mark` entries.
void PartSearch::RestoreCandidates(size_t mark) {
  while (cand_trail_.size() > mark) {
    const auto [c, cand] = cand_trail_.back();
    cand_[c] = cand;
    cand_trail_.pop_back();
  }
}

}  // namespace memplan::internal::exact
