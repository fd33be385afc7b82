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

absl::StatusOr<Plan> NaiveAfterSpentPass(const Problem& problem,
                                         const PlanOptions& options,
                                         const absl::Status& why,
                                         int64_t pass_work) {
  absl::StatusOr<Plan> plan = NaivePlanner().Solve(problem, options);
  if (!plan.ok()) {
    return absl::Status(
        plan.status().code(),
        absl::StrCat(plan.status().message(), " (after ", why.message(), ")"));
  }
  plan->counters["pass_abandoned"] = 1;
  plan->counters["pass_work"] = pass_work;
  return plan;
}

}  // namespace memplan::internal
