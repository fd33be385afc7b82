// The Caffe2 memonger family: shared-object planners.
//
// Instead of choosing an offset per buffer, these planners group buffers into
// shared objects (one allocation each, as in Caffe2's memonger): the members
// of an object have pairwise disjoint lifetimes and no explicit conflict, the
// object is as large as its largest member, and the objects are laid out one
// after another in the pool. The result is still one (buffer, pool, offset)
// per buffer: every member of an object sits at the object's offset.
//
//   offset ^  [ object 2: b5            ]
//          |  [ object 1: b1 ][ b3 ][ b6 ]
//          |  [ object 0: b0    ][ b2  ][ b4 ]
//          +--------------------------------------> time
//
//   * caffe2_greedy: buffers in order of their last use (end, then start,
//     then id); each joins the compatible object whose size is closest to its
//     own (the first such object on a tie), else opens a new object. An object
//     is compatible when its last member ends no later than the buffer starts,
//     it allows exactly the same pools, no member conflicts explicitly with
//     the buffer, and it is not static.
//   * caffe2_dp: memonger's dynamic program over assignments (see
//     caffe2_dp.cc) under its work budget; when the budget runs out the greedy
//     places the remaining buffers. It runs the greedy as well and returns
//     the smaller of the two, so it is never worse than caffe2_greedy.
//
// Shared by both:
//   * Static buffers (Caffe2Options::static_buffers) and buffers with a fixed
//     placement get an object of their own. Fixed buffers stay where they are;
//     the other objects are stacked above the highest fixed byte of each pool.
//   * Objects are laid out in creation order; each goes to the first allowed
//     pool where it still fits (its offset aligned for every member).
//   * The plan's counter "shared_objects" (Plan::counters) is the number of
//     objects (memonger's statistics:
//     naive_total is the baseline bytes, peak the optimized bytes, which is
//     the sum of the object sizes plus alignment padding and fixed bytes).
//   * proven_optimal is set only when the peak equals the lower bound. The
//     shared-object formulation can be strictly worse than the best offset
//     plan (a small buffer cannot reuse part of a larger object), so even a
//     completed dynamic program proves nothing about the offset problem.

#ifndef MEMPLAN_PLANNERS_CAFFE2_H_
#define MEMPLAN_PLANNERS_CAFFE2_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan {

// Work units of one node of caffe2_dp's search (it copies an assignment).
inline constexpr int64_t kCaffe2DpNodeWork = 256;

struct Caffe2Options {
  // Buffers named here (by the buffer's name or any of its tensors' names)
  // are never shared: each gets an object of its own. Names that match no
  // buffer are ignored (the tensor may not be planned).
  std::vector<std::string> static_buffers;
  // caffe2_dp: the work units its dynamic program may spend, within the
  // work limit of PlanOptions (the lesser of the two applies); a search node
  // (a recursive call or a candidate assignment) costs kCaffe2DpNodeWork.
  // Then the greedy finishes the remaining buffers. Deterministic, unlike
  // the time limit, which also stops the search. The default: 10^5 nodes.
  int64_t dp_max_work = 100000 * kCaffe2DpNodeWork;
};

// The names of the graph's input and/or output tensors, to make them static:
//   options.static_buffers = GraphInputOutputNames(graph, true, true);
std::vector<std::string> GraphInputOutputNames(const Graph& graph, bool inputs,
                                               bool outputs);

std::unique_ptr<Planner> MakeCaffe2GreedyPlanner(const Caffe2Options& options);
std::unique_ptr<Planner> MakeCaffe2DpPlanner(const Caffe2Options& options);

}  // namespace memplan

#endif  // MEMPLAN_PLANNERS_CAFFE2_H_
