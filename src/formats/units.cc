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

constexpr char kSizeForm[] =
    "a non-negative number with an optional unit (B, K/KiB, M/MiB, G/GiB, "
    "T/TiB = powers of 1024; KB, MB, GB, TB = powers of 1000)";

// The digits at the front of `text`, taken off it.
absl::string_view TakeDigits(absl::string_view& text) {
  size_t n = 0;
  while (n < text.size() && absl::ascii_isdigit(text[n])) ++n;
  const absl::string_view digits = text.substr(0, n);
  text.remove_prefix(n);
  return digits;
}

}  // namespace

absl::StatusOr<Bytes> ParseByteSize(absl::string_view text) {
  const std::string lower =
      absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  absl::string_view rest = lower;
  const absl::string_view number = TakeDigits(rest);
  absl::string_view fraction;
  if (absl::ConsumePrefix(&rest, ".")) fraction = TakeDigits(rest);
  Bytes value = 0;
  if (number.empty() || !absl::SimpleAtoi(number, &value) ||
      fraction.size() > 18) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a size: ", kSizeForm));
  }
  for (const Unit& unit : kUnits) {
    if (unit.suffix != rest) continue;
    if (value > std::numeric_limits<Bytes>::max() / unit.factor) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\" overflows 64-bit bytes"));
    }
    // A fraction of the unit, rounded down to a whole byte: 1.5G is
    // 1610612736 bytes.
    unsigned __int128 part = 0, scale = 1;
    for (char c : fraction) {
      part = part * 10 + (c - '0');
      scale *= 10;
    }
    part = part * static_cast<unsigned __int128>(unit.factor) / scale;
    if (part > static_cast<unsigned __int128>(
                   std::numeric_limits<Bytes>::max() - value * unit.factor)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\" overflows 64-bit bytes"));
    }
    return value * unit.factor + static_cast<Bytes>(part);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "\"", text, "\" has an unknown unit \"", rest,
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
