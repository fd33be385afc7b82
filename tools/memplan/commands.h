// The tool's subcommands. Each lives in its own <name>_command.cc and is
// listed once in main.cc's table; its synopsis, description and flags make
// its --help text, so the usage is written in one place.

#ifndef MEMPLAN_TOOLS_MEMPLAN_COMMANDS_H_
#define MEMPLAN_TOOLS_MEMPLAN_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "flags.h"
#include "memplan/load.h"
#include "memplan/planner.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "memplan/types.h"

namespace memplan::tool {

struct Command {
  absl::string_view name;
  absl::string_view synopsis;           // the arguments after "memplan NAME"
  absl::string_view description;        // a paragraph for NAME --help
  std::vector<std::string> flags = {};  // abseil names of the flags it accepts
  int min_positional = 0;
  int max_positional = 0;  // -1: no limit
  // Usage errors beyond the flags' own checks (exit status 2); may be null.
  absl::Status (*check)(const Arguments& args) = nullptr;
  // Runs the command; an error is exit status 1.
  absl::Status (*run)(const Arguments& args) = nullptr;
};

Command PlanCommand();
Command VerifyCommand();
Command StatsCommand();
Command PlannersCommand();
Command CompareCommand();
Command ReportCommand();
Command RematCommand();

// Flag lists shared by several commands (abseil names).
// --time-limit, --work-limit, --seed, --threads
std::vector<std::string> PlanningFlags();

// The planning flags as options. Without --time-limit: `time_limit` when
// set, else PlanOptions' own default.
PlanOptions PlanOptionsFromFlags(
    const Arguments& args,
    std::optional<absl::Duration> time_limit = std::nullopt);

// Usage errors of the planning flags.
absl::Status CheckPlanningFlags();

// The planner options of --option NAME=VALUE (repeatable); a value without
// "=" or a name given twice is a usage error. The registry checks the names
// and values (CreatePlanner).
absl::StatusOr<PlannerOptions> PlannerOptionsFromFlags();

// Usage error unless --option's options are valid for `planner` (empty:
// the default planner), as the registry checks them.
absl::Status CheckPlannerOptions(absl::string_view planner);

// True when `path` exists and is a file that takes writes but is not a
// regular one (/dev/null, a terminal, a named pipe): its name has no
// extension to choose a format by, and the default format is written.
bool IsWritableStream(const std::string& path);

// Usage error unless `name` is empty or a registered planner.
absl::Status CheckPlannerName(absl::string_view flag, absl::string_view name);

// One line about a plan: the peak of each pool and, in one pool, how it
// compares with the naive total and the lower bound. A sum over several pools
// is never compared with the single-pool lower bound.
std::string PlanSummary(const Problem& problem, const Plan& plan);

// The lower bound over op orders of a graph input built with `options`
// (LowerBoundOverOrders); nullopt for a buffer CSV, which has no ops, or
// when it is beyond its counted work.
absl::StatusOr<std::optional<OrderLowerBound>> InputOrderBound(
    const LoadedInput& input, const BuildOptions& options);

// One line about it: "any op order: at least X bytes (at op "NAME")", or
// "any op order: not computed (...)" for a graph beyond the bound's work;
// empty for a buffer CSV.
std::string OrderBoundLine(const LoadedInput& input,
                           const std::optional<OrderLowerBound>& bound);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_COMMANDS_H_
