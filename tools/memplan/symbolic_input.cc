#include "symbolic_input.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "flags.h"
#include "input.h"
#include "memplan/formats.h"
#include "memplan/symbolic.h"

ABSL_DECLARE_FLAG(std::vector<std::string>, dim);

namespace memplan::tool {
namespace {

// NAME=VALUE of the flag --`flag`.
absl::StatusOr<std::pair<std::string, int64_t>> Binding(const std::string& text,
                                                        const char* flag) {
  std::vector<std::string> parts = absl::StrSplit(text, '=');
  int64_t value = 0;
  if (parts.size() != 2 || parts[0].empty() ||
      !absl::SimpleAtoi(parts[1], &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, "=", text, ": expected NAME=VALUE with VALUE >= 0"));
  }
  return std::make_pair(parts[0], value);
}

}  // namespace

absl::StatusOr<DimValues> DimFlagValues() {
  absl::StatusOr<DimArguments> dims = DimsFromFlags();
  if (!dims.ok()) return dims.status();
  return std::move(dims->values);
}

absl::StatusOr<std::optional<Graph>> ReadSymbolicGraph(const std::string& path,
                                                       bool bind_values) {
  absl::StatusOr<std::optional<SymbolicToolInput>> loaded =
      LoadSymbolicInput(path, bind_values);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) return std::nullopt;
  return std::move((*loaded)->graph);
}

absl::StatusOr<std::vector<DimValues>> EvaluationPoints(const DimRanges& dims) {
  std::vector<DimValues> points(2);
  for (const auto& [name, range] : dims) {
    points[0][name] = range.min;
    points[1][name] = range.max;
  }
  for (const std::string& text : absl::GetFlag(FLAGS_at)) {
    absl::StatusOr<std::pair<std::string, int64_t>> b = Binding(text, "at");
    if (!b.ok()) return b.status();
    auto it = dims.find(b->first);
    if (it == dims.end()) {
      std::vector<std::string> names;
      for (const auto& [name, range] : dims) names.push_back(name);
      return absl::InvalidArgumentError(
          absl::StrCat("--at=", text, ": the graph has no dim \"", b->first,
                       "\" (its dims: ", absl::StrJoin(names, ", "), ")"));
    }
    if (b->second < it->second.min || b->second > it->second.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--at=", text, ": ", b->second, " lies outside ", b->first,
          "'s range [", it->second.min, ", ", it->second.max, "]"));
    }
    DimValues point = points[1];
    point[b->first] = b->second;
    points.push_back(point);
  }
  std::vector<DimValues> unique;
  for (const DimValues& p : points) {
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) {
      unique.push_back(p);
    }
  }
  return unique;
}

std::string RangesText(const DimRanges& dims) {
  std::vector<std::string> parts;
  for (const auto& [name, range] : dims) {
    parts.push_back(
        absl::StrCat(name, " in [", range.min, ", ", range.max, "]"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string ValuesText(const DimValues& values) {
  return absl::StrJoin(values, ", ", absl::PairFormatter("="));
}

std::string StepsText(const DimValues& steps) {
  std::string out;
  for (const auto& [dim, step] : steps) {
    absl::StrAppend(&out, ", ", dim, " in steps of ", step, " (",
                    StepDivName(dim), " = ", dim, " / ", step, ", ",
                    StepModName(dim), " = ", dim, " % ", step, ")");
  }
  return out;
}

}  // namespace memplan::tool
