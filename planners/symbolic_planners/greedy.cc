// PlanSymbolicGreedy: the engine's three placement orders under its first
// rule, the one whose peak is least over the samples kept.

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "memplan/planner.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "memplan/symbolic_verify.h"
#include "symbolic/binomial_poly.h"
#include "symbolic_planners/engine.h"

namespace memplan {
namespace {

using internal::BinomialPoly;
using internal::DimBox;
using internal::symbolic::DefaultSamples;
using internal::symbolic::Engine;
using internal::symbolic::PlaceRule;

// The plan of the order whose peak has the least sum of peak / lower bound
// over the samples (the first of equals). Past options.deadline, the best
// of the orders finished, DeadlineExceeded before the first.
absl::StatusOr<SymbolicPlan> Run(const SymbolicProblem& problem,
                                 const DimBox& box,
                                 const SymbolicGreedyOptions& options) {
  Engine engine(problem, box);
  Budget budget(PlanOptions{.deadline = options.deadline,
                            .work_limit = std::numeric_limits<int64_t>::max()});
  engine.SetBudget(&budget);
  MEMPLAN_RETURN_IF_ERROR(engine.Prepare(DefaultSamples(box), options.samples));
  std::optional<SymbolicPlan> best;
  double best_cost = 0;
  for (const std::vector<int>& order : engine.Orders(/*more=*/false)) {
    if (absl::Status s = engine.Layout(order, PlaceRule{}); !s.ok()) {
      if (absl::IsDeadlineExceeded(s) && best.has_value()) break;
      return s;
    }
    const BinomialPoly peak = engine.Peak(-1);
    std::vector<int64_t> values;
    engine.PeakValues(peak, &values);
    double cost = 0;
    for (size_t s = 0; s < engine.samples().size(); ++s) {
      cost += static_cast<double>(values[s]) /
              static_cast<double>(engine.LowerBoundAt(s));
    }
    if (best.has_value() && cost >= best_cost) continue;
    MEMPLAN_ASSIGN_OR_RETURN(best, engine.MakePlan(peak, "symbolic_greedy"));
    best_cost = cost;
  }
  return *std::move(best);
}

}  // namespace

absl::StatusOr<SymbolicPlan> PlanSymbolicGreedy(
    const SymbolicProblem& problem, const SymbolicGreedyOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan, Run(problem, box, options));
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, plan));
  return plan;
}

}  // namespace memplan
