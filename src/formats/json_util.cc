// The JSON helpers of the graph and plan readers (json_util.h).

#include "formats/json_util.h"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/formats.h"

namespace memplan::internal {
namespace {

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

// Builds the document from nlohmann's SAX events. Its own builder rather
// than nlohmann's parse callback: to drop a value, that callback's parser
// rescans the parent array at every object's end, which made a graph of
// 10^5 ops take seconds and 10^6 ops minutes. Here a repeated key is found
// by a lookup in the object being filled, and a value too deep or a string
// too long stops the parse at once.
class DomBuilder {
 public:
  explicit DomBuilder(Json* root) : root_(root) {}

  // Hands the elements of the root object's arrays under `keys` to `sink`
  // as each is read (ElementSink).
  void StreamElements(std::initializer_list<absl::string_view> keys,
                      const ElementSink* sink) {
    stream_keys_.assign(keys.begin(), keys.end());
    sink_ = sink;
  }

  bool null() { return Add(nullptr); }
  bool boolean(bool v) { return Add(v); }
  bool number_integer(Json::number_integer_t v) { return Add(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return Add(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) {
    return Add(v);
  }
  bool string(Json::string_t& v) {
    if (!CheckLength(v)) return false;
    return Add(std::move(v));
  }
  bool binary(Json::binary_t& v) { return Add(std::move(v)); }

  bool start_object(std::size_t) { return Push(Json::object(), true); }
  bool start_array(std::size_t) { return Push(Json::array(), false); }
  bool end_object() { return Pop(); }
  bool end_array() { return Pop(); }

  bool key(Json::string_t& k) {
    if (!CheckLength(k)) return false;
    // One lookup: the slot for the key, unless it is there already.
    auto [slot, added] =
        open_.back().value->get_ref<Json::object_t&>().try_emplace(k);
    if (!added) {
      const std::string& under = open_.back().under;
      error_ = under.empty()
                   ? absl::StrCat("key \"", k, "\" appears twice in one object")
                   : absl::StrCat("key \"", k,
                                  "\" appears twice in an object under \"",
                                  under, "\"");
      return false;
    }
    slot_ = &slot->second;
    last_key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    position_ = position;
    error_ = e.what();
    // nlohmann's message repeats the position ("[json.exception.parse_error
    // .101] parse error at line 1, column 1: syntax error ..."): keep what
    // follows it.
    if (const size_t bracket = error_.find("] ");
        error_.starts_with("[json.exception.") &&
        bracket != std::string::npos) {
      error_.erase(0, bracket + 2);
    }
    if (error_.starts_with("parse error")) {
      if (const size_t colon = error_.find(": "); colon != std::string::npos) {
        error_.erase(0, colon + 2);
      }
    }
    syntax_ = true;
    return false;
  }

  // Set when the parse stopped: the message, and for a syntax error the
  // byte nlohmann stopped at (1-based, just past the offending character).
  const std::string& error() const { return error_; }
  bool syntax() const { return syntax_; }
  size_t position() const { return position_; }

 private:
  // Per open object or array: its value, and the key it (or the array
  // holding it) is the value of.
  struct Level {
    Json* value;
    std::string under;
    bool object;
  };

  // The deepest nesting the graph and plan formats use is 5; this leaves
  // room and keeps every later recursion over the document shallow.
  static constexpr size_t kMaxDepth = 256;

  bool CheckLength(const Json::string_t& s) {
    if (s.size() <= kMaxNameBytes) return true;
    error_ =
        absl::StrCat("a string of ", s.size(), " bytes (\"",
                     absl::string_view(s).substr(0, 32), "...\")", Under(),
                     " is longer than the limit of ", kMaxNameBytes, " bytes");
    return false;
  }

  std::string Under() const {
    const std::string& under = Parent();
    return under.empty() ? "" : absl::StrCat(" under \"", under, "\"");
  }

  // The key the next value is under.
  const std::string& Parent() const {
    static const std::string* const kNone = new std::string;
    if (open_.empty()) return *kNone;
    return open_.back().object ? last_key_ : open_.back().under;
  }

  Json* Place(Json&& value) {
    if (open_.empty()) {
      *root_ = std::move(value);
      return root_;
    }
    Level& parent = open_.back();
    if (parent.object) {
      *slot_ = std::move(value);
      return slot_;
    }
    parent.value->push_back(std::move(value));
    return &parent.value->back();
  }

  bool Add(Json&& value) {
    Place(std::move(value));
    return TakeElement();
  }

  // After a value is complete: when it is an element of a streamed array
  // under the root object, hands it to the sink and drops it.
  bool TakeElement() {
    if (sink_ == nullptr || open_.size() != 2 || !open_[0].object ||
        open_[1].object) {
      return true;
    }
    Level& array = open_[1];
    if (std::find(stream_keys_.begin(), stream_keys_.end(), array.under) ==
        stream_keys_.end()) {
      return true;
    }
    Json element = std::move(array.value->back());
    array.value->erase(array.value->end() - 1);
    (*sink_)(array.under, taken_[array.under]++, std::move(element));
    return true;
  }

  bool Push(Json&& value, bool object) {
    if (open_.size() >= kMaxDepth) {
      error_ = absl::StrCat("values nested deeper than ", kMaxDepth, " levels",
                            Under());
      return false;
    }
    std::string under = Parent();
    Json* placed = Place(std::move(value));
    open_.push_back({placed, std::move(under), object});
    return true;
  }

  bool Pop() {
    open_.pop_back();
    return TakeElement();
  }

  Json* root_;
  std::vector<Level> open_;
  Json* slot_ = nullptr;  // the value of the last key read
  std::string last_key_;
  std::string error_;
  bool syntax_ = false;
  size_t position_ = 0;
  std::vector<absl::string_view> stream_keys_;
  const ElementSink* sink_ = nullptr;
  absl::flat_hash_map<std::string, size_t> taken_;  // elements per key
};

}  // namespace

absl::StatusOr<Json> ParseJson(absl::string_view text) {
  return ParseJson(text, {}, nullptr);
}

absl::StatusOr<Json> ParseJson(absl::string_view text,
                               std::initializer_list<absl::string_view> keys,
                               const ElementSink& sink) {
  // nlohmann's lexer keeps every character of a token, whitespace before
  // it included: a flood of whitespace around the document (1 GiB of it)
  // would be copied whole. Skipped here; one inside the document still
  // costs its size again.
  const absl::string_view space = " \t\n\r";
  const size_t begin = std::min(text.find_first_not_of(space), text.size());
  const size_t end = text.find_last_not_of(space) + 1;  // 0 when all space
  const absl::string_view trimmed =
      begin < end ? text.substr(begin, end - begin) : absl::string_view();
  Json root;
  DomBuilder builder(&root);
  if (sink) builder.StreamElements(keys, &sink);
  bool ok = false;
  try {
    ok = Json::sax_parse(trimmed.begin(), trimmed.end(), &builder);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        "the JSON document does not fit in memory");
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed JSON: ", e.what()));
  }
  if (ok) return root;
  if (builder.syntax()) {
    const size_t at = begin + builder.position();
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON at ", Position(text, at == begin ? at : at - 1), ": ",
        builder.error()));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("malformed JSON: ", builder.error()));
}

