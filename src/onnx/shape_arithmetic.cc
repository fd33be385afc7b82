// Shape inference for the ONNX importer, with the shape arithmetic ONNX's
// own leaves undone. Exporters compute the targets of Reshape, Expand or
// Slice from Shape() of activations (Shape, Gather, Concat, Unsqueeze, ...);
// ONNX 1.12's data propagation leaves many of these unknown. Once the
// symbolic dimensions are bound they are small integer tensors that can be
// computed: each node whose outputs are computed becomes a Constant in the
// copy of the model that shape inference runs on, and inference runs again.

#include "onnx/shape_arithmetic.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace memplan::internal {
namespace {

// A tensor's static shape, when inference knows every dimension of it.
using ShapeOf =
    std::function<std::optional<std::vector<int64_t>>(const std::string&)>;

struct Value {
  std::vector<int64_t> dims;
  std::vector<int64_t> data;  // integer (or bool) elements, row-major
  int32_t type = onnx::TensorProto::INT64;
};

constexpr int64_t kMaxValueElements = 4096;
constexpr int64_t kLargest = int64_t{1} << 31;  // operands of computed ops

// Small enough that sums and products of two stay in int64.
bool Small(int64_t x) { return x >= -kLargest && x <= kLargest; }

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxValueElements / d)) return -1;
    n *= d;
  }
  return n;
}

bool IsIntegerType(int32_t type) {
  return type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32 ||
         type == onnx::TensorProto::BOOL;
}

// The elements of an integer tensor held in the model itself.
std::optional<Value> ValueOfTensor(const onnx::TensorProto& t) {
  if (!IsIntegerType(t.data_type()) ||
      t.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  Value v{.dims = {t.dims().begin(), t.dims().end()},
          .data = {},
          .type = t.data_type()};
  const int64_t n = ElementCount(v.dims);
  if (n < 0) return std::nullopt;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() == n) {
      v.data.assign(t.int64_data().begin(), t.int64_data().end());
    } else if (static_cast<int64_t>(t.raw_data().size()) == n * 8) {
      v.data.resize(n);
      std::memcpy(v.data.data(), t.raw_data().data(), n * 8);
    } else {
      return std::nullopt;
    }
  } else {
    const int64_t width = t.data_type() == onnx::TensorProto::INT32 ? 4 : 1;
    if (t.int32_data_size() == n) {
      v.data.assign(t.int32_data().begin(), t.int32_data().end());
    } else if (static_cast<int64_t>(t.raw_data().size()) == n * width) {
      v.data.resize(n);
      for (int64_t i = 0; i < n; ++i) {
        if (width == 4) {
          int32_t x;
          std::memcpy(&x, t.raw_data().data() + 4 * i, 4);
          v.data[i] = x;
        } else {
          v.data[i] = static_cast<uint8_t>(t.raw_data()[i]) != 0;
        }
      }
    } else {
      return std::nullopt;
    }
  }
  return v;
}

onnx::TensorProto TensorOfValue(const Value& v) {
  onnx::TensorProto t;
  t.set_data_type(v.type);
  for (int64_t d : v.dims) t.add_dims(d);
  for (int64_t x : v.data) {
    if (v.type == onnx::TensorProto::INT64) {
      t.add_int64_data(x);
    } else {
      t.add_int32_data(static_cast<int32_t>(x));
    }
  }
  return t;
}

const onnx::AttributeProto* Attribute(const onnx::NodeProto& node,
                                      std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, std::string_view name,
                     int64_t fallback) {
  const onnx::AttributeProto* a = Attribute(node, name);
  return a == nullptr ? fallback : a->i();
}

// Element-wise with the broadcasts shape arithmetic uses: equal counts, or
// one side a single element.
std::optional<Value> Broadcast(const std::vector<const Value*>& in,
                               int32_t type,
                               int64_t (*f)(const std::vector<int64_t>&)) {
  const Value* widest = in[0];
  for (const Value* v : in) {
    if (v->data.size() > widest->data.size() ||
        (v->data.size() == widest->data.size() &&
         v->dims.size() > widest->dims.size())) {
      widest = v;
    }
  }
  for (const Value* v : in) {
    if (v->data.size() != 1 && v->data.size() != widest->data.size()) {
      return std::nullopt;
    }
  }
  Value out{.dims = widest->dims, .data = {}, .type = type};
  std::vector<int64_t> args(in.size());
  for (size_t i = 0; i < widest->data.size(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      args[k] = in[k]->data[in[k]->data.size() == 1 ? 0 : i];
    }
    out.data.push_back(f(args));
  }
  return out;
}

