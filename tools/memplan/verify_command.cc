// memplan verify: check a plan file against its input.

#include <filesystem>
#include <iostream>
#include <optional>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "input.h"
#include "memplan/load.h"
#include "memplan/problem.h"
#include "memplan/verify.h"

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments&) { return CheckInputFlags(); }

// The input a plan file records: its path as given when planning, looked up
// from the working directory, then from the plan file's directory.
absl::StatusOr<std::string> RecordedInput(const PlanProvenance& provenance,
                                          const std::string& plan_path) {
  const std::filesystem::path recorded(provenance.input);
  std::error_code error;
  if (std::filesystem::exists(recorded, error)) return provenance.input;
  if (recorded.is_relative()) {
    const std::filesystem::path beside =
        std::filesystem::path(plan_path).parent_path() / recorded;
    if (std::filesystem::exists(beside, error)) return beside.string();
  }
  return absl::NotFoundError(
      absl::StrCat("cannot find \"", provenance.input,
                   "\", the input the plan records (looked in the working "
                   "directory and beside the plan); give it: memplan verify "
                   "INPUT PLAN"));
}

absl::Status Run(const Arguments& args) {
  const std::string& path = args.positional.back();
  absl::StatusOr<PlanFile> file = ReadPlanFile(path, ReadOptionsFromFlags());
  if (!file.ok()) return file.status();
  absl::StatusOr<std::optional<PlanProvenance>> provenance =
      RecordedProvenance(*file);
  if (!provenance.ok()) return provenance.status();
  std::string input_path;
  if (args.positional.size() == 2) {
    input_path = args.positional[0];
  } else if (!provenance->has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " records no input (a buffer CSV or an older plan file); give "
              "it: memplan verify INPUT PLAN"));
  } else {
    absl::StatusOr<std::string> found = RecordedInput(**provenance, path);
    if (!found.ok()) return found.status();
    input_path = *found;
  }
  bool recorded = false;
  absl::StatusOr<LoadedInput> input =
      LoadInputOfPlan(input_path, *file, *provenance, args, &recorded);
  if (!input.ok()) return input.status();
  absl::StatusOr<Plan> plan = ParseToolPlan(*file, input->problem);
  if (!plan.ok()) return plan.status();
  if (absl::Status s = VerifyPlan(input->problem, *plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  std::cout << absl::StrFormat(
      "valid plan of %s%s: %d buffers, peak %d bytes, lower bound %d\n",
      input_path, recorded ? " (with the flags the plan records)" : "",
      plan->assignments.size(), plan->peak, LowerBound(input->problem));
  return absl::OkStatus();
}

}  // namespace

Command VerifyCommand() {
  return Command{
      .name = "verify",
      .synopsis = "[INPUT] PLAN [flags]",
      .description =
          "Checks PLAN (memplan-plan-v1 JSON, or a buffer CSV with an offset "
          "column) against INPUT. A JSON plan written by `memplan plan` "
          "records its input's name and hash and the build flags: they are "
          "used unless build flags are given, a plan of other contents than "
          "INPUT's is an error, and INPUT may be left out (the recorded path "
          "is looked up from the working directory, then beside PLAN). A CSV "
          "plan needs INPUT and the flags it was planned with. Exits 0 with a "
          "summary when the plan is valid, 1 with the verifier's message when "
          "not.",
      .flags = InputFlags(),
      .min_positional = 1,
      .max_positional = 2,
      .check = &Check,
      .run = &Run,
  };
}

}  // namespace memplan::tool
