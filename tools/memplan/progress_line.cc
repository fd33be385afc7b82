// The progress line's text and timing (see progress_line.h).

#include "progress_line.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace memplan::tool {
namespace {

// "\r" and clear to the end of the line: the line is drawn again.
constexpr char kRedrawLine[] = "\r\033[K";

}  // namespace

ProgressLine::ProgressLine(ProgressStyle style, absl::Duration first,
                           Bytes lower_bound, std::string running)
    : style_(style),
      first_(first),
      lower_bound_(lower_bound),
      running_(std::move(running)) {}

void ProgressLine::Improved(Bytes peak, std::string_view planner) {
  if (peak_.has_value() && peak >= *peak_) return;
  peak_ = peak;
  found_by_ = std::string(planner);
  changed_ = true;
}

void ProgressLine::Running(std::string_view what) {
  staged_ = true;
  if (what == running_) return;
  running_ = std::string(what);
  changed_ = true;
}

std::string ProgressLine::Tick(absl::Duration elapsed) {
  if (elapsed < first_) return "";
  if (last_.has_value()) {
    const absl::Duration since = elapsed - *last_;
    if (style_ == ProgressStyle::kLines && since < kLinesEvery) return "";
    if (style_ == ProgressStyle::kInPlace &&
        (since < kRedraw || (!changed_ && since < kRefresh))) {
      return "";
    }
  }
  last_ = elapsed;
  changed_ = false;
  if (style_ == ProgressStyle::kLines) return absl::StrCat(Text(elapsed), "\n");
  return absl::StrCat(kRedrawLine, Text(elapsed));
}

std::string ProgressLine::Final(absl::Duration elapsed,
                                std::string_view reason) {
  if (!last_.has_value() && elapsed < first_) return "";
  last_ = elapsed;
  const std::string line =
      absl::StrCat(Text(elapsed), "; stopped: ", std::string(reason), "\n");
  if (style_ == ProgressStyle::kLines) return line;
  return absl::StrCat(kRedrawLine, line);
}

std::string ProgressLine::Text(absl::Duration elapsed) const {
  std::string text =
      absl::StrFormat("memplan: %6.1f s  ", absl::ToDoubleSeconds(elapsed));
  if (!peak_.has_value() && staged_) {  // a stage says what it planned
    absl::StrAppend(&text, running_);
    return text;
  }
  if (!peak_.has_value()) {
    absl::StrAppend(&text, "no plan yet");
  } else {
    absl::StrAppendFormat(&text, "best peak %d bytes", *peak_);
    // A sum over several pools is not compared with the one-pool bound.
    if (lower_bound_ > 0) {
      absl::StrAppendFormat(
          &text, " = %.4fx lower bound",
          static_cast<double>(*peak_) / static_cast<double>(lower_bound_));
    }
    if (!found_by_.empty() && found_by_ != running_) {
      absl::StrAppend(&text, " (", found_by_, ")");
    }
  }
  if (!running_.empty()) absl::StrAppend(&text, "  [", running_, "]");
  return text;
}

}  // namespace memplan::tool
