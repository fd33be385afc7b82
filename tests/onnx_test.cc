// The ONNX importer: the bundled light models against the graphs derived from
// them, every failure class with a message that names its culprit, and the
// models made by scripts/make_onnx_models.py.

#include "memplan/onnx.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <variant>
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

// A hand-built model: graph inputs and outputs by name, element type and
// shape (a string dimension is symbolic), and nodes.
using Dims = std::vector<std::variant<int64_t, std::string>>;

void SetType(onnx::ValueInfoProto* value, const std::string& name,
             int32_t elem_type, const Dims& dims) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const auto& d : dims) {
    if (std::holds_alternative<int64_t>(d)) {
      shape->add_dim()->set_dim_value(std::get<int64_t>(d));
    } else {
      shape->add_dim()->set_dim_param(std::get<std::string>(d));
    }
  }
}

struct ModelBuilder {
  onnx::ModelProto model;
  explicit ModelBuilder(int64_t opset = 13) {
    model.set_ir_version(8);
    auto* id = model.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    model.mutable_graph()->set_name("hand");
  }
  ModelBuilder& Input(const std::string& name, const Dims& dims,
                      int32_t type = onnx::TensorProto::FLOAT) {
    SetType(model.mutable_graph()->add_input(), name, type, dims);
    return *this;
  }
  ModelBuilder& Output(const std::string& name) {
    model.mutable_graph()->add_output()->set_name(name);
    return *this;
  }
  ModelBuilder& Weight(const std::string& name,
                       const std::vector<int64_t>& dims) {
    auto* init = model.mutable_graph()->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) init->add_dims(d);
    // Held in an external file that does not exist: never read.
    init->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = init->add_external_data();
    entry->set_key("location");
    entry->set_value("absent.weights");
    return *this;
  }
  onnx::NodeProto* Node(const std::string& name, const std::string& type,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs) {
    onnx::NodeProto* node = model.mutable_graph()->add_node();
    node->set_name(name);
    node->set_op_type(type);
    for (const std::string& in : inputs) node->add_input(in);
    for (const std::string& out : outputs) node->add_output(out);
    return node;
  }
  std::string Bytes() const { return model.SerializeAsString(); }
};

absl::Status ImportStatus(const ModelBuilder& builder,
                          const OnnxImportOptions& options = {}) {
  return ImportOnnxFromBytes(builder.Bytes(), options).status();
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

TEST(OnnxImportTest, KindsSizesAndHints) {
  ModelBuilder b;
  b.Input("x", {"batch", 3, 8, 8})
      .Weight("w", {3, 3, 1, 1})
      .Weight("bias", {3, 1, 1});
  b.Node("conv", "Conv", {"x", "w"}, {"c"});
  b.Node("add", "Add", {"c", "bias"}, {"a"});
  b.Node("relu", "Relu", {"a"}, {"r"});
  b.Node("flat", "Flatten", {"r"}, {"y"});
  b.Output("y");
  OnnxImportOptions options;
  options.dims = {{"batch", 2}};
  OnnxImportStats stats;
  absl::StatusOr<Graph> graph = ImportOnnxFromBytes(b.Bytes(), options, &stats);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->tensors.size(), 7u);
  EXPECT_EQ(graph->tensors[0].name, "x");
  EXPECT_EQ(graph->tensors[0].kind, TensorKind::kInput);
  EXPECT_EQ(graph->tensors[0].size, 2 * 3 * 8 * 8 * 4);
  EXPECT_EQ(graph->tensors[1].name, "w");
  EXPECT_EQ(graph->tensors[1].kind, TensorKind::kConstant);
  EXPECT_EQ(graph->tensors[1].size, 9 * 4);
  EXPECT_EQ(graph->tensors.back().name, "y");
  EXPECT_EQ(graph->tensors.back().kind, TensorKind::kOutput);
  EXPECT_EQ(graph->tensors.back().shape, (std::vector<int64_t>{2, 192}));
  // Add: c has the output's shape, the broadcast bias has not.
  EXPECT_EQ(graph->ops[1].inplace, (std::vector<OperandPair>{{0, 0}}));
  EXPECT_EQ(graph->ops[2].inplace, (std::vector<OperandPair>{{0, 0}}));
  EXPECT_EQ(graph->ops[3].alias, (std::vector<OperandPair>{{0, 0}}));
  EXPECT_EQ(stats.views, 1);
  EXPECT_EQ(stats.inplace, 2);
  EXPECT_EQ(stats.constants, 2);
  PlanAndVerify(*graph);

  options.views = OnnxViews::kCopy;
  options.inplace = false;
  graph = ImportOnnxFromBytes(b.Bytes(), options, &stats);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(graph->ops[3].alias.empty());
  EXPECT_TRUE(graph->ops[1].inplace.empty());
  EXPECT_EQ(stats.views + stats.inplace, 0);
}

