// PlanSymbolicMemory: a symbolic graph planned once for its whole ranges.

#include "memplan/symbolic_memplan.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "memplan/tensor_placement.h"
#include "memplan/verify.h"

namespace memplan {
namespace {

// The worst sampled ratio over the buckets, each over its own ranges.
absl::StatusOr<double> WorstOfBuckets(
    const SymbolicProblem& problem,
    const std::vector<SymbolicBucket>& buckets) {
  double worst = 0;
  for (const SymbolicBucket& b : buckets) {
    MEMPLAN_ASSIGN_OR_RETURN(double r, WorstSampledRatio(problem, b));
    worst = std::max(worst, r);
  }
  return worst;
}

struct Quality {
  bool meets = false;  // the targets, at every sample and at the maxima
  double worst = 0;    // the worst sampled ratio over the buckets
};

absl::StatusOr<Quality> QualityOf(const SymbolicProblem& problem,
                                  const std::vector<SymbolicBucket>& buckets,
                                  const SymbolicPlanMemoryOptions& options) {
  Quality q;
  MEMPLAN_ASSIGN_OR_RETURN(q.worst, WorstOfBuckets(problem, buckets));
  DimValues maxima;
  for (const auto& [name, range] : problem.dims) maxima[name] = range.max;
  MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem last,
                           problem.Narrowed(buckets.back().dims));
  MEMPLAN_ASSIGN_OR_RETURN(Problem at_max, last.Rounded(maxima));
  MEMPLAN_ASSIGN_OR_RETURN(int64_t peak, buckets.back().PeakAt(maxima));
  const double end =
      static_cast<double>(peak) /
      static_cast<double>(std::max<int64_t>(1, LowerBound(at_max)));
  q.meets = q.worst <= options.target_ratio && end <= options.end_target_ratio;
  return q;
}

}  // namespace

absl::StatusOr<SymbolicGraphPlan> PlanSymbolicMemory(
    const Graph& graph, const SymbolicPlanMemoryOptions& options) {
  if (!IsSymbolic(graph)) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph \"", graph.name,
                     "\" has no symbolic dims: plan it with PlanMemory()"));
  }
  if (options.max_buckets < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_buckets is ", options.max_buckets, "; at least 1"));
  }
  MEMPLAN_ASSIGN_OR_RETURN(
      const std::unique_ptr<SymbolicPlanner> planner,
      CreateSymbolicPlanner(options.planner, options.planner_options));
  SymbolicSearchOptions given = options.search;
  given.greedy = options.greedy;
  given.target_ratio = options.target_ratio;
  given.end_target_ratio = options.end_target_ratio;
  // One clock for the whole range's plan and the buckets'.
  const SymbolicSearchOptions search = StartClock(given);
  SymbolicGraphPlan result;
  MEMPLAN_ASSIGN_OR_RETURN(result.problem,
                           BuildSymbolicProblem(graph, options.build));
  result.planner = options.planner;
  auto tell = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  tell(absl::StrCat(options.planner, ": one plan of the whole range"));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan one,
                           planner->Solve(result.problem, search));
  result.buckets.push_back(
      {.dims = result.problem.dims, .plan = std::move(one)});
  MEMPLAN_ASSIGN_OR_RETURN(Quality one_quality,
                           QualityOf(result.problem, result.buckets, options));
  tell(
      absl::StrFormat("one plan of the whole range: worst sampled peak/LB %.3f",
                      one_quality.worst));
  if (one_quality.meets || options.max_buckets == 1 ||
      result.problem.dims.empty()) {
    return result;
  }
  SymbolicBucketOptions cut;
  cut.max_buckets = options.max_buckets;
  int told = 0;  // tenths of the candidates told
  if (options.progress) {
    cut.progress = [&](int done, int total) {
      if (done * 10 / total > told || done == total) {
        told = done * 10 / total;
        tell(absl::StrCat("buckets: ", done, " of ", total,
                          " candidate ranges planned"));
      }
    };
  }
  MEMPLAN_ASSIGN_OR_RETURN(std::vector<SymbolicBucket> buckets,
                           planner->SolveBuckets(result.problem, search, cut));
  if (buckets.size() < 2) return result;
  MEMPLAN_ASSIGN_OR_RETURN(Quality cut_quality,
                           QualityOf(result.problem, buckets, options));
  if ((cut_quality.meets && !one_quality.meets) ||
      cut_quality.worst < one_quality.worst) {
    result.buckets = std::move(buckets);
  }
  tell(absl::StrFormat(
      "%d bucket%s kept: worst sampled peak/LB %.3f", result.buckets.size(),
      result.buckets.size() == 1 ? "" : "s",
      result.buckets.size() == 1 ? one_quality.worst : cut_quality.worst));
  return result;
}

}  // namespace memplan
