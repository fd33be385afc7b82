// memplan-graph-v1 JSON: ParseGraphJson and GraphToJson (memplan/io.h).
// One tensor and one op a line when written, like the bundled data.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "formats/json_util.h"
#include "memplan/formats.h"
#include "memplan/symbolic.h"

namespace memplan {
namespace {

using internal::CheckKeys;
using internal::DimsFromJson;
using internal::DimsToJson;
using internal::Dump;
using internal::GetInt;
using internal::GetString;
using internal::GetStrings;
using internal::Json;
using internal::ParseJson;
using internal::ToInt64;

constexpr absl::string_view kGraphFormat = "memplan-graph-v1";

absl::StatusOr<std::vector<OperandPair>> GetPairs(const Json& object,
                                                  const char* key,
                                                  absl::string_view where) {
  std::vector<OperandPair> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  const std::string what = absl::StrCat(where, ": \"", key, "\"");
  if (!it->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a list of [output, input] pairs"));
  }
  for (const Json& pair : *it) {
    if (!pair.is_array() || pair.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " must be a list of [output, input] pairs"));
    }
    MEMPLAN_ASSIGN_OR_RETURN(int64_t output, ToInt64(pair[0], what));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t input, ToInt64(pair[1], what));
    if (output < 0 || input < 0 || output > INT32_MAX || input > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has an index out of range"));
    }
    out.push_back({static_cast<int>(output), static_cast<int>(input)});
  }
  return out;
}

// "writes": indices into the op's inputs, each once.
absl::StatusOr<std::vector<int>> GetWrites(const Json& object, const Op& op,
                                           absl::string_view where) {
  std::vector<int> out;
  auto it = object.find("writes");
  if (it == object.end() || it->is_null()) return out;
  const std::string what = absl::StrCat(where, ": \"writes\"");
  if (!it->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be a list of input indices"));
  }
  for (const Json& v : *it) {
    MEMPLAN_ASSIGN_OR_RETURN(int64_t j, ToInt64(v, what));
    if (j < 0 || j >= static_cast<int64_t>(op.inputs.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has input ", j, ", out of range (",
                       op.inputs.size(), " inputs)"));
    }
    if (std::find(out.begin(), out.end(), j) != out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " lists input ", j, " twice"));
    }
    out.push_back(static_cast<int>(j));
  }
  return out;
}

// "cost": a non-negative finite number (JSON holds no NaN or infinity, and
// ParseJson refuses a number no double holds); absent or null: unknown.
absl::StatusOr<std::optional<double>> GetCost(const Json& object,
                                              absl::string_view where) {
  auto it = object.find("cost");
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"cost\" must be a non-negative number"));
  }
  const double cost = it->get<double>();
  if (!std::isfinite(cost) || cost < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"cost\" is ", Dump(*it),
                     ", not a non-negative finite number"));
  }
  return cost;
}

// "pinned" and "recomputable": true or false; absent or null is false.
absl::StatusOr<bool> GetFlag(const Json& object, const char* key,
                             absl::string_view where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"", key, "\" must be true or false"));
  }
  return it->get<bool>();
}

// A cost is written as an integer when it is one (FLOPs), else as the
// shortest decimal that reads back as the same double.
Json CostJson(double cost) {
  if (cost == std::trunc(cost) && std::fabs(cost) < 9.2e18) {
    return static_cast<int64_t>(cost);
  }
  return cost;
}

absl::StatusOr<TensorKind> ParseKind(const std::string& kind,
                                     absl::string_view where) {
  if (kind == "activation") return TensorKind::kActivation;
  if (kind == "input") return TensorKind::kInput;
  if (kind == "output") return TensorKind::kOutput;
  if (kind == "constant") return TensorKind::kConstant;
  if (kind == "scratch") return TensorKind::kScratch;
  return absl::InvalidArgumentError(absl::StrCat(
      where, " has unknown kind \"", kind,
      "\" (expected activation, input, output, constant or scratch)"));
}

