// The budget of one Solve, as planners count it (not public API: a user
// sets PlanOptions::work_limit and time_limit, memplan/planner.h).
//
//   * One unit of effort for every planner: work units, about
//     kWorkPerSecond of them a second on a typical core (obstacles examined
//     by the gap searches; a search node of exact costs a quarter of a unit
//     per buffer plus 32, one of caffe2_dp 256, one of cp 8 per buffer plus
//     one per conflicting pair).
//   * One budget: WorkLimit(options) units and, when the caller set a time
//     limit or deadline, the clock. A composition hands its parts shares of
//     it (Part(), and the shares its own options declare).

#ifndef MEMPLAN_BASE_BUDGET_H_
#define MEMPLAN_BASE_BUDGET_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/time/time.h"
#include "memplan/planner.h"

namespace memplan {

class Budget;

namespace internal {

// What the budgets on this thread tick while a meter lives: the work a
// Solve counted in all, whichever budgets it split its effort into (work
// handed from one budget to another, Budget::Carry, counts once). For the
// tests and the benchmark, which compare it with the Solve's work limit,
// and for compositions that share one limit among their members; a
// planner's work on other threads is not seen (one thread by default).
// Meters nest: each counts from its own start.
class WorkMeter {
 public:
  WorkMeter() : start_(ticked_) {}
  WorkMeter(const WorkMeter&) = delete;
  WorkMeter& operator=(const WorkMeter&) = delete;

  int64_t counted() const { return ticked_ - start_; }

 private:
  friend class ::memplan::Budget;
  // Every work unit ticked on this thread.
  static inline constinit thread_local int64_t ticked_ = 0;
  int64_t start_;
};

}  // namespace internal

// The budget of one Solve: counted work and, when the caller set a time
// limit or deadline, the clock. Planners Tick() the work they do and stop
// when Expired(); a one-pass heuristic whose pass spends the whole count
// (WorkSpent()) gives it up for the naive plan, which is linear. The clock
// is read at most once per kClockWork units ticked, so checking is cheap at
// any rate.
class Budget {
 public:
  // Starts now: WorkLimit(options), and the earlier of options.deadline and
  // now + options.time_limit.
  explicit Budget(const PlanOptions& options);

  void Tick(int64_t work = 1) {
    work_done_ += work;
    internal::WorkMeter::ticked_ += work;
  }
  // Ticks work another budget of the same Solve counted already: this
  // budget's count grows, the Solve's (internal::WorkMeter) does not.
  void Carry(int64_t work) { work_done_ += work; }
  // The counted work is spent or the deadline has passed.
  bool Expired() { return WorkSpent() || OutOfTime(); }
  // The counted work is spent (the clock is not read).
  bool WorkSpent() const { return work_done_ >= work_limit_; }
  // The deadline has passed (never, without one); reads the clock once per
  // kClockWork units ticked.
  bool OutOfTime();
  // The same, reading the clock now: for checks between the parts of a
  // composition, which tick nothing.
  bool OutOfTimeNow() const;

  // A search found a plan smaller than any before, of `peak` bytes: its
  // patience counts from here, and the options' progress callback (if any)
  // hears of it, naming `planner`.
  void Improved(Bytes peak, std::string_view planner);
  // The options' patience is spent: that many work units, and at least
  // kPatienceGrowth times as many as before the last Improved(), since it
  // (or since the start). Never without patience. The clock is not read.
  bool OutOfPatience() const;
  // MiniMalloc's D: exact's gains come up to 4 times the work before them
  // apart (1.0810x at 10^7 work units, 1.0654x at 4x10^7, 1.0218x at 4x10^8).
  static constexpr int64_t kPatienceGrowth = 4;

  int64_t work_limit() const { return work_limit_; }
  int64_t work_done() const { return work_done_; }
  // absl::InfiniteFuture() without one.
  absl::Time deadline() const { return deadline_; }

  // Options for a part of this Solve: `fraction` of the work limit and of
  // the time limit, within this budget's deadline; seed and threads as
  // `options`.
  PlanOptions Part(const PlanOptions& options, double fraction) const;

  // Work between two readings of the clock: about a millisecond.
  static constexpr int64_t kClockWork = 1 << 16;

 private:
  int64_t work_limit_;
  int64_t work_done_ = 0;
  int64_t patience_;
  int64_t improved_at_ = 0;  // work_done_ at the last Improved()
  std::function<void(const Progress&)> progress_;
  absl::Time deadline_;
  int64_t clock_read_at_ = 0;  // work_done_ at the last reading
  bool out_of_time_ = false;
};

}  // namespace memplan

#endif  // MEMPLAN_BASE_BUDGET_H_
