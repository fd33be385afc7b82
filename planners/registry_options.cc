// Planner options: parsed by their declared type here, and nowhere else.

#include "registry_options.h"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "memplan/spelling.h"

namespace memplan {
namespace internal {
namespace {

std::string Range(const PlannerOption& option) {
  const bool low = std::isfinite(option.min), high = std::isfinite(option.max);
  if (low && high)
    return absl::StrCat(" from ", option.min, " to ", option.max);
  if (low) return absl::StrCat(" of at least ", option.min);
  if (high) return absl::StrCat(" of at most ", option.max);
  return "";
}

// The value of `text` as `option`'s type, or why not (a phrase).
absl::StatusOr<OptionValues::Value> ParseValue(const PlannerOption& option,
                                               const std::string& text) {
  const auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not ", std::string(what)));
  };
  switch (option.type) {
    case OptionType::kBool:
      if (text == "true") return OptionValues::Value(true);
      if (text == "false") return OptionValues::Value(false);
      return bad("a bool (true or false)");
    case OptionType::kInt: {
      int64_t value = 0;
      if (!absl::SimpleAtoi(text, &value) ||
          static_cast<double>(value) < option.min ||
          static_cast<double>(value) > option.max) {
        return bad(absl::StrCat("an integer", Range(option)));
      }
      return OptionValues::Value(value);
    }
    case OptionType::kDouble: {
      double value = 0;
      if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) ||
          value < option.min || value > option.max) {
        return bad(absl::StrCat("a finite number", Range(option)));
      }
      return OptionValues::Value(value);
    }
    case OptionType::kEnum:
      for (const std::string& choice : option.choices) {
        if (choice == text) return OptionValues::Value(text);
      }
      return bad(absl::StrCat("one of ", absl::StrJoin(option.choices, ", ")));
  }
  return bad("a value");
}

// "did you mean ...; valid: a, b" for an unknown option `given`.
std::string Names(const std::vector<PlannerOption>& declared,
                  const std::string& given) {
  std::vector<std::string> names;
  for (const PlannerOption& option : declared) names.push_back(option.name);
  const std::string closest = ClosestName(given, names);
  return names.empty() ? "it has none"
                       : absl::StrCat(closest.empty() ? "" : "did you mean \"",
                                      closest, closest.empty() ? "" : "\"?; ",
                                      "valid: ", absl::StrJoin(names, ", "));
}

}  // namespace

absl::StatusOr<OptionValues> ParseOptions(
    std::string_view planner, const std::vector<PlannerOption>& declared,
    const PlannerOptions& given) {
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const PlannerOption& option : declared) known |= option.name == name;
    if (!known && name == "workers") {  // one name per knob
      return absl::InvalidArgumentError(absl::StrCat(
          "planner \"", std::string(planner),
          "\" has no option \"workers\": the thread count is \"threads\""));
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "planner \"", std::string(planner), "\" has no option \"", name,
          "\" (", Names(declared, name), ")"));
    }
  }
  OptionValues values;
  for (const PlannerOption& option : declared) {
    auto it = given.find(option.name);
    const std::string& text =
        it == given.end() ? option.default_value : it->second;
    absl::StatusOr<OptionValues::Value> value = ParseValue(option, text);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("planner \"", std::string(planner), "\", option ",
                       option.name, "=", text, ": ", value.status().message(),
                       " (", std::string(OptionTypeName(option.type)), ": ",
                       option.description, ")"));
    }
    values.Set(option.name, *std::move(value));
  }
  return values;
}

absl::Status CheckDeclarations(std::string_view planner,
                               const std::vector<PlannerOption>& declared) {
  std::set<std::string> names;
  for (const PlannerOption& option : declared) {
    if (option.name.empty() || !names.insert(option.name).second ||
        (option.type == OptionType::kEnum && option.choices.empty())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "planner \"", std::string(planner), "\": option \"", option.name,
          "\" is unnamed, declared twice or an enum without "
          "choices"));
    }
  }
  return ParseOptions(planner, declared, {}).status();
}

}  // namespace internal
}  // namespace memplan
