// How the tool reads its INPUT: every command that takes one calls
// LoadToolInput(), so a new input type or build flag is added here once.

#ifndef MEMPLAN_TOOLS_MEMPLAN_INPUT_H_
#define MEMPLAN_TOOLS_MEMPLAN_INPUT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flags.h"
#include "memplan/load.h"
#include "memplan/problem.h"

namespace memplan::tool {

// The flags LoadToolInput() reads (abseil names), for the commands' lists.
const std::vector<std::string>& InputFlags();

// The build options of the input flags (--alignment, --plan-constants, ...).
BuildOptions BuildOptionsFromFlags();

// The limits of --max-input-size, for every file the tool reads.
ReadOptions ReadOptionsFromFlags();

// Reads `path` (a graph JSON, .json.gz, a buffer CSV, or an ONNX model with
// the --dim and --onnx-* flags) with memplan::Load() and the input flags,
// applying --reorder to graphs. For an ONNX model, `import_report` (when
// given) receives the importer's counts, one "name: value" line each.
absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path,
                                          std::string* import_report = nullptr);

// The same with the build options and op ordering given (for instance those
// a plan file records).
// `effort`: what the ordering may spend (OrderingEffort(), commands.h).
absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path,
                                          const BuildOptions& options,
                                          const std::string& reorder,
                                          std::string* import_report = nullptr,
                                          const PlanOptions& effort = {});

// INPUT as the plan file `plan` was made of it (memplan::LoadInputOfPlan):
// with the build options and op ordering the plan records, applied to
// INPUT's own declarations, unless build flags are given on the command
// line (then with the flags, as given); an error when INPUT's contents are
// not those the plan records. verify and report read a plan's input this
// way.
absl::StatusOr<PlanInput> LoadInputOfPlan(const std::string& path,
                                          const PlanFile& plan,
                                          const Arguments& args);

// A plan of `problem` from the plan file: errors in a CSV plan name the file.
absl::StatusOr<Plan> ParseToolPlan(const PlanFile& plan,
                                   const Problem& problem);

// The values and ranges of --dim (ParseDimArguments of memplan/load.h).
absl::StatusOr<DimArguments> DimsFromFlags();

// INPUT read with the dims that --dim gives no value kept symbolic
// (LoadOptions::keep_symbolic): a graph JSON's declared dims narrowed by
// --dim's ranges and, with `bind_values`, bound by its values; an ONNX
// model's dim_params given ranges by --dim (OnnxImportOptions::dim_ranges).
// nullopt when nothing stays symbolic, or when INPUT is none of these or
// cannot be read: the ordinary reading then holds, or gives the error.
struct SymbolicToolInput {
  Graph graph;
  std::string content_hash;  // of INPUT's bytes, as a plan file records it
};
absl::StatusOr<std::optional<SymbolicToolInput>> LoadSymbolicInput(
    const std::string& path, bool bind_values);

// Whether a flag of InputFlags() that a plan file records (not the ONNX
// ones) is given.
bool AnyBuildFlagGiven(const Arguments& args);

// Usage errors of the input flags (an unknown --reorder name), checked before
// any input is read. `placed`: --reorder=placed (kPlacedOrdering) is valid,
// for the command that plans.
absl::Status CheckInputFlags(bool placed = false);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_INPUT_H_
