// How the tool reads its INPUT: every command that takes one calls
// LoadToolInput(), so a new input type or build flag is added here once.

#ifndef MEMPLAN_TOOLS_MEMPLAN_INPUT_H_
#define MEMPLAN_TOOLS_MEMPLAN_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/io.h"
#include "memplan/problem.h"

namespace memplan::tool {

// The flags LoadToolInput() reads (abseil names), for the commands' lists.
const std::vector<std::string>& InputFlags();

// The build options of the input flags (--alignment, --plan-constants, ...).
BuildOptions BuildOptionsFromFlags();

// Reads `path` (a graph JSON, .json.gz, or a buffer CSV) with the input flags,
// applying --reorder to graphs.
absl::StatusOr<LoadedInput> LoadToolInput(const std::string& path);

// Usage errors of the input flags (an unknown --reorder name), checked before
// any input is read.
absl::Status CheckInputFlags();

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_INPUT_H_
