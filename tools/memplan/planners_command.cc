// memplan planners [NAME]: what is registered, the default marked; with a
// name, that planner's description and options.

#include <iostream>
#include <string>

#include "absl/strings/str_format.h"
#include "commands.h"
#include "memplan/planner.h"
#include "memplan/registry.h"

namespace memplan::tool {
namespace {

constexpr std::string_view KindName(PlannerKind kind) {
  switch (kind) {
    case PlannerKind::kHeuristic:
      return "heuristic (one pass)";
    case PlannerKind::kSearch:
      return "search (improves its plan while the budget lasts)";
    case PlannerKind::kExact:
      return "exact (proves optimality where it finishes)";
  }
  return "heuristic";
}

// A planner's description and options, one option a line:
//   start_share=double (default 0.1)
//       the warm start's share of the work limit
void PrintPlanner(const PlannerInfo& info) {
  std::cout << info.name << ": " << info.description << "\n"
            << "kind: " << KindName(info.kind) << "\n";
  if (info.options.empty()) {
    std::cout << "options: none\n";
    return;
  }
  std::cout << "options (memplan plan --option NAME=VALUE):\n";
  for (const PlannerOption& option : info.options) {
    std::string type(OptionTypeName(option.type));
    if (option.type == OptionType::kEnum) {
      type.clear();
      for (const std::string& choice : option.choices) {
        type += (type.empty() ? "" : "|") + choice;
      }
    }
    std::cout << absl::StrFormat("  %s=%s (default %s)\n      %s\n",
                                 option.name, type, option.default_value,
                                 option.description);
  }
}

absl::Status Check(const Arguments& args) {
  if (args.positional.empty()) return absl::OkStatus();
  return CheckPlannerName("", args.positional[0]);
}

absl::Status Run(const Arguments& args) {
  const std::string_view fallback = DefaultPlannerName();
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (!args.positional.empty()) {
      if (info.name == args.positional[0]) PrintPlanner(info);
      continue;
    }
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
      .synopsis = "[NAME]",
      .description =
          "Lists the registered planners with what each runs; [default] marks "
          "the one plan and PlanMemory() use when none is named. With NAME, "
          "prints that planner's description and its options (NAME=TYPE, "
          "default, meaning), which `memplan plan --option NAME=VALUE` sets.",
      .min_positional = 0,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
}

}  // namespace memplan::tool