TEST(OnnxImportTest, EveryFixedWidthElementType) {
  const std::vector<std::pair<int32_t, Bytes>> widths = {
      {onnx::TensorProto::BOOL, 1},     {onnx::TensorProto::INT8, 1},
      {onnx::TensorProto::UINT8, 1},    {onnx::TensorProto::INT16, 2},
      {onnx::TensorProto::UINT16, 2},   {onnx::TensorProto::FLOAT16, 2},
      {onnx::TensorProto::BFLOAT16, 2}, {onnx::TensorProto::INT32, 4},
      {onnx::TensorProto::UINT32, 4},   {onnx::TensorProto::FLOAT, 4},
      {onnx::TensorProto::INT64, 8},    {onnx::TensorProto::UINT64, 8},
      {onnx::TensorProto::DOUBLE, 8}};
  for (const auto& [type, width] : widths) {
    ModelBuilder b;
    b.Input("x", {5, 7}, type);
    b.Node("id", "Identity", {"x"}, {"y"});
    b.Output("y");
    absl::StatusOr<Graph> graph = ImportOnnxFromBytes(b.Bytes());
    ASSERT_TRUE(graph.ok()) << type << ": " << graph.status();
    EXPECT_EQ(graph->tensors[1].size, 35 * width) << type;
  }
}

TEST(OnnxImportErrorTest, UnboundDimensionNamesItAndTheInput) {
  ModelBuilder b;
  b.Input("tokens", {"batch", "sequence", 16});
  b.Node("relu", "Relu", {"tokens"}, {"y"});
  b.Output("y");
  OnnxImportOptions options;
  options.dims = {{"batch", 2}};
  absl::Status status = ImportStatus(b, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"sequence\""));
  EXPECT_THAT(status.message(), HasSubstr("graph input \"tokens\""));
  options.dims = {{"batch", 2}, {"sequence", 4}, {"sequnce", 4}};
  status = ImportStatus(b, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("\"sequnce\""));
  options.dims = {{"batch", 0}, {"sequence", 4}};
  status = ImportStatus(b, options);
  EXPECT_THAT(status.message(), HasSubstr("\"batch\""));
  options.dims = {{"batch", 2}, {"sequence", 4}};
  absl::StatusOr<Graph> graph = ImportOnnxFromBytes(b.Bytes(), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors[1].size, 2 * 4 * 16 * 4);
}

TEST(OnnxImportErrorTest, UnresolvedShapeNamesTheTensorAndItsNode) {
  ModelBuilder b;
  b.Input("x", {4, 4});
  b.Node("find", "NonZero", {"x"}, {"where"});
  b.Node("cast", "Cast", {"where"}, {"y"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto to;
    to.set_name("to");
    to.set_type(onnx::AttributeProto::INT);
    to.set_i(onnx::TensorProto::FLOAT);
    return to;
  }());
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"where\""));
  EXPECT_THAT(status.message(), HasSubstr("node \"find\" (NonZero)"));
}

