// PlanMemory: build, solve, verify.

#include "memplan/memplan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "model/problem_util.h"
#include "order/order_effort.h"

namespace memplan {

namespace {

// The graph's ops in `order` (ComputeOpOrder's), planned.
absl::StatusOr<GraphPlan> PlanInOrder(const Graph& graph,
                                      std::vector<int> order,
                                      const PlanMemoryOptions& options) {
  GraphPlan result;
  result.op_order = std::move(order);
  result.reorder = options.reorder;
  MEMPLAN_ASSIGN_OR_RETURN(
      result.problem,
      BuildProblem(PermuteOps(graph, result.op_order), options.build));
  PlanMemoryOptions rest = options;
  rest.reorder.clear();
  MEMPLAN_ASSIGN_OR_RETURN(result.plan, PlanMemory(result.problem, rest));
  MEMPLAN_ASSIGN_OR_RETURN(result.tensors,
                           PlaceTensors(graph, result.problem, result.plan));
  result.IndexTensors();
  return result;
}

// `fraction` of the limits `plan` sets, within one deadline for the whole
// run; {} (no limit) when `plan` sets none, so that an unbounded run orders
// as it always does.
PlanOptions ShareOf(const PlanOptions& plan, double fraction,
                    absl::Time deadline) {
  if (!internal::HasLimit(plan)) return {};
  PlanOptions part;
  part.work_limit = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(WorkLimit(plan)) * fraction));
  if (plan.time_limit != absl::InfiniteDuration()) {
    part.time_limit = plan.time_limit * fraction;
  }
  part.deadline = deadline;
  return part;
}

// ResourceExhausted when the pools' capacities together are below the
// lower bound: no planner can fit then, and the answer is the capacity
// that could, not a buffer the planner happened to fail on.
absl::Status CheckCapacityCanFit(const Problem& problem) {
  const std::optional<Bytes> capacity = internal::TotalCapacity(problem);
  if (!capacity.has_value() || problem.buffers.empty()) {
    return absl::OkStatus();
  }
  const Bytes total = *capacity;
  const Bytes bound = LowerBound(problem);
  if (bound <= total) return absl::OkStatus();
  // A buffer larger than every pool it may use is named as well.
  std::string alone;
  for (BufferId b = 0;
       b < static_cast<BufferId>(problem.buffers.size()) && alone.empty();
       ++b) {
    Bytes largest = 0;
    for (PoolId p : AllowedPools(problem, b)) {
      largest = std::max(largest, problem.pools[p].capacity);
    }
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size > largest) {
      alone = absl::StrCat(" (buffer \"", buffer.name, "\" alone needs ",
                           buffer.size, ")");
    }
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "no plan fits in ",
      problem.pools.size() > 1 ? "the pools' capacities together, "
                               : "capacity ",
      total, ": the buffers alive at one step need ", bound, " bytes", alone,
      "; the smallest capacity that could work is the lower bound, ", bound,
      " bytes (", bound - total, " more)"));
}

}  // namespace

absl::StatusOr<GraphPlan> PlanMemory(const Graph& graph,
                                     const PlanMemoryOptions& options) {
  if (options.reorder != kPlacedOrdering) {
    std::vector<int> order(graph.ops.size());
    std::iota(order.begin(), order.end(), 0);
    // The ordering's search and the planning share the limits.
    PlanMemoryOptions rest = options;
    if (!options.reorder.empty()) {
      const PlanOptions effort =
          SplitOrderingEffort(options.reorder, rest.plan);
      MEMPLAN_ASSIGN_OR_RETURN(
          order, ComputeOpOrder(graph, options.reorder, options.build, effort));
    }
    return PlanInOrder(graph, std::move(order), rest);
  }
  // The placed peak decides: the plan of each distinct candidate order.
  std::vector<std::string> candidates = {"", "memory", "window"};
  if (static_cast<int>(graph.ops.size()) <= kPlacedOptimalOps) {
    candidates.push_back("optimal");
  }
  // Under a limit, the searching orderings share half of it and the plans
  // of the candidates the other half, all within one deadline.
  absl::Time deadline = options.plan.deadline;
  if (options.plan.time_limit != absl::InfiniteDuration()) {
    deadline = std::min(deadline, absl::Now() + options.plan.time_limit);
  }
  const double searches = candidates.size() - 2.0;
  const PlanOptions effort = ShareOf(options.plan, 0.5 / searches, deadline);
  std::optional<GraphPlan> best;
  std::vector<std::vector<int>> planned;
  for (const std::string& name : candidates) {
    std::vector<int> order(graph.ops.size());
    std::iota(order.begin(), order.end(), 0);
    if (!name.empty()) {
      MEMPLAN_ASSIGN_OR_RETURN(
          order, ComputeOpOrder(graph, name, options.build, effort));
    }
    if (std::find(planned.begin(), planned.end(), order) != planned.end()) {
      continue;
    }
    planned.push_back(order);
    PlanMemoryOptions one = options;
    one.reorder = name;
    if (internal::HasLimit(options.plan)) {
      PlanOptions share =
          ShareOf(options.plan, 0.5 / candidates.size(), deadline);
      one.plan.work_limit = share.work_limit;
      one.plan.time_limit = share.time_limit;
      one.plan.deadline = share.deadline;
    }
    MEMPLAN_ASSIGN_OR_RETURN(GraphPlan plan,
                             PlanInOrder(graph, std::move(order), one));
    if (!best.has_value() || plan.plan.peak < best->plan.peak) {
      best = std::move(plan);
    }
  }
  return *std::move(best);
}

