// ImportOnnx: an ONNX ModelProto to a memplan Graph (memplan/onnx.h): the
// model's checks, its element types, and the Importer that turns every node
// into an op and every value into a tensor of its inferred size. Shape
// inference is shape_arithmetic.cc's.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/onnx.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_arithmetic.h"
#include "onnx/symbolic_import.h"

namespace memplan {
namespace {

// Ops that move no data in the common runtimes: output 0 is input 0's bytes.
const absl::flat_hash_set<std::string_view>& ViewOps() {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  return *ops;
}

// Element-wise ops: output 0 may overwrite an input of its shape and type.
const absl::flat_hash_set<std::string_view>& ElementwiseOps() {
  static const auto* ops = new absl::flat_hash_set<std::string_view>{
      // unary
      "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "ThresholdedRelu",
      "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign",
      "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Sign", "Floor",
      "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
      "Cosh", "Asinh", "Acosh", "Atanh", "Not", "Clip", "Mish",
      // binary (and variadic)
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
      "And", "Or", "Xor", "BitShift"};
  return *ops;
}

struct ElementType {
  int64_t width = 0;  // bytes; 0 = no fixed width
  const char* name = "";
};

ElementType ElementTypeOf(int32_t type) {
  using T = onnx::TensorProto;
  switch (type) {
    case T::FLOAT:
      return {4, "float32"};
    case T::UINT8:
      return {1, "uint8"};
    case T::INT8:
      return {1, "int8"};
    case T::UINT16:
      return {2, "uint16"};
    case T::INT16:
      return {2, "int16"};
    case T::INT32:
      return {4, "int32"};
    case T::INT64:
      return {8, "int64"};
    case T::BOOL:
      return {1, "bool"};
    case T::FLOAT16:
      return {2, "float16"};
    case T::DOUBLE:
      return {8, "float64"};
    case T::UINT32:
      return {4, "uint32"};
    case T::UINT64:
      return {8, "uint64"};
    case T::COMPLEX64:
      return {8, "complex64"};
    case T::COMPLEX128:
      return {16, "complex128"};
    case T::BFLOAT16:
      return {2, "bfloat16"};
    case T::STRING:
      return {0, "string"};
    default:
      return {0, "undefined"};
  }
}

const char* TypeCaseName(const onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return "tensor";
    case onnx::TypeProto::kSequenceType:
      return "sequence";
    case onnx::TypeProto::kMapType:
      return "map";
    case onnx::TypeProto::kOptionalType:
      return "optional";
    case onnx::TypeProto::kSparseTensorType:
      return "sparse tensor";
    default:
      return "no";
  }
}

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  return absl::StrCat(
      "node \"", node.name().empty() ? absl::StrCat("#", index) : node.name(),
      "\" (", node.op_type(), ")");
}

// The ai.onnx opset of the model; Unimplemented when the installed ONNX
// knows no schemas that recent (its shape inference would silently use
// older ones).
absl::StatusOr<int64_t> CheckOpsets(const onnx::ModelProto& model) {
  const auto& ranges =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    const std::string domain =
        id.domain() == "ai.onnx" ? std::string() : id.domain();
    if (domain.empty()) opset = id.version();
    auto range = ranges.find(domain);
    if (range == ranges.end()) continue;  // custom ops: no schemas anyway
    if (id.version() > range->second.second) {
      return absl::UnimplementedError(
          absl::StrCat("opset ", id.version(), " of domain \"",
                       domain.empty() ? "ai.onnx" : domain,
                       "\" is newer than the installed ONNX can infer (up to ",
                       range->second.second, ")"));
    }
  }
  if (opset == 0) {
    return absl::InvalidArgumentError(
        "the model imports no ai.onnx opset (opset_import)");
  }
  return opset;
}

absl::Status CheckSupportedNodes(const onnx::GraphProto& graph) {
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    const bool control_flow =
        (node.domain().empty() || node.domain() == "ai.onnx") &&
        (node.op_type() == "If" || node.op_type() == "Loop" ||
         node.op_type() == "Scan");
    bool subgraph = false;
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      subgraph = subgraph || attribute.has_g() || attribute.graphs_size() > 0;
    }
    if (control_flow || subgraph) {
      return absl::UnimplementedError(
          absl::StrCat(NodeLabel(node, i),
                       ": control flow (subgraphs) is not supported yet"));
    }
  }
  return absl::OkStatus();
}