// Serialises `j`; a string that is not valid UTF-8 (a name read from a CSV or
// made in code) is written with replacement characters instead of throwing.
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string DumpString(absl::string_view s) {
  // Printable ASCII but the quote and the backslash is written as it is;
  // anything else (escapes, UTF-8, bytes that are not) as Dump writes it.
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (!plain) return Dump(Json(std::string(s)));
  return absl::StrCat("\"", s, "\"");
}

// InvalidArgument naming the first key of `object` not in `known`.
absl::Status CheckKeys(const Json& object, absl::string_view where,
                       std::initializer_list<absl::string_view> known) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " has unknown key \"", it.key(), "\" (expected ",
                       absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> GetString(const Json& object, const char* key,
                                      absl::string_view where, bool required,
                                      std::string fallback) {
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
                               int64_t fallback) {
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

Json DimsToJson(const DimRanges& dims) {
  Json j = Json::object();
  for (const auto& [name, range] : dims) {
    j[name] = {{"min", range.min}, {"max", range.max}};
  }
  return j;
}

absl::StatusOr<DimRanges> DimsFromJson(const Json& json,
                                       absl::string_view where) {
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "\"dims\" must be an object {\"NAME\": {\"min\", \"max\"}}"));
  }
  DimRanges dims;
  for (const auto& [name, range] : json.items()) {
    const std::string what = absl::StrCat(where, "dim \"", name, "\"");
    if (!range.is_object()) {
      return absl::InvalidArgumentError(
          what + " must be an object {\"min\", \"max\"}");
    }
    MEMPLAN_RETURN_IF_ERROR(CheckKeys(range, what, {"min", "max"}));
    DimRange r;
    MEMPLAN_ASSIGN_OR_RETURN(r.min, GetInt(range, "min", what, true));
    MEMPLAN_ASSIGN_OR_RETURN(r.max, GetInt(range, "max", what, true));
    dims[name] = r;
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(dims));
  return dims;
}

}  // namespace memplan::internal