absl::StatusOr<Plan> PlanMemory(const Problem& problem,
                                const PlanMemoryOptions& options) {
  if (!options.reorder.empty()) {
    return absl::InvalidArgumentError(
        "an op ordering applies to graphs; a problem has no ops to reorder");
  }
  const std::string name = options.planner.empty()
                               ? std::string(DefaultPlannerName())
                               : options.planner;
  MEMPLAN_ASSIGN_OR_RETURN(auto planner,
                           CreatePlanner(name, options.planner_options));
  return PlanMemory(problem, *planner, options.plan);
}

absl::StatusOr<Plan> PlanMemory(const Problem& problem, const Planner& planner,
                                const PlanOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the time limit is negative");
  }
  MEMPLAN_RETURN_IF_ERROR(CheckCapacityCanFit(problem));
  const std::string name(planner.name());
  const absl::Time start = absl::Now();
  MEMPLAN_ASSIGN_OR_RETURN(Plan plan, planner.Solve(problem, options));
  plan.wall_time = absl::Now() - start;
  plan.planner = name;
  if (absl::Status status = VerifyPlan(problem, plan); !status.ok()) {
    return absl::InternalError(absl::StrCat(
        "planner \"", name, "\" produced an invalid plan: ", status.message()));
  }
  return plan;
}

namespace {

int64_t Counter(const Plan& plan, const std::string& name) {
  auto it = plan.counters.find(name);
  return it == plan.counters.end() ? 0 : it->second;
}

// "the work limit (1000000 work units)" or "the time limit (1s)".
std::string LimitName(const Plan& plan, const PlanOptions& options) {
  if (Counter(plan, "cut_by_work_limit") > 0) {
    return absl::StrCat("the work limit (", WorkLimit(options), " work units)");
  }
  if (options.time_limit != absl::InfiniteDuration()) {
    return absl::StrCat("the time limit (",
                        absl::FormatDuration(options.time_limit), ")");
  }
  return "the deadline";
}

constexpr double kPassSecondsPerBuffer = 3e-6;

// "costs about N work units" or "takes about T": what a whole greedy pass
// needs, from the part of it that ran (`placed` of `n` buffers) or, without
// one, from its estimate; empty when unknown. (A planner that gives its
// start a share of the limit, as exact does, needs more in all.)
std::string WholePass(const Plan& plan, const PlanOptions& options, int64_t n,
                      int64_t placed) {
  const int64_t work = Counter(plan, "pass_work");
  if (Counter(plan, "cut_by_work_limit") > 0) {
    const int64_t whole =
        placed > 0 ? work * n / placed : Counter(plan, "pass_estimate");
    return whole > 0 ? absl::StrCat("costs about ", whole, " work units") : "";
  }
  // Without a pass: its set-up, the pass and the packing's reserve, about
  // 3 us a buffer on a typical core (10^6 short intervals: 2 s).
  double seconds = static_cast<double>(n) * kPassSecondsPerBuffer;
  if (placed > 0 && options.time_limit != absl::InfiniteDuration()) {
    seconds = absl::ToDoubleSeconds(options.time_limit) *
              static_cast<double>(n) / static_cast<double>(placed);
  }
  if (seconds <= 0) return "";
  return absl::StrCat("takes about ",
                      absl::FormatDuration(absl::Seconds(
                          std::max(0.1, std::ceil(seconds * 10) / 10))));
}

}  // namespace

std::string LimitNote(const Plan& plan, const PlanOptions& options) {
  if (Counter(plan, "cut_by_work_limit") == 0 &&
      Counter(plan, "cut_by_time_limit") == 0) {
    return "";
  }
  const std::string limit = LimitName(plan, options);
  const std::string ratio =
      plan.lower_bound > 0
          ? absl::StrFormat("%.4fx", static_cast<double>(plan.peak) /
                                         static_cast<double>(plan.lower_bound))
          : std::string("?x");
  const auto n = static_cast<int64_t>(plan.assignments.size());
  const int64_t placed = Counter(plan, "pass_placed");
  const std::string whole = WholePass(plan, options, n, placed);
  const std::string more =
      whole.empty() ? "" : absl::StrCat("; a whole greedy pass ", whole);
  if (Counter(plan, "naive_plan") > 0) {
    return absl::StrCat(limit,
                        " left no time for a plan that reuses memory: "
                        "this is the naive plan (every buffer its own "
                        "bytes, ",
                        ratio, " the lower bound)", more);
  }
  if (Counter(plan, "packed") > 0 && placed == 0) {
    return absl::StrCat(limit, " pays for no greedy pass: the ", n,
                        " buffers are packed as an allocator would (", ratio,
                        " the lower bound)", more);
  }
  if (Counter(plan, "packed") > 0) {
    return absl::StrCat(limit, " cut the greedy pass after ", placed, " of ", n,
                        " buffers: the other ", Counter(plan, "packed"),
                        " are packed above them as an allocator would (", ratio,
                        " the lower bound)", more);
  }
  return absl::StrCat(limit,
                      " ended the search: the plan is the best "
                      "found by then (",
                      ratio,
                      " the lower bound); a longer limit may give a "
                      "smaller one");
}

}  // namespace memplan
