#include "memplan/tflite.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/memplan.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "memplan/verify.h"
#include "schema_generated.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A model made with TFLite's object API: one subgraph, buffer 0 empty.
class ModelBuilder {
 public:
  ModelBuilder() {
    model_.version = 3;
    model_.buffers.push_back(std::make_unique<tflite::BufferT>());
    model_.subgraphs.push_back(std::make_unique<tflite::SubGraphT>());
  }

  tflite::SubGraphT& subgraph(int i = 0) { return *model_.subgraphs[i]; }
  tflite::ModelT& model() { return model_; }
  const tflite::ModelT& model() const { return model_; }

  // A tensor of `shape`; `constant` gives it a buffer of data.
  int Tensor(const std::string& name, std::vector<int32_t> shape,
             tflite::TensorType type = tflite::TensorType_INT8,
             bool constant = false, bool variable = false) {
    auto tensor = std::make_unique<tflite::TensorT>();
    tensor->name = name;
    tensor->shape = std::move(shape);
    tensor->type = type;
    tensor->is_variable = variable;
    if (constant) {
      auto buffer = std::make_unique<tflite::BufferT>();
      buffer->data.assign(16, 1);
      tensor->buffer = static_cast<uint32_t>(model_.buffers.size());
      model_.buffers.push_back(std::move(buffer));
    }
    subgraph().tensors.push_back(std::move(tensor));
    return static_cast<int>(subgraph().tensors.size()) - 1;
  }

  void Op(tflite::BuiltinOperator code, std::vector<int32_t> inputs,
          std::vector<int32_t> outputs) {
    uint32_t index = 0;
    while (index < model_.operator_codes.size() &&
           model_.operator_codes[index]->builtin_code != code) {
      ++index;
    }
    if (index == model_.operator_codes.size()) {
      auto opcode = std::make_unique<tflite::OperatorCodeT>();
      opcode->builtin_code = code;
      opcode->deprecated_builtin_code =
          static_cast<int8_t>(std::min<int32_t>(code, 127));
      model_.operator_codes.push_back(std::move(opcode));
    }
    auto op = std::make_unique<tflite::OperatorT>();
    op->opcode_index = index;
    op->inputs = std::move(inputs);
    op->outputs = std::move(outputs);
    subgraph().operators.push_back(std::move(op));
  }

  std::string Bytes() const {
    flatbuffers::FlatBufferBuilder builder;
    tflite::FinishModelBuffer(builder, tflite::Model::Pack(builder, &model_));
    return std::string(
        reinterpret_cast<const char*>(builder.GetBufferPointer()),
        builder.GetSize());
  }

 private:
  tflite::ModelT model_;
};

// input -> CONV_2D(w, b) -> RESHAPE -> FULLY_CONNECTED(w2) -> output, with
// a side branch ADD(conv, conv) -> output2.
ModelBuilder SmallModel() {
  ModelBuilder m;
  const int in = m.Tensor("input", {1, 8, 8, 3});
  const int w = m.Tensor("w", {4, 3, 3, 3}, tflite::TensorType_INT8, true);
  const int b = m.Tensor("b", {4}, tflite::TensorType_INT32, true);
  const int conv = m.Tensor("conv", {1, 8, 8, 4});
  const int shape = m.Tensor("shape", {2}, tflite::TensorType_INT32, true);
  const int flat = m.Tensor("flat", {1, 256});
  const int w2 = m.Tensor("w2", {10, 256}, tflite::TensorType_INT8, true);
  const int out = m.Tensor("out", {1, 10});
  const int out2 = m.Tensor("out2", {1, 8, 8, 4});
  m.Op(tflite::BuiltinOperator_CONV_2D, {in, w, b}, {conv});
  m.Op(tflite::BuiltinOperator_RESHAPE, {conv, shape}, {flat});
  m.Op(tflite::BuiltinOperator_FULLY_CONNECTED, {flat, w2, -1}, {out});
  m.Op(tflite::BuiltinOperator_ADD, {conv, conv}, {out2});
  m.subgraph().inputs = {in};
  m.subgraph().outputs = {out, out2};
  return m;
}

