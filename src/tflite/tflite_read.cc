// ReadTflite: subgraph 0 of a TFLite flatbuffer to a memplan Graph
// (memplan/tflite.h). Nothing of the file is trusted before FlatBuffers'
// verifier accepts it; every index and shape is checked after.

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/problem.h"
#include "memplan/tflite.h"
#include "schema_generated.h"
#include "tflite/tflite_scratch.h"

namespace memplan {
namespace {

using tflite_internal::Operand;

// TFLM's arena alignment (MicroArenaBufferAlignment()).
constexpr Bytes kArenaAlignment = 16;
// The largest tensor an int32 arena offset can place.
constexpr Bytes kMaxTensorBytes = std::numeric_limits<int32_t>::max();

struct ElementType {
  Bytes width = 0;  // 0: TFLM cannot plan it
  const char* name = "";
};

ElementType ElementTypeOf(tflite::TensorType type) {
  switch (type) {
    case tflite::TensorType_FLOAT32:
      return {4, "float32"};
    case tflite::TensorType_FLOAT16:
      return {2, "float16"};
    case tflite::TensorType_BFLOAT16:
      return {2, "bfloat16"};
    case tflite::TensorType_INT32:
      return {4, "int32"};
    case tflite::TensorType_UINT32:
      return {4, "uint32"};
    case tflite::TensorType_UINT8:
      return {1, "uint8"};
    case tflite::TensorType_INT8:
      return {1, "int8"};
    case tflite::TensorType_INT16:
      return {2, "int16"};
    case tflite::TensorType_UINT16:
      return {2, "uint16"};
    case tflite::TensorType_INT64:
      return {8, "int64"};
    case tflite::TensorType_UINT64:
      return {8, "uint64"};
    case tflite::TensorType_BOOL:
      return {1, "bool"};
    case tflite::TensorType_FLOAT64:
      return {8, "float64"};
    case tflite::TensorType_COMPLEX64:
      return {8, "complex64"};
    case tflite::TensorType_COMPLEX128:
      return {16, "complex128"};
    case tflite::TensorType_FLOAT8_E4M3FN:
      return {1, "float8_e4m3fn"};
    case tflite::TensorType_FLOAT8_E5M2:
      return {1, "float8_e5m2"};
    case tflite::TensorType_INT4:
      return {0, "int4"};
    case tflite::TensorType_UINT4:
      return {0, "uint4"};
    case tflite::TensorType_INT2:
      return {0, "int2"};
    default:
      break;
  }
  const char* name = tflite::EnumNameTensorType(type);
  return {0, name != nullptr && *name != '\0' ? name : "unknown"};
}

// The checked model: the verifier passed, subgraph 0 exists.
absl::StatusOr<const tflite::Model*> VerifiedModel(std::string_view bytes,
                                                   const std::string& name) {
  if (bytes.size() < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name, "\" is not a TFLite model: ", bytes.size(),
                     " bytes, too short for a flatbuffer"));
  }
  if (!flatbuffers::BufferHasIdentifier(bytes.data(),
                                        tflite::ModelIdentifier())) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name,
                     "\" is not a TFLite model: bytes 4-7 are not the "
                     "identifier \"TFL3\""));
  }
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size());
  if (!tflite::VerifyModelBuffer(verifier)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name,
                     "\" fails FlatBuffers' verifier: a truncated or corrupt "
                     "TFLite model (",
                     bytes.size(), " bytes)"));
  }
  const tflite::Model* model = tflite::GetModel(bytes.data());
  const auto* subgraphs = model->subgraphs();
  if (subgraphs == nullptr || subgraphs->size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name, "\" has no subgraph"));
  }
  return model;
}

// The builtin code of an operator code (TFLite's GetBuiltinCode()).
int32_t BuiltinCode(const tflite::OperatorCode& code) {
  return std::max<int32_t>(code.builtin_code(), code.deprecated_builtin_code());
}

