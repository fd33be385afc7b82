// The progress line of one planning run, as text: what to write and when,
// from the elapsed time it is given (it reads no clock, so its rate
// limiting is tested with made-up times). progress.h runs it on a thread.

#ifndef MEMPLAN_TOOLS_MEMPLAN_PROGRESS_LINE_H_
#define MEMPLAN_TOOLS_MEMPLAN_PROGRESS_LINE_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "memplan/types.h"

namespace memplan::tool {

// How the line is shown.
enum class ProgressStyle {
  kInPlace,  // a terminal: one line, rewritten in place ("\r" + clear)
  kLines,    // a file or pipe: a line every kLinesEvery
};

class ProgressLine {
 public:
  // Nothing before `first` (a quick run stays silent): ProgressWanted's
  // kAlways gives zero, so that every run shows its final line.
  static constexpr absl::Duration kInPlaceFirst = absl::Seconds(1);
  static constexpr absl::Duration kLinesFirst = absl::Seconds(2);
  // In place: at most one redraw per kRedraw (10 a second), and one per
  // kRefresh while nothing changes (the elapsed time moves on).
  static constexpr absl::Duration kRedraw = absl::Milliseconds(100);
  static constexpr absl::Duration kRefresh = absl::Seconds(1);
  // Lines: one per kLinesEvery, whatever changes between them.
  static constexpr absl::Duration kLinesEvery = absl::Seconds(5);

  // `lower_bound`: the bound the best peak is compared with (0: none, as
  // with several pools); `running`: what runs (the planner's name).
  ProgressLine(ProgressStyle style, absl::Duration first, Bytes lower_bound,
               std::string running);

  // A plan smaller than any before, found by `planner`.
  void Improved(Bytes peak, std::string_view planner);
  // What runs now (a planner or a stage of one); without a peak, the line
  // shows just that.
  void Running(std::string_view what);

  // The text to write at `elapsed` since the start: empty unless a line is
  // due (see the constants above).
  std::string Tick(absl::Duration elapsed);
  // The last line, saying why the run stopped (`reason`): written when the
  // run lasted `first` or a line was shown; in place it replaces the line.
  std::string Final(absl::Duration elapsed, std::string_view reason);

 private:
  std::string Text(absl::Duration elapsed) const;

  const ProgressStyle style_;
  const absl::Duration first_;
  const Bytes lower_bound_;
  std::string running_;
  bool staged_ = false;  // Running() was told a stage
  std::optional<Bytes> peak_;
  std::string found_by_;                // the planner of peak_
  bool changed_ = false;                // since the last line written
  std::optional<absl::Duration> last_;  // when the last line was written
};

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_PROGRESS_LINE_H_
