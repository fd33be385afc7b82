// Readers and writers of memplan's file formats.
//
// nlohmann::json reports syntax errors by exception; the one place that can
// throw is the parse call below, which turns it into a Status with the line
// and column. Every other access checks types first.

#include "memplan/io.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/planner_util.h"
#include "base/status_macros.h"
#include "memplan/memplan.h"
#include "nlohmann/json.hpp"

namespace memplan {
namespace {

using Json = nlohmann::json;

constexpr absl::string_view kGraphFormat = "memplan-graph-v1";
constexpr absl::string_view kPlanFormat = "memplan-plan-v1";

// "line L, column C" of byte `offset` in `text`.
std::string Position(absl::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat("line ", line, ", column ", offset - line_start + 1);
}

// Parses `text`; a key given twice in one object is an error (nlohmann::json
// would keep the last silently), as is a number no double holds (1e400).
absl::StatusOr<Json> ParseJson(absl::string_view text) {
  // Per open object or array: whether it is an object, its keys so far, and
  // the key it (or the array holding it) is the value of.
  struct Open {
    bool object;
    absl::flat_hash_set<std::string> keys;
    std::string under;
  };
  std::vector<Open> open;
  std::string last_key;
  std::string duplicate;
  auto check_keys = [&](int /*depth*/, Json::parse_event_t event,
                        Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        std::string under;
        if (!open.empty()) under = open.back().object ? last_key : open.back().under;
        open.push_back(
            {event == Json::parse_event_t::object_start, {}, std::move(under)});
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!open.empty()) open.pop_back();
        break;
      case Json::parse_event_t::key:
        last_key = parsed.get<std::string>();
        if (!open.empty() && !open.back().keys.insert(last_key).second &&
            duplicate.empty()) {
          duplicate = open.back().under.empty()
                          ? absl::StrCat("key \"", last_key,
                                         "\" appears twice in one object")
                          : absl::StrCat("key \"", last_key,
                                         "\" appears twice in an object under "
                                         "\"", open.back().under, "\"");
        }
        break;
      default:
        break;
    }
    return true;
  };
  Json root;
  try {
    root = Json::parse(text.begin(), text.end(), check_keys);
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON at ", Position(text, e.byte == 0 ? 0 : e.byte - 1),
        ": ", e.what()));
  } catch (const Json::exception& e) {  // e.g. a number out of range
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", e.what()));
  }
  if (!duplicate.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON: ", duplicate));
  }
  return root;
}

// Serialises `j`; a string that is not valid UTF-8 (a name read from a CSV or
// made in code) is written with replacement characters instead of throwing.
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// InvalidArgument naming the first key of `object` not in `known`.
absl::Status CheckKeys(const Json& object, absl::string_view where,
                       std::initializer_list<absl::string_view> known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has unknown key \"", it.key(), "\" (expected ",
          absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GetString(const Json& object, const char* key,
                                      absl::string_view where, bool required,
                                      std::string fallback = "") {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has no \"", key, "\""));
    }
    return fallback;
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"", key, "\" must be a string"));
  }
  return it->get<std::string>();
}

absl::StatusOr<int64_t> ToInt64(const Json& value, absl::string_view what) {
  if (value.is_number_unsigned()) {
    if (value.get<uint64_t>() >
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return absl::InvalidArgumentError(absl::StrCat(what, " overflows int64"));
    }
    return static_cast<int64_t>(value.get<uint64_t>());
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an integer (", value.dump(),
                     " is not one, or overflows int64)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer"));
}

absl::StatusOr<int64_t> GetInt(const Json& object, const char* key,
                               absl::string_view where, bool required,
                               int64_t fallback = 0) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has no \"", key, "\""));
    }
    return fallback;
  }
  return ToInt64(*it, absl::StrCat(where, ": \"", key, "\""));
}