std::string OpName(const tflite::OperatorCode& code) {
  const int32_t builtin = BuiltinCode(code);
  if (builtin == tflite::BuiltinOperator_CUSTOM) {
    // An empty custom code is no code: the writer's object API drops it.
    return code.custom_code() != nullptr && code.custom_code()->size() > 0
               ? code.custom_code()->str()
               : "CUSTOM";
  }
  if (builtin >= tflite::BuiltinOperator_MIN &&
      builtin <= tflite::BuiltinOperator_MAX) {
    const char* name = tflite::EnumNameBuiltinOperator(
        static_cast<tflite::BuiltinOperator>(builtin));
    if (name != nullptr && *name != '\0') return name;
  }
  return absl::StrCat("BUILTIN_", builtin);
}

// The op names of subgraph 0's operators, every opcode index checked.
absl::StatusOr<std::vector<std::string>> OpTypes(const tflite::Model& model,
                                                 const std::string& name) {
  const tflite::SubGraph& subgraph = *model.subgraphs()->Get(0);
  const auto* codes = model.operator_codes();
  const size_t code_count = codes == nullptr ? 0 : codes->size();
  std::vector<std::string> types;
  if (subgraph.operators() == nullptr) return types;
  for (size_t i = 0; i < subgraph.operators()->size(); ++i) {
    const uint32_t index = subgraph.operators()->Get(i)->opcode_index();
    if (index >= code_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", name, "\": operator ", i, " of subgraph 0 has opcode index ",
          index, ", beyond the model's ", code_count, " operator codes"));
    }
    types.push_back(OpName(*codes->Get(index)));
  }
  return types;
}

absl::Status CheckOneSubgraph(const tflite::Model& model,
                              const std::vector<std::string>& types,
                              const std::string& name) {
  const size_t count = model.subgraphs()->size();
  if (count == 1) return absl::OkStatus();
  std::string op = "an operator";
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "IF" || types[i] == "WHILE" || types[i] == "CALL_ONCE" ||
        types[i] == "CALL" || types[i] == "STABLEHLO_WHILE" ||
        types[i] == "STABLEHLO_CASE" || types[i] == "STABLEHLO_COMPOSITE") {
      op = absl::StrCat("operator ", i, " (", types[i], ")");
      break;
    }
  }
  return absl::UnimplementedError(absl::StrCat(
      "\"", name, "\" has ", count, " subgraphs (", op,
      " of subgraph 0 calls another): control flow is not supported; memplan "
      "plans models of one subgraph"));
}

// Tensor i's bytes as TFLM computes them, every dimension checked.
absl::StatusOr<Bytes> TensorBytes(const tflite::Tensor& tensor, size_t i,
                                  const std::string& label, Bytes width,
                                  std::vector<int64_t>& shape,
                                  int64_t& elements) {
  elements = 1;
  bool overflow = false;
  if (tensor.shape() != nullptr) {
    for (size_t d = 0; d < tensor.shape()->size(); ++d) {
      const int32_t dim = tensor.shape()->Get(d);
      if (dim < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            label, ": dimension ", d, " is ", dim,
            " (negative: a dynamic shape; TFLM needs static shapes)"));
      }
      shape.push_back(dim);
      if (dim != 0 && elements > kMaxTensorBytes / dim) overflow = true;
      elements = overflow ? elements : elements * dim;
    }
  }
  if (overflow || elements > kMaxTensorBytes / std::max<Bytes>(width, 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, " (tensor ", i,
        ") is larger than 2 GiB, beyond what an int32 arena offset reaches"));
  }
  return elements * width;
}

struct ReadState {
  std::string name;  // the file's, for errors
  const tflite::Model* model = nullptr;
  const tflite::SubGraph* subgraph = nullptr;
  std::vector<Operand> operands;  // per tensor, for the scratch rules
  std::vector<bool> variable;
  Graph graph;
};

// The tensor's graph name: its own when non-empty and unique.
std::string UniqueName(const tflite::Tensor& tensor, size_t i,
                       absl::flat_hash_set<std::string>& used) {
  std::string name =
      tensor.name() != nullptr ? tensor.name()->str() : std::string();
  if (name.empty()) name = absl::StrCat("tensor", i);
  if (used.contains(name)) name = absl::StrCat(name, "#", i);
  used.insert(name);
  return name;
}

