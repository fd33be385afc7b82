#include "input.h"

#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flags.h"
#include "memplan/reorder.h"

namespace memplan::tool {

const std::vector<std::string>& InputFlags() {
  static const auto* const kFlags = new std::vector<std::string>{
      "alignment", "plan_constants", "plan_inputs", "plan_outputs",
      "pool",      "capacity",       "reorder"};
  return *kFlags;
}

BuildOptions BuildOptionsFromFlags() {
  BuildOptions options;
  options.alignment = absl::GetFlag(FLAGS_alignment).bytes;
  options.capacity = absl::GetFlag(FLAGS_capacity).bytes;
  options.plan_constants = absl::GetFlag(FLAGS_plan_constants);
  options.plan_inputs = absl::GetFlag(FLAGS_plan_inputs);
  options.plan_outputs = absl::GetFlag(FLAGS_plan_outputs);
  options.pools = absl::GetFlag(FLAGS_pool).pools;
  return options;
}

absl::Status CheckInputFlags() {
  const std::string reorder = absl::GetFlag(FLAGS_reorder);
  const std::vector<std::string> names = OrderingNames();
  if (!reorder.empty() &&
      std::find(names.begin(), names.end(), reorder) == names.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--reorder=", reorder, ": unknown op ordering; valid: ",
                     absl::StrJoin(names, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path) {
  const BuildOptions options = BuildOptionsFromFlags();
  absl::StatusOr<LoadedInput> input = LoadInput(path, options);
  const std::string reorder = absl::GetFlag(FLAGS_reorder);
  if (!input.ok() || reorder.empty()) return input;
  if (!input->graph.has_value()) {
    return absl::InvalidArgumentError(
        "--reorder needs a graph INPUT; a buffer CSV has no ops");
  }
  absl::StatusOr<Graph> graph = ReorderGraph(*input->graph, reorder);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<Problem> problem = BuildProblem(*graph, options);
  if (!problem.ok()) return problem.status();
  input->graph = std::move(*graph);
  input->problem = std::move(*problem);
  return input;
}

}  // namespace memplan::tool
