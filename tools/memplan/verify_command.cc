// memplan verify: check a plan file against its input.

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "input.h"
#include "memplan/load.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "symbolic_plan.h"
#ifdef MEMPLAN_HAVE_TFLITE
#include "memplan/tflite.h"
#endif

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

// A .tflite model alone: the offline plan in its metadata, checked.
absl::Status VerifyTflite(const std::string& path) {
#ifdef MEMPLAN_HAVE_TFLITE
  absl::StatusOr<TfliteModel> model = ReadTfliteModel(path);
  if (!model.ok()) return model.status();
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*model);
  if (!check.ok()) {
    return absl::Status(check.status().code(),
                        absl::StrCat(path, ": ", check.status().message()));
  }
  if (absl::Status s = VerifyPlan(check->problem, check->plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid offline plan in ", path, ": ", s.message()));
  }
  const size_t placed = check->plan.assignments.size();
  std::cout << absl::StrFormat(
      "valid offline plan of %s: %d buffers placed (%d tensors), arena %d "
      "bytes, lower bound %d\n",
      path, placed, model->tensor_count, check->plan.peak,
      check->plan.lower_bound);
  return absl::OkStatus();
#else
  return absl::UnimplementedError(absl::StrCat(
      "\"", path, "\": this memplan was built without the TFLite reader"));
#endif
}

absl::Status Run(const Arguments& args) {
  const std::string& path = args.positional.back();
  if (args.positional.size() == 1 && path.ends_with(".tflite")) {
    return VerifyTflite(path);
  }
  absl::StatusOr<PlanFile> file = ReadPlanFile(path, ReadOptionsFromFlags());
  if (!file.ok()) return file.status();
  absl::StatusOr<std::optional<PlanProvenance>> provenance =
      RecordedProvenance(*file);
  if (!provenance.ok()) return provenance.status();
  std::string input_path;
  if (args.positional.size() == 2) {
    input_path = args.positional[0];
  } else if (file->csv) {
    input_path = path;  // a buffer CSV with offsets holds its own input
  } else if (!provenance->has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     " records no input (an older plan file); give "
                     "it: memplan verify INPUT PLAN"));
  } else {
    absl::StatusOr<std::string> found = RecordedInput(**provenance, path);
    if (!found.ok()) return found.status();
    input_path = *found;
  }
  absl::StatusOr<PlanInput> input = LoadInputOfPlan(input_path, *file, args);
  if (!input.ok()) {
    // A graph JSON with dims --dim leaves unbound: the plan over them all.
    Graph bound;
    absl::StatusOr<std::optional<GraphInput>> symbolic =
        ReadSymbolicInput(input_path, &bound);
    if (!symbolic.ok()) return symbolic.status();
    if (symbolic->has_value()) {
      return VerifySymbolicPlanFile(args, *file, *provenance, input_path,
                                    **symbolic, bound);
    }
    return input.status();
  }
  const Problem& problem = input->input.problem;
  absl::StatusOr<Plan> plan = ParseToolPlan(*file, problem);
  if (!plan.ok()) {
    // A symbolic plan, checked at the values --dim gives.
    if (!file->csv && IsSymbolicPlanJson(file->text)) {
      return VerifySymbolicPlanAt(*file, input_path, *input);
    }
    return plan.status();
  }
  if (absl::Status s = VerifyPlan(problem, *plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  // What the answer rests on besides INPUT: the recorded flags, and what
  // they accept that INPUT does not declare (inputs left to the caller).
  std::vector<std::string> said;
  if (input->build.recorded) said.push_back("with the flags the plan records");
  for (const std::string& note : input->build.notes) said.push_back(note);
  std::cout << absl::StrFormat(
      "valid plan of %s%s: %d buffers, peak %d bytes, lower bound %d\n",
      input_path,
      said.empty() ? "" : absl::StrCat(" (", absl::StrJoin(said, "; "), ")"),
      plan->assignments.size(), plan->peak, LowerBound(problem));
  return absl::OkStatus();
}

}  // namespace

Command VerifyCommand() {
  return Command{
      .name = "verify",
      .synopsis = "[INPUT] PLAN [flags]",
      .description =
          "Checks PLAN (memplan-plan-v1 JSON, or a buffer CSV with an offset "
          "column) against INPUT; a .tflite model alone, the offline plan in "
          "its OfflineMemoryAllocation metadata (docs/tflite.md). A JSON plan "
          "written by `memplan plan` "
          "records its input's name and hash and the build flags: a plan of "
          "other contents than INPUT's is an error, and INPUT may be left out "
          "(the recorded path is looked up from the working directory, then "
          "beside PLAN). INPUT's own declarations (its pools, tensors and "
          "kinds) are the contract: the recorded flags fill in what INPUT "
          "leaves open, a recorded pool that loosens a declared one is an "
          "error, and what they accept beyond INPUT (graph inputs or outputs "
          "left to the caller, an op ordering) is named in the answer. Build "
          "flags given replace the recorded ones and are used as given. A "
          "CSV plan is checked against INPUT, or alone against its own rows, "
          "with the flags it was planned with. A plan of a graph with dims "
          "(from `memplan plan` without --dim) is proven for every value of "
          "their ranges, the file's buffers checked against the graph's; "
          "with --dim binding every dim, it is checked at those values only, "
          "against the graph bound there. Exits 0 "
          "with a summary when the plan is valid, 1 with the verifier's "
          "message when not.",
      .flags = InputFlags(),
      .min_positional = 1,
      .max_positional = 2,
      .check = &Check,
      .run = &Run,
  };
}

}  // namespace memplan::tool
