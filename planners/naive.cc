// naive: every buffer its own bytes, stacked in buffer order.
//
//   offset ^  [ b2 ]
//          |  [ b1    ]
//          |  [ b0 ]
//          +------------> time
//
// Its peak is the naive total (plus alignment padding and any bytes fixed
// placements hold): the baseline every other planner is measured against.
// Each buffer goes to the first allowed pool it still fits in.

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/arith.h"
#include "memplan/problem.h"
#include "model/problem_util.h"
#include "packed.h"
#include "placement/placement.h"
#include "placement/placement_state.h"
#include "planners.h"

namespace memplan::internal {
namespace {

class NaivePlanner : public Planner {
 public:
  std::string_view name() const override { return "naive"; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    (void)options;
    const int n = static_cast<int>(problem.buffers.size());
    std::vector<Offset> top(problem.pools.size(), 0);
    Plan plan;
    plan.planner = std::string(name());
    plan.assignments.resize(n);
    // Fixed buffers first: the others stack above them.
    for (BufferId b = 0; b < n; ++b) {
      const Buffer& buffer = problem.buffers[b];
      plan.assignments[b].buffer = b;
      if (!buffer.fixed.has_value()) continue;
      plan.assignments[b].pool = buffer.fixed->pool;
      plan.assignments[b].offset = buffer.fixed->offset;
      Offset& t = top[buffer.fixed->pool];
      t = std::max(t, buffer.fixed->offset + buffer.size);
    }
    for (BufferId b = 0; b < n; ++b) {
      const Buffer& buffer = problem.buffers[b];
      if (buffer.fixed.has_value()) continue;
      bool placed = false;
      for (PoolId p : AllowedPools(problem, b)) {
        const Pool& pool = problem.pools[p];
        const Offset offset =
            RoundUp(top[p], EffectiveAlignment(problem, b, p));
        if (pool.capacity > 0 && offset + buffer.size > pool.capacity) continue;
        plan.assignments[b].pool = p;
        plan.assignments[b].offset = offset;
        top[p] = offset + buffer.size;
        placed = true;
        break;
      }
      if (!placed) return NoFitError(problem, b, top);
    }
    ComputePlanStatistics(problem, plan);
    return plan;
  }
};

}  // namespace

std::unique_ptr<Planner> MakeNaivePlanner() {
  return std::make_unique<NaivePlanner>();
}

absl::StatusOr<Plan> PlanAfterSpentPass(const Problem& problem,
                                        const absl::Status& why,
                                        int64_t pass_work,
                                        const PlacementState* partial) {
  const auto n = static_cast<BufferId>(problem.buffers.size());
  std::vector<Assignment> assignments(n);
  std::vector<bool> placed(n, false);
  int64_t pass_placed = 0;
  for (BufferId b = 0; partial != nullptr && b < n; ++b) {
    if (!partial->placed(b) || problem.buffers[b].fixed.has_value()) continue;
    placed[b] = true;
    assignments[b] = {
        .buffer = b, .pool = partial->pool(b), .offset = partial->offset(b)};
    ++pass_placed;
  }
  absl::StatusOr<Plan> plan = PackRest(problem, std::move(assignments), placed);
  if (!plan.ok()) {
    return absl::Status(
        plan.status().code(),
        absl::StrCat(plan.status().message(), " (after ", why.message(), ")"));
  }
  plan->counters[absl::IsDeadlineExceeded(why) ? "cut_by_time_limit"
                                               : "cut_by_work_limit"] = 1;
  if (plan->planner != "naive") plan->counters["pass_placed"] = pass_placed;
  plan->counters["pass_work"] = pass_work;
  // A placement pass examines about twice the pairs; not counted under a
  // deadline, which has no time for the sweep.
  if (pass_placed == 0 && !absl::IsDeadlineExceeded(why)) {
    plan->counters["pass_estimate"] =
        2 * CountOverlappingPairs(problem) + n + PackingWork(n);
  }
  return plan;
}

}  // namespace memplan::internal