bool HasData(const tflite::Model& model, uint32_t buffer) {
  const tflite::Buffer* b = model.buffers()->Get(buffer);
  return (b->data() != nullptr && b->data()->size() > 0) || b->offset() > 1;
}

absl::Status ReadTensors(ReadState& state) {
  const auto* tensors = state.subgraph->tensors();
  const size_t count = tensors == nullptr ? 0 : tensors->size();
  const auto* buffers = state.model->buffers();
  const size_t buffer_count = buffers == nullptr ? 0 : buffers->size();
  absl::flat_hash_set<std::string> used;
  for (size_t i = 0; i < count; ++i) {
    const tflite::Tensor& fb = *tensors->Get(i);
    Tensor tensor;
    tensor.name = UniqueName(fb, i, used);
    const std::string label = absl::StrCat("\"", state.name, "\": tensor ", i,
                                           " \"", tensor.name, "\"");
    if (fb.buffer() >= buffer_count) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, " names buffer ", fb.buffer(),
                       ", beyond the model's ", buffer_count, " buffers"));
    }
    const bool constant = HasData(*state.model, fb.buffer());
    const ElementType type = ElementTypeOf(fb.type());
    tensor.dtype = type.name;
    Operand operand;
    operand.present = true;
    operand.type = type.name;
    MEMPLAN_ASSIGN_OR_RETURN(
        tensor.size,
        TensorBytes(fb, i, label, type.width, operand.shape, operand.elements));
    tensor.shape = operand.shape;
    if (type.width == 0 && !constant && !fb.is_variable()) {
      return absl::UnimplementedError(absl::StrCat(
          label, " has type ", type.name,
          ", which TFLM does not place in its arena; memplan plans tensors "
          "of fixed-width types only"));
    }
    tensor.kind = constant || fb.is_variable() ? TensorKind::kConstant
                                               : TensorKind::kActivation;
    tensor.alignment = kArenaAlignment;
    state.operands.push_back(std::move(operand));
    state.variable.push_back(fb.is_variable());
    state.graph.tensors.push_back(std::move(tensor));
  }
  return absl::OkStatus();
}

// Marks the subgraph's inputs and outputs.
absl::Status ReadInputsOutputs(ReadState& state) {
  std::vector<Tensor>& tensors = state.graph.tensors;
  for (const bool outputs : {false, true}) {
    const auto* list =
        outputs ? state.subgraph->outputs() : state.subgraph->inputs();
    if (list == nullptr) continue;
    for (size_t k = 0; k < list->size(); ++k) {
      const int32_t t = list->Get(k);
      const char* role = outputs ? "output" : "input";
      if (t < 0 || static_cast<size_t>(t) >= tensors.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "\"", state.name, "\": subgraph 0's ", role, " ", k, " is tensor ",
            t, ", beyond its ", tensors.size(), " tensors"));
      }
      Tensor& tensor = tensors[t];
      if (tensor.kind == TensorKind::kConstant) continue;
      if (outputs && tensor.kind == TensorKind::kInput) {
        return absl::UnimplementedError(absl::StrCat(
            "\"", state.name, "\": tensor ", t, " \"", tensor.name,
            "\" is both a graph input and a graph output; not supported"));
      }
      tensor.kind = outputs ? TensorKind::kOutput : TensorKind::kInput;
    }
  }
  return absl::OkStatus();
}

