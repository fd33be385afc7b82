#include "flags.h"

#include <map>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "memplan/spelling.h"

// Each help text starts with the placeholder of its value ("SIZE: ...");
// booleans have none. FlagHelp() prints them as --name=SIZE.
ABSL_FLAG(memplan::tool::ByteSize, alignment, {1},
          "SIZE: default alignment of every buffer, a power of two");
ABSL_FLAG(bool, plan_constants, false, "plan constants (weights) too");
ABSL_FLAG(bool, plan_inputs, true,
          "plan graph inputs (--no-plan-inputs: leave them to the caller)");
ABSL_FLAG(bool, plan_outputs, true,
          "plan graph outputs (--no-plan-outputs: leave them to the caller)");
ABSL_FLAG(memplan::tool::PoolSpecs, pool, {},
          "NAME[:CAPACITY[:ALIGNMENT]]: a memory pool, fastest first; "
          "repeatable; replaces the input's pools (capacity 0 = unbounded)");
ABSL_FLAG(memplan::tool::ByteSize, capacity, {0},
          "SIZE: capacity of the single default pool (0 = unbounded)");
ABSL_FLAG(std::string, reorder, "",
          "NAME: plan the graph's ops in another valid order: longest_path, "
          "memory, optimal, window or reverse_postorder; for plan also placed "
          "(the order of the smallest placed peak among the graph's, "
          "memory's, window's and optimal's, which the plan records)");
ABSL_FLAG(std::string, planner, "",
          "NAME: the planner (memplan planners lists them; empty = the "
          "default)");
ABSL_FLAG(memplan::tool::TimeLimit, time_limit, {},
          "SECONDS: wall-clock limit per plan (or a duration such as 500ms), "
          "--reorder=optimal or window included (half of it); a limit makes "
          "results depend on the machine's speed");
ABSL_FLAG(int64_t, work_limit, 0,
          "N: counted effort per plan in work units, the one budget of every "
          "planner and of --reorder=optimal or window (half of it; about 40 "
          "million a second; 0 = 400 million, or 40 million per second of "
          "--time-limit); the same on any machine");
ABSL_FLAG(bool, quiet, false, "no progress lines on stderr while planning");
ABSL_FLAG(memplan::tool::ProgressMode, progress,
          memplan::tool::ProgressMode::kAuto,
          "WHEN: the progress line on stderr while planning: auto (a run over "
          "a second, rewritten in place on a terminal; else a line every 5 s "
          "for a run over 2 s), always (every run) or never");
ABSL_FLAG(uint64_t, seed, 0, "N: seed of every random choice");
ABSL_FLAG(int32_t, threads, 1, "N: worker threads, 1 to 1024");
ABSL_FLAG(std::vector<std::string>, option, {},
          "NAME=VALUE: an option of the planner, repeatable (memplan planners "
          "NAME lists a planner's options, their types and defaults); e.g. "
          "--option symmetry=false --option start_share=0.2");
ABSL_FLAG(std::string, out, "",
          "FILE: write the plan to FILE (.json, .csv, .json.gz, .csv.gz) "
          "instead of stdout");
ABSL_FLAG(std::string, graph_out, "",
          "FILE: write the graph in the op order the plan refers to (JSON)");
ABSL_FLAG(bool, wall_time, false,
          "write the planner's wall time into the plan file (then the same "
          "input no longer gives the same bytes)");
ABSL_FLAG(std::vector<std::string>, planners, {},
          "NAME,...: the planners to compare (empty = every registered one)");
ABSL_FLAG(std::string, format, "",
          "NAME: compare: table (default), markdown, csv or summary, several "
          "separated by commas; plan: json, csv, c-header or tflm-offline "
          "(default: from --out's extension)");
ABSL_FLAG(bool, shared_objects, false,
          "also plan with caffe2_greedy and caffe2_dp and print memonger's "
          "shared-object statistics (slow on large inputs)");
