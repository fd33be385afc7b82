// The tool's plans of symbolic graphs (docs/symbolic.md): `memplan plan` of
// a graph JSON whose dims --dim leaves unbound writes one plan valid over
// their ranges, and `memplan verify` proves such a plan over the ranges or
// checks it at the values --dim gives.

#ifndef MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_PLAN_H_
#define MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flags.h"
#include "memplan/load.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/types.h"

namespace memplan::tool {

// The flags only `memplan plan` of a symbolic graph reads (abseil names).
const std::vector<std::string>& SymbolicPlanFlags();

// Usage errors of those flags, and whether `planner` (--planner) is a
// planner of symbolic graphs.
absl::Status CheckSymbolicPlanFlags();
bool IsSymbolicPlanner(absl::string_view planner);

// A graph JSON INPUT as read, its dims unbound, and its contents' hash.
struct GraphInput {
  Graph graph;
  std::string content_hash;
};

// The graph JSON `path` when it is one (.json, .json.gz) and the values of
// --dim leave some of its dims unbound; nullopt otherwise (then the ordinary
// reading of INPUT holds, or its error). `bound` receives the graph with
// --dim's values bound.
absl::StatusOr<std::optional<GraphInput>> ReadSymbolicInput(
    const std::string& path, Graph* bound);

// memplan plan of a symbolic graph (`bound`, the graph with --dim's values
// bound): PlanSymbolicMemory, the plan written as JSON, the summary on
// stderr.
absl::Status RunSymbolicPlan(const Arguments& args, const GraphInput& input,
                             const Graph& bound);

// Usage error when a flag of SymbolicPlanFlags() is given for a graph the
// ordinary planners plan.
absl::Status CheckNoSymbolicFlags(const Arguments& args);

// memplan verify of the symbolic plan file `file` (its provenance
// `recorded`) over the ranges of the graph `input_path` bound by --dim
// (`bound`): rebuilt, read against it, proven.
absl::Status VerifySymbolicPlanFile(
    const Arguments& args, const PlanFile& file,
    const std::optional<PlanProvenance>& recorded,
    const std::string& input_path, const GraphInput& input, const Graph& bound);

// memplan verify of the symbolic plan file `file` at the values of --dim,
// which bind every dim: `input` is INPUT bound there, built as the plan
// records (LoadInputOfPlan). The plan evaluated there is checked against
// that problem by the ordinary verifier.
absl::Status VerifySymbolicPlanAt(const PlanFile& file,
                                  const std::string& input_path,
                                  const PlanInput& input);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_SYMBOLIC_PLAN_H_
