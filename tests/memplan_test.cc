// PlanMemory on graphs: every tensor's placement by name, checked against the
// problem the plan refers to and through the verifier.

#include "memplan/memplan.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "test_util.h"

namespace memplan {
namespace {

// in -> a -> (b: view of a) -> (c: in place of b's reader) -> out, with a
// weight w read by the first op and a scratch s of the second.
//
//   op0: in, w -> a
//   op1: a -> v        (alias: v is a view of a)   scratch s
//   op2: v -> c        (in place: c may reuse v)
//   op3: c -> out
Graph SmallGraph() {
  return Graph{
      .name = "small",
      .tensors = {{.name = "in", .size = 64, .kind = TensorKind::kInput},
                  {.name = "w", .size = 32, .kind = TensorKind::kConstant},
                  {.name = "a", .size = 128},
                  {.name = "v", .size = 128},
                  {.name = "s", .size = 16, .kind = TensorKind::kScratch},
                  {.name = "c", .size = 128},
                  {.name = "out", .size = 64, .kind = TensorKind::kOutput}},
      .ops = {{.name = "op0", .inputs = {"in", "w"}, .outputs = {"a"}},
              {.name = "op1",
               .inputs = {"a"},
               .outputs = {"v"},
               .scratch = {"s"},
               .alias = {{.output = 0, .input = 0}}},
              {.name = "op2",
               .inputs = {"v"},
               .outputs = {"c"},
               .inplace = {{.output = 0, .input = 0}}},
              {.name = "op3", .inputs = {"c"}, .outputs = {"out"}}},
  };
}

// The table agrees with the problem and the plan, tensor by tensor, and no
// two tensors in different buffers that are alive together share a byte.
void ExpectConsistent(const Graph& graph, const GraphPlan& result) {
  ASSERT_TRUE(VerifyPlan(result.problem, result.plan).ok());
  ASSERT_EQ(result.tensors.size(), graph.tensors.size());
  size_t in_buffers = 0;
  for (const Buffer& b : result.problem.buffers) in_buffers += b.tensors.size();
  size_t planned = 0;
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const TensorPlacement& t = result.tensors[i];
    EXPECT_EQ(t.name, graph.tensors[i].name);
    EXPECT_EQ(t.size, graph.tensors[i].size);
    EXPECT_EQ(result.Find(t.name), &t);
    if (!t.planned()) continue;
    ++planned;
    const Buffer& b = result.problem.buffers[t.buffer];
    EXPECT_THAT(b.tensors, ::testing::Contains(t.name));
    EXPECT_LE(t.size, b.size) << t.name;
    const Assignment& a = result.plan.assignments[t.buffer];
    EXPECT_EQ(t.pool, a.pool);
    EXPECT_EQ(t.offset, a.offset);
  }
  EXPECT_EQ(planned, in_buffers);
  for (const TensorPlacement& x : result.tensors) {
    for (const TensorPlacement& y : result.tensors) {
      if (!x.planned() || !y.planned() || x.buffer == y.buffer ||
          x.pool != y.pool)
        continue;
      const Buffer& bx = result.problem.buffers[x.buffer];
      const Buffer& by = result.problem.buffers[y.buffer];
      if (!Overlaps(bx.lifetime, by.lifetime)) continue;
      EXPECT_TRUE(x.offset + x.size <= y.offset ||
                  y.offset + y.size <= x.offset)
          << x.name << " and " << y.name << " share bytes";
    }
  }
  EXPECT_EQ(result.Find("no such tensor"), nullptr);
}

TEST(PlanMemoryTest, EveryTensorByNameWithoutConstants) {
  const Graph graph = SmallGraph();
  absl::StatusOr<GraphPlan> result =
      PlanMemory(graph, {.planner = "greedy_by_size"});
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConsistent(graph, *result);
  EXPECT_FALSE(result->Find("w")->planned());
  EXPECT_EQ(result->Find("w")->buffer, kNotPlanned);
  for (const char* name : {"in", "a", "v", "s", "c", "out"}) {
    EXPECT_TRUE(result->Find(name)->planned()) << name;
  }
  // The view lives in its base's bytes; the in-place output in its input's.
  EXPECT_EQ(result->Find("v")->buffer, result->Find("a")->buffer);
  EXPECT_EQ(result->Find("c")->buffer, result->Find("v")->buffer);
  EXPECT_EQ(result->Find("c")->offset, result->Find("a")->offset);
  EXPECT_EQ(result->Find("a")->kind, TensorKind::kActivation);
  EXPECT_EQ(result->op_order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(PlanMemoryTest, PlannedConstantsGetOffsetsToo) {
  const Graph graph = SmallGraph();
  PlanMemoryOptions options{.planner = "naive"};
  options.build.plan_constants = true;
  options.build.alignment = 64;
  absl::StatusOr<GraphPlan> result = PlanMemory(graph, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConsistent(graph, *result);
  const TensorPlacement* w = result->Find("w");
  ASSERT_TRUE(w->planned());
  EXPECT_EQ(w->offset % 64, 0);
  EXPECT_EQ(result->problem.buffers[w->buffer].tensors,
            std::vector<std::string>{"w"});
}

TEST(PlanMemoryTest, InputsAndOutputsLeftToTheCallerAreNotPlanned) {
  const Graph graph = SmallGraph();
  PlanMemoryOptions options{.planner = "best"};
  options.build.plan_inputs = false;
  options.build.plan_outputs = false;
  absl::StatusOr<GraphPlan> result = PlanMemory(graph, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectConsistent(graph, *result);
  EXPECT_FALSE(result->Find("in")->planned());
  EXPECT_FALSE(result->Find("out")->planned());
  EXPECT_TRUE(result->Find("a")->planned());
}

// A bundled model with and without constants, and in another op order: the
// table covers every tensor; the plan is the problem's.
TEST(PlanMemoryTest, BundledModelWithAndWithoutConstants) {
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("seed/seed000_model.json"));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (const bool constants : {false, true}) {
    for (const char* reorder : {"", "memory"}) {
      PlanMemoryOptions options{.planner = "greedy_by_size",
                                .reorder = reorder};
      options.build.plan_constants = constants;
      options.build.alignment = 4;
      absl::StatusOr<GraphPlan> result = PlanMemory(*graph, options);
      ASSERT_TRUE(result.ok()) << result.status();
      ExpectConsistent(*graph, *result);
      int planned_constants = 0;
      for (const TensorPlacement& t : result->tensors) {
        planned_constants += t.kind == TensorKind::kConstant && t.planned();
      }
      EXPECT_EQ(planned_constants > 0, constants);
      EXPECT_EQ(result->op_order.size(), graph->ops.size());
    }
  }
}

TEST(PlanMemoryTest, TableOfAPlanThatDoesNotFitIsAnError) {
  const Graph graph = SmallGraph();
  absl::StatusOr<Problem> problem = BuildProblem(graph);
  ASSERT_TRUE(problem.ok());
  EXPECT_EQ(PlaceTensors(graph, *problem, Plan{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Graph other = graph;
  other.tensors.pop_back();  // "out" is gone
  absl::StatusOr<Plan> plan = PlanMemory(*problem);
  ASSERT_TRUE(plan.ok());
  absl::StatusOr<std::vector<TensorPlacement>> table =
      PlaceTensors(other, *problem, *plan);
  EXPECT_THAT(table.status().message(), ::testing::HasSubstr("\"out\""));
}

}  // namespace
}  // namespace memplan