ABSL_FLAG(std::vector<std::string>, at, {},
          "NAME=VALUE: a graph with dims (plan, stats): also print its "
          "figures with dim NAME at VALUE (the other dims at their maxima); "
          "repeatable. Unlike --dim it binds nothing");

namespace memplan::tool {
namespace {

// The abseil name of a command-line name: dashes become underscores.
std::string FlagName(absl::string_view name) {
  return absl::StrReplaceAll(name, {{"-", "_"}});
}

std::string CommandLineName(absl::string_view name) {
  return absl::StrReplaceAll(name, {{"_", "-"}});
}

// Flags whose repeated values accumulate (joined by commas) instead of the
// last one winning.
bool Accumulates(absl::string_view name) {
  return name == "pool" || name == "option" || name == "dim" || name == "at";
}

}  // namespace

bool AbslParseFlag(absl::string_view text, ByteSize* size, std::string* error) {
  absl::StatusOr<Bytes> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    *error = std::string(bytes.status().message());
    return false;
  }
  size->bytes = *bytes;
  return true;
}

std::string AbslUnparseFlag(ByteSize size) { return absl::StrCat(size.bytes); }

bool AbslParseFlag(absl::string_view text, TimeLimit* limit,
                   std::string* error) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    limit->value.reset();
    return true;
  }
  absl::StatusOr<absl::Duration> duration = ParseDuration(text);
  if (!duration.ok()) {
    *error = std::string(duration.status().message());
    return false;
  }
  limit->value = *duration;
  return true;
}

std::string AbslUnparseFlag(const TimeLimit& limit) {
  return limit.value.has_value() ? absl::FormatDuration(*limit.value) : "";
}

bool AbslParseFlag(absl::string_view text, ProgressMode* mode,
                   std::string* error) {
  if (text == "auto") {
    *mode = ProgressMode::kAuto;
  } else if (text == "always" || text == "true") {
    *mode = ProgressMode::kAlways;
  } else if (text == "never" || text == "false") {
    *mode = ProgressMode::kNever;
  } else {
    *error = absl::StrCat("\"", text, "\" is not never, auto or always");
    return false;
  }
  return true;
}

std::string AbslUnparseFlag(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::kNever:
      return "never";
    case ProgressMode::kAlways:
      return "always";
    case ProgressMode::kAuto:
      break;
  }
  return "auto";
}

bool AbslParseFlag(absl::string_view text, PoolSpecs* specs,
                   std::string* error) {
  specs->pools.clear();
  for (absl::string_view spec : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
    Pool pool;
    pool.name = std::string(parts[0]);
    absl::StatusOr<Bytes> capacity =
        parts.size() > 1 ? ParseByteSize(parts[1]) : Bytes{0};
    absl::StatusOr<Bytes> alignment =
        parts.size() > 2 ? ParseByteSize(parts[2]) : Bytes{1};
    if (pool.name.empty() || parts.size() > 3 || !capacity.ok() ||
        !alignment.ok()) {
      *error = absl::StrCat(
          "\"", spec,
          "\" is not NAME[:CAPACITY[:ALIGNMENT]] with sizes such as 512KiB");
      return false;
    }
    pool.capacity = *capacity;
    pool.alignment = *alignment;
    specs->pools.push_back(pool);
  }
  return true;
}

std::string AbslUnparseFlag(const PoolSpecs& specs) {
  std::vector<std::string> parts;
  for (const Pool& pool : specs.pools) {
    parts.push_back(
        absl::StrCat(pool.name, ":", pool.capacity, ":", pool.alignment));
  }
  return absl::StrJoin(parts, ",");
}

namespace {

// Sets each flag of `values` (abseil name -> text), which joins `given`.
absl::Status SetFlags(const std::map<std::string, std::string>& values,
                      std::set<std::string>& given) {
  for (const auto& [name, value] : values) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      // abseil says "Illegal value 'x' specified for flag 'y'; <reason>".
      const size_t reason = error.find("; ");
      if (reason != std::string::npos) error = error.substr(reason + 2);
      return absl::InvalidArgumentError(
          absl::StrCat("--", CommandLineName(name), "=", value, ": ", error));
    }
    given.insert(name);
  }
  return absl::OkStatus();
}

