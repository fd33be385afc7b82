// The memplan tool's flags and its command line.
//
// Flags are abseil flags (ABSL_FLAG): typed values, defaults and help text in
// one place. The tool scans argv itself and sets them through abseil's flag
// registry, because absl::ParseCommandLine would exit with status 1 on any
// error and on --help, accept every subcommand's flags everywhere and know
// neither -h nor dashes in names. The conventions:
//   --name=value and --name value; --name, --noname and --no-name for booleans;
//   dashes and underscores in names are the same (--time-limit, --time_limit);
//   -h and --help print the usage on stdout; "--" ends the flags;
//   --pool and --option may be repeated (their values accumulate).

#ifndef MEMPLAN_TOOLS_MEMPLAN_FLAGS_H_
#define MEMPLAN_TOOLS_MEMPLAN_FLAGS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "memplan/types.h"
#include "memplan/units.h"

namespace memplan::tool {

// A number of bytes with an optional unit, as coreutils reads sizes:
// K, M, G, T and KiB, MiB, GiB, TiB are powers of 1024; KB, MB, GB, TB powers
// of 1000; B is one byte (letters in either case). "2M" is 2097152 bytes.
struct ByteSize {
  Bytes bytes = 0;
};
bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error);
std::string AbslUnparseFlag(ByteSize size);

// A wall-clock limit: seconds ("2", "0.5") or an abseil duration ("500ms",
// "1m30s"); finite and not negative. Unset: the command's default.
struct TimeLimit {
  std::optional<absl::Duration> value;
};
bool AbslParseFlag(absl::string_view text, TimeLimit* limit,
                   std::string* error);
std::string AbslUnparseFlag(const TimeLimit& limit);

// --progress: never, auto or always (progress.h); bare --progress is
// always and --noprogress never, as before they had values.
enum class ProgressMode { kNever, kAuto, kAlways };
bool AbslParseFlag(absl::string_view text, ProgressMode* mode,
                   std::string* error);
std::string AbslUnparseFlag(ProgressMode mode);

// --pool=NAME[:CAPACITY[:ALIGNMENT]], repeatable or comma-separated.
struct PoolSpecs {
  std::vector<Pool> pools;
};
bool AbslParseFlag(absl::string_view text, PoolSpecs* specs,
                   std::string* error);
std::string AbslUnparseFlag(const PoolSpecs& specs);

// A command line after the flags were set: the positional arguments, and the
// flags that were given (by their abseil names, with underscores).
struct Arguments {
  std::vector<std::string> positional;
  std::set<std::string> given;
  bool help = false;  // -h or --help

  bool Given(absl::string_view name) const {
    return given.count(std::string(name)) > 0;
  }
};

// Scans args (argv without the program and the command), setting the flags
// named in `allowed` (abseil names). A flag not in `allowed`, a missing or
// bad value is InvalidArgument naming the flag.
absl::StatusOr<Arguments> ParseArguments(
    const std::vector<std::string>& args,
    const std::vector<std::string>& allowed);

// "  --time-limit=SECONDS  help text (default: ...)" for each flag, wrapped.
std::string FlagHelp(const std::vector<std::string>& names);

}  // namespace memplan::tool

// Build flags: how an input becomes a problem.
ABSL_DECLARE_FLAG(memplan::tool::ByteSize, alignment);
ABSL_DECLARE_FLAG(bool, plan_constants);
ABSL_DECLARE_FLAG(bool, plan_inputs);
ABSL_DECLARE_FLAG(bool, plan_outputs);
ABSL_DECLARE_FLAG(memplan::tool::PoolSpecs, pool);
ABSL_DECLARE_FLAG(memplan::tool::ByteSize, capacity);
ABSL_DECLARE_FLAG(std::string, reorder);
// Planning.
ABSL_DECLARE_FLAG(std::string, planner);
ABSL_DECLARE_FLAG(memplan::tool::TimeLimit, time_limit);
ABSL_DECLARE_FLAG(int64_t, work_limit);
ABSL_DECLARE_FLAG(bool, quiet);
ABSL_DECLARE_FLAG(memplan::tool::ProgressMode, progress);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(int32_t, threads);
ABSL_DECLARE_FLAG(std::vector<std::string>, option);
// Output.
ABSL_DECLARE_FLAG(std::string, out);
ABSL_DECLARE_FLAG(std::string, graph_out);
ABSL_DECLARE_FLAG(bool, wall_time);
// compare.
ABSL_DECLARE_FLAG(std::vector<std::string>, planners);
ABSL_DECLARE_FLAG(std::string, format);
// stats.
ABSL_DECLARE_FLAG(bool, shared_objects);
// Symbolic graphs: values to evaluate at.
ABSL_DECLARE_FLAG(std::vector<std::string>, at);

#endif  // MEMPLAN_TOOLS_MEMPLAN_FLAGS_H_
