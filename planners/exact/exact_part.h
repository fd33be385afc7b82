// exact's vocabulary (not public): a part of the problem to plan on its own,
// its items in units of the problem's granule, its time sections, and what
// the search of it has established so far.

#ifndef MEMPLAN_PLANNERS_EXACT_PART_H_
#define MEMPLAN_PLANNERS_EXACT_PART_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "memplan/types.h"

namespace memplan::internal::exact {

// Above every height and floor the search meets, and safe to add to them.
inline constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
// Static orders of the items: size, area, lifetime, start.
inline constexpr int kNumOrders = 4;

// Work units (PlanOptions::work_limit) of one search node in a part of `n`
// buffers, so that the count ends about when the clock would
// (kWorkPerSecond): a node's cost grows linearly with its part's buffers.
// Where a part's nodes cost more than this, a time limit, when set, ends
// the search first. Measurements: bench/NOTES.md.
inline int64_t NodeWork(int64_t n) { return n / 4 + 32; }

inline uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// `value` rounded up to a multiple of `multiple` (>= 1, not necessarily a
// power of two).
inline int64_t RoundUpTo(int64_t value, int64_t multiple) {
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

// A search state: the floors of the sections and the items left, hashed.
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
  int64_t room = 0;      // the highest base or fixed_top plus every item's
                         // size and alignment slack: no height above it
                         // constrains the search
  bool complete = true;  // the search proves what it fails

  // Results across probes.
  int64_t lo = 0;     // proven: no plan below this height (complete parts)
  int64_t hi = kInf;  // height of `offsets`
  std::vector<int64_t> offsets;
  int64_t exhausted_at = -1;  // incomplete parts: search failed at this height
  // The static order (2 * order + fill the run first) that found `offsets`,
  // tried first at the next height; 0 when none did.
  int last_static = 0;

  absl::flat_hash_set<StateKey> failed;  // states with no completion
  int64_t failed_height = -1;            // `failed` holds for heights <= this
};

enum class Outcome { kFound, kExhausted, kLimit };

}  // namespace memplan::internal::exact

#endif  // MEMPLAN_PLANNERS_EXACT_PART_H_