TEST(TfliteTest, ReadsSubgraphZeroAsTflmPlansIt) {
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(SmallModel().Bytes(), "small");
  ASSERT_TRUE(model.ok()) << model.status();
  const Graph& g = model->graph;
  EXPECT_EQ(model->tensor_count, 9);
  ASSERT_EQ(g.tensors.size(), 9u);  // no op of this model requests scratch
  EXPECT_EQ(g.tensors[0].name, "input");
  EXPECT_EQ(g.tensors[0].kind, TensorKind::kInput);
  EXPECT_EQ(g.tensors[0].size, 8 * 8 * 3);
  EXPECT_EQ(g.tensors[0].alignment, 16);
  EXPECT_EQ(g.tensors[0].dtype, "int8");
  EXPECT_EQ(g.tensors[2].kind, TensorKind::kConstant);  // b
  EXPECT_EQ(g.tensors[2].size, 16);                     // 4 x int32
  EXPECT_EQ(g.tensors[3].kind, TensorKind::kActivation);
  EXPECT_EQ(g.tensors[7].kind, TensorKind::kOutput);
  ASSERT_EQ(g.ops.size(), 4u);
  EXPECT_EQ(g.ops[0].name, "0_CONV_2D");
  EXPECT_EQ(g.ops[1].type, "RESHAPE");
  EXPECT_THAT(g.ops[1].alias, ElementsAre(OperandPair{0, 0}));
  EXPECT_THAT(g.ops[2].inputs, ElementsAre("flat", "w2"));  // -1 left out
  EXPECT_FALSE(model->offline_plan.has_value());
  EXPECT_TRUE(BuildProblem(g).ok());
}

// A transposed convolution: int8 input [1,4,4,4] to output [1,8,8,2].
ModelBuilder TransposeConvModel() {
  ModelBuilder m;
  const int shape = m.Tensor("shape", {4}, tflite::TensorType_INT32, true);
  const int w = m.Tensor("w", {2, 3, 3, 4}, tflite::TensorType_INT8, true);
  const int in = m.Tensor("in", {1, 4, 4, 4});
  const int out = m.Tensor("out", {1, 8, 8, 2});
  m.Op(tflite::BuiltinOperator_TRANSPOSE_CONV, {shape, w, in}, {out});
  m.subgraph().inputs = {in};
  m.subgraph().outputs = {out};
  return m;
}

TEST(TfliteTest, TransposeConvScratchIsPlannedButGetsNoRow) {
  const ModelBuilder m = TransposeConvModel();
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(m.Bytes(), "tconv");
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->graph.tensors.size(), 5u);
  const Tensor& scratch = model->graph.tensors[4];
  EXPECT_EQ(scratch.kind, TensorKind::kScratch);
  EXPECT_EQ(scratch.size, 4 * 8 * 8 * 2);  // int32 per output element
  EXPECT_THAT(model->graph.ops[0].scratch, ElementsAre(scratch.name));

  absl::StatusOr<GraphPlan> plan = PlanMemory(model->graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->plan.peak, 64 + 128 + 512);  // all three live at once
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, plan->problem, plan->plan);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_EQ(offsets->size(), 4u);  // one per flatbuffer tensor, no scratch
  EXPECT_EQ((*offsets)[0], -1);    // constants stay in flash
  EXPECT_EQ((*offsets)[1], -1);
  EXPECT_GE((*offsets)[2], 0);
  EXPECT_GE((*offsets)[3], 0);
}

TEST(TfliteTest, ScratchOfReductions) {
  ModelBuilder m;
  const int in = m.Tensor("in", {1, 4, 4, 8});
  const int axis = m.Tensor("axis", {2}, tflite::TensorType_INT32, true);
  const int out = m.Tensor("out", {1, 8});
  m.Op(tflite::BuiltinOperator_MEAN, {in, axis}, {out});
  m.subgraph().inputs = {in};
  m.subgraph().outputs = {out};
  absl::StatusOr<Graph> graph = ReadTfliteFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->tensors.size(), 6u);
  EXPECT_EQ(graph->tensors[3].size, 4 * 8);  // int32 accumulators
  EXPECT_EQ(graph->tensors[4].size, 4 * 4);  // input rank
  EXPECT_EQ(graph->tensors[5].size, 4 * 2);  // axis elements
}