// Graph inputs of a type the importer cannot size, before inference trips
// over them.
absl::Status CheckInputTypes(const onnx::GraphProto& graph) {
  for (const onnx::ValueInfoProto& input : graph.input()) {
    const onnx::TypeProto& type = input.type();
    if (!type.has_tensor_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", input.name(), "\" (a graph input) has ",
          TypeCaseName(type), " type; only tensors are supported"));
    }
    if (ElementTypeOf(type.tensor_type().elem_type()).width == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", input.name(), "\" (a graph input) has element type ",
          ElementTypeOf(type.tensor_type().elem_type()).name,
          ", which has no fixed width"));
    }
  }
  return absl::OkStatus();
}

// Binds the symbolic dimensions named in `dims` wherever they occur, and
// checks that every graph input carrying data is then fully static.
absl::Status BindDims(onnx::GraphProto& graph,
                      const std::map<std::string, int64_t>& dims,
                      const absl::flat_hash_set<std::string>& weights) {
  for (const auto& [name, value] : dims) {
    if (value < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension \"", name, "\" bound to ", value, " (must be >= 1)"));
    }
  }
  std::set<std::string> used;
  auto bind = [&](onnx::ValueInfoProto& value) {
    if (!value.type().has_tensor_type()) return;
    auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (onnx::TensorShapeProto::Dimension& dim : *shape->mutable_dim()) {
      if (!dim.has_dim_param()) continue;
      auto it = dims.find(dim.dim_param());
      if (it == dims.end()) continue;
      used.insert(it->first);
      dim.set_dim_value(it->second);
    }
  };
  for (onnx::ValueInfoProto& value : *graph.mutable_input()) bind(value);
  for (onnx::ValueInfoProto& value : *graph.mutable_output()) bind(value);
  for (onnx::ValueInfoProto& value : *graph.mutable_value_info()) bind(value);
  for (const auto& [name, value] : dims) {
    if (!used.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension \"", name,
                       "\" is bound but no graph input or value has it"));
    }
  }
  std::set<std::string> unbound;
  std::string where, flags;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (weights.contains(input.name()) || !input.type().has_tensor_type() ||
        !input.type().tensor_type().has_shape()) {
      continue;
    }
    const auto& shape = input.type().tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      if (shape.dim(d).has_dim_value()) continue;
      if (!shape.dim(d).has_dim_param()) {
        return absl::InvalidArgumentError(
            absl::StrCat("dimension ", d, " of graph input \"", input.name(),
                         "\" has neither a value nor a name"));
      }
      const std::string& name = shape.dim(d).dim_param();
      if (unbound.insert(name).second) {
        absl::StrAppend(&where, where.empty() ? "" : ", ", "\"", name,
                        "\" (dim ", d, " of graph input \"", input.name(),
                        "\")");
        absl::StrAppend(&flags, " --dim ", name, "=VALUE");
      }
    }
  }
  if (unbound.empty()) return absl::OkStatus();
  // Every dim at once, so that one run tells the whole command line.
  return absl::InvalidArgumentError(absl::StrCat(
      unbound.size() == 1 ? "symbolic dimension " : "symbolic dimensions ",
      where, unbound.size() == 1 ? " is" : " are", " not bound: add", flags));
}

class Importer {
 public:
  Importer(onnx::ModelProto& model, const OnnxImportOptions& options)
      : model_(model), graph_(*model.mutable_graph()), options_(options) {}

