// Progress of one planning run on stderr, for a person waiting on it: one
// line (progress_line.h), from a thread of its own.

#ifndef MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_
#define MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "flags.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/types.h"
#include "progress_line.h"

namespace memplan::tool {

// How plan and report show progress, or nullopt for none.
struct ProgressSettings {
  ProgressStyle style = ProgressStyle::kLines;
  absl::Duration first;  // silence before the first line
};

// From --progress and --quiet (which wins): never shows nothing; auto (the
// default) shows runs over a second in place when stderr is a terminal,
// else a line every 5 s for runs over 2 s; always shows every run, from
// its start. The environment variable MEMPLAN_PROGRESS_TERMINAL (1 or 0)
// says whether stderr counts as a terminal (for scripts and tests that
// capture it).
std::optional<ProgressSettings> ProgressWanted(const Arguments& args);

// Why a PlanMemory run that took `elapsed` stopped, for the final line:
// "proven optimal", "at the lower bound", "time limit", "work limit",
// "patience" (its searches stopped finding smaller plans), "done" (a
// one-pass planner), or "failed". Read from the plan (proven_optimal, its
// bound, its counters), the planner's kind and options and the limits.
std::string StopReason(const absl::StatusOr<Plan>& plan,
                       const std::string& planner,
                       const PlannerOptions& planner_options,
                       const PlanOptions& limits, absl::Duration elapsed);

// The same for a symbolic plan: "done", "time limit" or "failed".
std::string SymbolicStopReason(bool ok, const PlanOptions& limits,
                               absl::Duration elapsed);

// The line on stderr while a planner runs. The clock is read for the line
// only; the callbacks just record what the planner reports, so the plan is
// the same with or without them.
class ProgressLines {
 public:
  // Shows nothing when `settings` is nullopt. `lower_bound`: 0 for none;
  // `running`: what runs (the planner's name).
  ProgressLines(const std::optional<ProgressSettings>& settings,
                Bytes lower_bound, std::string running);
  // Stops the thread; Finish() first writes the final line.
  ~ProgressLines();
  ProgressLines(const ProgressLines&) = delete;
  ProgressLines& operator=(const ProgressLines&) = delete;

  // For PlanOptions::progress: empty when nothing is shown.
  std::function<void(const Progress&)> Callback();
  // For SymbolicPlanMemoryOptions::progress (its stages): empty when
  // nothing is shown.
  std::function<void(std::string_view)> StageCallback();
  // Stops the thread and writes the final line, saying `reason`.
  void Finish(std::string_view reason);

 private:
  void Loop();
  void Stop();

  std::optional<ProgressLine> line_;  // guarded by mutex_
  const absl::Time start_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool done_ = false;
  std::thread thread_;  // last: starts after the members above
};

// PlanMemory(problem, options) with the progress line ProgressWanted(args)
// asks for, ending in the reason the run stopped.
absl::StatusOr<Plan> PlanShowingProgress(const Arguments& args,
                                         const Problem& problem,
                                         PlanMemoryOptions options);

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_