absl::StatusOr<std::vector<std::string>> GetStrings(const Json& object,
                                                    const char* key,
                                                    absl::string_view where) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"", key, "\" must be an array of strings"));
  }
  for (const Json& v : *it) {
    if (!v.is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", key, "\" must be an array of strings"));
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

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
                                     "alignment", "pools", "fixed"}));
  if (auto size = t.find("size"); size == t.end() || size->is_null()) {
    return absl::InvalidArgumentError(where + " has no size");
  }
  MEMPLAN_ASSIGN_OR_RETURN(tensor.size, GetInt(t, "size", where, true));
  MEMPLAN_ASSIGN_OR_RETURN(std::string kind,
                           GetString(t, "kind", where, false, "activation"));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.kind, ParseKind(kind, where));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.alignment,
                           GetInt(t, "alignment", where, false, 0));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.pools, GetStrings(t, "pools", where));
  MEMPLAN_ASSIGN_OR_RETURN(tensor.dtype, GetString(t, "dtype", where, false));
  if (auto shape = t.find("shape"); shape != t.end() && shape->is_array()) {
    for (const Json& d : *shape) {
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
  MEMPLAN_RETURN_IF_ERROR(CheckKeys(o, where,
                                    {"name", "type", "inputs", "outputs",
                                     "scratch", "inplace", "alias"}));
  MEMPLAN_ASSIGN_OR_RETURN(op.type, GetString(o, "type", where, false));
  MEMPLAN_ASSIGN_OR_RETURN(op.inputs, GetStrings(o, "inputs", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.outputs, GetStrings(o, "outputs", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.scratch, GetStrings(o, "scratch", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.inplace, GetPairs(o, "inplace", where));
  MEMPLAN_ASSIGN_OR_RETURN(op.alias, GetPairs(o, "alias", where));
  return op;
}

Json PairsJson(const std::vector<OperandPair>& pairs) {
  Json out = Json::array();
  for (const OperandPair& p : pairs) out.push_back({p.output, p.input});
  return out;
}

bool EndsWith(absl::string_view s, absl::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string StripGz(const std::string& path) {
  return EndsWith(path, ".gz") ? path.substr(0, path.size() - 3) : path;
}

}  // namespace

// ---------------------------------------------------------------------------
// Graph JSON.

absl::StatusOr<Graph> ParseGraphJson(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParseJson(text));
  if (!root.is_object())
    return absl::InvalidArgumentError("a graph must be a JSON object");
  MEMPLAN_ASSIGN_OR_RETURN(std::string format,
                           GetString(root, "format", "the graph", true));
  if (format != kGraphFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported graph format \"", format, "\" (expected ",
                     kGraphFormat, ")"));
  }
  MEMPLAN_RETURN_IF_ERROR(CheckKeys(root, "the graph",
                                    {"format", "name", "source", "tensors",
                                     "ops", "pools", "conflicts"}));
  Graph graph;
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
  for (size_t i = 0; i < tensors->size(); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(Tensor tensor, ParseTensor((*tensors)[i], i));
    graph.tensors.push_back(std::move(tensor));
  }
  for (size_t i = 0; i < ops->size(); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(Op op, ParseOp((*ops)[i], i));
    graph.ops.push_back(std::move(op));
  }
  MEMPLAN_ASSIGN_OR_RETURN(graph.pools, ParsePools(root));
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
    j["size"] = t.size;
    j["kind"] = std::string(TensorKindName(t.kind));
    if (t.alignment != 0) j["alignment"] = t.alignment;
    if (!t.pools.empty()) j["pools"] = t.pools;
    if (t.fixed.has_value())
      j["fixed"] = {{"pool", t.fixed->pool}, {"offset", t.fixed->offset}};
    absl::StrAppend(&out, Dump(j),
                    i + 1 < graph.tensors.size() ? ",\n" : "\n");
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
    absl::StrAppend(&out, Dump(j), i + 1 < graph.ops.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "]\n}\n");
  return out;
}

// ---------------------------------------------------------------------------
// Buffer CSV.

namespace {

bool IsBlank(char c) { return c != '\n' && absl::ascii_isspace(c); }

// Reads CSV text (RFC 4180) one record at a time: a field in double quotes
// may hold commas, line breaks and doubled quotes. Outside quotes, spaces and
// tabs around a field and a carriage return before a line break are dropped;
// blank lines are skipped. A record at a time rather than a table of every
// field: at 10^6 rows, filling the table's memory cost as much as the rest of
// the parse.
class CsvReader {
 public:
  // `text` must outlive the reader.
  explicit CsvReader(absl::string_view text) : text_(text) {}

  // Reads the next record; false at the end of the text, or with `*status`
  // set when a quoted field is malformed.
  bool Next(absl::Status* status);

  // The record's fields: views of the text, or for a quoted field of its
  // unescaped copy, valid until the next call.
  std::span<const absl::string_view> fields() const { return fields_; }
  // The line the record starts on (1-based).
  int line() const { return record_line_; }

  // The first malformed quoted field in the rest of the text, if any.
  absl::Status Rest() {
    absl::Status status;
    while (Next(&status)) {
    }
    return status;
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int record_line_ = 0;
  bool done_ = false;
  std::vector<absl::string_view> fields_;
  std::deque<std::string> unquoted_;  // a deque: views stay valid as it grows
};

bool CsvReader::Next(absl::Status* status) {
  const absl::string_view text = text_;
  const size_t n = text.size();
  while (!done_) {
    fields_.clear();
    if (!unquoted_.empty()) unquoted_.clear();
    record_line_ = line_;
    bool any = false;  // the record has a comma or a quoted field
    size_t k = pos_;
    while (true) {
      while (k < n && IsBlank(text[k])) ++k;
      if (k < n && text[k] == '"') {
        any = true;
        std::string& value = unquoted_.emplace_back();
        for (++k;; ++k) {
          if (k >= n) {
            done_ = true;
            *status = absl::InvalidArgumentError(absl::StrCat(
                "CSV line ", record_line_, ": a quoted field is not closed"));
            return false;
          }
          if (text[k] == '"') {
            if (k + 1 < n && text[k + 1] == '"') {
              value += '"';
              ++k;
              continue;
            }
            break;
          }
          if (text[k] == '\n') ++line_;
          value += text[k];
        }
        for (++k; k < n && IsBlank(text[k]);) ++k;
        if (k < n && text[k] != ',' && text[k] != '\n') {
          done_ = true;
          *status = absl::InvalidArgumentError(
              absl::StrCat("CSV line ", line_, ": text after a quoted field"));
          return false;
        }
        fields_.push_back(value);
      } else {
        const size_t begin = k;
        while (k < n && text[k] != ',' && text[k] != '\n') ++k;
        size_t end = k;
        while (end > begin && absl::ascii_isspace(text[end - 1])) --end;
        fields_.push_back(text.substr(begin, end - begin));
      }
      if (k < n && text[k] == ',') {
        any = true;
        ++k;
        continue;
      }
      break;
    }
    if (k >= n) {
      done_ = true;
    } else {
      pos_ = k + 1;  // past the line break
      ++line_;
    }
    if (any || !fields_[0].empty()) return true;  // else a blank line
  }
  return false;
}

// Appends `s` as a CSV field, quoted where the reader would not give it back
// as it is.
void AppendCsvField(absl::string_view s, std::string* out) {
  bool plain = !s.empty() && !absl::ascii_isspace(s.front()) &&
               !absl::ascii_isspace(s.back());
  for (size_t i = 0; plain && i < s.size(); ++i) {
    plain = s[i] != ',' && s[i] != '"' && s[i] != '\r' && s[i] != '\n';
  }
  if (plain) {
    out->append(s.data(), s.size());
    return;
  }
  *out += '"';
  for (char c : s) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

// An integer as the CSV formats write it: an optional '-' and digits, inside
// int64. By hand rather than absl::SimpleAtoi, which checks again for the
// signs, spaces and bases the format has no use for: at 10^6 rows that was a
// tenth of the parse.
inline bool ParseCsvInt(absl::string_view s, int64_t* value) {
  const bool negative = !s.empty() && s[0] == '-';
  const char* p = s.data() + (negative ? 1 : 0);
  const char* const end = s.data() + s.size();
  if (p == end) return false;
  uint64_t magnitude = 0;  // unsigned: -2^63 is an int64, 2^63 is none
  if (end - p <= 18) {
    // No overflow this short. Two digits a step halve the chain of
    // multiplications: 3 * 10^6 numbers took 11 ms instead of 21.
    if ((end - p) % 2 != 0) {
      const uint64_t digit = static_cast<unsigned char>(*p++) - uint64_t{'0'};
      if (digit > 9) return false;
      magnitude = digit;
    }
    for (; p < end; p += 2) {
      const uint64_t high = static_cast<unsigned char>(p[0]) - uint64_t{'0'};
      const uint64_t low = static_cast<unsigned char>(p[1]) - uint64_t{'0'};
      if ((high > 9) | (low > 9)) return false;
      magnitude = magnitude * 100 + high * 10 + low;
    }
  } else {
    const uint64_t max = (uint64_t{1} << 63) - (negative ? 0 : 1);
    for (; p < end; ++p) {
      const uint64_t digit = static_cast<unsigned char>(*p) - uint64_t{'0'};
      if (digit > 9) return false;
      if (magnitude > (max - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
    }
  }
  *value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
  return true;
}

bool ValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      code = (code << 6) | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[extra] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// The index of the first of `buffers` whose name repeats an earlier one's, or
// -1. `hashes[i]` is the hash of buffers[i]'s name. An open-addressing table
// of (hash, index) rather than a set of names: a probe compares names only on
// equal hashes, so it reads the table and not the names, and the next rows'
// slots can be fetched ahead. Probing the same table as each row was read,
// with nothing fetched ahead, cost 140 ms more at 10^6 rows.
int64_t FirstRepeatedName(std::span<const Buffer> buffers,
                          std::span<const uint64_t> hashes) {
  size_t slots = 16;
  while (slots < 2 * buffers.size()) slots *= 2;
  const size_t mask = slots - 1;
  // A slot holds the hash's upper half and the index + 1; 0 is empty.
  std::vector<uint64_t> table(slots, 0);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i + kAhead < buffers.size()) {
      __builtin_prefetch(&table[hashes[i + kAhead] & mask]);
    }
    const uint64_t tag = hashes[i] >> 32;
    for (size_t s = hashes[i] & mask;; s = (s + 1) & mask) {
      const uint64_t slot = table[s];
      if (slot == 0) {
        table[s] = tag << 32 | (i + 1);
        break;
      }
      if (slot >> 32 == tag &&
          buffers[(slot & 0xFFFFFFFF) - 1].name == buffers[i].name) {
        return static_cast<int64_t>(i);
      }
    }
  }
  return -1;
}

enum class CsvColumn { kId, kLower, kUpper, kSize, kOffset, kPool };

}  // namespace

absl::StatusOr<BufferCsv> ParseBufferCsv(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  CsvReader reader(text);
  absl::Status status;
  if (!reader.Next(&status)) {
    MEMPLAN_RETURN_IF_ERROR(status);
    return absl::InvalidArgumentError(
        "the CSV is empty (expected a header id,lower,upper,size)");
  }
  BufferCsv csv;
  std::vector<Buffer>& buffers = csv.problem.buffers;
  // Each buffer's hash of its name, for FirstRepeatedName.
  std::vector<uint64_t> hashes;
  // The errors come in the order of a check of the whole text's quoting
  // first, then of the rows one by one, each row's id checked for a repeat
  // after its emptiness and encoding; the rows are read once, so an error
  // found in a row first looks for an earlier one. `checked` buffers have had
  // their ids checked for a repeat.
  auto fail = [&](absl::Status error, size_t checked) -> absl::Status {
    MEMPLAN_RETURN_IF_ERROR(reader.Rest());
    const int64_t repeat = FirstRepeatedName(std::span(buffers).first(checked),
                                             std::span(hashes).first(checked));
    if (repeat < 0) return error;
    CsvReader again(text);
    absl::Status ignored;
    for (int64_t r = 0; r <= repeat + 1; ++r) again.Next(&ignored);
    return absl::InvalidArgumentError(
        absl::StrCat("CSV line ", again.line(), ": buffer id \"",
                     buffers[repeat].name, "\" appears twice"));
  };

  // The header names the columns, in any order, each once.
  const std::span<const absl::string_view> header = reader.fields();
  const std::string header_where = absl::StrCat("CSV line ", reader.line());
  int col[6] = {-1, -1, -1, -1, -1, -1};
  std::vector<std::string> names;
  bool lower_upper = false;
  bool start_end = false;  // start/end: MiniMalloc reads end as inclusive
  for (int c = 0; c < static_cast<int>(header.size()); ++c) {
    const std::string name = absl::AsciiStrToLower(header[c]);
    CsvColumn column;
    if (name == "id" || name == "buffer") {
      column = CsvColumn::kId;
    } else if (name == "lower" || name == "start") {
      column = CsvColumn::kLower;
    } else if (name == "upper" || name == "end") {
      column = CsvColumn::kUpper;
    } else if (name == "size") {
      column = CsvColumn::kSize;
    } else if (name == "offset") {
      column = CsvColumn::kOffset;
    } else if (name == "pool") {
      column = CsvColumn::kPool;
    } else {
      return fail(absl::InvalidArgumentError(absl::StrCat(
                      header_where, ": unknown column \"", header[c],
                      "\" (expected id,lower,upper,size[,offset][,pool])")),
                  0);
    }
    (name == "start" || name == "end" ? start_end : lower_upper) |=
        column == CsvColumn::kLower || column == CsvColumn::kUpper;
    int& slot = col[static_cast<int>(column)];
    if (slot >= 0) {
      return fail(absl::InvalidArgumentError(
                      absl::StrCat(header_where, ": column \"", header[c],
                                   "\" repeats column \"", header[slot], "\"")),
                  0);
    }
    slot = c;
    names.push_back(name);
  }
  if (start_end && lower_upper) {
    return fail(absl::InvalidArgumentError(
                    absl::StrCat(header_where,
                                 ": use lower,upper (half-open) or start,end "
                                 "(closed), not a mix")),
                0);
  }
  const int col_id = col[static_cast<int>(CsvColumn::kId)];
  const int col_lower = col[static_cast<int>(CsvColumn::kLower)];
  const int col_upper = col[static_cast<int>(CsvColumn::kUpper)];
  const int col_size = col[static_cast<int>(CsvColumn::kSize)];
  const int col_offset = col[static_cast<int>(CsvColumn::kOffset)];
  const int col_pool = col[static_cast<int>(CsvColumn::kPool)];
  if (col_id < 0 || col_lower < 0 || col_upper < 0 || col_size < 0) {
    return fail(
        absl::InvalidArgumentError(absl::StrCat(
            header_where,
            ": the header must name the columns id, lower, upper and size")),
        0);
  }
  if (col_pool >= 0 && col_offset < 0) {
    return fail(
        absl::InvalidArgumentError(absl::StrCat(
            header_where, ": a pool column belongs to a plan, with an offset")),
        0);
  }

  csv.pool_column = col_pool >= 0;
  if (col_pool < 0) {
    csv.problem.pools.push_back(
        Pool{.name = "default", .capacity = 0, .alignment = 1});
  }
  absl::flat_hash_map<std::string, PoolId> pool_index;
  std::vector<Assignment> assignments;
  const size_t num_columns = names.size();
  // A row that parses has a character in each field, a comma between them
  // and a line break after all but the last: this many rows at most, and
  // usually about as many, as every line is one.
  const size_t max_rows =
      std::min<size_t>(std::count(text.begin(), text.end(), '\n'),
                       (text.size() + 1) / (2 * num_columns));
  buffers.reserve(max_rows);
  hashes.reserve(max_rows);
  if (col_offset >= 0) assignments.reserve(max_rows);
  while (reader.Next(&status)) {
    const std::span<const absl::string_view> row = reader.fields();
    // Made only for an error: building it for every row costs more than
    // the row.
    auto where = [&reader] { return absl::StrCat("CSV line ", reader.line()); };
    if (row.size() != num_columns) {
      return fail(absl::InvalidArgumentError(
                      absl::StrCat(where(), ": ", row.size(),
                                   " fields, the header has ", num_columns)),
                  buffers.size());
    }
    const absl::string_view id = row[col_id];
    if (id.empty()) {
      return fail(absl::InvalidArgumentError(where() + ": empty id"),
                  buffers.size());
    }
    if (!ValidUtf8(id)) {
      return fail(absl::InvalidArgumentError(
                      absl::StrCat(where(), ": the id is not valid UTF-8")),
                  buffers.size());
    }
    Buffer& buffer = buffers.emplace_back();
    buffer.name.assign(id.data(), id.size());
    hashes.push_back(absl::Hash<absl::string_view>{}(id));
    buffer.tensors = {buffer.name};
    // This row's id counts among the checked from here on.
    auto row_error = [&](absl::Status error) {
      return fail(std::move(error), buffers.size());
    };
    auto not_integer = [&](int c) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ", column ", c + 1, " (\"", names[c], "\"): \"", row[c],
          "\" is not an integer (digits with an optional '-') or overflows "
          "int64"));
    };
    if (!ParseCsvInt(row[col_lower], &buffer.lifetime.start)) {
      return row_error(not_integer(col_lower));
    }
    if (!ParseCsvInt(row[col_upper], &buffer.lifetime.end)) {
      return row_error(not_integer(col_upper));
    }
    if (!ParseCsvInt(row[col_size], &buffer.size)) {
      return row_error(not_integer(col_size));
    }
    if (buffer.lifetime.start < 0) {
      return row_error(absl::InvalidArgumentError(absl::StrCat(
          where(), ": buffer \"", buffer.name, "\" has a negative ",
          names[col_lower], " ", buffer.lifetime.start)));
    }
    if (start_end) {
      if (buffer.lifetime.end >= kMaxStep) {
        return row_error(absl::InvalidArgumentError(
            absl::StrCat(where(), ": end ", buffer.lifetime.end,
                         " is beyond the largest supported step ", kMaxStep)));
      }
      ++buffer.lifetime.end;  // closed [start, end] is half-open [start, end+1)
    }
    if (buffer.lifetime.start >= buffer.lifetime.end) {
      return row_error(absl::InvalidArgumentError(absl::StrCat(
          where(), ": buffer \"", buffer.name, "\" has ", names[col_lower], " ",
          buffer.lifetime.start, start_end ? " > " : " >= ", names[col_upper],
          " ", buffer.lifetime.end - (start_end ? 1 : 0))));
    }
    if (buffer.size < 0) {
      return row_error(absl::InvalidArgumentError(
          absl::StrCat(where(), ": buffer \"", buffer.name,
                       "\" has a negative size ", buffer.size)));
    }
    if (col_offset >= 0) {
      Assignment a{.buffer = static_cast<BufferId>(buffers.size() - 1)};
      if (!ParseCsvInt(row[col_offset], &a.offset)) {
        return row_error(not_integer(col_offset));
      }
      if (col_pool >= 0) {
        const absl::string_view pool = row[col_pool];
        if (pool.empty() || !ValidUtf8(pool)) {
          return row_error(absl::InvalidArgumentError(
              absl::StrCat(where(), ": the pool is empty or not valid UTF-8")));
        }
        auto it = pool_index.find(pool);
        if (it == pool_index.end()) {
          it = pool_index
                   .emplace(std::string(pool),
                            static_cast<PoolId>(csv.problem.pools.size()))
                   .first;
          csv.problem.pools.push_back(Pool{.name = std::string(pool)});
        }
        a.pool = it->second;
      }
      assignments.push_back(a);
    }
  }
  MEMPLAN_RETURN_IF_ERROR(status);
  if (csv.problem.pools.empty()) {  // a pool column and no rows
    csv.problem.pools.push_back(
        Pool{.name = "default", .capacity = 0, .alignment = 1});
  }
  MEMPLAN_RETURN_IF_ERROR(fail(absl::OkStatus(), buffers.size()));
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(csv.problem));
  if (col_offset >= 0) {
    Plan plan;
    plan.planner = "csv";
    plan.assignments = std::move(assignments);
    ComputePlanStatistics(csv.problem, plan);
    csv.plan = std::move(plan);
  }
  return csv;
}