  absl::StatusOr<Graph> Run(OnnxImportStats* stats) {
    MEMPLAN_ASSIGN_OR_RETURN(const int64_t opset, CheckOpsets(model_));
    MEMPLAN_RETURN_IF_ERROR(CheckSupportedNodes(graph_));
    MEMPLAN_RETURN_IF_ERROR(CheckInputTypes(graph_));
    FindWeights();
    MEMPLAN_RETURN_IF_ERROR(BindDims(graph_, options_.dims, weights_));
    // A copy keeps the model as given, for a strict second run that
    // explains an unresolved shape.
    original_ = model_;
    inferred_ = model_;
    MEMPLAN_RETURN_IF_ERROR(internal::InferWithShapeArithmetic(inferred_));
    CollectTypes();
    MEMPLAN_RETURN_IF_ERROR(BuildGraph());
    if (stats != nullptr) {
      *stats = OnnxImportStats{.nodes = graph_.node_size(), .opset = opset};
      for (const Tensor& t : result_.tensors) {
        switch (t.kind) {
          case TensorKind::kInput:
            ++stats->inputs;
            break;
          case TensorKind::kOutput:
            ++stats->outputs;
            break;
          case TensorKind::kConstant:
            ++stats->constants;
            break;
          default:
            ++stats->activations;
        }
      }
      for (const Op& op : result_.ops) {
        stats->views += static_cast<int64_t>(op.alias.size());
        stats->inplace += static_cast<int64_t>(op.inplace.size());
      }
    }
    return std::move(result_);
  }

 private:
  void FindWeights() {
    for (const onnx::TensorProto& init : graph_.initializer()) {
      weights_.insert(init.name());
    }
    int data_inputs = options_.data_inputs;
    constexpr std::string_view kLight = "initializers turned into graph inputs";
    if (data_inputs < 0 &&
        (model_.doc_string().find(kLight) != std::string::npos ||
         graph_.doc_string().find(kLight) != std::string::npos)) {
      data_inputs = 1;
    }
    if (data_inputs < 0) return;
    for (int i = data_inputs; i < graph_.input_size(); ++i) {
      weights_.insert(graph_.input(i).name());
    }
  }

  // The type of every named value after inference. Initializers come last
  // so that their own dims win over a declared input type.
  void CollectTypes() {
    const onnx::GraphProto& inferred = inferred_.graph();
    for (const auto* values :
         {&inferred.input(), &inferred.value_info(), &inferred.output()}) {
      for (const onnx::ValueInfoProto& value : *values) {
        types_[value.name()] = &value.type();
      }
    }
    for (const onnx::TensorProto& init : graph_.initializer()) {
      onnx::TypeProto& type = initializer_types_[init.name()];
      type.mutable_tensor_type()->set_elem_type(init.data_type());
      auto* shape = type.mutable_tensor_type()->mutable_shape();
      for (int64_t d : init.dims()) shape->add_dim()->set_dim_value(d);
      types_[init.name()] = &type;
    }
  }

  // Where a tensor comes from, for messages.
  std::string Origin(const std::string& name) const {
    auto it = producer_.find(name);
    if (it == producer_.end()) return "a graph input";
    return absl::StrCat("produced by ",
                        NodeLabel(graph_.node(it->second), it->second));
  }

  // The first strict-mode inference error, to explain an unknown shape.
  std::string StrictReason() const {
    onnx::ModelProto copy = original_;
    absl::Status strict = internal::InferShapes(copy, /*strict=*/true);
    return strict.ok() ? std::string() : absl::StrCat("; ", strict.message());
  }