TEST(OnnxImportErrorTest, UnknownOpNamesTheTensorAndItsNode) {
  ModelBuilder b;
  b.Input("x", {4, 4});
  onnx::NodeProto* node = b.Node("mystery", "FancyOp", {"x"}, {"y"});
  node->set_domain("com.example");
  auto* id = b.model.add_opset_import();
  id->set_domain("com.example");
  id->set_version(1);
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"y\""));
  EXPECT_THAT(status.message(), HasSubstr("node \"mystery\" (FancyOp)"));
}

TEST(OnnxImportErrorTest, ANameLongerThanTheLimitIsAnError) {
  const std::string long_name(kMaxNameBytes + 1, 'y');
  ModelBuilder b;
  b.Input("x", {4, 4});
  b.Node("relu", "Relu", {"x"}, {long_name});
  b.Output(long_name);
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("longer than the limit"));
  EXPECT_LT(status.message().size(), 1000u);
}

TEST(OnnxImportErrorTest, ControlFlowIsUnimplementedNamingTheNode) {
  for (const std::string type : {"If", "Loop", "Scan"}) {
    ModelBuilder b;
    b.Input("x", {1}, onnx::TensorProto::BOOL);
    onnx::NodeProto* node = b.Node("branch", type, {"x"}, {"y"});
    onnx::AttributeProto* attribute = node->add_attribute();
    attribute->set_name("body");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    attribute->mutable_g()->set_name("body");
    b.Output("y");
    absl::Status status = ImportStatus(b);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << type;
    EXPECT_THAT(status.message(), HasSubstr("node \"branch\" (" + type + ")"));
  }
}

TEST(OnnxImportErrorTest, StringTensorsAreNamed) {
  ModelBuilder b;
  b.Input("words", {3}, onnx::TensorProto::STRING);
  b.Node("id", "Identity", {"words"}, {"y"});
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"words\""));
  EXPECT_THAT(status.message(), HasSubstr("string"));
}

TEST(OnnxImportErrorTest, SequenceAndMapTypesAreNamed) {
  ModelBuilder b;
  b.Input("x", {2, 2});
  b.Node("pack", "SequenceConstruct", {"x", "x"}, {"seq"});
  b.Node("unpack", "SequenceAt", {"seq", "x"}, {"y"});
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"seq\""));
  EXPECT_THAT(status.message(), HasSubstr("sequence"));

  ModelBuilder m;
  onnx::ValueInfoProto* input = m.model.mutable_graph()->add_input();
  input->set_name("table");
  auto* map = input->mutable_type()->mutable_map_type();
  map->set_key_type(onnx::TensorProto::INT64);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
  m.Node("id", "Identity", {"table"}, {"y"});
  m.Output("y");
  status = ImportStatus(m);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"table\""));
  EXPECT_THAT(status.message(), HasSubstr("map"));
}

TEST(OnnxImportErrorTest, NotAModelNamesTheFile) {
  const std::string path = ::testing::TempDir() + "/not_a_model.onnx";
  std::ofstream(path) << "this is not a protobuf \xff\xff\xff";
  absl::Status status = ImportOnnx(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(path));
  EXPECT_THAT(status.message(), HasSubstr("not a valid ONNX model"));
  status = ImportOnnx(::testing::TempDir() + "/missing.onnx").status();
  EXPECT_THAT(status.message(), HasSubstr("missing.onnx"));
}

TEST(OnnxImportErrorTest, TooNewOpsetNamesIt) {
  ModelBuilder b(/*opset=*/18);
  b.Input("x", {2});
  b.Node("relu", "Relu", {"x"}, {"y"});
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(status.message(), HasSubstr("opset 18"));
}

TEST(OnnxImportErrorTest, InferenceErrorsNameTheNode) {
  // The declared shape of r contradicts what Relu infers.
  ModelBuilder b;
  b.Input("x", {2, 3});
  b.Node("relu", "Relu", {"x"}, {"r"});
  SetType(b.model.mutable_graph()->add_value_info(), "r",
          onnx::TensorProto::FLOAT, {5, 7});
  b.Node("neg", "Neg", {"r"}, {"y"});
  b.Output("y");
  absl::Status status = ImportStatus(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("relu"));

  // A node reading a tensor nobody defines.
  ModelBuilder c;
  c.Input("x", {2});
  c.Node("add", "Add", {"x", "ghost"}, {"y"});
  c.Output("y");
  status = ImportStatus(c);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("ghost"));
}