absl::StatusOr<std::vector<Pool>> ParsePools(const Json& root) {
  std::vector<Pool> pools;
  auto it = root.find("pools");
  if (it == root.end() || it->is_null()) return pools;
  if (!it->is_array())
    return absl::InvalidArgumentError("\"pools\" must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& p = (*it)[i];
    const std::string where = absl::StrCat("pool #", i);
    if (!p.is_object())
      return absl::InvalidArgumentError(where + " must be an object");
    Pool pool;
    MEMPLAN_ASSIGN_OR_RETURN(pool.name, GetString(p, "name", where, true));
    const std::string named = absl::StrCat("pool \"", pool.name, "\"");
    MEMPLAN_RETURN_IF_ERROR(
        CheckKeys(p, named, {"name", "capacity", "alignment"}));
    MEMPLAN_ASSIGN_OR_RETURN(pool.capacity,
                             GetInt(p, "capacity", named, false, 0));
    MEMPLAN_ASSIGN_OR_RETURN(pool.alignment,
                             GetInt(p, "alignment", named, false, 1));
    pools.push_back(std::move(pool));
  }
  return pools;
}

// "dims", absent or null: none.
absl::StatusOr<DimRanges> ParseDims(const Json& root) {
  auto it = root.find("dims");
  if (it == root.end() || it->is_null()) return DimRanges{};
  return DimsFromJson(*it, "");
}

// A tensor's "source": {"module", "file", "line"}, each optional.
absl::StatusOr<std::optional<TensorSource>> ParseSource(
    const Json& t, const std::string& where) {
  auto it = t.find("source");
  if (it == t.end() || it->is_null()) return std::nullopt;
  const std::string what = where + ": \"source\"";
  if (!it->is_object()) {
    return absl::InvalidArgumentError(
        what + " must be an object {\"module\", \"file\", \"line\"}");
  }
  MEMPLAN_RETURN_IF_ERROR(CheckKeys(*it, what, {"module", "file", "line"}));
  TensorSource source;
  MEMPLAN_ASSIGN_OR_RETURN(source.module,
                           GetString(*it, "module", what, false));
  MEMPLAN_ASSIGN_OR_RETURN(source.file, GetString(*it, "file", what, false));
  MEMPLAN_ASSIGN_OR_RETURN(source.line, GetInt(*it, "line", what, false, 0));
  if (source.line < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": line ", source.line,
                     " is negative (leave \"line\" out when unknown)"));
  }
  return source;
}

absl::StatusOr<Tensor> ParseTensor(const Json& t, size_t index) {
  if (!t.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor #", index, " must be an object"));
  }
  Tensor tensor;
  MEMPLAN_ASSIGN_OR_RETURN(
      tensor.name, GetString(t, "name", absl::StrCat("tensor #", index), true));
  const std::string where = absl::StrCat("tensor \"", tensor.name, "\"");
  MEMPLAN_RETURN_IF_ERROR(CheckKeys(t, where,
                                    {"name", "shape", "dtype", "size", "kind",
                                     "alignment", "pools", "fixed", "source"}));
  if (auto size = t.find("size"); size == t.end() || size->is_null()) {
    return absl::InvalidArgumentError(where + " has no size");
  }
  if (auto size = t.find("size"); size->is_string()) {
    // A symbolic size ("512*seq"): checked against the graph's dims once
    // they are all read (ValidateSymbolicSizes).
    absl::StatusOr<DimExpr> expr = DimExpr::Parse(size->get<std::string>());
    if (!expr.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": size: ", expr.status().message()));
    }
    if (expr->IsConstant()) {
      tensor.size = expr->ConstantTerm();
    } else {
      tensor.symbolic_size = *std::move(expr);
    }
  } else {
    MEMPLAN_ASSIGN_OR_RETURN(tensor.size, GetInt(t, "size", where, true));
  }
  MEMPLAN_ASSIGN_OR_RETURN(std::string kind,
                           GetString(t, "kind", where, false, "activation"));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.kind, ParseKind(kind, where));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.alignment,
                           GetInt(t, "alignment", where, false, 0));
  // In the graph, 0 means "the build's alignment"; a file says that by
  // leaving the key out, as --alignment=0 is refused too.
  if (auto a = t.find("alignment");
      a != t.end() && !a->is_null() && tensor.alignment == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where,
                     " has alignment 0, which is not a power of two (leave "
                     "\"alignment\" out for the default)"));
  }
  MEMPLAN_ASSIGN_OR_RETURN(tensor.pools, GetStrings(t, "pools", where));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.dtype, GetString(t, "dtype", where, false));
  if (auto shape = t.find("shape"); shape != t.end() && shape->is_array()) {
    for (const Json& d : *shape) {
      if (d.is_string()) {  // a symbolic dimension: informative, as all
        tensor.shape.push_back(-1);
        continue;
      }
      MEMPLAN_ASSIGN_OR_RETURN(int64_t dim,
                               ToInt64(d, where + ": a shape dimension"));
      tensor.shape.push_back(dim);
    }
  }
  if (auto fixed = t.find("fixed"); fixed != t.end() && !fixed->is_null()) {
    if (!fixed->is_object()) {
      return absl::InvalidArgumentError(
          where + ": \"fixed\" must be an object {\"pool\", \"offset\"}");
    }
    MEMPLAN_RETURN_IF_ERROR(
        CheckKeys(*fixed, where + ": \"fixed\"", {"pool", "offset"}));
    FixedTensorPlacement placement;
    MEMPLAN_ASSIGN_OR_RETURN(placement.pool,
                             GetString(*fixed, "pool", where, false));
    MEMPLAN_ASSIGN_OR_RETURN(placement.offset,
                             GetInt(*fixed, "offset", where, true));
    tensor.fixed = placement;
  }
  MEMPLAN_ASSIGN_OR_RETURN(tensor.source, ParseSource(t, where));
  return tensor;
}