  absl::Status MakeTensor(const std::string& name, TensorKind kind) {
    if (index_.contains(name)) return absl::OkStatus();
    auto it = types_.find(name);
    const std::string where =
        absl::StrCat("tensor \"", name, "\" (", Origin(name), ")");
    if (it == types_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has no type after ONNX shape inference", StrictReason()));
    }
    const onnx::TypeProto& type = *it->second;
    if (!type.has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has ", TypeCaseName(type),
                       " type; only tensors are supported"));
    }
    const ElementType element = ElementTypeOf(type.tensor_type().elem_type());
    if (element.width == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has element type ", element.name,
                       ", which has no fixed width"));
    }
    if (!type.tensor_type().has_shape()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has an unknown rank after ONNX shape inference",
                       StrictReason()));
    }
    Tensor tensor;
    tensor.name = name;
    tensor.kind = kind;
    tensor.dtype = element.name;
    Bytes size = element.width;
    const auto& shape = type.tensor_type().shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      const auto& dim = shape.dim(d);
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, " has unknown dimension ", d,
            dim.has_dim_param() ? absl::StrCat(" (\"", dim.dim_param(), "\")")
                                : "",
            " after ONNX shape inference", StrictReason()));
      }
      const int64_t value = dim.dim_value();
      if (value > 0 && size > std::numeric_limits<Bytes>::max() / value) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": size overflows int64"));
      }
      size *= value;
      tensor.shape.push_back(value);
    }
    tensor.size = size;
    index_[name] = static_cast<int>(result_.tensors.size());
    result_.tensors.push_back(std::move(tensor));
    return absl::OkStatus();
  }

  const Tensor& TensorNamed(const std::string& name) const {
    return result_.tensors[index_.at(name)];
  }

  absl::Status BuildGraph() {
    result_.name = graph_.name();
    absl::flat_hash_set<std::string> outputs;
    for (const onnx::ValueInfoProto& value : graph_.output()) {
      outputs.insert(value.name());
    }
    absl::flat_hash_set<std::string> constant_outputs;
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      for (const std::string& name : node.output()) {
        if (name.empty()) continue;
        if (!producer_.try_emplace(name, i).second) {
          return absl::InvalidArgumentError(
              absl::StrCat("tensor \"", name, "\" is produced twice (again by ",
                           NodeLabel(node, i), ")"));
        }
        if (node.op_type() == "Constant") constant_outputs.insert(name);
      }
    }
    auto kind_of = [&](const std::string& name) {
      if (weights_.contains(name) || constant_outputs.contains(name)) {
        return TensorKind::kConstant;
      }
      if (outputs.contains(name)) return TensorKind::kOutput;
      if (!producer_.contains(name)) return TensorKind::kInput;
      return TensorKind::kActivation;
    };
    // Data inputs first, then tensors (weights too) in order of first
    // appearance.
    for (const onnx::ValueInfoProto& input : graph_.input()) {
      if (weights_.contains(input.name())) continue;
      MEMPLAN_RETURN_IF_ERROR(MakeTensor(input.name(), kind_of(input.name())));
    }
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      // No Op::writes: a standard ONNX op never writes its inputs (values
      // are immutable; in-place hints below only let an output reuse an
      // input that dies there). Emit writes if a node is ever mapped to a
      // mutation.
      Op op;
      op.name = node.name().empty() ? absl::StrCat(node.op_type(), "_", i)
                                    : node.name();
      op.type = node.op_type();
      for (const std::string& name : node.input()) {
        if (name.empty()) continue;
        if (!producer_.contains(name) && !weights_.contains(name) &&
            !types_.contains(name)) {
          return absl::InvalidArgumentError(absl::StrCat(
              NodeLabel(node, i), " reads \"", name,
              "\", which is no graph input, initializer or node output"));
        }
        MEMPLAN_RETURN_IF_ERROR(MakeTensor(name, kind_of(name)));
        op.inputs.push_back(name);
      }
      for (const std::string& name : node.output()) {
        if (name.empty()) continue;
        MEMPLAN_RETURN_IF_ERROR(MakeTensor(name, kind_of(name)));
        op.outputs.push_back(name);
      }
      AddHints(node, op);
      result_.ops.push_back(std::move(op));
    }
    for (const onnx::ValueInfoProto& value : graph_.output()) {
      MEMPLAN_RETURN_IF_ERROR(MakeTensor(value.name(), kind_of(value.name())));
    }
    return absl::OkStatus();
  }

  void AddHints(const onnx::NodeProto& node, Op& op) const {
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    if (!standard || op.outputs.empty() || op.inputs.empty() ||
        node.output(0).empty() || node.input(0).empty()) {
      return;
    }
    if (ViewOps().contains(node.op_type())) {
      if (options_.views == OnnxViews::kAlias) {
        op.alias.push_back({.output = 0, .input = 0});
      }
      return;
    }
    if (!options_.inplace || !ElementwiseOps().contains(node.op_type())) return;
    const Tensor& out = TensorNamed(op.outputs[0]);
    for (int j = 0; j < static_cast<int>(op.inputs.size()); ++j) {
      const Tensor& in = TensorNamed(op.inputs[j]);
      if (in.dtype == out.dtype && in.shape == out.shape &&
          in.size == out.size) {
        op.inplace.push_back({.output = 0, .input = j});
      }
    }
  }

  onnx::ModelProto& model_;
  onnx::GraphProto& graph_;
  const OnnxImportOptions& options_;
  onnx::ModelProto original_;  // symbolic dimensions bound
  onnx::ModelProto inferred_;  // shapes inferred, shape arithmetic computed
  absl::flat_hash_set<std::string> weights_;
  absl::flat_hash_map<std::string, const onnx::TypeProto*> types_;
  std::unordered_map<std::string, onnx::TypeProto> initializer_types_;
  absl::flat_hash_map<std::string, int> producer_;
  absl::flat_hash_map<std::string, int> index_;
  Graph result_;
};