int64_t Clamp(int64_t x, int64_t lo, int64_t hi) {
  return std::max(lo, std::min(x, hi));
}

// Computes output 0 of `node` from known inputs; nullopt when it cannot.

// What an evaluation sees: the node, its inputs' values (nullptr where
// unknown) and the static shapes inference knows.
struct Operands {
  const onnx::NodeProto& node;
  const std::vector<const Value*>& in;
  const ShapeOf& shape_of;

  // The first `count` inputs are there and known.
  bool Known(size_t count) const {
    if (in.size() < count) return false;
    for (size_t i = 0; i < count; ++i) {
      if (in[i] == nullptr) return false;
    }
    return true;
  }
  // Input i when given and known, else nullptr.
  const Value* Optional(size_t i) const {
    return i < in.size() ? in[i] : nullptr;
  }
};

std::optional<Value> EvaluateShape(const Operands& x) {
  const onnx::NodeProto& node = x.node;
  if (node.input_size() < 1) return std::nullopt;
  std::optional<std::vector<int64_t>> shape = x.shape_of(node.input(0));
  if (!shape.has_value()) return std::nullopt;
  if (node.op_type() == "Size") {
    int64_t n = 1;
    for (int64_t d : *shape) {
      if (d > 0 && n > std::numeric_limits<int64_t>::max() / d) {
        return std::nullopt;
      }
      n *= d;
    }
    return Value{.dims = {}, .data = {n}};
  }
  const int64_t rank = static_cast<int64_t>(shape->size());
  int64_t start = IntAttribute(node, "start", 0);
  int64_t end = IntAttribute(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = Clamp(start, 0, rank);
  end = Clamp(end, start, rank);
  Value v{.dims = {end - start}, .data = {}};
  v.data.assign(shape->begin() + start, shape->begin() + end);
  return v;
}

std::optional<Value> EvaluateCast(const Operands& x) {
  if (!x.Known(1)) return std::nullopt;
  Value v = *x.in[0];
  if (x.node.op_type() == "Cast") {
    const int64_t to = IntAttribute(x.node, "to", 0);
    if (!IsIntegerType(static_cast<int32_t>(to))) return std::nullopt;
    v.type = static_cast<int32_t>(to);
    if (to == onnx::TensorProto::BOOL) {
      for (int64_t& e : v.data) e = e != 0;
    }
  }
  return v;
}

std::optional<Value> EvaluateSqueeze(const Operands& x) {
  if (!x.Known(1)) return std::nullopt;
  const onnx::NodeProto& node = x.node;
  std::vector<int64_t> axes;
  if (const Value* a = x.Optional(1); a != nullptr) {
    axes = a->data;
  } else if (const onnx::AttributeProto* attr = Attribute(node, "axes")) {
    axes.assign(attr->ints().begin(), attr->ints().end());
  } else if (node.input_size() > 1 && !node.input(1).empty()) {
    return std::nullopt;  // axes given but not known
  }
  Value v = *x.in[0];
  if (node.op_type() == "Unsqueeze") {
    const int64_t rank = static_cast<int64_t>(v.dims.size() + axes.size());
    for (int64_t& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) {
      if (a < 0 || a > static_cast<int64_t>(v.dims.size())) {
        return std::nullopt;
      }
      v.dims.insert(v.dims.begin() + a, 1);
    }
    return v;
  }
  const int64_t rank = static_cast<int64_t>(v.dims.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    const bool listed =
        axes.empty() ? v.dims[d] == 1
                     : std::any_of(axes.begin(), axes.end(), [&](int64_t a) {
                         return a == d || a + rank == d;
                       });
    if (!listed) dims.push_back(v.dims[d]);
  }
  v.dims = dims;
  return v;
}

std::optional<Value> EvaluateConcat(const Operands& x) {
  if (!x.Known(x.in.size()) || x.in.empty()) return std::nullopt;
  Value v{.dims = {0}, .data = {}, .type = x.in[0]->type};
  for (const Value* part : x.in) {
    if (part->dims.size() != 1) return std::nullopt;
    v.data.insert(v.data.end(), part->data.begin(), part->data.end());
  }
  v.dims[0] = static_cast<int64_t>(v.data.size());
  return v;
}

std::optional<Value> EvaluateGather(const Operands& x) {
  if (!x.Known(2) || x.in[0]->dims.size() != 1 ||
      (IntAttribute(x.node, "axis", 0) != 0 &&
       IntAttribute(x.node, "axis", 0) != -1)) {
    return std::nullopt;
  }
  const int64_t n = static_cast<int64_t>(x.in[0]->data.size());
  Value v{.dims = x.in[1]->dims, .data = {}, .type = x.in[0]->type};
  for (int64_t i : x.in[1]->data) {
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    v.data.push_back(x.in[0]->data[i]);
  }
  return v;
}

std::optional<Value> EvaluateSlice(const Operands& x) {
  const std::vector<const Value*>& in = x.in;
  if (!x.Known(3) || in[0]->dims.size() != 1 || in[1]->data.size() != 1 ||
      in[2]->data.size() != 1) {
    return std::nullopt;
  }
  if (const Value* axes = x.Optional(3);
      axes != nullptr &&
      (axes->data.size() != 1 || (axes->data[0] != 0 && axes->data[0] != -1))) {
    return std::nullopt;
  }
  const Value* steps = x.Optional(4);
  if (steps != nullptr && steps->data.size() != 1) return std::nullopt;
  const int64_t step = steps == nullptr ? 1 : steps->data[0];
  if (step == 0 || step == std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  const int64_t n = static_cast<int64_t>(in[0]->data.size());
  int64_t start = in[1]->data[0];
  int64_t end = in[2]->data[0];
  if (start < 0) start += n;
  if (end < 0) end += n;
  Value v{.dims = {0}, .data = {}, .type = in[0]->type};
  if (step > 0) {
    start = Clamp(start, 0, n);
    end = Clamp(end, 0, n);
    for (int64_t i = start; i < end; i += step)
      v.data.push_back(in[0]->data[i]);
  } else {
    start = Clamp(start, -1, n - 1);
    end = Clamp(end, -1, n - 1);
    for (int64_t i = start; i > end; i += step)
      v.data.push_back(in[0]->data[i]);
  }
  v.dims[0] = static_cast<int64_t>(v.data.size());
  return v;
}

std::optional<Value> EvaluateConstantOfShape(const Operands& x) {
  if (!x.Known(1)) return std::nullopt;
  Value v{.dims = x.in[0]->data, .data = {}, .type = onnx::TensorProto::FLOAT};
  int64_t fill = 0;
  if (const onnx::AttributeProto* a = Attribute(x.node, "value")) {
    std::optional<Value> value = ValueOfTensor(a->t());
    if (!value.has_value() || value->data.size() != 1) return std::nullopt;
    fill = value->data[0];
    v.type = value->type;
  } else {
    return std::nullopt;  // float zeros: not shape arithmetic
  }
  const int64_t n = ElementCount(v.dims);
  if (n < 0) return std::nullopt;
  v.data.assign(n, fill);
  return v;
}

std::optional<Value> EvaluateRange(const Operands& x) {
  const std::vector<const Value*>& in = x.in;
  if (!x.Known(3) || in[0]->data.size() != 1 || in[1]->data.size() != 1 ||
      in[2]->data.size() != 1 || in[2]->data[0] == 0) {
    return std::nullopt;
  }
  const int64_t start = in[0]->data[0];
  const int64_t limit = in[1]->data[0];
  const int64_t delta = in[2]->data[0];
  if (!Small(start) || !Small(limit) || !Small(delta)) {
    return std::nullopt;
  }
  Value v{.dims = {0}, .data = {}, .type = in[0]->type};
  for (int64_t e = start; delta > 0 ? e < limit : e > limit; e += delta) {
    if (static_cast<int64_t>(v.data.size()) >= kMaxValueElements) {
      return std::nullopt;
    }
    v.data.push_back(e);
  }
  v.dims[0] = static_cast<int64_t>(v.data.size());
  return v;
}

std::optional<Value> EvaluateNegAbs(const Operands& x) {
  if (!x.Known(1)) return std::nullopt;
  const bool neg = x.node.op_type() == "Neg";
  Value v = *x.in[0];
  for (int64_t& e : v.data) {
    if (!Small(e)) return std::nullopt;
    e = neg ? -e : std::abs(e);
  }
  return v;
}

using ElementFn = int64_t (*)(const std::vector<int64_t>&);

// The binary element-wise ops of shape arithmetic.
const absl::flat_hash_map<std::string, ElementFn>& BinaryOps() {
  static const auto* binary = new absl::flat_hash_map<std::string, ElementFn>{
      {"Add", [](const std::vector<int64_t>& a) { return a[0] + a[1]; }},
      {"Sub", [](const std::vector<int64_t>& a) { return a[0] - a[1]; }},
      {"Mul", [](const std::vector<int64_t>& a) { return a[0] * a[1]; }},
      {"Div",
       [](const std::vector<int64_t>& a) {
         return a[1] == 0 ? int64_t{0} : a[0] / a[1];
       }},
      {"Max",
       [](const std::vector<int64_t>& a) { return std::max(a[0], a[1]); }},
      {"Min",
       [](const std::vector<int64_t>& a) { return std::min(a[0], a[1]); }},
      {"Equal",
       [](const std::vector<int64_t>& a) { return int64_t{a[0] == a[1]}; }},
      {"Less",
       [](const std::vector<int64_t>& a) { return int64_t{a[0] < a[1]}; }},
      {"Greater",
       [](const std::vector<int64_t>& a) { return int64_t{a[0] > a[1]}; }},
  };
  return *binary;
}

std::optional<Value> EvaluateBinary(const Operands& x) {
  const std::vector<const Value*>& in = x.in;
  const std::string& op = x.node.op_type();
  if (!x.Known(2) || in.size() != 2) return std::nullopt;
  // Shape arithmetic is small: larger operands are left to ONNX, so that
  // nothing here overflows.
  for (const Value* v : in) {
    for (int64_t e : v->data) {
      if (!Small(e)) return std::nullopt;
    }
  }
  if ((op == "Div") && std::find(in[1]->data.begin(), in[1]->data.end(), 0) !=
                           in[1]->data.end()) {
    return std::nullopt;
  }
  const bool compare = op == "Equal" || op == "Less" || op == "Greater";
  return Broadcast({in[0], in[1]},
                   compare ? onnx::TensorProto::BOOL : in[0]->type,
                   BinaryOps().at(op));
}

std::optional<Value> EvaluateWhere(const Operands& x) {
  if (!x.Known(3)) return std::nullopt;
  return Broadcast(
      {x.in[0], x.in[1], x.in[2]}, x.in[1]->type,
      [](const std::vector<int64_t>& a) { return a[0] != 0 ? a[1] : a[2]; });
}

// Computes output 0 of `node` from known inputs; nullopt when it cannot.
// `shape_of` gives a tensor's static shape, when inference knows it.
std::optional<Value> Evaluate(const onnx::NodeProto& node,
                              const std::vector<const Value*>& in,
                              const ShapeOf& shape_of) {
  using Evaluator = std::optional<Value> (*)(const Operands&);
  static const auto* evaluators =
      new absl::flat_hash_map<std::string_view, Evaluator>{
          {"Shape", &EvaluateShape},
          {"Size", &EvaluateShape},
          {"Identity", &EvaluateCast},
          {"Cast", &EvaluateCast},
          {"Unsqueeze", &EvaluateSqueeze},
          {"Squeeze", &EvaluateSqueeze},
          {"Concat", &EvaluateConcat},
          {"Gather", &EvaluateGather},
          {"Slice", &EvaluateSlice},
          {"ConstantOfShape", &EvaluateConstantOfShape},
          {"Range", &EvaluateRange},
          {"Neg", &EvaluateNegAbs},
          {"Abs", &EvaluateNegAbs},
          {"Where", &EvaluateWhere},
      };
  const Operands operands{.node = node, .in = in, .shape_of = shape_of};
  if (auto it = evaluators->find(node.op_type()); it != evaluators->end()) {
    return it->second(operands);
  }
  if (BinaryOps().contains(node.op_type())) return EvaluateBinary(operands);
  return std::nullopt;
}

// A Constant node's value, when it is an integer tensor held in the model.
std::optional<Value> ConstantValue(const onnx::NodeProto& node) {
  if (const onnx::AttributeProto* a = Attribute(node, "value")) {
    return ValueOfTensor(a->t());
  }
  if (const onnx::AttributeProto* a = Attribute(node, "value_int")) {
    return Value{.dims = {}, .data = {a->i()}};
  }
  if (const onnx::AttributeProto* a = Attribute(node, "value_ints")) {
    return Value{.dims = {a->ints_size()},
                 .data = {a->ints().begin(), a->ints().end()}};
  }
  return std::nullopt;
}

// The static shapes inference found for `graph`'s values (and only those
// whose every dimension is known).
class Shapes {
 public:
  explicit Shapes(const onnx::GraphProto& graph) {
    for (const auto* values :
         {&graph.input(), &graph.value_info(), &graph.output()}) {
      for (const onnx::ValueInfoProto& value : *values) {
        types_[value.name()] = &value.type();
      }
    }
  }

  std::optional<std::vector<int64_t>> Of(const std::string& name) const {
    auto it = types_.find(name);
    if (it == types_.end() || !it->second->has_tensor_type() ||
        !it->second->tensor_type().has_shape()) {
      return std::nullopt;
    }
    std::vector<int64_t> dims;
    for (const auto& d : it->second->tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return std::nullopt;
      dims.push_back(d.dim_value());
    }
    return dims;
  }

 private:
  absl::flat_hash_map<std::string, const onnx::TypeProto*> types_;
};

// Output 0 of `node` when shape arithmetic computes it from `values`.
std::optional<Value> EvaluateNode(
    const onnx::NodeProto& node,
    const absl::flat_hash_map<std::string, Value>& values,
    const ShapeOf& shape_of) {
  const bool reads_shape =
      node.op_type() == "Shape" || node.op_type() == "Size";
  std::vector<const Value*> in;
  for (const std::string& name : node.input()) {
    auto it = name.empty() ? values.end() : values.find(name);
    if (it == values.end() && !name.empty() && !reads_shape) {
      return std::nullopt;  // an input not known
    }
    in.push_back(it == values.end() ? nullptr : &it->second);
  }
  return Evaluate(node, in, shape_of);
}

// `node` becomes a Constant holding `v`.
void MakeConstant(onnx::NodeProto& node, const Value& v) {
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = TensorOfValue(v);
  node.clear_input();
  node.clear_attribute();
  node.set_op_type("Constant");
  *node.add_attribute() = std::move(value);
}

// One round of shape arithmetic over the inferred `graph`: the number of
// nodes computed (and turned into constants).
int ComputeRound(onnx::GraphProto& graph) {
  const Shapes shapes(graph);
  const ShapeOf shape_of = [&shapes](const std::string& name) {
    return shapes.Of(name);
  };
  absl::flat_hash_map<std::string, Value> values;
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (std::optional<Value> v = ValueOfTensor(init)) {
      values[init.name()] = *std::move(v);
    }
  }
  int computed = 0;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    if (node.output_size() != 1 || node.output(0).empty() ||
        !(node.domain().empty() || node.domain() == "ai.onnx")) {
      continue;
    }
    if (node.op_type() == "Constant") {
      std::optional<Value> v = ConstantValue(node);
      if (v.has_value()) values[node.output(0)] = *std::move(v);
      continue;
    }
    std::optional<Value> v = EvaluateNode(node, values, shape_of);
    if (!v.has_value()) continue;
    MakeConstant(node, *v);
    values[node.output(0)] = *std::move(v);
    ++computed;
  }
  return computed;
}

}  // namespace

absl::Status InferShapes(onnx::ModelProto& model, bool strict) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/strict ? 1 : 0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("ONNX shape inference failed: ", e.what()));
  } catch (...) {
    return absl::InternalError("ONNX shape inference failed");
  }
  return absl::OkStatus();
}

absl::Status InferWithShapeArithmetic(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  for (int round = 0; round < 64; ++round) {
    MEMPLAN_RETURN_IF_ERROR(InferShapes(model, /*strict=*/false));
    if (ComputeRound(graph) == 0) return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace memplan::internal