absl::StatusOr<Plan> ParsePlanCsv(std::string_view text,
                                  const Problem& problem) {
  MEMPLAN_ASSIGN_OR_RETURN(BufferCsv csv, ParseBufferCsv(text));
  if (!csv.plan.has_value()) {
    return absl::InvalidArgumentError(
        "the CSV has no offset column, so it is no plan");
  }
  absl::flat_hash_map<std::string, BufferId> buffer_by_name;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    buffer_by_name.emplace(problem.buffers[b].name, b);
  }
  absl::flat_hash_map<std::string, PoolId> pool_by_name;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    pool_by_name.emplace(problem.pools[p].name, p);
  }
  Plan plan;
  plan.planner = "csv";
  for (const Assignment& a : csv.plan->assignments) {
    const std::string& name = csv.problem.buffers[a.buffer].name;
    auto b = buffer_by_name.find(name);
    if (b == buffer_by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan places \"", name, "\", which is no planned buffer of the "
          "input"));
    }
    PoolId pool = 0;
    if (csv.pool_column) {
      const std::string& pool_name = csv.problem.pools[a.pool].name;
      auto p = pool_by_name.find(pool_name);
      if (p == pool_by_name.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the plan places \"", name, "\" in unknown pool \"", pool_name,
            "\""));
      }
      pool = p->second;
    }
    plan.assignments.push_back(
        {.buffer = b->second, .pool = pool, .offset = a.offset});
  }
  ComputePlanStatistics(problem, plan);
  return plan;
}