TEST(TfliteTest, RoundTripKeepsGraphAndPlan) {
  const ModelBuilder m = SmallModel();
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(m.Bytes(), "small");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<GraphPlan> plan = PlanMemory(model->graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, plan->problem, plan->plan);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  // RESHAPE's output shares its input's offset.
  EXPECT_EQ((*offsets)[3], (*offsets)[5]);
  absl::StatusOr<std::string> written = WriteTflitePlan(*model, *offsets);
  ASSERT_TRUE(written.ok()) << written.status();

  absl::StatusOr<TfliteModel> again =
      ReadTfliteModelFromBytes(*written, "written");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->graph, model->graph);
  ASSERT_TRUE(again->offline_plan.has_value());
  EXPECT_EQ(*again->offline_plan, *offsets);
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*again);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(VerifyPlan(check->problem, check->plan).ok());
  EXPECT_EQ(check->plan.peak, plan->plan.peak);

  // The header: version 1, subgraph 0, one row per tensor; every other
  // table as it was.
  std::unique_ptr<tflite::ModelT> unpacked(
      tflite::GetModel(written->data())->UnPack());
  ASSERT_EQ(unpacked->metadata.size(), 1u);
  const auto& data = unpacked->buffers[unpacked->metadata[0]->buffer]->data;
  ASSERT_EQ(data.size(), 4 * (3 + 9u));
  EXPECT_EQ(data[0], 1);
  EXPECT_EQ(data[4], 0);
  EXPECT_EQ(data[8], 9);
  EXPECT_EQ(unpacked->buffers.size(), m.model().buffers.size() + 1);
  for (size_t b = 0; b < m.model().buffers.size(); ++b) {
    EXPECT_EQ(unpacked->buffers[b]->data, m.model().buffers[b]->data);
  }

  // Planned again: the entry is replaced, never a second one added.
  std::vector<int32_t> shifted = *offsets;
  for (int32_t& o : shifted) o = o < 0 ? o : o + 1024;
  absl::StatusOr<std::string> twice = WriteTflitePlan(*again, shifted);
  ASSERT_TRUE(twice.ok()) << twice.status();
  std::unique_ptr<tflite::ModelT> replanned(
      tflite::GetModel(twice->data())->UnPack());
  EXPECT_EQ(replanned->metadata.size(), 1u);
  EXPECT_EQ(replanned->buffers.size(), unpacked->buffers.size());
  absl::StatusOr<TfliteModel> third = ReadTfliteModelFromBytes(*twice, "twice");
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*third->offline_plan, shifted);
}

TEST(TfliteTest, ReorderedOpsAreWrittenInTheNewOrder) {
  const ModelBuilder m = SmallModel();
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(m.Bytes(), "small");
  ASSERT_TRUE(model.ok()) << model.status();
  const std::vector<int> order = {0, 3, 1, 2};  // ADD before the reshape
  Graph permuted = PermuteOps(model->graph, order);
  absl::StatusOr<Problem> problem =
      BuildProblem(permuted, BuildOptions{.alignment = 16});
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<Plan> plan = PlanMemory(*problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, *problem, *plan);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  absl::StatusOr<std::string> written =
      WriteTflitePlan(*model, *offsets, order);
  ASSERT_TRUE(written.ok()) << written.status();
  absl::StatusOr<TfliteModel> again =
      ReadTfliteModelFromBytes(*written, "reordered");
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->graph.ops.size(), 4u);
  EXPECT_EQ(again->graph.ops[1].type, "ADD");
  EXPECT_EQ(again->graph.ops[2].type, "RESHAPE");
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*again);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(VerifyPlan(check->problem, check->plan).ok());

  EXPECT_THAT(
      WriteTflitePlan(*model, *offsets, {0, 1, 1, 2}).status().message(),
      HasSubstr("no permutation"));
  EXPECT_THAT(WriteTflitePlan(*model, {0, 1}).status().message(),
              HasSubstr("2 offsets for the model's 9 tensors"));
}