// Names become tensor and op names: no longer than kMaxNameBytes, as in
// the other formats (and out of every error message).
absl::Status CheckNameLengths(const onnx::GraphProto& graph) {
  auto check = [](const std::string& name, absl::string_view what) {
    if (name.size() <= kMaxNameBytes) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "a", what, " name of ", name.size(), " bytes (\"",
        absl::string_view(name).substr(0, 32),
        "...\") is longer than the limit of ", kMaxNameBytes, " bytes"));
  };
  for (const onnx::NodeProto& node : graph.node()) {
    MEMPLAN_RETURN_IF_ERROR(check(node.name(), "n op"));
    for (const std::string& name : node.input()) {
      MEMPLAN_RETURN_IF_ERROR(check(name, " tensor"));
    }
    for (const std::string& name : node.output()) {
      MEMPLAN_RETURN_IF_ERROR(check(name, " tensor"));
    }
  }
  for (const auto* list :
       {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& value : *list) {
      MEMPLAN_RETURN_IF_ERROR(check(value.name(), " tensor"));
    }
  }
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    MEMPLAN_RETURN_IF_ERROR(check(tensor.name(), " tensor"));
  }
  return absl::OkStatus();
}

// The graph of a parsed model at one binding of its dims.
absl::StatusOr<Graph> ImportModel(onnx::ModelProto model,
                                  const OnnxImportOptions& options,
                                  OnnxImportStats* stats) {
  try {
    return Importer(model, options).Run(stats);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "the ONNX model needs more memory than there is");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("ONNX import failed: ", e.what()));
  } catch (...) {
    return absl::InternalError("ONNX import failed");
  }
}

absl::StatusOr<Graph> Import(std::string_view bytes,
                             const OnnxImportOptions& options,
                             OnnxImportStats* stats) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: protobuf could not parse onnx.ModelProto");
  }
  if (!model.has_graph()) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: it has no graph");
  }
  MEMPLAN_RETURN_IF_ERROR(CheckNameLengths(model.graph()));
  if (options.dim_ranges.empty()) {
    return ImportModel(std::move(model), options, stats);
  }
  for (const auto& [name, range] : options.dim_ranges) {
    if (auto value = options.dims.find(name); value != options.dims.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dimension \"", name, "\" is given both a value (", value->second,
          ") and a range [", range.min, ", ", range.max, "]"));
    }
  }
  // Symbolic dims: concrete imports at several values of the ranged dims.
  return internal::ImportOverRanges(
      options.dim_ranges,
      [&](const DimValues& values, OnnxImportStats* at_stats) {
        OnnxImportOptions at = options;
        at.dim_ranges.clear();
        for (const auto& [name, value] : values) at.dims[name] = value;
        return ImportModel(model, at, at_stats);
      },
      stats);
}

// Import() of the contents of the file `path`, its errors naming the file.
absl::StatusOr<Graph> ImportNamed(const std::string& path,
                                  std::string_view bytes,
                                  const OnnxImportOptions& options,
                                  OnnxImportStats* stats) {
  absl::StatusOr<Graph> graph = Import(bytes, options, stats);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(path, ": ", graph.status().message()));
  }
  return graph;
}

}  // namespace

absl::StatusOr<Graph> ImportOnnxFromBytes(std::string_view bytes,
                                          const OnnxImportOptions& options,
                                          OnnxImportStats* stats) {
  return Import(bytes, options, stats);
}

absl::StatusOr<Graph> ImportOnnx(const std::string& path,
                                 const OnnxImportOptions& options,
                                 OnnxImportStats* stats) {
  MEMPLAN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ImportNamed(path, bytes, options, stats);
}

GraphImporter OnnxImporter(const OnnxImportOptions& options,
                           OnnxImportStats* stats) {
  return GraphImporter{.extension = ".onnx",
                       .import = [options, stats](const std::string& path,
                                                  std::string_view bytes) {
                         return ImportNamed(path, bytes, options, stats);
                       }};
}

}  // namespace memplan
