// What the fuzz harnesses check on one input, shared by the libFuzzer
// harnesses (fuzz/*_fuzzer.cc) and the regression test that replays every
// input kept under fuzz/regressions/ (tests/fuzz_regressions_test.cc).
//
// Each check feeds the input to a reader (and what follows it) and returns OK
// when the library behaved: a bad input is a clean error Status, a good one
// survives what the library promises about it. It returns Internal naming
// the broken promise otherwise. Crashes (an exception, a sanitizer report)
// are caught by the harness or the test binary, not here.

#ifndef MEMPLAN_FUZZ_FUZZ_CHECKS_H_
#define MEMPLAN_FUZZ_FUZZ_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace memplan::fuzz {

// Graph JSON: ParseGraphJson; a graph read writes (GraphToJson) and reads
// back equal; BuildProblem on it gives a problem ValidateProblem accepts.
absl::Status CheckGraphJson(std::string_view input);

// Buffer CSV: ParseBufferCsv; a problem read is valid, writes
// (BufferCsvText, with its offsets) and reads back equal; offsets go through
// VerifyPlan.
absl::Status CheckBufferCsv(std::string_view input);

// Plan JSON for two fixed problems (the seed notebook's model; a small graph
// with two pools, alignment, a fixed tensor, a view, an in-place pair and
// scratch): ParsePlanJson then VerifyPlan; a plan the verifier accepts
// writes (PlanToJson) and reads back to the same assignments. The same for
// a symbolic plan (ParseSymbolicPlanJson of a fixed symbolic problem, then
// VerifySymbolicGraphPlan, SymbolicPlanToJson).
absl::Status CheckPlanJson(std::string_view input);

// A graph JSON (input starting with '{') or a buffer CSV, planned with
// greedy_by_size: the planner answers with a plan the verifier accepts, whose
// peak is at least the lower bound, or with an error that is not Internal.
absl::Status CheckPlanGreedy(std::string_view input);

// The report of a plan: a graph JSON (input starting with '{') or a buffer
// CSV, planned with greedy_by_size (a CSV with an offset column brings its
// own plan); AnalyzePlan, FormatTextReport and RenderHtmlReport on it. A plan
// the verifier rejects is an error of AnalyzePlan, never a crash.
absl::Status CheckReport(std::string_view input);

// ONNX (when memplan::onnx is built, MEMPLAN_HAVE_ONNX; OK otherwise):
// ImportOnnxFromBytes with views aliased and copied; a graph imported builds
// into a problem ValidateProblem accepts, or into an error.
absl::Status CheckOnnx(std::string_view input);

// TFLite (when memplan::tflite is built, MEMPLAN_HAVE_TFLITE; OK otherwise):
// ReadTfliteModelFromBytes; an offline plan the model holds is checked by
// the verifier without a crash; a model read is planned, written with its
// plan and read back to the same graph and offsets, which verify.
absl::Status CheckTflite(std::string_view input);

// The body of every harness: `check` on the input as text; a broken promise
// is printed and aborts, so libFuzzer keeps the input. Returns 0, as
// LLVMFuzzerTestOneInput must.
int RunHarness(absl::Status (*check)(std::string_view), const uint8_t* data,
               size_t size);

}  // namespace memplan::fuzz

#endif  // MEMPLAN_FUZZ_FUZZ_CHECKS_H_
