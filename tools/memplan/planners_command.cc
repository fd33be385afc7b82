// memplan planners [NAME]: what is registered, the default marked, the
// planners of graphs with dims in a section of their own; with a name, that
// planner's description and options.

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "memplan/planner.h"
#include "memplan/registry.h"
#include "memplan/symbolic_planner.h"

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
void PrintPlanner(std::string_view name, std::string_view description,
                  PlannerKind kind, const std::vector<PlannerOption>& options) {
  std::cout << name << ": " << description << "\n"
            << "kind: " << KindName(kind) << "\n";
  if (options.empty()) {
    std::cout << "options: none\n";
    return;
  }
  std::cout << "options (memplan plan --option NAME=VALUE):\n";
  for (const PlannerOption& option : options) {
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
  std::string symbolic;
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    if (info.name == args.positional[0]) return absl::OkStatus();
    symbolic +=
        absl::StrCat(symbolic.empty() ? "" : ", ", std::string(info.name));
  }
  const absl::Status s = CheckPlannerName("", args.positional[0]);
  if (s.ok()) return s;
  return absl::Status(
      s.code(), absl::StrCat(s.message(), "; of graphs with dims: ", symbolic));
}

absl::Status Run(const Arguments& args) {
  const std::string_view fallback = DefaultPlannerName();
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (!args.positional.empty()) {
      if (info.name == args.positional[0]) {
        PrintPlanner(info.name, info.description, info.kind, info.options);
      }
      continue;
    }
    std::cout << absl::StrFormat("%-16s %s%s\n", info.name, info.description,
                                 info.name == fallback ? " [default]" : "");
  }
  const std::string_view symbolic = DefaultSymbolicPlannerName();
  if (args.positional.empty()) {
    std::cout << "\nplanners of graphs with dims (planned once for every "
                 "value):\n";
  }
  for (const SymbolicPlannerInfo& info : RegisteredSymbolicPlanners()) {
    if (!args.positional.empty()) {
      if (info.name == args.positional[0]) {
        PrintPlanner(info.name, info.description, info.kind, info.options);
      }
      continue;
    }
    std::cout << absl::StrFormat("%-16s %s%s\n", info.name, info.description,
                                 info.name == symbolic ? " (the default)" : "");
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
          "the one plan and PlanMemory() use when none is named. The planners "
          "of graphs with dims follow in a section of their own, the one of "
          "PlanSymbolicMemory() marked (the default). With NAME, "
          "prints that planner's description and its options (NAME=TYPE, "
          "default, meaning), which `memplan plan --option NAME=VALUE` sets.",
      .min_positional = 0,
      .max_positional = 1,
      .check = &Check,
      .run = &Run,
  };
}

}  // namespace memplan::tool
