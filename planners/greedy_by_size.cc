// greedy_by_size and its order / fit variants (see greedy_by_size.h).

#include "greedy_by_size.h"

#include <memory>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "effort/set_up.h"
#include "placement/placement.h"
#include "planners.h"

namespace memplan {
namespace {

class GreedyPlanner : public Planner {
 public:
  explicit GreedyPlanner(const GreedyOptions& options) : options_(options) {}

  std::string_view name() const override { return GreedyPlannerName(options_); }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    // A pass still going at the time limit (or deadline) is abandoned; one
    // that spends the whole work limit gives way to the naive plan.
    Budget budget(options);
    MEMPLAN_RETURN_IF_ERROR(internal::TimeForSetUp(
        budget, problem, internal::kPlacementSetUpPerBuffer, name()));
    const internal::PlacementIndex index(problem);
    const std::vector<BufferId> order =
        internal::SortedBuffers(problem, options_.order);
    absl::StatusOr<Plan> plan = internal::PlaceInOrder(
        index, order, options_.fit, &budget, budget.work_limit());
    if (absl::IsAborted(plan.status())) {
      return internal::NaiveAfterSpentPass(problem, options, plan.status(),
                                           budget.work_done());
    }
    if (!plan.ok()) return plan.status();
    plan->planner = std::string(name());
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
