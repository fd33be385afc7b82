// What several commands share: planning flags, planner names, the summary.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "memplan/registry.h"
#include "memplan/spelling.h"
#include "memplan/symbolic_planner.h"

namespace memplan::tool {

std::vector<std::string> PlanningFlags() {
  return {"time_limit", "work_limit", "seed", "threads"};
}

PlanOptions PlanOptionsFromFlags(const Arguments& args,
                                 std::optional<absl::Duration> time_limit) {
  PlanOptions options;
  if (args.Given("time_limit")) {
    time_limit = absl::GetFlag(FLAGS_time_limit).value;
  }
  if (time_limit.has_value()) options.time_limit = *time_limit;
  options.work_limit = absl::GetFlag(FLAGS_work_limit);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.threads = absl::GetFlag(FLAGS_threads);
  return options;
}

absl::Status CheckPlanningFlags() {
  if (absl::GetFlag(FLAGS_work_limit) < 0) {
    return absl::InvalidArgumentError("--work-limit must not be negative");
  }
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 1 || threads > 1024) {
    return absl::InvalidArgumentError("--threads must be between 1 and 1024");
  }
  return absl::OkStatus();
}

absl::StatusOr<PlannerOptions> PlannerOptionsFromFlags() {
  PlannerOptions options;
  for (const std::string& option : absl::GetFlag(FLAGS_option)) {
    const size_t eq = option.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--option=", option,
                       ": expected NAME=VALUE (memplan planners NAME "
                       "lists a planner's options)"));
    }
    if (!options.emplace(option.substr(0, eq), option.substr(eq + 1)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--option: ", option.substr(0, eq), " is given twice"));
    }
  }
  return options;
}

absl::Status CheckPlannerOptions(absl::string_view planner) {
  absl::StatusOr<PlannerOptions> options = PlannerOptionsFromFlags();
  if (!options.ok()) return options.status();
  const std::string_view name =
      planner.empty() ? DefaultPlannerName()
                      : std::string_view(planner.data(), planner.size());
  if (absl::StatusOr<std::unique_ptr<Planner>> built =
          CreatePlanner(name, *options);
      !built.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--option: ", built.status().message()));
  }
  return absl::OkStatus();
}

bool IsWritableStream(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status =
      std::filesystem::status(path, error);
  if (error) return false;
  switch (status.type()) {
    case std::filesystem::file_type::character:
    case std::filesystem::file_type::fifo:
    case std::filesystem::file_type::socket:
      return true;
    default:
      return false;
  }
}

absl::Status CheckPlannerName(absl::string_view flag, absl::string_view name) {
  if (name.empty()) return absl::OkStatus();
  std::vector<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name == std::string_view(name.data(), name.size())) {
      return absl::OkStatus();
    }
    names.emplace_back(info.name);
  }
  // A misspelt symbolic planner is suggested too (for a graph with dims).
  std::vector<std::string> spellings = names;
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    spellings.emplace_back(info.name);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      flag.empty() ? "" : absl::StrCat("--", flag, ": "), "unknown planner \"",
      name, "\"",
      DidYouMean(std::string_view(name.data(), name.size()), spellings),
      "; valid planners: ", absl::StrJoin(names, ", ")));
}

std::string PlanSummary(const Problem& problem, const Plan& plan) {
  std::string out = absl::StrCat("planner ", plan.planner, ": ");
  if (problem.pools.size() == 1) {
    const double naive_pct =
        plan.naive_total > 0 ? 100.0 * plan.peak / plan.naive_total : 100.0;
    const double ratio = plan.lower_bound > 0
                             ? static_cast<double>(plan.peak) / plan.lower_bound
                             : 1.0;
    absl::StrAppendFormat(
        &out, "peak %d bytes, %.2f%% of naive total %d, %.4fx lower bound %d",
        plan.peak, naive_pct, plan.naive_total, ratio, plan.lower_bound);
  } else {
    // Each pool's own figure: a sum over pools says nothing against the
    // lower bound, which assumes one pool.
    std::vector<std::string> pools;
    for (size_t p = 0; p < problem.pools.size(); ++p) {
      const Pool& pool = problem.pools[p];
      const Bytes used = p < plan.pool_used.size() ? plan.pool_used[p] : 0;
      pools.push_back(pool.capacity > 0
                          ? absl::StrFormat("%s %d of %d bytes", pool.name,
                                            used, pool.capacity)
                          : absl::StrFormat("%s %d bytes", pool.name, used));
    }
    absl::StrAppendFormat(&out, "%s; naive total %d",
                          absl::StrJoin(pools, ", "), plan.naive_total);
  }
  absl::StrAppendFormat(&out, ", proven optimal: %s, %.1f ms",
                        plan.proven_optimal ? "yes" : "no",
                        absl::ToDoubleMilliseconds(plan.wall_time));
  return out;
}

absl::StatusOr<std::optional<OrderLowerBound>> InputOrderBound(
    const LoadedInput& input, const BuildOptions& options) {
  if (!input.graph.has_value()) return std::nullopt;
  return LowerBoundOverOrders(*input.graph, options);
}

std::string OrderBoundLine(const LoadedInput& input,
                           const std::optional<OrderLowerBound>& bound) {
  if (!input.graph.has_value()) return "";
  if (!bound.has_value()) {
    return "any op order: not computed (more work than its default for this "
           "graph)";
  }
  if (bound->op < 0) {
    return absl::StrFormat(
        "any op order: at least %d bytes (the graph outputs, all alive at "
        "the last step)",
        bound->bytes);
  }
  return absl::StrFormat("any op order: at least %d bytes (at op \"%s\")",
                         bound->bytes, input.graph->ops[bound->op].name);
}

}  // namespace memplan::tool
