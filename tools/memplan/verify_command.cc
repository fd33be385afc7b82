// memplan verify: check a plan file against its input.

#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands.h"
#include "input.h"
#include "memplan/io.h"
#include "memplan/problem.h"
#include "memplan/verify.h"

namespace memplan::tool {
namespace {

absl::Status Check(const Arguments&) { return CheckInputFlags(); }

absl::Status Run(const Arguments& args) {
  absl::StatusOr<LoadedInput> input = LoadToolInput(args.positional[0]);
  if (!input.ok()) return input.status();
  absl::StatusOr<Plan> plan =
      ReadPlanFile(args.positional[1], input->problem);
  if (!plan.ok()) return plan.status();
  if (absl::Status s = VerifyPlan(input->problem, *plan); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid plan: ", s.message()));
  }
  std::cout << absl::StrFormat(
      "valid plan: %d buffers, peak %d bytes, lower bound %d\n",
      plan->assignments.size(), plan->peak, LowerBound(input->problem));
  return absl::OkStatus();
}

}  // namespace

Command VerifyCommand() {
  return Command{
      .name = "verify",
      .synopsis = "INPUT PLAN [flags]",
      .description =
          "Checks PLAN (memplan-plan-v1 JSON, or a buffer CSV with an offset "
          "column) against INPUT built with the same flags as the plan. Exits "
          "0 with a summary when the plan is valid, 1 with the verifier's "
          "message when not.",
      .flags = InputFlags(),
      .min_positional = 2,
      .max_positional = 2,
      .check = &Check,
      .run = &Run,
  };
}

}  // namespace memplan::tool
