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

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_memplan.h"
#include "memplan/symbolic_verify.h"
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

// Symbolic dims: a dim_param given a range stays a dim of the graph.

// The transformer encoder's imports at `values` (batch bound to 1).
absl::StatusOr<Graph> TransformerAt(const std::string& path,
                                    const DimValues& values) {
  OnnxImportOptions options;
  options.dims = values;
  return ImportOnnx(path, options);
}

TEST_P(ExportedModelTest, SequenceRangeBindsToTheImportsAtEachValue) {
  const std::string path = testing::DataPath(
      "onnx/transformer_encoder_opset" + std::to_string(GetParam()) + ".onnx");
  OnnxImportOptions options;
  options.dims = {{"batch", 1}};
  options.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  OnnxImportStats stats;
  absl::StatusOr<Graph> symbolic = ImportOnnx(path, options, &stats);
  ASSERT_TRUE(symbolic.ok()) << symbolic.status();
  EXPECT_EQ(symbolic->dims, (DimRanges{{"sequence", {.min = 1, .max = 2048}}}));
  EXPECT_GT(stats.views, 0);
  ASSERT_TRUE(ValidateSymbolicSizes(*symbolic).ok());
  int quadratic = 0;
  int linear = 0;
  for (const Tensor& t : symbolic->tensors) {
    if (!t.symbolic_size.has_value()) continue;
    const int degree = t.symbolic_size->Degree("sequence");
    quadratic += degree == 2;
    linear += degree == 1;
  }
  EXPECT_GT(quadratic, 0);  // the attention scores
  EXPECT_GT(linear, 0);
  EXPECT_EQ(symbolic->tensors.front().symbolic_size,
            DimExpr::Parse("256*sequence").value());
  for (int64_t sequence : {1, 2, 3, 7, 64, 500, 1023, 2048}) {
    absl::StatusOr<Graph> bound = BindDims(*symbolic, {{"sequence", sequence}});
    ASSERT_TRUE(bound.ok()) << bound.status();
    absl::StatusOr<Graph> imported =
        TransformerAt(path, {{"batch", 1}, {"sequence", sequence}});
    ASSERT_TRUE(imported.ok()) << imported.status();
    EXPECT_FALSE(IsSymbolic(*bound));
    EXPECT_EQ(bound->ops, imported->ops);
    ASSERT_EQ(bound->tensors.size(), imported->tensors.size());
    for (size_t i = 0; i < bound->tensors.size(); ++i) {
      const Tensor& a = bound->tensors[i];
      const Tensor& b = imported->tensors[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.size, b.size) << a.name << " at sequence=" << sequence;
      EXPECT_EQ(a.kind, b.kind);
      EXPECT_EQ(a.dtype, b.dtype);
      // Shapes: -1 where the dim varies, the import's value elsewhere.
      ASSERT_EQ(a.shape.size(), b.shape.size()) << a.name;
      for (size_t d = 0; d < a.shape.size(); ++d) {
        if (a.shape[d] != -1) EXPECT_EQ(a.shape[d], b.shape[d]) << a.name;
      }
    }
    const Totals x = PlanAndVerify(*bound);
    const Totals y = PlanAndVerify(*imported);
    EXPECT_EQ(x.naive_total, y.naive_total);
    EXPECT_EQ(x.lower_bound, y.lower_bound);
  }
}

TEST(SymbolicOnnxTest, PlannedOnceOverTheRangeAndBoundPlansVerify) {
  const std::string path =
      testing::DataPath("onnx/transformer_encoder_opset17.onnx");
  OnnxImportOptions options;
  options.dims = {{"batch", 1}};
  options.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  absl::StatusOr<Graph> graph = ImportOnnx(path, options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Not planned as a concrete graph by mistake.
  absl::Status concrete = BuildProblem(*graph, {}).status();
  EXPECT_THAT(concrete.message(), HasSubstr("--dim sequence=N"));
  absl::StatusOr<SymbolicGraphPlan> plan =
      PlanSymbolicMemory(*graph, {.max_buckets = 1});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifySymbolicGraphPlan(*plan).ok());
  for (int64_t sequence : {1, 7, 500, 2048}) {
    absl::StatusOr<GraphPlan> at = plan->At(*graph, {{"sequence", sequence}});
    ASSERT_TRUE(at.ok()) << at.status();
    EXPECT_TRUE(VerifyPlan(at->problem, at->plan).ok());
    // Every tensor fits in the bytes the bound import gives it.
    absl::StatusOr<Graph> imported =
        TransformerAt(path, {{"batch", 1}, {"sequence", sequence}});
    ASSERT_TRUE(imported.ok());
    absl::StatusOr<Problem> own = BuildProblem(*imported, {});
    ASSERT_TRUE(own.ok());
    EXPECT_EQ(own->buffers.size(), at->problem.buffers.size());
  }
}