std::string BufferCsvText(const Problem& problem, const Plan* plan) {
  const size_t n = problem.buffers.size();
  // Planners emit the assignments in buffer order; only another order needs
  // an index of them.
  bool in_order = plan != nullptr && plan->assignments.size() == n;
  for (size_t b = 0; in_order && b < n; ++b) {
    in_order = plan->assignments[b].buffer == static_cast<BufferId>(b);
  }
  std::vector<const Assignment*> placed;
  if (plan != nullptr && !in_order) {
    placed.assign(n, nullptr);
    for (const Assignment& a : plan->assignments) {
      if (a.buffer >= 0 && a.buffer < static_cast<BufferId>(n)) {
        placed[a.buffer] = &a;
      }
    }
  }
  // A plan over several pools says which pool each buffer is in.
  const bool pools = plan != nullptr && problem.pools.size() > 1;
  std::string out = plan == nullptr ? "id,lower,upper,size\n"
                    : pools         ? "id,lower,upper,size,offset,pool\n"
                                    : "id,lower,upper,size,offset\n";
  // Enough for short ids and numbers; the string grows past it if need be.
  out.reserve(out.size() + n * 64);
  // A row's numbers are formatted into `line` and appended at once: the
  // pieces one by one, through a temporary per row, took twice as long.
  constexpr int kIntChars = 20;  // -9223372036854775808
  char line[4 * (1 + kIntChars) + 1];
  for (size_t b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    AppendCsvField(buffer.name, &out);
    char* p = line;
    auto number = [&p](int64_t value) {
      *p++ = ',';
      p = std::to_chars(p, p + kIntChars, value).ptr;
    };
    number(buffer.lifetime.start);
    number(buffer.lifetime.end);
    number(buffer.size);
    const Assignment* a = nullptr;
    if (plan != nullptr) {
      a = in_order ? &plan->assignments[b] : placed[b];
      number(a != nullptr ? a->offset : 0);
    }
    if (pools) {
      *p++ = ',';
      out.append(line, p - line);
      const PoolId pool = a != nullptr ? a->pool : 0;
      AppendCsvField(
          pool >= 0 && pool < static_cast<PoolId>(problem.pools.size())
              ? problem.pools[pool].name
              : "",
          &out);
      out += '\n';
    } else {
      *p++ = '\n';
      out.append(line, p - line);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Plan JSON.

std::string ContentHash(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return absl::StrFormat("fnv1a64:%016x", hash);
}

namespace {

Json ProvenanceJson(const PlanProvenance& p) {
  Json build = {{"alignment", p.build.alignment},
                {"plan_constants", p.build.plan_constants},
                {"plan_inputs", p.build.plan_inputs},
                {"plan_outputs", p.build.plan_outputs},
                {"capacity", p.build.capacity},
                {"reorder", p.reorder}};
  if (!p.build.pools.empty()) {
    Json pools = Json::array();
    for (const Pool& pool : p.build.pools) {
      pools.push_back({{"name", pool.name},
                       {"capacity", pool.capacity},
                       {"alignment", pool.alignment}});
    }
    build["pools"] = pools;
  }
  return build;
}

// "tensors": every tensor with its pool and offset, or "planned": false.
absl::StatusOr<std::string> TensorsJson(const Problem& problem,
                                        const Plan& plan, const Graph* graph) {
  std::string out = ",\n\"tensors\":[\n";
  bool first = true;
  auto add = [&](const Json& j) {
    absl::StrAppend(&out, first ? "" : ",\n", Dump(j));
    first = false;
  };
  if (graph != nullptr) {
    MEMPLAN_ASSIGN_OR_RETURN(std::vector<TensorPlacement> tensors,
                             PlaceTensors(*graph, problem, plan));
    for (const TensorPlacement& t : tensors) {
      if (t.planned()) {
        add({{"name", t.name},
             {"pool", problem.pools[t.pool].name},
             {"offset", t.offset}});
      } else {
        add({{"name", t.name}, {"planned", false}});
      }
    }
  } else {
    for (const Assignment& a : plan.assignments) {
      for (const std::string& name : problem.buffers[a.buffer].tensors) {
        add({{"name", name},
             {"pool", problem.pools[a.pool].name},
             {"offset", a.offset}});
      }
    }
  }
  absl::StrAppend(&out, first ? "" : "\n", "]");
  return out;
}

}  // namespace

std::string PlanToJson(const Problem& problem, const Plan& plan,
                       const PlanJsonOptions& options) {
  std::string out =
      absl::StrCat("{\n\"format\":\"", kPlanFormat, "\"");
  if (options.provenance.has_value()) {
    const PlanProvenance& p = *options.provenance;
    absl::StrAppend(&out, ",\n\"input\":",
                    Dump(Json({{"name", p.input}, {"hash", p.input_hash}})),
                    ",\n\"build\":", Dump(ProvenanceJson(p)));
  }
  absl::StrAppend(
      &out, ",\n\"planner\":", Dump(Json(plan.planner)),
      ",\n\"peak\":", plan.peak, ",\n\"naive_total\":", plan.naive_total,
      ",\n\"lower_bound\":", plan.lower_bound,
      ",\n\"proven_optimal\":", plan.proven_optimal ? "true" : "false");
  if (options.wall_time) {
    absl::StrAppend(&out, ",\n\"wall_time_ms\":",
                    absl::ToDoubleMilliseconds(plan.wall_time));
  }
  // Only this counter, as before counters were kept in general: the JSON of
  // other planners' plans stays as it was.
  if (auto it = plan.counters.find("shared_objects");
      it != plan.counters.end() && it->second > 0) {
    absl::StrAppend(&out, ",\n\"shared_objects\":", it->second);
  }
  absl::StrAppend(&out, ",\n\"pools\":[\n");
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const Pool& pool = problem.pools[p];
    Json j = {{"name", pool.name},
              {"capacity", pool.capacity},
              {"alignment", pool.alignment},
              {"used", p < plan.pool_used.size() ? plan.pool_used[p] : 0}};
    absl::StrAppend(&out, Dump(j),
                    p + 1 < problem.pools.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "],\n\"buffers\":[\n");
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const Assignment& a = plan.assignments[i];
    const Buffer& b = problem.buffers[a.buffer];
    Json j = {{"name", b.name},        {"tensors", b.tensors},
              {"size", b.size},        {"start", b.lifetime.start},
              {"end", b.lifetime.end}, {"pool", problem.pools[a.pool].name},
              {"offset", a.offset}};
    absl::StrAppend(&out, Dump(j),
                    i + 1 < plan.assignments.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "]");
  // A graph the problem was not built from leaves the tensors out rather
  // than listing wrong ones.
  if (absl::StatusOr<std::string> tensors =
          TensorsJson(problem, plan, options.graph);
      tensors.ok()) {
    absl::StrAppend(&out, *tensors);
  }
  absl::StrAppend(&out, "\n}\n");
  return out;
}

// The root object of a memplan-plan-v1 file, its format checked.
absl::StatusOr<Json> ParsePlanRoot(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParseJson(text));
  if (!root.is_object())
    return absl::InvalidArgumentError("a plan must be a JSON object");
  MEMPLAN_ASSIGN_OR_RETURN(std::string format,
                           GetString(root, "format", "the plan", true));
  if (format != kPlanFormat) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported plan format \"",
                                                   format, "\" (expected ",
                                                   kPlanFormat, ")"));
  }
  return root;
}

