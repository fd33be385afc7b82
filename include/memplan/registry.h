// The registry of planners: every planner by name, with its own options
// declared (name, type, default, meaning) and checked in one place:
//   CreatePlanner("exact", {{"symmetry", "false"}, {"start_share", "0.2"}})
// The interface the planners implement is memplan/planner.h.

#ifndef MEMPLAN_REGISTRY_H_
#define MEMPLAN_REGISTRY_H_

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "memplan/planner.h"

namespace memplan {

// Builds a planner from its checked options.
using PlannerFactory = std::unique_ptr<Planner> (*)(const OptionValues&);

struct PlannerInfo {
  std::string_view name;
  std::string_view description;  // one line: what it does
  PlannerKind kind = PlannerKind::kHeuristic;
  PlannerCost cost = PlannerCost::kLight;
  std::vector<PlannerOption> options;  // its own options, in display order
};

// Every registered planner, in the registry's order.
std::vector<PlannerInfo> RegisteredPlanners();

// The planner `name` with `options` (each NAME=VALUE of one of its declared
// options; the others keep their defaults). NotFound (listing the valid
// names) when `name` is not registered; InvalidArgument naming the option
// when a key is not one of the planner's options (listing them) or a value
// does not parse as its type or lies outside its range.
absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(
    std::string_view name, const PlannerOptions& options = {});

// Adds a planner to the registry, after the core's planners (`info`'s
// strings are copied). Optional components register theirs through a call
// of their own that a program makes before it looks planners up (the `cp`
// planner of memplan::cp: RegisterCpPlanner(), memplan/planners/cp.h); a
// program may register its own planners too. `make` receives the checked
// options `info` declares (each option's default must parse). InvalidArgument
// without a name or factory, or with a bad declaration; AlreadyExists when
// the name is taken (the registry is unchanged: registering the same planner
// twice fails harmlessly).
absl::Status RegisterPlanner(const PlannerInfo& info, PlannerFactory make);

// The planner PlanMemory() and the tool use when none is named.
std::string_view DefaultPlannerName();

}  // namespace memplan

#endif  // MEMPLAN_REGISTRY_H_