// The tensor indices of an operator's inputs or outputs, checked; -1
// (an optional operand left out) is kept.
absl::StatusOr<std::vector<int32_t>> Operands(
    const flatbuffers::Vector<int32_t>* list, const ReadState& state, size_t op,
    const std::string& type, const char* role) {
  std::vector<int32_t> result;
  if (list == nullptr) return result;
  // The flatbuffer's tensors, not the graph's: the graph grows by the
  // scratch tensors of the ops read before this one.
  const size_t count = state.operands.size();
  for (size_t k = 0; k < list->size(); ++k) {
    const int32_t t = list->Get(k);
    const bool optional = t == -1 && std::string_view(role) == "input";
    if (!optional && (t < 0 || static_cast<size_t>(t) >= count)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", state.name, "\": operator ", op, " (", type, ") ", role, " ", k,
          " is tensor ", t, ", beyond subgraph 0's ", count, " tensors"));
    }
    result.push_back(t);
  }
  return result;
}

// The operand views of `indices` for the scratch rules.
std::vector<Operand> OperandsOf(const std::vector<int32_t>& indices,
                                const ReadState& state) {
  std::vector<Operand> operands;
  for (const int32_t t : indices) {
    operands.push_back(t < 0 ? Operand() : state.operands[t]);
  }
  return operands;
}

// Op i's scratch tensors, added to the graph.
void AddScratch(ReadState& state, Op& op, const std::vector<int32_t>& inputs,
                const std::vector<int32_t>& outputs) {
  const std::vector<Bytes> requests = tflite_internal::ScratchRequests(
      op.type, OperandsOf(inputs, state), OperandsOf(outputs, state));
  for (size_t k = 0; k < requests.size(); ++k) {
    Tensor scratch;
    scratch.name = absl::StrCat(op.name, "/scratch", k);
    scratch.size = requests[k];
    scratch.kind = TensorKind::kScratch;
    scratch.alignment = kArenaAlignment;
    scratch.dtype = "uint8";
    scratch.shape = {requests[k]};
    op.scratch.push_back(scratch.name);
    state.graph.tensors.push_back(std::move(scratch));
  }
}

absl::Status ReadOps(ReadState& state, const std::vector<std::string>& types) {
  const int tensor_count = static_cast<int>(state.operands.size());
  for (size_t i = 0; i < types.size(); ++i) {
    const tflite::Operator& fb = *state.subgraph->operators()->Get(i);
    Op op;
    op.name = absl::StrCat(i, "_", types[i]);
    op.type = types[i];
    MEMPLAN_ASSIGN_OR_RETURN(
        std::vector<int32_t> inputs,
        Operands(fb.inputs(), state, i, types[i], "input"));
    MEMPLAN_ASSIGN_OR_RETURN(
        std::vector<int32_t> outputs,
        Operands(fb.outputs(), state, i, types[i], "output"));
    for (const int32_t t : inputs) {
      if (t < 0) continue;
      if (state.variable[t]) {  // the op may update the state it reads
        op.writes.push_back(static_cast<int>(op.inputs.size()));
      }
      op.inputs.push_back(state.graph.tensors[t].name);
    }
    for (const int32_t t : outputs) {
      op.outputs.push_back(state.graph.tensors[t].name);
    }
    // RESHAPE copies only when its output's memory differs from its input's.
    if (op.type == "RESHAPE" && !inputs.empty() && inputs[0] >= 0 &&
        inputs[0] < tensor_count && outputs.size() == 1 &&
        state.graph.tensors[inputs[0]].kind != TensorKind::kConstant &&
        state.graph.tensors[outputs[0]].kind != TensorKind::kConstant &&
        state.graph.tensors[inputs[0]].size ==
            state.graph.tensors[outputs[0]].size) {
      op.alias.push_back(OperandPair{.output = 0, .input = 0});
    }
    AddScratch(state, op, inputs, outputs);
    state.graph.ops.push_back(std::move(op));
  }
  return absl::OkStatus();
}