absl::StatusOr<Op> ParseOp(const Json& o, size_t index) {
  if (!o.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("op #", index, " must be an object"));
  }
  Op op;
  MEMPLAN_ASSIGN_OR_RETURN(
      op.name, GetString(o, "name", absl::StrCat("op #", index), true));
  const std::string where = absl::StrCat("op \"", op.name, "\"");
  MEMPLAN_RETURN_IF_ERROR(
      CheckKeys(o, where,
                {"name", "type", "inputs", "outputs", "scratch", "inplace",
                 "alias", "writes", "pinned", "cost", "recomputable"}));
  MEMPLAN_ASSIGN_OR_RETURN(op.type, GetString(o, "type", where, false));
  MEMPLAN_ASSIGN_OR_RETURN(op.inputs, GetStrings(o, "inputs", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.outputs, GetStrings(o, "outputs", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.scratch, GetStrings(o, "scratch", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.inplace, GetPairs(o, "inplace", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.alias, GetPairs(o, "alias", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.writes, GetWrites(o, op, where));
  MEMPLAN_ASSIGN_OR_RETURN(op.pinned, GetFlag(o, "pinned", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.cost, GetCost(o, where));
  MEMPLAN_ASSIGN_OR_RETURN(op.recomputable, GetFlag(o, "recomputable", where));
  if (op.recomputable && !op.writes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " is \"recomputable\" but writes input ", op.writes[0],
        ": an op that writes is never recomputed (drop \"recomputable\")"));
  }
  return op;
}

Json PairsJson(const std::vector<OperandPair>& pairs) {
  Json out = Json::array();
  for (const OperandPair& p : pairs) out.push_back({p.output, p.input});
  return out;
}

// The tensors and ops of a graph, parsed as the reader meets them
// (ElementSink); the first error of each is kept, to be reported in the
// order of ParseGraphJson's checks.
struct GraphElements {
  Graph* graph = nullptr;
  absl::Status tensor_error;
  absl::Status op_error;

  void operator()(const std::string& key, size_t index, Json&& element) {
    if (key == "tensors") {
      if (!tensor_error.ok()) return;
      absl::StatusOr<Tensor> tensor = ParseTensor(element, index);
      if (!tensor.ok()) {
        tensor_error = tensor.status();
        return;
      }
      graph->tensors.push_back(*std::move(tensor));
    } else if (op_error.ok()) {
      // A graph has about as many ops as tensors: room for them at once
      // spares the copies of a growing vector (0.2 GB at 10^6 ops), and
      // pages never written take no memory. Shrunk when much is left over.
      if (graph->ops.capacity() == 0) graph->ops.reserve(graph->tensors.size());
      absl::StatusOr<Op> op = ParseOp(element, index);
      if (!op.ok()) {
        op_error = op.status();
        return;
      }
      graph->ops.push_back(*std::move(op));
    }
  }
};

// Reads the graph JSON the bundled data and the exporters write, without
// building a JSON value per tensor and op: objects of known keys, each
// once, whose values are printable-ASCII strings without escapes, integers
// that fit int64 and arrays of them. Anything else (an escape, UTF-8, a
// number with a fraction, null, another key, a key twice, "pools", "dims",
// a symbolic size, "cost", a syntax error) makes Read() return
// false, and ParseGraphJson reads the text again with the general reader,
// whose results and errors are the reference; on what Read() accepts both
// give the same graph (GraphJsonTest.ThePlainReaderGivesTheGeneralOnesGraph).
class PlainGraphReader {
 public:
  explicit PlainGraphReader(absl::string_view text)
      : p_(text.data()), end_(text.data() + text.size()) {}

  // The tensors and ops into `graph`, the root's "format" and "name" into
  // `root` (with "tensors" and "ops" as empty arrays, as the general
  // reader leaves them).
  bool Read(Graph& graph, Json& root) {
    std::string format;
    std::string name;
    std::string source;
    unsigned seen = 0;
    const bool read = Object([&](const std::string& key) {
      if (key == "format") return Once(seen, 1) && String(format);
      if (key == "name") return Once(seen, 2) && String(name);
      // Read by no one: kept as the general reader keeps it.
      if (key == "source") return Once(seen, 16) && String(source);
      if (key == "tensors") {
        return Once(seen, 4) && Array([&] {
                 graph.tensors.emplace_back();
                 return ReadTensor(graph.tensors.back());
               });
      }
      if (key == "ops") {
        return Once(seen, 8) && Array([&] {
                 if (graph.ops.capacity() == 0) {
                   graph.ops.reserve(graph.tensors.size());
                 }
                 graph.ops.emplace_back();
                 return ReadOp(graph.ops.back());
               });
      }
      return false;
    });
    Space();
    if (!read || p_ != end_ || (seen & 13) != 13) return false;
    root = Json::object();
    root["format"] = std::move(format);
    if (seen & 2) root["name"] = std::move(name);
    if (seen & 16) root["source"] = std::move(source);
    root["tensors"] = Json::array();
    root["ops"] = Json::array();
    return true;
  }

 private:
  static bool Once(unsigned& seen, unsigned bit) {
    if (seen & bit) return false;
    seen |= bit;
    return true;
  }

  void Space() {
    while (p_ != end_ &&
           (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) {
      ++p_;
    }
  }

  bool Eat(char c) {
    Space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  bool String(std::string& out) {
    if (!Eat('"')) return false;
    const char* begin = p_;
    while (p_ != end_ && *p_ != '"') {
      const unsigned char c = *p_;
      if (c < 0x20 || c >= 0x7f || c == '\\') return false;
      ++p_;
    }
    if (p_ == end_ || static_cast<size_t>(p_ - begin) > kMaxNameBytes) {
      return false;
    }
    out.assign(begin, p_);
    ++p_;
    return true;
  }

  bool Int(int64_t& out) {
    Space();
    const bool negative = p_ != end_ && *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0' && p_ + 1 != end_ && p_[1] >= '0' && p_[1] <= '9') {
      return false;
    }
    uint64_t value = 0;
    for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
      const uint64_t digit = *p_ - '0';
      if (value > (uint64_t{1} << 63) / 10) return false;
      value = value * 10 + digit;
    }
    if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    const uint64_t limit =
        negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (value > limit) return false;
    out = negative ? static_cast<int64_t>(0 - value)
                   : static_cast<int64_t>(value);
    return true;
  }

  // "[" element ("," element)* "]" or "[]"; `element` reads one.
  template <typename Element>
  bool Array(Element element) {
    if (!Eat('[')) return false;
    if (Eat(']')) return true;
    do {
      if (!element()) return false;
    } while (Eat(','));
    return Eat(']');
  }

  // "{" key ":" value ("," ...)* "}"; `member` reads the value of a key.
  template <typename Member>
  bool Object(Member member) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    std::string key;
    do {
      if (!String(key) || !Eat(':') || !member(key)) return false;
    } while (Eat(','));
    return Eat('}');
  }

  bool Strings(std::vector<std::string>& out) {
    return Array([&] {
      out.emplace_back();
      return String(out.back());
    });
  }

  bool ReadTensor(Tensor& tensor) {
    unsigned seen = 0;
    std::string kind;
    const bool read = Object([&](const std::string& key) {
      if (key == "name") return Once(seen, 1) && String(tensor.name);
      if (key == "size") return Once(seen, 2) && Int(tensor.size);
      if (key == "dtype") return Once(seen, 4) && String(tensor.dtype);
      if (key == "kind") return Once(seen, 8) && String(kind);
      if (key == "alignment") {
        return Once(seen, 16) && Int(tensor.alignment) && tensor.alignment != 0;
      }
      if (key == "shape") {
        return Once(seen, 32) && Array([&] {
                 tensor.shape.emplace_back();
                 return Int(tensor.shape.back());
               });
      }
      if (key == "source") {
        return Once(seen, 64) && ReadSource(tensor.source.emplace());
      }
      return false;
    });
    if (!read || (seen & 3) != 3) return false;
    if (!(seen & 8)) return true;  // an activation
    absl::StatusOr<TensorKind> parsed = ParseKind(kind, "");
    if (!parsed.ok()) return false;
    tensor.kind = *parsed;
    return true;
  }

  bool ReadSource(TensorSource& source) {
    unsigned seen = 0;
    return Object([&](const std::string& key) {
      if (key == "module") return Once(seen, 1) && String(source.module);
      if (key == "file") return Once(seen, 2) && String(source.file);
      if (key == "line") {
        return Once(seen, 4) && Int(source.line) && source.line >= 0;
      }
      return false;
    });
  }

  bool Bool(bool& out) {
    Space();
    for (const bool value : {true, false}) {
      const absl::string_view word = value ? "true" : "false";
      if (static_cast<size_t>(end_ - p_) >= word.size() &&
          absl::string_view(p_, word.size()) == word) {
        p_ += word.size();
        out = value;
        return true;
      }
    }
    return false;
  }

  // [[output, input], ...], each index within int32.
  bool Pairs(std::vector<OperandPair>& out) {
    return Array([&] {
      int64_t output = 0;
      int64_t input = 0;
      if (!Eat('[') || !Int(output) || !Eat(',') || !Int(input) || !Eat(']') ||
          output < 0 || input < 0 || output > INT32_MAX || input > INT32_MAX) {
        return false;
      }
      out.push_back({static_cast<int>(output), static_cast<int>(input)});
      return true;
    });
  }

  bool ReadOp(Op& op) {
    unsigned seen = 0;
    const bool read = Object([&](const std::string& key) {
      if (key == "name") return Once(seen, 1) && String(op.name);
      if (key == "type") return Once(seen, 2) && String(op.type);
      if (key == "inputs") return Once(seen, 4) && Strings(op.inputs);
      if (key == "outputs") return Once(seen, 8) && Strings(op.outputs);
      if (key == "scratch") return Once(seen, 16) && Strings(op.scratch);
      if (key == "inplace") return Once(seen, 32) && Pairs(op.inplace);
      if (key == "alias") return Once(seen, 64) && Pairs(op.alias);
      if (key == "pinned") return Once(seen, 128) && Bool(op.pinned);
      if (key == "writes") {
        return Once(seen, 256) && Array([&] {
                 int64_t j = 0;
                 if (!Int(j) || j < 0 || j > INT32_MAX) return false;
                 op.writes.push_back(static_cast<int>(j));
                 return true;
               });
      }
      return false;
    });
    if (!read || !(seen & 1)) return false;
    // Each write an input of the op, once (the general reader's checks).
    for (size_t i = 0; i < op.writes.size(); ++i) {
      const int j = op.writes[i];
      if (j >= static_cast<int>(op.inputs.size()) ||
          std::find(op.writes.begin(), op.writes.begin() + i, j) !=
              op.writes.begin() + i) {
        return false;
      }
    }
    return true;
  }

  const char* p_;
  const char* end_;
};

}  // namespace

absl::StatusOr<Graph> ParseGraphJson(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  // Tensors and ops are parsed as they are read, never held as a document.
  Graph graph;
  GraphElements elements;
  elements.graph = &graph;
  Json root;
  if (!PlainGraphReader(text).Read(graph, root)) {
    graph = Graph();
    MEMPLAN_ASSIGN_OR_RETURN(
        root, ParseJson(text, {"tensors", "ops"}, std::ref(elements)));
  }
  if (!root.is_object())
    return absl::InvalidArgumentError("a graph must be a JSON object");
  if (!root.contains("format")) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph has no \"format\": add \"format\": \"",
                     kGraphFormat, "\" to its top-level object"));
  }
  MEMPLAN_ASSIGN_OR_RETURN(std::string format,
                           GetString(root, "format", "the graph", true));
  if (format != kGraphFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported graph format \"", format, "\" (expected ",
                     kGraphFormat, ")"));
  }
  MEMPLAN_RETURN_IF_ERROR(CheckKeys(root, "the graph",
                                    {"format", "name", "source", "tensors",
                                     "ops", "pools", "conflicts", "dims"}));
  MEMPLAN_ASSIGN_OR_RETURN(graph.name,
                           GetString(root, "name", "the graph", false));
  auto tensors = root.find("tensors");
  auto ops = root.find("ops");
  if (tensors == root.end() || !tensors->is_array()) {
    return absl::InvalidArgumentError("the graph has no \"tensors\" array");
  }
  if (ops == root.end() || !ops->is_array()) {
    return absl::InvalidArgumentError("the graph has no \"ops\" array");
  }
  MEMPLAN_RETURN_IF_ERROR(elements.tensor_error);
  MEMPLAN_RETURN_IF_ERROR(elements.op_error);
  if (graph.ops.size() < graph.ops.capacity() / 2) graph.ops.shrink_to_fit();
  MEMPLAN_ASSIGN_OR_RETURN(graph.pools, ParsePools(root));
  MEMPLAN_ASSIGN_OR_RETURN(graph.dims, ParseDims(root));
  MEMPLAN_RETURN_IF_ERROR(ValidateSymbolicSizes(graph));
  if (auto conflicts = root.find("conflicts");
      conflicts != root.end() && !conflicts->is_null()) {
    if (!conflicts->is_array()) {
      return absl::InvalidArgumentError(
          "\"conflicts\" must be a list of [tensor, tensor]");
    }
    for (const Json& c : *conflicts) {
      if (!c.is_array() || c.size() != 2 || !c[0].is_string() ||
          !c[1].is_string()) {
        return absl::InvalidArgumentError(
            "\"conflicts\" must be a list of [tensor, tensor] name pairs");
      }
      graph.conflicts.push_back(
          {c[0].get<std::string>(), c[1].get<std::string>()});
    }
  }
  return graph;
}

