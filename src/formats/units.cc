// Sizes and durations as people write them (memplan/units.h).

#include "memplan/units.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace memplan {
namespace {

struct Unit {
  absl::string_view suffix;  // lower case
  Bytes factor;
};

constexpr Unit kUnits[] = {
    {"", 1},
    {"b", 1},
    {"k", Bytes{1} << 10},
    {"kib", Bytes{1} << 10},
    {"kb", 1000},
    {"m", Bytes{1} << 20},
    {"mib", Bytes{1} << 20},
    {"mb", 1000 * 1000},
    {"g", Bytes{1} << 30},
    {"gib", Bytes{1} << 30},
    {"gb", 1000 * 1000 * 1000},
    {"t", Bytes{1} << 40},
    {"tib", Bytes{1} << 40},
    {"tb", Bytes{1000} * 1000 * 1000 * 1000},
};

}  // namespace

absl::StatusOr<Bytes> ParseByteSize(absl::string_view text) {
  const std::string lower =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  size_t digits = 0;
  while (digits < lower.size() && absl::ascii_isdigit(lower[digits])) ++digits;
  const absl::string_view number = absl::string_view(lower).substr(0, digits);
  const absl::string_view suffix = absl::string_view(lower).substr(digits);
  Bytes value = 0;
  if (number.empty() || !absl::SimpleAtoi(number, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", text,
        "\" is not a size: a non-negative integer with an optional unit "
        "(B, K/KiB, M/MiB, G/GiB, T/TiB = powers of 1024; KB, MB, GB, TB = "
        "powers of 1000)"));
  }
  for (const Unit& unit : kUnits) {
    if (unit.suffix != suffix) continue;
    if (value > std::numeric_limits<Bytes>::max() / unit.factor) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\" overflows 64-bit bytes"));
    }
    return value * unit.factor;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", text, "\" has an unknown unit \"", suffix,
      "\" (B, K/KiB, M/MiB, G/GiB, T/TiB = powers of 1024; KB, MB, GB, TB = "
      "powers of 1000)"));
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text) {
  const absl::string_view stripped = absl::StripAsciiWhitespace(text);
  double seconds = 0;
  absl::Duration duration;
  if (absl::SimpleAtod(stripped, &seconds)) {
    if (!std::isfinite(seconds) || seconds < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", text, "\" is not a finite, non-negative number of seconds"));
    }
    return absl::Seconds(seconds);
  }
  if (!absl::ParseDuration(stripped, &duration) ||
      duration == absl::InfiniteDuration() || duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text,
                     "\" is not a number of seconds or a finite duration "
                     "such as 500ms"));
  }
  return duration;
}

}  // namespace memplan