// The offsets of an OfflineMemoryAllocation entry, or why it is unusable.
std::optional<std::vector<int32_t>> OfflinePlan(const tflite::Model& model,
                                                size_t tensor_count,
                                                std::string& problem) {
  const auto* metadata = model.metadata();
  if (metadata == nullptr) return std::nullopt;
  std::optional<std::vector<int32_t>> found;
  const size_t buffer_count =
      model.buffers() == nullptr ? 0 : model.buffers()->size();
  for (size_t i = 0; i < metadata->size(); ++i) {
    const tflite::Metadata& entry = *metadata->Get(i);
    if (entry.name() == nullptr ||
        entry.name()->string_view() != kTfliteOfflinePlanName) {
      continue;
    }
    if (entry.buffer() >= buffer_count) {
      problem =
          absl::StrCat("its metadata ", i, " names buffer ", entry.buffer(),
                       ", beyond the model's ", buffer_count, " buffers");
      return std::nullopt;
    }
    const auto* data = model.buffers()->Get(entry.buffer())->data();
    const size_t bytes = data == nullptr ? 0 : data->size();
    std::vector<int32_t> words(bytes / 4);
    if (!words.empty()) std::memcpy(words.data(), data->data(), bytes / 4 * 4);
    // TFLM reads n offsets after the header and ignores what follows.
    if (words.size() < 3 || words[2] < 0 ||
        words[2] > static_cast<int64_t>(words.size()) - 3) {
      problem = absl::StrCat("its ", std::string(kTfliteOfflinePlanName),
                             " entry (", bytes,
                             " bytes) is no [version, subgraph, n, n offsets] "
                             "array of int32");
      return std::nullopt;
    }
    if (static_cast<size_t>(words[2]) != tensor_count) {
      problem = absl::StrCat("its ", std::string(kTfliteOfflinePlanName),
                             " entry has ", words[2], " offsets for ",
                             tensor_count, " tensors (TFLM refuses it)");
      return std::nullopt;
    }
    found =
        std::vector<int32_t>(words.begin() + 3, words.begin() + 3 + words[2]);
  }
  return found;
}

}  // namespace

absl::StatusOr<TfliteModel> ReadTfliteModelFromBytes(
    std::string bytes, std::string_view name_view) {
  const std::string name(name_view);
  MEMPLAN_ASSIGN_OR_RETURN(const tflite::Model* model,
                           VerifiedModel(bytes, name));
  MEMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> types,
                           OpTypes(*model, name));
  MEMPLAN_RETURN_IF_ERROR(CheckOneSubgraph(*model, types, name));
  ReadState state;
  state.name = name;
  state.model = model;
  state.subgraph = model->subgraphs()->Get(0);
  if (state.subgraph->name() != nullptr) {
    state.graph.name = state.subgraph->name()->str();
  }
  MEMPLAN_RETURN_IF_ERROR(ReadTensors(state));
  MEMPLAN_RETURN_IF_ERROR(ReadInputsOutputs(state));
  MEMPLAN_RETURN_IF_ERROR(ReadOps(state, types));
  // The graph's own rules (one producer per tensor, topological order).
  if (absl::Status s = BuildProblem(state.graph).status(); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", name, "\": ", s.message()));
  }
  TfliteModel result;
  result.tensor_count = static_cast<int>(state.operands.size());
  result.offline_plan =
      OfflinePlan(*model, state.operands.size(), result.offline_plan_problem);
  result.graph = std::move(state.graph);
  result.bytes = std::move(bytes);
  return result;
}

absl::StatusOr<TfliteModel> ReadTfliteModel(const std::string& path) {
  MEMPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ReadTfliteModelFromBytes(std::move(bytes), path);
}

absl::StatusOr<Graph> ReadTflite(const std::string& path) {
  MEMPLAN_ASSIGN_OR_RETURN(TfliteModel model, ReadTfliteModel(path));
  return std::move(model.graph);
}

absl::StatusOr<Graph> ReadTfliteFromBytes(std::string_view bytes,
                                          std::string_view name) {
  MEMPLAN_ASSIGN_OR_RETURN(TfliteModel model,
                           ReadTfliteModelFromBytes(std::string(bytes), name));
  return std::move(model.graph);
}

GraphImporter TfliteImporter() {
  return GraphImporter{
      .extension = ".tflite",
      .import = [](const std::string& path, std::string_view bytes) {
        return ReadTfliteFromBytes(bytes, path);
      }};
}

}  // namespace memplan
