// memplan planners: what is registered, the default marked.

#include <iostream>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "memplan/planner.h"

namespace memplan::tool {
namespace {

absl::Status Run(const Arguments&) {
  const std::string_view fallback = DefaultPlannerName();
  for (const PlannerInfo& info : RegisteredPlanners()) {
    std::cout << absl::StrFormat(
        "%-16s %s%s\n", info.name, info.description,
        info.name == fallback ? " [default]" : "");
  }
  return absl::OkStatus();
}

}  // namespace

Command PlannersCommand() {
  return Command{
      .name = "planners",
      .synopsis = "",
      .description =
          "Lists the registered planners with what each runs; [default] marks "
          "the one plan and PlanMemory() use when none is named.",
      .run = &Run,
  };
}

}  // namespace memplan::tool
