// The JSON helpers of the graph and plan readers (json_util.h).

#include "formats/json_util.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

}  // namespace

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

}  // namespace memplan::internal
