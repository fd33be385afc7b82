// A planner's declared options and the values a factory reads
// (memplan/planner.h): declarations for registry tables, typed reads of the
// checked values. The registry (planners/registry_options.cc) parses them.

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "memplan/planner.h"

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
  PlannerOption option =
      Declared(std::move(name), OptionType::kEnum, std::move(default_value),
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

}  // namespace memplan