absl::StatusOr<std::optional<PlanProvenance>> ParsePlanProvenance(
    std::string_view std_text) {
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParsePlanRoot(std_text));
  auto input = root.find("input");
  auto build = root.find("build");
  if (input == root.end() && build == root.end()) return std::nullopt;
  if (input == root.end() || !input->is_object() || build == root.end() ||
      !build->is_object()) {
    return absl::InvalidArgumentError(
        "the plan's \"input\" and \"build\" must be objects, both or neither");
  }
  PlanProvenance p;
  MEMPLAN_ASSIGN_OR_RETURN(p.input,
                           GetString(*input, "name", "the plan's input", true));
  MEMPLAN_ASSIGN_OR_RETURN(
      p.input_hash, GetString(*input, "hash", "the plan's input", true));
  const std::string where = "the plan's build";
  MEMPLAN_ASSIGN_OR_RETURN(p.build.alignment,
                           GetInt(*build, "alignment", where, false, 1));
  MEMPLAN_ASSIGN_OR_RETURN(p.build.capacity,
                           GetInt(*build, "capacity", where, false, 0));
  for (auto [key, field] :
       {std::pair{"plan_constants", &p.build.plan_constants},
        std::pair{"plan_inputs", &p.build.plan_inputs},
        std::pair{"plan_outputs", &p.build.plan_outputs}}) {
    auto it = build->find(key);
    if (it == build->end()) continue;
    if (!it->is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", key, "\" must be true or false"));
    }
    *field = it->get<bool>();
  }
  MEMPLAN_ASSIGN_OR_RETURN(p.reorder,
                           GetString(*build, "reorder", where, false));
  if (auto pools = build->find("pools"); pools != build->end()) {
    if (!pools->is_array()) {
      return absl::InvalidArgumentError(where + ": \"pools\" must be an array");
    }
    for (const Json& pj : *pools) {
      if (!pj.is_object()) {
        return absl::InvalidArgumentError(where + ": a pool must be an object");
      }
      Pool pool;
      MEMPLAN_ASSIGN_OR_RETURN(pool.name, GetString(pj, "name", where, true));
      MEMPLAN_ASSIGN_OR_RETURN(pool.capacity,
                               GetInt(pj, "capacity", where, false, 0));
      MEMPLAN_ASSIGN_OR_RETURN(pool.alignment,
                               GetInt(pj, "alignment", where, false, 1));
      p.build.pools.push_back(pool);
    }
  }
  return p;
}

