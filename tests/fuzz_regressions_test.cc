// Replays every input the fuzz harnesses keep (fuzz/regressions/<harness>/:
// inputs that once crashed or broke a promise; fuzz/seeds/<harness>/: the
// hand-made seeds) through the harnesses' checks (fuzz/fuzz_checks.h), so
// that the default suite, without clang or libFuzzer, catches a regression.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fuzz_checks.h"
#include "gtest/gtest.h"
#include "memplan/io.h"

namespace memplan {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Inputs(const std::string& kind,
                                const std::string& harness) {
  std::vector<std::string> paths;
  const fs::path dir = fs::path(MEMPLAN_FUZZ_DIR) / kind / harness;
  if (!fs::is_directory(dir)) return paths;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// Every kept input of `harness` passes `check`; returns how many there were.
template <typename Check>
size_t Replay(const std::string& harness, Check check) {
  size_t count = 0;
  for (const std::string kind : {"regressions", "seeds"}) {
    for (const std::string& path : Inputs(kind, harness)) {
      SCOPED_TRACE(path);
      absl::StatusOr<std::string> input = ReadFile(path);
      ++count;
      if (!input.ok()) {
        ADD_FAILURE() << input.status();
        continue;
      }
      const absl::Status status = check(*input);
      EXPECT_TRUE(status.ok()) << status;
    }
  }
  return count;
}

TEST(FuzzRegressionsTest, GraphJson) {
  EXPECT_GT(Replay("graph_json", fuzz::CheckGraphJson), 0u);
}

TEST(FuzzRegressionsTest, BufferCsv) {
  EXPECT_GT(Replay("buffer_csv", fuzz::CheckBufferCsv), 0u);
}

TEST(FuzzRegressionsTest, PlanJson) {
  EXPECT_GT(Replay("plan_json", fuzz::CheckPlanJson), 0u);
}

TEST(FuzzRegressionsTest, PlanGreedy) {
  EXPECT_GT(Replay("plan_greedy", fuzz::CheckPlanGreedy), 0u);
}

TEST(FuzzRegressionsTest, Report) {
  EXPECT_GT(Replay("report", fuzz::CheckReport), 0u);
}

// Without memplan::onnx, CheckOnnx accepts everything: the inputs are still
// read.
TEST(FuzzRegressionsTest, Onnx) {
  EXPECT_GT(Replay("onnx", fuzz::CheckOnnx), 0u);
}

// Likewise without memplan::tflite.
TEST(FuzzRegressionsTest, Tflite) {
  EXPECT_GT(Replay("tflite", fuzz::CheckTflite), 0u);
}

}  // namespace
}  // namespace memplan