TEST(TfliteTest, VerifyNamesOverlappingTensors) {
  const ModelBuilder m = SmallModel();
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(m.Bytes(), "small");
  ASSERT_TRUE(model.ok()) << model.status();
  // input and conv live together (CONV_2D reads one, writes the other).
  std::vector<int32_t> offsets = {0, -1, -1, 0, -1, 512, -1, 1024, 2048};
  absl::StatusOr<std::string> written = WriteTflitePlan(*model, offsets);
  ASSERT_TRUE(written.ok()) << written.status();
  absl::StatusOr<TfliteModel> again = ReadTfliteModelFromBytes(*written, "bad");
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<TflitePlanCheck> check = TfliteRecordedPlan(*again);
  ASSERT_TRUE(check.ok()) << check.status();
  const absl::Status verified = VerifyPlan(check->problem, check->plan);
  EXPECT_FALSE(verified.ok());
  EXPECT_THAT(verified.message(), HasSubstr("input"));
  EXPECT_THAT(verified.message(), HasSubstr("conv"));

  // Tensors left to TFLM (-1) are placed by it: the rest is checked alone.
  offsets = {-1, -1, -1, 0, -1, 0, -1, 1024, 2048};
  written = WriteTflitePlan(*model, offsets);
  ASSERT_TRUE(written.ok());
  again = ReadTfliteModelFromBytes(*written, "partial");
  ASSERT_TRUE(again.ok());
  check = TfliteRecordedPlan(*again);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(VerifyPlan(check->problem, check->plan).ok());
  EXPECT_EQ(check->plan.assignments.size(), 3u);  // conv+flat, out, out2
}

TEST(TfliteTest, UnusableOfflinePlanIsReported) {
  ModelBuilder m = SmallModel();
  auto buffer = std::make_unique<tflite::BufferT>();
  for (const int32_t word : {1, 0, 2, 0, 0}) {
    for (int s = 0; s < 32; s += 8) buffer->data.push_back(word >> s);
  }
  auto entry = std::make_unique<tflite::MetadataT>();
  entry->name = "OfflineMemoryAllocation";
  entry->buffer = static_cast<uint32_t>(m.model().buffers.size());
  m.model().buffers.push_back(std::move(buffer));
  m.model().metadata.push_back(std::move(entry));
  absl::StatusOr<TfliteModel> model =
      ReadTfliteModelFromBytes(m.Bytes(), "stale");
  ASSERT_TRUE(model.ok()) << model.status();  // it can still be planned
  EXPECT_FALSE(model->offline_plan.has_value());
  EXPECT_THAT(model->offline_plan_problem,
              HasSubstr("2 offsets for 9 tensors"));
  EXPECT_THAT(TfliteRecordedPlan(*model).status().message(),
              HasSubstr("2 offsets for 9 tensors"));
  EXPECT_THAT(TfliteRecordedPlan(
                  *ReadTfliteModelFromBytes(SmallModel().Bytes(), "plain"))
                  .status()
                  .message(),
              HasSubstr("no OfflineMemoryAllocation metadata"));
}

std::string ErrorOf(const std::string& bytes) {
  absl::StatusOr<Graph> graph = ReadTfliteFromBytes(bytes, "bad.tflite");
  return graph.ok() ? "ok" : std::string(graph.status().message());
}

