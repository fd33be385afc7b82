// The ONNX importer: the bundled light models against the graphs derived from
// them, every failure class with a message that names its culprit, and the
// models made by scripts/make_onnx_models.py.

#include "memplan/onnx.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "onnx/onnx_pb.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

// Naive total and lower bound of the default build of a graph.
struct Totals {
  Bytes naive_total = 0;
  Bytes lower_bound = 0;
};

Totals PlanAndVerify(const Graph& graph) {
  absl::StatusOr<Problem> problem = BuildProblem(graph, {});
  EXPECT_TRUE(problem.ok()) << problem.status();
  if (!problem.ok()) return {};
  PlanMemoryOptions options;
  options.planner = "greedy_by_size";
  absl::StatusOr<Plan> plan = PlanMemory(*problem, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  EXPECT_TRUE(VerifyPlan(*problem, *plan).ok());
  EXPECT_GE(plan->peak, plan->lower_bound);
  return {plan->naive_total, plan->lower_bound};
}

class LightModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LightModelTest, CopyViewsMatchTheDerivedGraph) {
  const std::string name = GetParam();
  OnnxImportOptions options;
  options.views = OnnxViews::kCopy;
  options.inplace = false;
  absl::StatusOr<Graph> imported =
      ImportOnnx(testing::DataPath("onnx/" + name + ".light.onnx"), options);
  ASSERT_TRUE(imported.ok()) << imported.status();
  absl::StatusOr<std::string> json =
      ReadFile(testing::DataPath("models/" + name + ".json"));
  ASSERT_TRUE(json.ok());
  absl::StatusOr<Graph> derived = ParseGraphJson(*json);
  ASSERT_TRUE(derived.ok());
  const Totals a = PlanAndVerify(*imported);
  const Totals b = PlanAndVerify(*derived);
  EXPECT_EQ(a.naive_total, b.naive_total);
  EXPECT_EQ(a.lower_bound, b.lower_bound);
  ASSERT_EQ(imported->ops.size(), derived->ops.size());
  ASSERT_EQ(imported->tensors.size(), derived->tensors.size());
  for (size_t i = 0; i < derived->tensors.size(); ++i) {
    EXPECT_EQ(imported->tensors[i].name, derived->tensors[i].name);
    EXPECT_EQ(imported->tensors[i].size, derived->tensors[i].size)
        << derived->tensors[i].name;
    EXPECT_EQ(imported->tensors[i].kind, derived->tensors[i].kind)
        << derived->tensors[i].name;
  }
}

TEST_P(LightModelTest, DefaultOptionsMergeViewsAndPlanVerifies) {
  const std::string path =
      testing::DataPath("onnx/" + GetParam() + ".light.onnx");
  OnnxImportStats stats;
  absl::StatusOr<Graph> merged = ImportOnnx(path, {}, &stats);
  ASSERT_TRUE(merged.ok()) << merged.status();
  OnnxImportOptions copy_options;
  copy_options.views = OnnxViews::kCopy;
  copy_options.inplace = false;
  absl::StatusOr<Graph> copied = ImportOnnx(path, copy_options);
  ASSERT_TRUE(copied.ok()) << copied.status();
  const Totals merged_totals = PlanAndVerify(*merged);
  const Totals copied_totals = PlanAndVerify(*copied);
  std::printf("%s: default naive %lld lower %lld, copy naive %lld lower %lld\n",
              GetParam().c_str(), (long long)merged_totals.naive_total,
              (long long)merged_totals.lower_bound,
              (long long)copied_totals.naive_total,
              (long long)copied_totals.lower_bound);
  EXPECT_GT(stats.inplace, 0);
  EXPECT_LT(merged_totals.naive_total, copied_totals.naive_total);
  EXPECT_LE(merged_totals.lower_bound, copied_totals.lower_bound);
  EXPECT_EQ(stats.nodes, static_cast<int64_t>(merged->ops.size()));
  EXPECT_EQ(stats.inputs, 1);
}

INSTANTIATE_TEST_SUITE_P(Bundled, LightModelTest,
                         ::testing::Values("resnet50", "mobilenet_v2",
                                           "vit_b_16"));

}  // namespace
}  // namespace memplan