absl::StatusOr<Plan> ParsePlanJson(std::string_view std_text,
                                   const Problem& problem) {
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParsePlanRoot(std_text));
  absl::flat_hash_map<std::string, BufferId> buffer_by_name;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    buffer_by_name.emplace(problem.buffers[b].name, b);
    for (const std::string& t : problem.buffers[b].tensors)
      buffer_by_name.emplace(t, b);
  }
  absl::flat_hash_map<std::string, PoolId> pool_by_name;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    pool_by_name.emplace(problem.pools[p].name, p);
  }
  Plan plan;
  MEMPLAN_ASSIGN_OR_RETURN(plan.planner,
                           GetString(root, "planner", "the plan", false));
  auto buffers = root.find("buffers");
  if (buffers == root.end() || !buffers->is_array()) {
    return absl::InvalidArgumentError("the plan has no \"buffers\" array");
  }
  for (size_t i = 0; i < buffers->size(); ++i) {
    const Json& j = (*buffers)[i];
    const std::string where = absl::StrCat("plan buffer #", i);
    if (!j.is_object())
      return absl::InvalidArgumentError(where + " must be an object");
    MEMPLAN_ASSIGN_OR_RETURN(std::string name,
                             GetString(j, "name", where, true));
    auto b = buffer_by_name.find(name);
    if (b == buffer_by_name.end()) {
      // A tensor the problem does not plan (a constant, say) has no buffer.
      return absl::InvalidArgumentError(
          absl::StrCat("the plan places \"", name,
                       "\", which is no planned buffer of the input"));
    }
    MEMPLAN_ASSIGN_OR_RETURN(
        std::string pool_name,
        GetString(j, "pool", where, false, problem.pools[0].name));
    auto p = pool_by_name.find(pool_name);
    if (p == pool_by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the plan places \"", name,
                                                     "\" in unknown pool \"",
                                                     pool_name, "\""));
    }
    MEMPLAN_ASSIGN_OR_RETURN(Offset offset, GetInt(j, "offset", where, true));
    plan.assignments.push_back(
        {.buffer = b->second, .pool = p->second, .offset = offset});
  }
  ComputePlanStatistics(problem, plan);
  // Keep what the file claims, so that the verifier judges the claim.
  if (auto peak = root.find("peak"); peak != root.end() && !peak->is_null()) {
    MEMPLAN_ASSIGN_OR_RETURN(plan.peak, ToInt64(*peak, "the plan's \"peak\""));
  }
  if (auto pools = root.find("pools");
      pools != root.end() && pools->is_array()) {
    for (const Json& pj : *pools) {
      if (!pj.is_object()) continue;
      MEMPLAN_ASSIGN_OR_RETURN(std::string name,
                               GetString(pj, "name", "a plan pool", true));
      auto p = pool_by_name.find(name);
      if (p == pool_by_name.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the plan names unknown pool \"", name, "\""));
      }
      if (pj.contains("used")) {
        MEMPLAN_ASSIGN_OR_RETURN(
            plan.pool_used[p->second],
            GetInt(pj, "used", absl::StrCat("pool \"", name, "\""), true));
      }
    }
  }
  if (auto proven = root.find("proven_optimal");
      proven != root.end() && proven->is_boolean()) {
    plan.proven_optimal = proven->get<bool>();
  }
  return plan;
}

