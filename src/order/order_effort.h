// The effort of the order computations (memplan/reorder.h) in work units.
//
//   * Each computation counts its own steps (positions, lists and set words
//     looked at) and converts them at a fixed rate into work units, the
//     planners' unit (kWorkPerSecond of them a second), against a Budget.
//   * The rates are about what a unit costs in time; the default works
//     are today's step limits divided by them, so that with no limit every
//     order and bound is what the step counts alone gave.

#ifndef MEMPLAN_ORDER_ORDER_EFFORT_H_
#define MEMPLAN_ORDER_ORDER_EFFORT_H_

#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"
#include "effort/budget.h"
#include "memplan/planner.h"
#include "memplan/types.h"

namespace memplan::internal {

// Steps per work unit.
inline constexpr int64_t kBoundStepsPerUnit = 25;    // LowerBoundOverOrders
inline constexpr int64_t kOptimalStepsPerUnit = 10;  // the search and beams
inline constexpr int64_t kWindowStepsPerUnit = 1;    // "window"'s rounds

// The work of each without a limit, in work units.
inline constexpr int64_t kBoundDefaultWork = 10'000'000;  // 2.5 x 10^8 steps
// Half for the search, half for the beams (5 x 10^8 steps each).
inline constexpr int64_t kOptimalDefaultWork = 100'000'000;
// "window": this much per op, at least kWindowMinWork.
inline constexpr int64_t kWindowWorkPerOp = 2'500;
inline constexpr int64_t kWindowMinWork = 50'000'000;

// "window"'s work on `graph` without a limit.
inline int64_t WindowDefaultWork(const Graph& graph) {
  return std::max(kWindowMinWork,
                  kWindowWorkPerOp * static_cast<int64_t>(graph.ops.size()));
}

// Whether `effort` sets a limit: a work limit, a time limit or a deadline.
inline bool HasLimit(const PlanOptions& effort) {
  return effort.work_limit > 0 ||
         effort.time_limit != absl::InfiniteDuration() ||
         effort.deadline != absl::InfiniteFuture();
}

// `effort` granting `default_work` units when it sets neither a work limit
// nor a time limit (its deadline, if any, still applies).
inline PlanOptions WithDefaultWork(const PlanOptions& effort,
                                   int64_t default_work) {
  PlanOptions resolved = effort;
  if (resolved.work_limit <= 0 &&
      resolved.time_limit == absl::InfiniteDuration()) {
    resolved.work_limit = default_work;
  }
  return resolved;
}

// The effort of a part of `budget`'s computation: `default_work` units when
// `limited` is false; else the smaller of it and `share` of the work left,
// within the budget's deadline.
inline PlanOptions PartEffort(const Budget& budget, bool limited,
                              int64_t default_work, double share) {
  PlanOptions effort;
  effort.work_limit = default_work;
  if (!limited) return effort;
  const double left =
      static_cast<double>(budget.work_limit() - budget.work_done());
  const auto part = static_cast<int64_t>(std::max(0.0, left * share));
  effort.work_limit = std::max<int64_t>(1, std::min(default_work, part));
  effort.deadline = budget.deadline();
  return effort;
}

// `units` work units as steps at `rate` a unit, without overflow.
inline int64_t StepsOf(int64_t units, int64_t rate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 64;
  return std::min(units, kMax / rate) * rate;
}

// Steps counted against a Budget at `rate` a unit. The caller keeps the
// running total of its steps and passes it in.
class StepMeter {
 public:
  StepMeter(Budget& budget, int64_t rate)
      : budget_(budget), rate_(rate), start_(budget.work_done()) {}

  // The steps the budget's work left when the meter started allows.
  int64_t max_steps() const {
    return StepsOf(std::max<int64_t>(0, budget_.work_limit() - start_), rate_);
  }
  // Counts `steps` (the running total); true once the deadline has passed
  // (the clock is read once per Budget::kClockWork units).
  bool OutOfTime(int64_t steps) {
    Count(steps / rate_);
    return budget_.OutOfTime();
  }
  // Counts `steps` in full, rounded up to whole units.
  void Finish(int64_t steps) { Count((steps + rate_ - 1) / rate_); }

 private:
  void Count(int64_t units) {
    const int64_t done = budget_.work_done() - start_;
    if (units > done) budget_.Tick(units - done);
  }

  Budget& budget_;
  int64_t rate_;
  int64_t start_;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_ORDER_ORDER_EFFORT_H_