// Models made by scripts/make_onnx_models.py.
class ExportedModelTest : public ::testing::TestWithParam<int> {};

TEST_P(ExportedModelTest, TransformerEncoderWithSymbolicBatchAndSequence) {
  const std::string path = testing::DataPath(
      "onnx/transformer_encoder_opset" + std::to_string(GetParam()) + ".onnx");
  absl::Status unbound = ImportOnnx(path).status();
  EXPECT_EQ(unbound.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unbound.message(), HasSubstr("graph input \"tokens\""));
  for (const auto& [batch, sequence] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 10}, {3, 7}, {1, 128}}) {
    OnnxImportOptions options;
    options.dims = {{"batch", batch}, {"sequence", sequence}};
    OnnxImportStats stats;
    absl::StatusOr<Graph> graph = ImportOnnx(path, options, &stats);
    ASSERT_TRUE(graph.ok()) << graph.status();
    EXPECT_EQ(graph->tensors.front().name, "tokens");
    EXPECT_EQ(graph->tensors.front().size, batch * sequence * 64 * 4);
    const Tensor& out = graph->tensors.back();
    EXPECT_EQ(out.name, "encoded");
    EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, sequence, 64}));
    // Attention scores: batch x heads x sequence x sequence somewhere.
    const std::vector<int64_t> scores = {batch * 4, sequence, sequence};
    const std::vector<int64_t> scores4 = {batch, 4, sequence, sequence};
    EXPECT_TRUE(std::any_of(graph->tensors.begin(), graph->tensors.end(),
                            [&](const Tensor& t) {
                              return t.shape == scores || t.shape == scores4;
                            }));
    EXPECT_GT(stats.views, 0);
    EXPECT_EQ(stats.inputs, 1);
    PlanAndVerify(*graph);
  }
}

TEST_P(ExportedModelTest, Resnet18) {
  const std::string path = testing::DataPath(
      "onnx/resnet18_opset" + std::to_string(GetParam()) + ".onnx");
  OnnxImportStats stats;
  absl::StatusOr<Graph> graph = ImportOnnx(path, {}, &stats);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors.back().shape, (std::vector<int64_t>{1, 10}));
  EXPECT_EQ(stats.inputs, 1);
  EXPECT_GT(stats.constants, 20);
  PlanAndVerify(*graph);
}

INSTANTIATE_TEST_SUITE_P(Opsets, ExportedModelTest,
                         ::testing::Values(13, 14, 15, 16, 17));

TEST(ExportedModelTest, MobilenetV3SmallWithSymbolicBatch) {
  OnnxImportOptions options;
  options.dims = {{"batch", 4}};
  absl::StatusOr<Graph> graph = ImportOnnx(
      testing::DataPath("onnx/mobilenet_v3_small_opset17.onnx"), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors.back().shape, (std::vector<int64_t>{4, 10}));
  PlanAndVerify(*graph);
}

TEST(ExportedModelTest, ViewsShareTheirInputsBuffer) {
  const std::string path = testing::DataPath("onnx/views.onnx");
  OnnxImportStats stats;
  absl::StatusOr<Graph> merged = ImportOnnx(path, {}, &stats);
  ASSERT_TRUE(merged.ok()) << merged.status();
  std::set<std::string> view_types;
  for (const Op& op : merged->ops) {
    if (!op.alias.empty()) view_types.insert(op.type);
  }
  EXPECT_EQ(view_types, (std::set<std::string>{"Reshape", "Flatten", "Squeeze",
                                               "Unsqueeze"}));
  EXPECT_GE(stats.views, 5);
  OnnxImportOptions copy;
  copy.views = OnnxViews::kCopy;
  copy.inplace = false;
  absl::StatusOr<Graph> copied = ImportOnnx(path, copy);
  ASSERT_TRUE(copied.ok()) << copied.status();
  absl::StatusOr<Problem> a = BuildProblem(*merged, {});
  absl::StatusOr<Problem> b = BuildProblem(*copied, {});
  ASSERT_TRUE(a.ok() && b.ok());
  // Every view merged into its base: that many buffers fewer, at least.
  EXPECT_LE(a->buffers.size() + stats.views, b->buffers.size());
  PlanAndVerify(*merged);
  PlanAndVerify(*copied);
}

