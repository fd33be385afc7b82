// memplan compare: every planner (or --planners) on every input.

#include <filesystem>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "commands.h"
#include "input.h"
#include "memplan/compare.h"

namespace memplan::tool {
namespace {

absl::StatusOr<std::vector<CompareFormat>> Formats() {
  std::vector<CompareFormat> formats;
  for (absl::string_view name :
       absl::StrSplit(absl::GetFlag(FLAGS_format), ',', absl::SkipEmpty())) {
    absl::StatusOr<CompareFormat> format =
        ParseCompareFormat(std::string(name));
    if (!format.ok()) return format.status();
    formats.push_back(*format);
  }
  if (formats.empty()) formats.push_back(CompareFormat::kTable);
  return formats;
}

absl::Status Check(const Arguments&) {
  if (absl::Status s = Formats().status(); !s.ok()) return s;
  for (const std::string& name : absl::GetFlag(FLAGS_planners)) {
    if (absl::Status s = CheckPlannerName("planners", name); !s.ok()) return s;
  }
  return CheckPlanningFlags();
}

// A planner that fails is a row saying so; the exit status is 1 only when an
// input cannot be read or a plan fails verification.
absl::Status Run(const Arguments& args) {
  CompareOptions options;
  options.build = BuildOptionsFromFlags();
  options.planners = absl::GetFlag(FLAGS_planners);
  options.plan = PlanOptionsFromFlags(args, absl::Seconds(5));
  // Every input is read by the tool's loader first (ONNX models too), as
  // CompareInputs() would: an unreadable input fails before any planning.
  std::vector<Problem> problems;
  for (const std::string& path : args.positional) {
    absl::StatusOr<LoadedInput> input = LoadToolInput(path);
    if (!input.ok()) {
      return absl::Status(input.status().code(),
                          absl::StrCat(path, ": ", input.status().message()));
    }
    problems.push_back(std::move(input->problem));
  }
  absl::StatusOr<std::vector<CompareRow>> rows = std::vector<CompareRow>();
  for (size_t i = 0; i < problems.size(); ++i) {
    absl::StatusOr<std::vector<CompareRow>> some = ComparePlanners(
        problems[i],
        std::filesystem::path(args.positional[i]).filename().string(), options);
    if (!some.ok()) return some.status();
    rows->insert(rows->end(), some->begin(), some->end());
  }
  const std::vector<CompareFormat> formats = *Formats();
  for (size_t i = 0; i < formats.size(); ++i) {
    std::cout << (i > 0 ? "\n" : "") << FormatComparison(*rows, formats[i]);
  }
  std::cout << std::flush;
  if (AnyUnverified(*rows)) {
    return absl::InternalError("a plan failed verification (see the table)");
  }
  return absl::OkStatus();
}

}  // namespace

Command CompareCommand() {
  Command command{
      .name = "compare",
      .synopsis = "INPUT... [flags]",
      .description =
          "Runs every registered planner (or --planners) on each INPUT, "
          "verifies every plan and prints one row per input and planner: "
          "buffers, naive total, lower bound, peak, % of the naive total, "
          "ratio to the lower bound, proven optimal, wall time, verified. A "
          "planner that fails on an input gets a row saying why. The time "
          "limit per plan defaults to 5 s.",
      .min_positional = 1,
      .max_positional = -1,
      .check = &Check,
      .run = &Run,
  };
  command.flags = {"planners", "format"};
  for (const std::string& f : PlanningFlags()) command.flags.push_back(f);
  for (const std::string& f : InputFlags()) {
    if (f != "reorder") command.flags.push_back(f);
  }
  return command;
}

}  // namespace memplan::tool
