// The budget of one Solve (see effort/budget.h).

#include "effort/budget.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "effort/set_up.h"
#include "memplan/planner.h"

namespace memplan {

int64_t WorkLimit(const PlanOptions& options) {
  if (options.work_limit > 0) return options.work_limit;
  if (options.time_limit == absl::InfiniteDuration()) return kDefaultWorkLimit;
  const double work = absl::ToDoubleSeconds(options.time_limit) *
                      static_cast<double>(kWorkPerSecond);
  return static_cast<int64_t>(std::clamp(work, 0.0, 1e18));
}

Budget::Budget(const PlanOptions& options)
    : work_limit_(WorkLimit(options)),
      patience_(options.patience),
      progress_(options.progress),
      deadline_(options.deadline) {
  if (options.time_limit != absl::InfiniteDuration()) {
    deadline_ = std::min(deadline_, absl::Now() + options.time_limit);
  }
}

bool Budget::OutOfTime() {
  if (out_of_time_) return true;
  if (deadline_ == absl::InfiniteFuture()) return false;
  if (clock_read_at_ > 0 && work_done_ - clock_read_at_ < kClockWork)
    return false;
  clock_read_at_ = std::max<int64_t>(work_done_, 1);
  out_of_time_ = absl::Now() >= deadline_;
  return out_of_time_;
}

void Budget::Improved(Bytes peak, std::string_view planner) {
  improved_at_ = work_done_;
  if (progress_) progress_({.peak = peak, .planner = planner});
}

bool Budget::OutOfPatience() const {
  return patience_ > 0 &&
         work_done_ - improved_at_ >=
             std::max(patience_, kPatienceGrowth * improved_at_);
}

bool Budget::OutOfTimeNow() const {
  return deadline_ != absl::InfiniteFuture() && absl::Now() >= deadline_;
}

PlanOptions Budget::Part(const PlanOptions& options, double fraction) const {
  PlanOptions part = options;
  part.work_limit = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(work_limit_) * fraction));
  if (options.time_limit != absl::InfiniteDuration())
    part.time_limit = options.time_limit * fraction;
  part.deadline = deadline_;
  return part;
}

namespace internal {

absl::Status TimeForSetUp(const Budget& budget, const Problem& problem,
                          absl::Duration per_buffer, std::string_view what) {
  if (budget.deadline() == absl::InfiniteFuture()) return absl::OkStatus();
  const auto n = static_cast<int64_t>(problem.buffers.size());
  const absl::Duration needed = per_buffer * n;
  if (budget.deadline() - absl::Now() >= needed) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat(std::string(what), " was not begun: its set-up takes about ",
                   absl::FormatDuration(needed), " for ", n,
                   " buffers, more than is left before the deadline"));
}

}  // namespace internal
}  // namespace memplan
