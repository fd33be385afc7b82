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

namespace memplan {

std::string_view OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kBool:
      return "bool";
    case OptionType::kInt:
      return "int";
    case OptionType::kDouble:
      return "double";
    case OptionType::kEnum:
      return "enum";
  }
  return "bool";
}

const OptionValues::Value* OptionValues::Find(std::string_view name) const {
  auto it = values_.find(name);
  assert(it != values_.end() && "a factory reads an option it did not declare");
  return it == values_.end() ? nullptr : &it->second;
}

namespace {

PlannerOption Declared(std::string name, OptionType type,
                       std::string default_value, std::string description) {
  PlannerOption option;
  option.name = std::move(name);
  option.type = type;
  option.default_value = std::move(default_value);
  option.description = std::move(description);
  return option;
}

}  // namespace

PlannerOption BoolOption(std::string name, bool default_value,
                         std::string description) {
  return Declared(std::move(name), OptionType::kBool,
                  default_value ? "true" : "false", std::move(description));
}

PlannerOption IntOption(std::string name, int64_t default_value,
                        std::string description, double min, double max) {
  PlannerOption option =
      Declared(std::move(name), OptionType::kInt, absl::StrCat(default_value),
               std::move(description));
  option.min = min;
  option.max = max;
  return option;
}

PlannerOption DoubleOption(std::string name, double default_value,
                           std::string description, double min, double max) {
  PlannerOption option =
      Declared(std::move(name), OptionType::kDouble,
               absl::StrCat(default_value), std::move(description));
  option.min = min;
  option.max = max;
  return option;
}

PlannerOption EnumOption(std::string name, std::string default_value,
                         std::vector<std::string> choices,
                         std::string description) {
  PlannerOption option = Declared(std::move(name), OptionType::kEnum,
                                  std::move(default_value),
                                  std::move(description));
  option.choices = std::move(choices);
  return option;
}

namespace {

template <typename T>
const T& Get(const OptionValues::Value* value) {
  static const T zero{};
  const T* typed = value == nullptr ? nullptr : std::get_if<T>(value);
  assert((value == nullptr || typed != nullptr) &&
         "a factory reads an option under another type");
  return typed == nullptr ? zero : *typed;
}

}  // namespace

bool OptionValues::Bool(std::string_view name) const {
  return Get<bool>(Find(name));
}
int64_t OptionValues::Int(std::string_view name) const {
  return Get<int64_t>(Find(name));
}
double OptionValues::Double(std::string_view name) const {
  return Get<double>(Find(name));
}
const std::string& OptionValues::Enum(std::string_view name) const {
  return Get<std::string>(Find(name));
}

namespace internal {
namespace {

std::string Range(const PlannerOption& option) {
  const bool low = std::isfinite(option.min), high = std::isfinite(option.max);
  if (low && high) return absl::StrCat(" from ", option.min, " to ", option.max);
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

std::string Names(const std::vector<PlannerOption>& declared) {
  std::vector<std::string> names;
  for (const PlannerOption& option : declared) names.push_back(option.name);
  return names.empty() ? "it has none"
                       : absl::StrCat("valid: ", absl::StrJoin(names, ", "));
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
      return absl::InvalidArgumentError(
          absl::StrCat("planner \"", std::string(planner),
                       "\" has no option \"", name,
                       "\" (", Names(declared), ")"));
    }
  }
  OptionValues values;
  for (const PlannerOption& option : declared) {
    auto it = given.find(option.name);
    const std::string& text =
        it == given.end() ? option.default_value : it->second;
    absl::StatusOr<OptionValues::Value> value = ParseValue(option, text);
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "planner \"", std::string(planner), "\", option ", option.name, "=",
          text, ": ", value.status().message(), " (",
          std::string(OptionTypeName(option.type)),
          ": ", option.description, ")"));
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
      return absl::InvalidArgumentError(
          absl::StrCat("planner \"", std::string(planner), "\": option \"",
                       option.name,
                       "\" is unnamed, declared twice or an enum without "
                       "choices"));
    }
  }
  return ParseOptions(planner, declared, {}).status();
}

}  // namespace internal
}  // namespace memplan