TEST(TfliteTest, HostileInputsAreClearErrors) {
  const std::string good = SmallModel().Bytes();
  EXPECT_THAT(ErrorOf(good.substr(0, 5)), HasSubstr("too short"));
  EXPECT_THAT(ErrorOf(good.substr(0, good.size() / 2)),
              HasSubstr("fails FlatBuffers' verifier"));
  std::string renamed = good;
  renamed[4] = 'X';
  EXPECT_THAT(ErrorOf(renamed), HasSubstr("identifier \"TFL3\""));
  EXPECT_THAT(ErrorOf(std::string(64, '\0')), HasSubstr("\"TFL3\""));

  ModelBuilder m = SmallModel();
  m.subgraph().operators[0]->inputs[0] = 99;
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("operator 0 (CONV_2D) input 0 is tensor 99, beyond "
                        "subgraph 0's 9 tensors"));
  m = SmallModel();
  m.subgraph().operators[1]->outputs[0] = -3;
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("output 0 is tensor -3"));
  m = SmallModel();
  m.subgraph().tensors[1]->buffer = 77;
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("tensor 1 \"w\" names buffer 77"));
  m = SmallModel();
  m.subgraph().operators[2]->opcode_index = 40;
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("opcode index 40"));
  m = SmallModel();
  m.subgraph().inputs = {12};
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("input 0 is tensor 12"));
  m = SmallModel();
  m.subgraph().tensors[3]->shape = {1, -1, 8, 4};
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("tensor 3 \"conv\": dimension 1 is -1"));
  m = SmallModel();
  m.subgraph().tensors[3]->shape = {65536, 65536, 65536, 4};
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("larger than 2 GiB"));
  m = SmallModel();
  m.subgraph().tensors[3]->type = tflite::TensorType_STRING;
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("has type STRING"));
  m = SmallModel();
  m.subgraph().outputs.push_back(0);
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("both a graph input and a graph output"));
  m = SmallModel();
  m.subgraph().operators[0]->inputs[0] = 7;  // reads "out" before FC makes it
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("\"bad.tflite\": ops \"0_CONV_2D\" -> \"1_RESHAPE\" -> "
                        "\"2_FULLY_CONNECTED\" -> \"0_CONV_2D\" form a cycle"));
  // An operand index just past the model's tensors, after an op whose
  // scratch memplan adds to the graph: still beyond the model's tensors.
  m = SmallModel();
  const int shape = m.Tensor("tshape", {4}, tflite::TensorType_INT32, true);
  const int tw = m.Tensor("tw", {4, 3, 3, 4}, tflite::TensorType_INT8, true);
  const int tout = m.Tensor("tout", {1, 8, 8, 4});
  m.Op(tflite::BuiltinOperator_TRANSPOSE_CONV, {shape, tw, 3}, {tout});
  m.Op(tflite::BuiltinOperator_ADD, {tout, tout + 1}, {tout});
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("input 1 is tensor 12, beyond subgraph 0's 12 "
                        "tensors"));
  m = SmallModel();
  m.model().subgraphs.push_back(std::make_unique<tflite::SubGraphT>());
  m.Op(tflite::BuiltinOperator_WHILE, {0}, {3});
  EXPECT_THAT(ErrorOf(m.Bytes()),
              HasSubstr("has 2 subgraphs (operator 4 (WHILE)"));
  m = SmallModel();
  m.model().subgraphs.clear();
  EXPECT_THAT(ErrorOf(m.Bytes()), HasSubstr("has no subgraph"));
}

// The stored field `field` of flatbuffer table `table`, to overwrite.
uint8_t& FieldOf(const void* table, flatbuffers::voffset_t field) {
  return *reinterpret_cast<flatbuffers::Table*>(const_cast<void*>(table))
              ->GetAddressOf(field);
}