TEST(SymbolicOnnxTest, TwoRangedDimsGiveProducts) {
  OnnxImportOptions options;
  options.dim_ranges = {{"batch", {.min = 1, .max = 8}},
                        {"sequence", {.min = 1, .max = 512}}};
  const std::string path =
      testing::DataPath("onnx/transformer_encoder_opset13.onnx");
  absl::StatusOr<Graph> graph = ImportOnnx(path, options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors.front().symbolic_size,
            DimExpr::Parse("256*batch*sequence").value());
  for (const auto& [batch, sequence] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 100}, {8, 512}, {2, 9}}) {
    absl::StatusOr<Graph> bound =
        BindDims(*graph, {{"batch", batch}, {"sequence", sequence}});
    ASSERT_TRUE(bound.ok()) << bound.status();
    absl::StatusOr<Graph> imported =
        TransformerAt(path, {{"batch", batch}, {"sequence", sequence}});
    ASSERT_TRUE(imported.ok());
    ASSERT_EQ(bound->tensors.size(), imported->tensors.size());
    for (size_t i = 0; i < bound->tensors.size(); ++i) {
      EXPECT_EQ(bound->tensors[i].size, imported->tensors[i].size)
          << bound->tensors[i].name;
    }
  }
}

// x: [1, 1, sequence] through a MaxPool of `stride` (kernel 1): an output of
// ceil(sequence / stride) elements.
ModelBuilder StridedModel(int64_t stride) {
  ModelBuilder b;
  b.Input("x", {int64_t{1}, int64_t{1}, "sequence"});
  onnx::NodeProto* pool = b.Node("pool", "MaxPool", {"x"}, {"y"});
  auto* kernel = pool->add_attribute();
  kernel->set_name("kernel_shape");
  kernel->set_type(onnx::AttributeProto::INTS);
  kernel->add_ints(1);
  auto* strides = pool->add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(stride);
  b.Output("y");
  return b;
}

TEST(SymbolicOnnxErrorTest, ADivisionSeenInTheFirstValuesIsRefused) {
  OnnxImportOptions options;
  options.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  absl::Status status = ImportStatus(StridedModel(2), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"y\""));
  EXPECT_THAT(status.message(), HasSubstr("no polynomial of degree <= 3"));
  EXPECT_THAT(status.message(), HasSubstr("dim \"sequence\""));
  EXPECT_THAT(status.message(), HasSubstr("4, 4, 8, 8, 12"));
  EXPECT_THAT(status.message(), HasSubstr("--dim sequence=VALUE"));
  // Bound, the same model imports.
  options.dim_ranges.clear();
  options.dims = {{"sequence", 9}};
  absl::StatusOr<Graph> bound =
      ImportOnnxFromBytes(StridedModel(2).Bytes(), options);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->tensors.back().size, 5 * 4);
}

TEST(SymbolicOnnxErrorTest, ADivisionSeenOnlyAtTheCheckedValuesIsRefused) {
  OnnxImportOptions options;
  options.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  // ceil(sequence / 64) is 1 at 1..5: constant there, 32 at 2048.
  absl::Status status = ImportStatus(StridedModel(64), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"y\""));
  EXPECT_THAT(status.message(), HasSubstr("no polynomial in dim sequence"));
  EXPECT_THAT(status.message(), HasSubstr("--dim sequence=VALUE"));
  // Within the first values the import is exact: every value is imported.
  options.dim_ranges = {{"sequence", {.min = 1, .max = 5}}};
  absl::StatusOr<Graph> graph =
      ImportOnnxFromBytes(StridedModel(64).Bytes(), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors.back().size, 4);
  EXPECT_FALSE(graph->tensors.back().symbolic_size.has_value());
  EXPECT_EQ(graph->tensors.front().symbolic_size,
            DimExpr::Parse("4*sequence").value());
}

TEST(SymbolicOnnxErrorTest, AStructureThatChangesWithTheDimIsRefused) {
  // a + b with b of one element: the output may reuse b's bytes only when
  // sequence is 1 (the in-place hint needs the same shape).
  ModelBuilder b;
  b.Input("a", {"sequence"}).Input("b", {int64_t{1}});
  b.Node("add", "Add", {"a", "b"}, {"c"});
  b.Output("c");
  OnnxImportOptions options;
  options.dim_ranges = {{"sequence", {.min = 1, .max = 64}}};
  absl::Status status = ImportStatus(b, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("changes with dim sequence"));
  EXPECT_THAT(status.message(), HasSubstr("op \"add\" (Add)"));
  EXPECT_THAT(status.message(), HasSubstr("in-place hints"));
  EXPECT_THAT(status.message(), HasSubstr("--dim sequence=VALUE"));
  // From 2 on it does not change.
  options.dim_ranges = {{"sequence", {.min = 2, .max = 64}}};
  absl::StatusOr<Graph> graph = ImportOnnxFromBytes(b.Bytes(), options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->ops[0].inplace,
            (std::vector<OperandPair>{{.output = 0, .input = 0}}));
}

