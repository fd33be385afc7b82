// greedy_by_size and its order / fit variants (see greedy_by_size.h).

#include "greedy_by_size.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "effort/set_up.h"
#include "packed.h"
#include "placement/placement.h"
#include "planners.h"

namespace memplan {
namespace {

class GreedyPlanner : public Planner, public internal::GreedyPass {
 public:
  explicit GreedyPlanner(const GreedyOptions& options) : options_(options) {}

  std::string_view name() const override { return GreedyPlannerName(options_); }

  PlacementOrder pass_order() const override { return options_.order; }
  Fit pass_fit() const override { return options_.fit; }
  bool Finishes(const Problem& problem, const PlanOptions& options,
                int64_t work) const override {
    // As Solve() runs the pass: PlaceAll stops it once its cost reaches
    // the cost limit with buffers still to place.
    const Budget whole(options);
    const auto n = static_cast<int64_t>(problem.buffers.size());
    return whole.deadline() == absl::InfiniteFuture() &&
           work < whole.work_limit() - internal::PackingWork(n);
  }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    // The pass runs within the work limit and the deadline less what
    // packing the buffers it has not placed costs: cut short, it keeps
    // what it placed and packs the rest above (PlanAfterSpentPass).
    const auto n = static_cast<int64_t>(problem.buffers.size());
    const Budget whole(options);
    PlanOptions pass = options;
    pass.work_limit = whole.work_limit() - internal::PackingWork(n);
    if (whole.deadline() != absl::InfiniteFuture()) {
      pass.time_limit = absl::InfiniteDuration();
      pass.deadline = whole.deadline() - internal::kPackingPerBuffer * n;
    }
    if (pass.work_limit <= 0) {
      return internal::PlanAfterSpentPass(
          problem,
          absl::AbortedError(absl::StrCat(
              "the work limit of ", whole.work_limit(),
              " work units pays for no placement pass of ", n, " buffers")),
          0);
    }
    Budget budget(pass);
    if (absl::Status s = internal::TimeForSetUp(
            budget, problem, internal::kPlacementSetUpPerBuffer, name());
        !s.ok()) {
      // Packing alone, when the deadline leaves it time.
      if (!internal::TimeForSetUp(whole, problem, internal::kPackingPerBuffer,
                                  "packing")
               .ok()) {
        return s;
      }
      return internal::PlanAfterSpentPass(problem, s, 0);
    }
    const internal::PlacementIndex index(problem);
    const std::vector<BufferId> order =
        internal::SortedBuffers(problem, options_.order);
    internal::PlacementState state(index);
    const absl::Status status = internal::PlaceAll(state, order, options_.fit,
                                                   &budget, pass.work_limit);
    if (absl::IsAborted(status) || absl::IsDeadlineExceeded(status)) {
      return internal::PlanAfterSpentPass(problem, status, state.cost(),
                                          &state);
    }
    if (!status.ok()) return status;
    Plan plan = state.ToPlan();
    plan.planner = std::string(name());
    return plan;
  }

 private:
  GreedyOptions options_;
};

}  // namespace

std::string_view GreedyPlannerName(const GreedyOptions& options) {
  const bool best = options.fit == Fit::kBest;
  switch (options.order) {
    case PlacementOrder::kSize:
      return best ? "greedy_by_size" : "first_fit";
    case PlacementOrder::kArea:
      return best ? "greedy_by_area" : "first_fit_by_area";
    case PlacementOrder::kLifetime:
      return best ? "greedy_by_lifetime" : "first_fit_by_lifetime";
    case PlacementOrder::kSizeThenId:
      return best ? "greedy_by_size_then_id" : "position_greedy";
    case PlacementOrder::kSizeClass:
      return best ? "greedy_by_size_class" : "first_fit_by_size_class";
  }
  return "greedy";
}

std::unique_ptr<Planner> MakeGreedyPlanner(const GreedyOptions& options) {
  return std::make_unique<GreedyPlanner>(options);
}
}  // namespace memplan
