// peak_window: the steps around the peak planned by exact's search, every
// other buffer placed greedily around them.
//
//   * Where a greedy plan misses the lower bound (max-live) only near the
//     step of max-live, the buffers alive there decide it: a training
//     step's turn from the forward to the backward pass (the trace
//     pangu_2.6B: greedy by size leaves one 40 MiB gap at that step,
//     1.0076x the bound, where the steps a few apart hold 4 % less).
//   * The window: the steps on either side of the first step of max-live
//     whose live bytes are at least `window_share` of it. The buffers alive
//     in the window, their lifetimes cut to it, form a small problem that
//     exact's search plans (pangu_2.6B: 553 buffers over 7 steps, at their
//     bound in 564 nodes, 10^5 work units).
//   * Those buffers are then fixed where the search put them, and the others
//     placed around them by the greedy passes of `passes`, one after the
//     other while the patience lasts (pangu_2.6B: first fit by size reaches
//     the lower bound).
//   * Its plan replaces the incumbent only when smaller (never worse than
//     its start); it counts the window's buffers ("window_buffers") and the
//     search's nodes there ("window_nodes"). Single pools without fixed
//     placements and with more than one buffer; elsewhere, or with more than
//     `max_window_buffers` buffers in the window, the incumbent as it is.
//
// Determinism: the search and the passes are counted in work units (the
// search's nodes, the passes' obstacles), so the same problem gives the
// same plan on any machine; only a caller's deadline reads the clock.
//
// Not registered on its own: `best` runs it on dense problems
// (ChooseBest's ForDense()), where it runs no other search.

#ifndef MEMPLAN_PLANNERS_PEAK_WINDOW_H_
#define MEMPLAN_PLANNERS_PEAK_WINDOW_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "greedy_by_size.h"
#include "memplan/compose.h"

namespace memplan {

struct PeakWindowOptions {
  // The window's steps hold at least this share of max-live.
  double window_share = 0.9;
  // Larger windows are left alone (exact's search there is no quick try).
  int64_t max_window_buffers = 4096;
  // Work units of exact's search of the window at most (within the
  // options' work limit).
  int64_t window_work = int64_t{1} << 24;
  // The greedy passes around the fixed window, in order.
  std::vector<GreedyOptions> passes = {
      {.order = PlacementOrder::kSize, .fit = Fit::kFirst},
      {.order = PlacementOrder::kSize, .fit = Fit::kBest}};
  // Whether ChooseBest runs it on dense problems (else on the others).
  bool for_dense = true;
};

std::unique_ptr<SearchPlanner> MakePeakWindowPlanner(
    const PeakWindowOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_PEAK_WINDOW_H_