std::string GraphToJson(const Graph& graph) {
  // One tensor and one op per line, like the bundled data.
  std::string out =
      absl::StrCat("{\n\"format\":\"", kGraphFormat,
                   "\",\n\"name\":", Dump(Json(graph.name)), ",\n");
  if (!graph.pools.empty()) {
    Json pools = Json::array();
    for (const Pool& p : graph.pools) {
      pools.push_back({{"name", p.name},
                       {"capacity", p.capacity},
                       {"alignment", p.alignment}});
    }
    absl::StrAppend(&out, "\"pools\":", Dump(pools), ",\n");
  }
  if (!graph.dims.empty()) {
    absl::StrAppend(&out, "\"dims\":", Dump(DimsToJson(graph.dims)), ",\n");
  }
  if (!graph.conflicts.empty()) {
    Json conflicts = Json::array();
    for (const TensorConflict& c : graph.conflicts)
      conflicts.push_back({c.a, c.b});
    absl::StrAppend(&out, "\"conflicts\":", Dump(conflicts), ",\n");
  }
  absl::StrAppend(&out, "\"tensors\":[\n");
  for (size_t i = 0; i < graph.tensors.size(); ++i) {
    const Tensor& t = graph.tensors[i];
    Json j = {{"name", t.name}};
    if (!t.shape.empty()) j["shape"] = t.shape;
    if (!t.dtype.empty()) j["dtype"] = t.dtype;
    if (t.symbolic_size.has_value()) {
      j["size"] = t.symbolic_size->ToString();
    } else {
      j["size"] = t.size;
    }
    j["kind"] = std::string(TensorKindName(t.kind));
    if (t.alignment != 0) j["alignment"] = t.alignment;
    if (!t.pools.empty()) j["pools"] = t.pools;
    if (t.fixed.has_value())
      j["fixed"] = {{"pool", t.fixed->pool}, {"offset", t.fixed->offset}};
    if (t.source.has_value()) {
      Json source = Json::object();
      if (!t.source->module.empty()) source["module"] = t.source->module;
      if (!t.source->file.empty()) source["file"] = t.source->file;
      if (t.source->line > 0) source["line"] = t.source->line;
      j["source"] = std::move(source);
    }
    absl::StrAppend(&out, Dump(j), i + 1 < graph.tensors.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "],\n\"ops\":[\n");
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const Op& o = graph.ops[i];
    Json j = {{"name", o.name},
              {"type", o.type},
              {"inputs", o.inputs},
              {"outputs", o.outputs}};
    if (!o.scratch.empty()) j["scratch"] = o.scratch;
    if (!o.inplace.empty()) j["inplace"] = PairsJson(o.inplace);
    if (!o.alias.empty()) j["alias"] = PairsJson(o.alias);
    if (!o.writes.empty()) j["writes"] = o.writes;
    if (o.pinned) j["pinned"] = true;
    if (o.cost.has_value()) j["cost"] = CostJson(*o.cost);
    if (o.recomputable) j["recomputable"] = true;
    absl::StrAppend(&out, Dump(j), i + 1 < graph.ops.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "]\n}\n");
  return out;
}

}  // namespace memplan
