// The JSON helpers the graph and plan readers share: a parse that names the
// line and column of a syntax error and rejects repeated keys, a dump that
// never throws, and typed field access that returns InvalidArgument naming
// the item instead of throwing.

#ifndef MEMPLAN_FORMATS_JSON_UTIL_H_
#define MEMPLAN_FORMATS_JSON_UTIL_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "memplan/dim_expr.h"
#include "nlohmann/json.hpp"

namespace memplan::internal {

using Json = nlohmann::json;

// Parses `text`; a key given twice in one object is an error (nlohmann::json
// would keep the last silently), as is a number no double holds (1e400).
// The one place of the readers that can throw, turned into a Status.
absl::StatusOr<Json> ParseJson(absl::string_view text);

// Takes each element of an array that is the value of a key of the root
// object ("ops": [...]) as soon as it is read: its key, its index in the
// array and the element. The element is not kept in the document, whose
// array stays empty: a reader that turns elements into its own structures
// at once never holds the whole document (a graph of 10^6 ops needed
// 1.7 GB as one).
using ElementSink =
    std::function<void(const std::string& key, size_t index, Json&& element)>;

// ParseJson, handing the elements of the arrays named by `keys` (under the
// root object) to `sink` instead of keeping them.
absl::StatusOr<Json> ParseJson(absl::string_view text,
                               std::initializer_list<absl::string_view> keys,
                               const ElementSink& sink);

// Serialises `j`; a string that is not valid UTF-8 (a name read from a CSV or
// made in code) is written with replacement characters instead of throwing.
std::string Dump(const Json& j);

// Dump(Json(s)) without building a Json: the quoted string, escaped as
// Dump escapes it.
std::string DumpString(absl::string_view s);

// InvalidArgument naming the first key of `object` not in `known`.
absl::Status CheckKeys(const Json& object, absl::string_view where,
                       std::initializer_list<absl::string_view> known);

// object[key] as a string; absent or null is an error when `required`, else
// `fallback`.
absl::StatusOr<std::string> GetString(const Json& object, const char* key,
                                      absl::string_view where, bool required,
                                      std::string fallback = "");

// `value` as an int64; `what` names it in the error.
absl::StatusOr<int64_t> ToInt64(const Json& value, absl::string_view what);

// object[key] as an int64, as GetString.
absl::StatusOr<int64_t> GetInt(const Json& object, const char* key,
                               absl::string_view where, bool required,
                               int64_t fallback = 0);

// object[key] as a list of strings; absent or null is an empty list.
absl::StatusOr<std::vector<std::string>> GetStrings(const Json& object,
                                                    const char* key,
                                                    absl::string_view where);

// A graph's or a plan's "dims": {"seq": {"min": 1, "max": 2048}, ...}.
Json DimsToJson(const DimRanges& dims);
// The same read back and validated (ValidateDimRanges); `where` prefixes
// the errors ("the plan: "; empty for a graph).
absl::StatusOr<DimRanges> DimsFromJson(const Json& json,
                                       absl::string_view where);

}  // namespace memplan::internal

#endif  // MEMPLAN_FORMATS_JSON_UTIL_H_