// ---------------------------------------------------------------------------
// Files.

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  if (EndsWith(path, ".gz")) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr) {
      return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
    }
    std::string out;
    char chunk[1 << 16];
    int n = 0;
    while ((n = gzread(file, chunk, sizeof(chunk))) > 0) out.append(chunk, n);
    // zlib reads a file that is not gzip as it is ("transparent"), and
    // reports a stream cut short (even at a flush point) only by Z_BUF_ERROR.
    const bool not_gzip = gzdirect(file) == 1 && !out.empty();
    int error = Z_OK;
    const char* message = gzerror(file, &error);
    const std::string what = message != nullptr ? message : "";
    gzclose(file);
    if (not_gzip) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", path, "\" is not gzip data, although its name ends in .gz"));
    }
    if (n < 0 || error != Z_OK) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot decompress \"", path, "\": ",
          error == Z_BUF_ERROR ? "the compressed data is cut short" : what));
    }
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  // A regular file is read in one piece into a string of its size: through a
  // stringstream, 27 MB took 40 ms and twice the memory.
  std::string contents;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > 0) {
    contents.resize(size);
    in.read(contents.data(), static_cast<std::streamsize>(size));
    contents.resize(static_cast<size_t>(in.gcount()));
  }
  // The rest: all of a pipe's, or what a file grew by meanwhile.
  if (in.good()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    contents += rest.view();
  }
  if (in.bad())
    return absl::DataLossError(absl::StrCat("cannot read \"", path, "\""));
  return contents;
}