// "unknown flag --planer (did you mean --planner?)": the closest of the
// command's flags, when one is close.
absl::Status UnknownFlag(const std::string& spelled,
                         const std::vector<std::string>& allowed) {
  std::vector<std::string> spellings;
  for (const std::string& name : allowed) {
    spellings.push_back(CommandLineName(name));
  }
  const std::string closest = ClosestName(CommandLineName(spelled), spellings);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown flag --", spelled,
      closest.empty() ? "" : absl::StrCat(" (did you mean --", closest, "?)")));
}

}  // namespace

absl::StatusOr<Arguments> ParseArguments(
    const std::vector<std::string>& args,
    const std::vector<std::string>& allowed) {
  Arguments result;
  std::map<std::string, std::string> values;  // abseil name -> text
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_ended || arg.size() < 2 || arg[0] != '-') {
      result.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      result.help = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag ", arg, " (flags are spelled --name=value)"));
    }
    const size_t eq = arg.find('=');
    const std::string spelled =
        arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string name = FlagName(spelled);
    auto is_allowed = [&](const std::string& n) {
      return std::find(allowed.begin(), allowed.end(), n) != allowed.end();
    };
    std::optional<std::string> value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    absl::CommandLineFlag* flag =
        is_allowed(name) ? absl::FindCommandLineFlag(name) : nullptr;
    if (flag == nullptr && !value.has_value()) {
      // --noname and --no-name switch a boolean off.
      for (absl::string_view prefix : {"no_", "no"}) {
        if (!absl::StartsWith(name, prefix)) continue;
        const std::string base = name.substr(prefix.size());
        absl::CommandLineFlag* negated =
            is_allowed(base) ? absl::FindCommandLineFlag(base) : nullptr;
        if (negated != nullptr &&
            (negated->IsOfType<bool>() || negated->IsOfType<ProgressMode>())) {
          flag = negated;
          name = base;
          value = "false";
          break;
        }
      }
    }
    if (flag == nullptr) return UnknownFlag(spelled, allowed);
    if (!value.has_value()) {
      if (flag->IsOfType<bool>() || flag->IsOfType<ProgressMode>()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("--", spelled, " needs a value"));
      }
    }
    if (Accumulates(name) && values.count(name) > 0) {
      values[name] = absl::StrCat(values[name], ",", *value);
    } else {
      values[name] = *value;
    }
  }
  if (absl::Status s = SetFlags(values, result.given); !s.ok()) return s;
  return result;
}

std::string FlagHelp(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) continue;
    std::string help = flag->Help();
    std::string spelled = absl::StrCat("--", CommandLineName(name));
    const size_t colon = help.find(": ");
    if (colon != std::string::npos && colon > 0 &&
        absl::AsciiStrToUpper(help.substr(0, colon)) == help.substr(0, colon)) {
      absl::StrAppend(&spelled, "=", help.substr(0, colon));
      help = help.substr(colon + 2);
    }
    const std::string fallback = flag->DefaultValue();
    if (!flag->IsOfType<bool>() && !fallback.empty() && fallback != "0") {
      absl::StrAppend(&help, " (default ", fallback, ")");
    }
    // Wrapped to 80 columns, the help text indented under the flag.
    absl::StrAppend(&out, "  ", spelled, "\n");
    std::string line = "      ";
    for (absl::string_view word : absl::StrSplit(help, ' ')) {
      if (line.size() + word.size() > 79 && line.size() > 6) {
        absl::StrAppend(&out, line, "\n");
        line = "      ";
      }
      absl::StrAppend(&line, line.size() > 6 ? " " : "", word);
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace memplan::tool
