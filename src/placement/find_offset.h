// FindOffset: the gap search among the listed obstacles of one buffer (not
// public API).
//
//   offset
//   80..90 |         cccccccc          x: 20 bytes, alive over [s, e).
//   60..80 |                           Its obstacles: a [0, 10),
//   40..60 |   bbbbbbbbb               b [40, 60), c [80, 90): placed in
//   10..40 |                           its pool, alive during [s, e).
//    0..10 |       aaaaaa              Gaps: [10, 40) (30 bytes), [60, 80)
//          +-----s==========e--> time  (20 bytes), and the top from 90.
//   First fit: the lowest gap that holds x, offset 10. Best fit: the
//   smallest, offset 60 (among equal gaps the lowest).
//
// The listing search of PlacementState gathers the obstacles of a buffer
// (the placed buffers in the pool that conflict with it), sorts them by
// begin and runs FindOffset; the gap index gives the same offsets without
// listing.
//
// How FindOffset works, O(k) for k sorted obstacles:
//   1. Walk the obstacles by begin, keeping `reached`, the highest byte
//      any of those seen so far holds (0 at first).
//   2. Where an obstacle begins at or above RoundUp(reached, alignment) +
//      size, the gap from that candidate fits the buffer: first fit takes
//      it; best fit keeps the smallest (strictly: ties keep the lowest).
//   3. Without a fitting gap, the buffer goes on top: RoundUp(reached).
//   4. With a capacity, a candidate counts only when it ends within it.
// Limits: greedy, one buffer at a time: not optimal for the whole plan.

#ifndef MEMPLAN_PLACEMENT_FIND_OFFSET_H_
#define MEMPLAN_PLACEMENT_FIND_OFFSET_H_

#include <optional>
#include <span>
#include <vector>

#include "memplan/placement.h"
#include "memplan/types.h"

namespace memplan::internal {

using ::memplan::Fit;

// A byte range [begin, end) of a pool that a placed buffer holds while the
// buffer being placed is alive.
struct Obstacle {
  Offset begin = 0;
  Offset end = 0;
  BufferId buffer = 0;
};

// Sorts obstacles by begin, as FindOffset wants (ties in no particular but
// deterministic order). `scratch` is working space for large sets, kept by
// the caller between calls so that it is allocated once.
void SortByOffset(std::vector<Obstacle>& obstacles,
                  std::vector<Obstacle>& scratch);

// The offset `fit` chooses for `size` bytes among `sorted` obstacles (sorted
// by SortByOffset): a multiple of `alignment` such that [offset, offset+size)
// overlaps no obstacle and, when `capacity` > 0, ends within it. nullopt when
// no such offset exists under the capacity. O(#obstacles).
std::optional<Offset> FindOffset(std::span<const Obstacle> sorted, Bytes size,
                                 Bytes alignment, Bytes capacity, Fit fit);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_FIND_OFFSET_H_
