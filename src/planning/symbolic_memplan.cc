// PlanSymbolicMemory: a symbolic graph planned once for its whole ranges.

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

std::string RangeText(const DimRange& r) {
  return absl::StrCat("[", r.min, ", ", r.max, "]");
}

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
  const double end = static_cast<double>(peak) /
                     static_cast<double>(std::max<int64_t>(1, LowerBound(at_max)));
  q.meets = q.worst <= options.target_ratio && end <= options.end_target_ratio;
  return q;
}

}  // namespace

const SymbolicBucket* SymbolicGraphPlan::Find(const DimValues& values) const {
  for (const SymbolicBucket& b : buckets) {
    bool inside = true;
    for (const auto& [name, range] : b.dims) {
      auto it = values.find(name);
      if (it == values.end() || it->second < range.min ||
          it->second > range.max) {
        inside = false;
        break;
      }
    }
    if (inside) return &b;
  }
  return nullptr;
}

absl::StatusOr<GraphPlan> SymbolicGraphPlan::At(
    const Graph& graph, const DimValues& values) const {
  MEMPLAN_RETURN_IF_ERROR(CheckDimValues(problem.dims, values));
  for (const auto& [name, range] : problem.dims) {
    if (!values.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no value for dim \"", name, "\" (range ", RangeText(range),
          "): give every dim of the plan a value"));
    }
  }
  const SymbolicBucket* bucket = Find(values);
  if (bucket == nullptr) {
    return absl::InternalError("no bucket of the plan holds the values");
  }
  MEMPLAN_ASSIGN_OR_RETURN(Graph bound, BindDims(graph, values));
  GraphPlan result;
  MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub,
                           bucket->ProblemOf(problem));
  const DimValues stepped = StepValues(values, bucket->steps);
  MEMPLAN_ASSIGN_OR_RETURN(result.problem, sub.At(stepped));
  MEMPLAN_ASSIGN_OR_RETURN(result.plan, bucket->plan.At(sub, stepped));
  MEMPLAN_RETURN_IF_ERROR(VerifyPlan(result.problem, result.plan));
  result.op_order.resize(bound.ops.size());
  std::iota(result.op_order.begin(), result.op_order.end(), 0);
  MEMPLAN_ASSIGN_OR_RETURN(result.tensors,
                           PlaceTensors(bound, result.problem, result.plan));
  result.IndexTensors();
  return result;
}

absl::StatusOr<SymbolicGraphPlan> PlanSymbolicMemory(
    const Graph& graph, const SymbolicPlanMemoryOptions& options) {
  if (!IsSymbolic(graph)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph \"", graph.name,
        "\" has no symbolic dims: plan it with PlanMemory()"));
  }
  if (options.max_buckets < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_buckets is ", options.max_buckets, "; at least 1"));
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
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan one,
                           planner->Solve(result.problem, search));
  result.buckets.push_back(
      {.dims = result.problem.dims, .plan = std::move(one)});
  MEMPLAN_ASSIGN_OR_RETURN(Quality one_quality,
                           QualityOf(result.problem, result.buckets, options));
  auto tell = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  tell(absl::StrFormat("one plan of the whole range: worst sampled peak/LB %.3f",
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
  tell(absl::StrFormat("%d bucket%s kept: worst sampled peak/LB %.3f",
                       result.buckets.size(),
                       result.buckets.size() == 1 ? "" : "s",
                       result.buckets.size() == 1 ? one_quality.worst
                                                  : cut_quality.worst));
  return result;
}

absl::Status VerifySymbolicGraphPlan(const SymbolicGraphPlan& plan) {
  const SymbolicProblem& problem = plan.problem;
  if (plan.buckets.empty()) {
    return absl::InvalidArgumentError("the plan has no bucket");
  }
  // The buckets cut one dim (any, when there is one bucket): every other dim
  // keeps the problem's range, and the cut dim's ranges follow each other
  // from the problem's minimum to its maximum.
  std::string cut;
  for (const SymbolicBucket& b : plan.buckets) {
    if (b.dims.size() != problem.dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a bucket has ", b.dims.size(), " dims; the problem has ",
          problem.dims.size()));
    }
    for (const auto& [name, range] : b.dims) {
      auto it = problem.dims.find(name);
      if (it == problem.dims.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("a bucket names dim \"", name,
                         "\", which the problem does not have"));
      }
      if (range == it->second) continue;
      if (!cut.empty() && cut != name) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the buckets narrow both \"", cut, "\" and \"", name,
            "\": buckets may cut one dim only"));
      }
      cut = name;
    }
  }
  if (plan.buckets.size() > 1 && cut.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        plan.buckets.size(), " buckets each cover the whole range"));
  }
  if (!cut.empty()) {
    const DimRange whole = problem.dims.at(cut);
    int64_t next = whole.min;
    for (const SymbolicBucket& b : plan.buckets) {
      const DimRange r = b.dims.at(cut);
      if (r.min != next || r.max < r.min) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bucket ", RangeText(r), " of dim \"", cut, "\" should start at ",
            next, ": the buckets must cover ", RangeText(whole),
            " in order, each value once"));
      }
      next = r.max + 1;
    }
    if (next != whole.max + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the buckets of dim \"", cut, "\" end at ", next - 1,
          ", before its maximum ", whole.max));
    }
  }
  for (const SymbolicBucket& b : plan.buckets) {
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub, b.ProblemOf(problem));
    if (absl::Status s = VerifySymbolicPlan(sub, b.plan); !s.ok()) {
      if (plan.buckets.size() == 1) return s;
      return absl::Status(s.code(), absl::StrCat("bucket ", cut, " in ",
                                                 RangeText(b.dims.at(cut)),
                                                 ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace memplan