absl::Status WriteFile(const std::string& path, std::string_view contents) {
  if (EndsWith(path, ".gz")) {
    gzFile file = gzopen(path.c_str(), "wb");
    if (file == nullptr) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write \"", path, "\""));
    }
    size_t done = 0;
    while (done < contents.size()) {
      const unsigned chunk = static_cast<unsigned>(
          std::min<size_t>(contents.size() - done, 1 << 20));
      if (gzwrite(file, contents.data() + done, chunk) !=
          static_cast<int>(chunk)) {
        gzclose(file);
        return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
      }
      done += chunk;
    }
    if (gzclose(file) != Z_OK) {
      return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
    }
    return absl::OkStatus();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write \"", path, "\""));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out)
    return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
  return absl::OkStatus();
}

absl::StatusOr<LoadedInput> LoadInput(const std::string& path,
                                      const BuildOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  LoadedInput input;
  input.content_hash = ContentHash(text);
  const std::string plain = StripGz(path);
  if (EndsWith(plain, ".csv")) {
    absl::StatusOr<BufferCsv> csv = ParseBufferCsv(text);
    if (!csv.ok()) {
      return absl::Status(csv.status().code(),
                          absl::StrCat(path, ": ", csv.status().message()));
    }
    if (csv->plan.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": an input's CSV has no offset or pool column (a plan "
                "with offsets is read by verify)"));
    }
    input.problem = std::move(csv->problem);
    MEMPLAN_ASSIGN_OR_RETURN(input.problem.pools,
                             ResolvePools(input.problem.pools, options));
    // At alignment 1 the buffers are the ones ParseBufferCsv validated (sizes
    // within kMaxBytes, so none overflows when aligned), ResolvePools has
    // validated the pools, and no buffer of a CSV names a pool or is fixed:
    // ValidateProblem would find nothing new, and rounding and checking again
    // cost 40 ms at 10^6 buffers.
    if (options.alignment == 1) return input;
    for (Buffer& b : input.problem.buffers) {
      b.alignment = options.alignment;
      if (b.size > std::numeric_limits<Bytes>::max() - b.alignment) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer \"", b.name, "\" overflows int64 when aligned"));
      }
      b.size = internal::RoundUp(b.size, b.alignment);
    }
    MEMPLAN_RETURN_IF_ERROR(ValidateProblem(input.problem));
    return input;
  }
  if (!EndsWith(plain, ".json")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", path,
        "\": unknown input type (expected .json, .json.gz, .csv or .csv.gz)"));
  }
  absl::StatusOr<Graph> graph = ParseGraphJson(text);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(path, ": ", graph.status().message()));
  }
  MEMPLAN_ASSIGN_OR_RETURN(input.problem, BuildProblem(*graph, options));
  input.graph = std::move(*graph);
  return input;
}

}  // namespace memplan