TEST(ExportedModelTest, DataDependentShapeNamesTheTensorAndNode) {
  absl::Status status =
      ImportOnnx(testing::DataPath("onnx/nonzero.onnx")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("(NonZero)"));
  EXPECT_THAT(status.message(), HasSubstr("nonzero.onnx"));
}

// Damaged files: every import ends in a plan or a Status, never a crash or an
// escaping exception (ASan and UBSan watch this in CI).
TEST(OnnxImportErrorTest, DamagedModelsGiveAStatus) {
  absl::StatusOr<std::string> bytes =
      ReadFile(testing::DataPath("onnx/views.onnx"));
  ASSERT_TRUE(bytes.ok());
  std::mt19937_64 random(14);
  int failed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string damaged = *bytes;
    if (trial % 3 == 0) {
      damaged.resize(random() % damaged.size());
    } else {
      for (int k = 0; k < 1 + trial % 4; ++k) {
        damaged[random() % damaged.size()] = static_cast<char>(random());
      }
    }
    absl::StatusOr<Graph> graph = ImportOnnxFromBytes(damaged);
    if (!graph.ok()) {
      ++failed;
      EXPECT_FALSE(graph.status().message().empty());
      continue;
    }
    absl::StatusOr<Problem> problem = BuildProblem(*graph, {});
    if (problem.ok()) PlanAndVerify(*graph);
  }
  EXPECT_GT(failed, 0);
}

// The tool reads .onnx wherever it takes an INPUT.
TEST(OnnxToolTest, PlanCopyViewsGivesTheDerivedGraphsTotals) {
  const testing::ToolRun run = testing::RunTool(
      "plan " + testing::DataPath("onnx/resnet50.light.onnx") +
      " --onnx-views=copy --planner=greedy_by_size --out=" +
      ::testing::TempDir() + "/resnet50.light.plan.json");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("naive total 106393504"));
  EXPECT_THAT(run.output, HasSubstr("lower bound 9633792"));
}

TEST(OnnxToolTest, StatsPrintsTheImportersCounts) {
  const testing::ToolRun run =
      testing::RunTool("stats " + testing::DataPath("onnx/resnet50.light.onnx"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("onnx nodes: 122"));
  EXPECT_THAT(run.output,
              HasSubstr("onnx tensors: 1 input, 1 output, 108 constant, "
                        "121 activation"));
  EXPECT_THAT(run.output, HasSubstr("views merged: 1"));
  // One buffer per Add, Mul, ... output: the hints name every input, and
  // only one input (dying at the op) can give the output its bytes.
  EXPECT_THAT(run.output, HasSubstr("naive total: 45873056"));
}

TEST(OnnxToolTest, DimsBindSymbolicDimensions) {
  const std::string model =
      testing::DataPath("onnx/transformer_encoder_opset17.onnx");
  testing::ToolRun run = testing::RunTool("stats " + model + " --dim batch=2");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("\"sequence\""));
  run = testing::RunTool("stats " + model +
                         " --dim batch=2 --dim sequence=10 --onnx-views=copy");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("views merged: 0"));
  EXPECT_THAT(run.output, HasSubstr("in-place hints: 0"));
  run = testing::RunTool("compare " + model +
                         " --dim=batch=2,sequence=10 --planners=greedy_by_size "
                         "--format=csv");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("transformer_encoder_opset17.onnx"));
  run = testing::RunTool("stats " + model + " --dim batch");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("--dim"));
}

}  // namespace
}  // namespace memplan
