// Progress lines on stderr (see progress.h).

#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace memplan::tool {
namespace {

// Silence before the first line, and between lines without a smaller plan.
constexpr absl::Duration kFirstLine = absl::Seconds(1);
constexpr absl::Duration kQuietLine = absl::Seconds(10);

}  // namespace

bool ProgressWanted(const Arguments& args) {
  if (absl::GetFlag(FLAGS_quiet)) return false;
  if (args.Given("progress")) return absl::GetFlag(FLAGS_progress);
  return isatty(STDERR_FILENO) == 1;
}

std::function<void(std::string_view)> StageLines(bool enabled) {
  if (!enabled) return nullptr;
  const absl::Time start = absl::Now();
  return [start](std::string_view line) {
    const absl::Duration elapsed = absl::Now() - start;
    if (elapsed < absl::Seconds(1)) return;
    std::cerr << absl::StrFormat("memplan: %6.1f s  %s\n",
                                 absl::ToDoubleSeconds(elapsed), line);
  };
}

ProgressLines::ProgressLines(const Problem& problem, bool enabled)
    : lower_bound_(problem.pools.size() == 1 ? LowerBound(problem) : 0),
      start_(absl::Now()) {
  if (enabled) thread_ = std::thread([this] { Loop(); });
}

ProgressLines::~ProgressLines() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

std::function<void(const Progress&)> ProgressLines::Callback() {
  if (!thread_.joinable()) return nullptr;
  return [this](const Progress& progress) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (peak_.has_value() && progress.peak >= *peak_) return;
      peak_ = progress.peak;
      planner_ = std::string(progress.planner);
      fresh_ = true;
    }
    changed_.notify_one();
  };
}

void ProgressLines::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto until = [](absl::Time t) {
    return std::chrono::system_clock::from_time_t(0) +
           std::chrono::microseconds(absl::ToUnixMicros(t));
  };
  if (changed_.wait_until(lock, until(start_ + kFirstLine),
                          [this] { return done_; })) {
    return;
  }
  absl::Time last = absl::Now();
  Print(last - start_);
  while (true) {
    changed_.wait_until(lock, until(last + kQuietLine),
                        [this] { return done_ || fresh_; });
    if (done_) return;
    last = absl::Now();
    Print(last - start_);
  }
}

void ProgressLines::Print(absl::Duration elapsed) {
  fresh_ = false;
  const double seconds = absl::ToDoubleSeconds(elapsed);
  if (!peak_.has_value()) {
    std::cerr << absl::StrFormat("%7.1f s  no plan yet\n", seconds);
    return;
  }
  // A sum over several pools is not compared with the one-pool bound.
  const std::string ratio =
      lower_bound_ > 0 ? absl::StrFormat(", %.4fx lower bound",
                                         static_cast<double>(*peak_) /
                                             static_cast<double>(lower_bound_))
                       : "";
  std::cerr << absl::StrFormat("%7.1f s  best peak %d bytes%s (%s)\n", seconds,
                               *peak_, ratio, planner_);
}

}  // namespace memplan::tool
