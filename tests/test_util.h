// Helpers shared by the tests: the bundled data and seeded random problems.

#ifndef MEMPLAN_TESTS_TEST_UTIL_H_
#define MEMPLAN_TESTS_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/io.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"

namespace memplan::testing {

// Effort counted, not timed: what `seconds` of a time limit would grant
// (kWorkPerSecond per second), with no clock, so that a test's result never
// depends on how busy the machine is.
inline PlanOptions CountedWork(double seconds) {
  return {.work_limit = static_cast<int64_t>(seconds * kWorkPerSecond)};
}

// Path of a file under bench/data, e.g. DataPath("models/resnet50.json").
std::string DataPath(std::string_view relative);

// Names (relative to bench/data) of the bundled inputs.
std::vector<std::string> ModelGraphs();     // models/*.json
std::vector<std::string> TrainingGraphs();  // training/*.json
std::vector<std::string> TraceCsvs();       // traces/*.csv
std::vector<std::string> MinimallocCsvs();  // minimalloc/[A-K].1048576.csv

// Loads a bundled input with `options` (see LoadInput).
absl::StatusOr<Problem> LoadProblem(std::string_view relative,
                                    const BuildOptions& options = {});

struct RandomProblemOptions {
  int buffers = 30;
  Step horizon = 40;  // lifetimes lie in [0, horizon)
  Step max_lifetime = 10;
  Bytes max_size = 1000;
  int pools = 1;       // pools p0, p1, ...; each buffer may allow a subset
  Bytes capacity = 0;  // capacity of every pool but the last (0 = unbounded)
  bool alignments = false;  // random power-of-two buffer and pool alignments
  int explicit_conflicts = 0;
  int fixed = 0;  // buffers with a fixed placement (never overlapping)
};

// Runs the memplan tool with `args` (shell words), capturing stdout and
// stderr; exit_code is -1 when it did not exit normally (a crash).
struct ToolRun {
  int exit_code = -1;
  std::string output;
};
ToolRun RunTool(const std::string& args);
// The same with stdout only (stderr discarded).
ToolRun RunToolStdout(const std::string& args);

// The offset macros of a C header (memplan/emit.h), in order: the names of
// `#define X_OFFSET value` and of `#define X_OFFSET(seq) ...` (without the
// parameters).
std::vector<std::string> OffsetMacros(const std::string& header);

// A seeded random problem that ValidateProblem accepts.
Problem RandomProblem(uint64_t seed, const RandomProblemOptions& options = {});

// A seeded random graph that BuildProblem accepts: graph inputs, constants,
// ops reading earlier tensors, scratch, views (no larger than their base),
// in-place hints (applicable or not), random alignments, a few explicit
// conflicts and graph outputs.
Graph RandomGraph(uint64_t seed, int ops = 12);

// Hand-written graphs: a tensor, and an op reading `inputs` and making
// `outputs`.
inline Tensor T(const char* name, Bytes size,
                TensorKind kind = TensorKind::kActivation) {
  return Tensor{.name = name, .size = size, .kind = kind};
}
inline Op O(const char* name, std::vector<std::string> inputs,
            std::vector<std::string> outputs) {
  return Op{
      .name = name, .inputs = std::move(inputs), .outputs = std::move(outputs)};
}

}  // namespace memplan::testing

#endif  // MEMPLAN_TESTS_TEST_UTIL_H_
