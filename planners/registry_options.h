// The registry's one parser of planner options (memplan/planner.h):
// declarations checked when a planner is registered, a user's NAME=VALUE
// text checked and parsed by the declared types when it is created.

#ifndef MEMPLAN_PLANNERS_REGISTRY_OPTIONS_H_
#define MEMPLAN_PLANNERS_REGISTRY_OPTIONS_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/planner.h"

namespace memplan::internal {

// Every declared option, `given` or default, parsed. InvalidArgument naming
// the planner and the option: a key it does not declare (listing those it
// does), a value that is not of the option's type or out of its range.
absl::StatusOr<OptionValues> ParseOptions(
    std::string_view planner, const std::vector<PlannerOption>& declared,
    const PlannerOptions& given);

// InvalidArgument unless every option has a unique non-empty name, an enum
// has choices, and every default parses.
absl::Status CheckDeclarations(std::string_view planner,
                               const std::vector<PlannerOption>& declared);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_REGISTRY_OPTIONS_H_