// A Constant node holding the int64 values `values`.
void Int64Constant(ModelBuilder& b, const std::string& name,
                   const std::vector<int64_t>& values) {
  onnx::NodeProto* node = b.Node(name, "Constant", {}, {name});
  auto* value = node->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto* tensor = value->mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) tensor->add_int64_data(v);
}

TEST(SymbolicOnnxErrorTest, ASizeWithANegativeTermIsRefused) {
  // x[1:]: 4*sequence - 4 bytes, a polynomial but no graph size (DESIGN.md:
  // a sum of non-negative terms).
  ModelBuilder b;
  b.Input("x", {"sequence"});
  Int64Constant(b, "starts", {1});
  Int64Constant(b, "ends", {int64_t{1} << 40});
  b.Node("shift", "Slice", {"x", "starts", "ends"}, {"y"});
  b.Output("y");
  OnnxImportOptions options;
  options.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  absl::Status status = ImportStatus(b, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tensor \"y\""));
  EXPECT_THAT(status.message(), HasSubstr("4*sequence - 4"));
  EXPECT_THAT(status.message(), HasSubstr("negative term"));
  EXPECT_THAT(status.message(), HasSubstr("--dim sequence=VALUE"));
}

TEST(SymbolicOnnxErrorTest, BadRangesNameTheDim) {
  ModelBuilder b;
  b.Input("x", {"sequence"});
  b.Node("relu", "Relu", {"x"}, {"y"});
  b.Output("y");
  OnnxImportOptions options;
  options.dims = {{"sequence", 4}};
  options.dim_ranges = {{"sequence", {.min = 1, .max = 8}}};
  absl::Status status = ImportStatus(b, options);
  EXPECT_THAT(status.message(),
              HasSubstr("\"sequence\" is given both a value (4) and a range"));
  options.dims.clear();
  options.dim_ranges = {{"sequence", {.min = 0, .max = 8}}};
  EXPECT_THAT(ImportStatus(b, options).message(), HasSubstr(">= 1"));
  options.dim_ranges = {{"sequence", {.min = 1, .max = 8}},
                        {"ghost", {.min = 1, .max = 8}}};
  EXPECT_THAT(ImportStatus(b, options).message(), HasSubstr("\"ghost\""));
}

TEST(DimArgumentsTest, ValuesAndRanges) {
  absl::StatusOr<DimArguments> parsed =
      ParseDimArguments({"batch=2", "sequence=1:2048", "heads=0:4"});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->values, (DimValues{{"batch", 2}}));
  EXPECT_EQ(parsed->ranges, (DimRanges{{"sequence", {.min = 1, .max = 2048}},
                                       {"heads", {.min = 0, .max = 4}}}));
  for (const char* bad :
       {"sequence=1:", "sequence=:8", "sequence=1:2:3", "sequence=a:b",
        "sequence=-1:4", "=1:4", "sequence", "sequence=-1"}) {
    absl::Status status = ParseDimArguments({bad}).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("--dim=", bad)));
    EXPECT_THAT(status.message(), HasSubstr("NAME=MIN:MAX"));
  }
  absl::Status reversed = ParseDimArguments({"sequence=9:2"}).status();
  EXPECT_THAT(reversed.message(), HasSubstr("min 9 is larger than its max 2"));
  absl::Status both =
      ParseDimArguments({"sequence=1:2048", "sequence=128"}).status();
  EXPECT_THAT(both.message(), HasSubstr("\"sequence\" is given both a value "
                                        "(128) and a range (1:2048)"));
  // 0 parses; the graph's range, or the ONNX importer, decides.
  absl::StatusOr<DimArguments> zero = ParseDimArguments({"sequence=0"});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ(zero->values, (DimValues{{"sequence", 0}}));
  EXPECT_THAT(ParseDimArguments({"batch=2", "batch=3"}).status().message(),
              HasSubstr("dim \"batch\" is given twice"));
}