// Union types that name a table the file does not hold pass FlatBuffers'
// verifier; the written model has no options there, as TFLite reads it.
TEST(TfliteTest, UnionTypeWithoutItsTableIsWrittenAsNone) {
  ModelBuilder m = SmallModel();
  m.subgraph().tensors[3]->quantization =
      std::make_unique<tflite::QuantizationParametersT>();
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);  // stores the zero types, to be overwritten
  tflite::FinishModelBuffer(builder, tflite::Model::Pack(builder, &m.model()));
  std::string bytes(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                    builder.GetSize());
  const tflite::SubGraph* subgraph =
      tflite::GetModel(bytes.data())->subgraphs()->Get(0);
  const tflite::Operator* op = subgraph->operators()->Get(0);
  FieldOf(op, tflite::Operator::VT_BUILTIN_OPTIONS_TYPE) =
      tflite::BuiltinOptions_Conv2DOptions;
  FieldOf(op, tflite::Operator::VT_BUILTIN_OPTIONS_2_TYPE) =
      tflite::BuiltinOptions2_StablehloConcatenateOptions;
  FieldOf(subgraph->tensors()->Get(3)->quantization(),
          tflite::QuantizationParameters::VT_DETAILS_TYPE) =
      tflite::QuantizationDetails_CustomQuantization;

  absl::StatusOr<TfliteModel> model = ReadTfliteModelFromBytes(bytes, "u");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<GraphPlan> plan = PlanMemory(model->graph);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(VerifyPlan(plan->problem, plan->plan).ok());
  absl::StatusOr<std::vector<int32_t>> offsets =
      TfliteOfflineOffsets(*model, plan->problem, plan->plan);
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  absl::StatusOr<std::string> written = WriteTflitePlan(*model, *offsets);
  ASSERT_TRUE(written.ok()) << written.status();
  const tflite::Model* out = tflite::GetModel(written->data());
  const tflite::Operator* conv = out->subgraphs()->Get(0)->operators()->Get(0);
  EXPECT_EQ(conv->builtin_options_type(), tflite::BuiltinOptions_NONE);
  EXPECT_EQ(conv->builtin_options_2_type(), tflite::BuiltinOptions2_NONE);
  absl::StatusOr<TfliteModel> again =
      ReadTfliteModelFromBytes(*written, "written");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->graph, model->graph);
  EXPECT_EQ(*again->offline_plan, *offsets);
}

TEST(TfliteTest, VariableTensorsAreLeftToTflm) {
  ModelBuilder m;
  const int in = m.Tensor("in", {1, 4});
  const int state =
      m.Tensor("state", {1, 16}, tflite::TensorType_INT8, false, true);
  const int out = m.Tensor("out", {1, 4});
  m.Op(tflite::BuiltinOperator_ADD, {in, state}, {out});
  m.subgraph().inputs = {in};
  m.subgraph().outputs = {out};
  absl::StatusOr<Graph> graph = ReadTfliteFromBytes(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors[1].kind, TensorKind::kConstant);
  EXPECT_THAT(graph->ops[0].writes, ElementsAre(1));
}

TEST(TfliteTest, ToolPlansWritesAndVerifiesAModel) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      absl::StrCat("memplan_tflite_test_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string in = (dir / "small.tflite").string();
  const std::string out = (dir / "small.planned.tflite").string();
  std::ofstream(in, std::ios::binary) << SmallModel().Bytes();
  testing::ToolRun run = testing::RunTool(
      absl::StrCat("plan ", in, " --out=", out, " --reorder=memory"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  run = testing::RunTool(absl::StrCat("verify ", out));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("valid offline plan of"));
  // The bare array: one row per flatbuffer tensor, none for the scratch.
  const std::string tconv = (dir / "tconv.tflite").string();
  std::ofstream(tconv, std::ios::binary) << TransposeConvModel().Bytes();
  const std::string array = (dir / "tconv.bin").string();
  run = testing::RunTool(
      absl::StrCat("plan ", tconv, " --format=tflm-offline --out=", array));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(std::filesystem::file_size(array), 4 * (3 + 4u));
  run = testing::RunTool(absl::StrCat("stats ", in));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("ops: 4"));
  run = testing::RunTool(absl::StrCat("verify ", in, " ", out));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("holds its own offline plan"));
  run = testing::RunTool(absl::StrCat("verify ", in));
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_THAT(run.output, HasSubstr("no OfflineMemoryAllocation metadata"));
  run = testing::RunTool(absl::StrCat("plan ",
                                      testing::DataPath("models/resnet18.json"),
                                      " --out=", dir.string(), "/x.tflite"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("needs a .tflite INPUT"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace memplan
