// The rules of greedy placement: in which order buffers are placed, and
// which free byte range each takes (GreedyOptions, hill_climb's starts).

#ifndef MEMPLAN_PLACEMENT_H_
#define MEMPLAN_PLACEMENT_H_

namespace memplan {

// Which free range a buffer takes among those that fit it.
enum class Fit {
  kBest,   // the smallest gap between obstacles that fits (ties: lowest);
           // above the highest obstacle when no gap fits
  kFirst,  // the lowest offset that fits
};

// Orders for greedy placement. All put the largest key first; ties go to
// the earlier start, then the smaller id, except where noted.
enum class PlacementOrder {
  kSize,        // bytes
  kArea,        // bytes x lifetime length
  kLifetime,    // lifetime length
  kSizeThenId,  // bytes; ties by id alone (a stable sort of the buffer list)
  kSizeClass,   // sizes in classes of powers of 4 ([4^k, 4^(k+1)) bytes),
                // the largest class first; in a class, the longest lifetime
                // first. Long-lived small buffers then go below the
                // short-lived ones of their class instead of on top of
                // everything.
};

}  // namespace memplan

#endif  // MEMPLAN_PLACEMENT_H_