TEST(SymbolicLoadTest, RangesNarrowAGraphJsonsDims) {
  const std::string path = ::testing::TempDir() + "/narrow.json";
  {
    std::ofstream out(path);
    out << R"({"format": "memplan-graph-v1", "name": "g",
      "dims": {"seq": {"min": 1, "max": 2048}},
      "tensors": [{"name": "x", "size": "64*seq", "kind": "input"},
                  {"name": "y", "size": "4*seq*seq", "kind": "output"}],
      "ops": [{"name": "f", "inputs": ["x"], "outputs": ["y"]}]})";
  }
  LoadOptions options;
  options.keep_symbolic = true;
  options.dim_ranges = {{"seq", {.min = 8, .max = 512}}};
  absl::StatusOr<LoadedInput> input = Load(path, options);
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(input->graph.has_value());
  EXPECT_EQ(input->graph->dims, (DimRanges{{"seq", {.min = 8, .max = 512}}}));
  EXPECT_TRUE(input->problem.buffers.empty());
  // Bound at a value outside the narrowed range: an error naming it.
  EXPECT_THAT(BindDims(*input->graph, {{"seq", 600}}).status().message(),
              HasSubstr("seq"));
  options.dim_ranges = {{"seq", {.min = 1, .max = 4096}}};
  EXPECT_THAT(Load(path, options).status().message(),
              HasSubstr("[1, 4096], which is not inside its declared range "
                        "[1, 2048]"));
  options.dim_ranges = {{"batch", {.min = 1, .max = 4}}};
  EXPECT_THAT(Load(path, options).status().message(),
              HasSubstr("\"batch\" is given a range, but the graph declares "
                        "no such dim (its dims: seq [1, 2048])"));
  options.dim_ranges = {{"seq", {.min = 1, .max = 4}}};
  options.dims = {{"seq", 2}};
  EXPECT_THAT(Load(path, options).status().message(),
              HasSubstr("both a value (2) and a range"));
  options.dims.clear();
  options.reorder = "memory";
  EXPECT_THAT(Load(path, options).status().message(),
              HasSubstr("--reorder=memory"));
  // Without keep_symbolic, a symbolic graph is refused naming its dims.
  options.reorder.clear();
  options.keep_symbolic = false;
  EXPECT_THAT(Load(path, options).status().message(),
              HasSubstr("bind them with --dim seq=N"));
  options.dims = {{"seq", 3}};
  options.dim_ranges.clear();
  input = Load(path, options);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->graph->tensors[1].size, 36);
}

TEST(SymbolicLoadTest, LoadKeepsAnOnnxModelsRangedDims) {
  const std::string path =
      testing::DataPath("onnx/transformer_encoder_opset17.onnx");
  OnnxImportOptions onnx;
  onnx.dims = {{"batch", 1}};
  onnx.dim_ranges = {{"sequence", {.min = 1, .max = 2048}}};
  LoadOptions options;
  options.importers.push_back(OnnxImporter(onnx));
  absl::Status refused = Load(path, options).status();
  EXPECT_THAT(refused.message(), HasSubstr("transformer_encoder_opset17.onnx"));
  EXPECT_THAT(refused.message(), HasSubstr("--dim sequence=N"));
  options.keep_symbolic = true;
  absl::StatusOr<LoadedInput> input = Load(path, options);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->graph->dims,
            (DimRanges{{"sequence", {.min = 1, .max = 2048}}}));
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
  const testing::ToolRun run =
      testing::RunTool("plan " + testing::DataPath("onnx/resnet50.light.onnx") +
                       " --onnx-views=copy --planner=greedy_by_size --out=" +
                       ::testing::TempDir() + "/resnet50.light.plan.json");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("naive total 106393504"));
  EXPECT_THAT(run.output, HasSubstr("lower bound 9633792"));
}

TEST(OnnxToolTest, StatsPrintsTheImportersCounts) {
  const testing::ToolRun run = testing::RunTool(
      "stats " + testing::DataPath("onnx/resnet50.light.onnx"));
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

TEST(OnnxToolTest, DimRangesAreParsedAndChecked) {
  const std::string model =
      testing::DataPath("onnx/transformer_encoder_opset17.onnx");
  testing::ToolRun run =
      testing::RunTool("stats " + model + " --dim batch=1 --dim sequence=9:2");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("min 9 is larger than its max 2"));
  run = testing::RunTool("stats " + model +
                         " --dim sequence=1:2048 --dim sequence=4");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_THAT(run.output, HasSubstr("both a value (4) and a range"));
  // A range keeps the model symbolic: one plan over the range.
  run = testing::RunTool("plan " + model +
                         " --dim batch=1 --dim sequence=1:2048 --out=" +
                         ::testing::TempDir() + "/symbolic.plan.json");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("sequence in [1, 2048]"));
  run = testing::RunTool("plan " + model +
                         " --dim batch=1 --dim sequence=128 --out=" +
                         ::testing::TempDir() + "/bound.plan.json");
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

}  // namespace
}  // namespace memplan
