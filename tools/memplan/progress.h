// Progress of one planning run on stderr, for a person waiting on it.

#ifndef MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_
#define MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "absl/time/time.h"
#include "flags.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/symbolic_memplan.h"

namespace memplan::tool {

// Whether plan and report print progress: not with --quiet; with
// --progress, or when stderr is a terminal.
bool ProgressWanted(const Arguments& args);

// For the symbolic planner's stage lines (SymbolicPlanMemoryOptions::
// progress): each printed on stderr with the time elapsed since this call,
// once a second has passed (a quick run stays silent); empty when not
// `enabled`. The clock is read for the lines only.
std::function<void(std::string_view)> StageLines(bool enabled);

// Lines on stderr while a planner runs, from a thread of their own: nothing
// in the first second (a quick run stays silent); then the best plan so
// far, a line for each smaller plan, and one every 10 s while none comes.
// A line: elapsed time, the best peak and its ratio to the lower bound,
// and the planner that found it. The clock is read for these lines only;
// the callback just records what the planner reports, so the plan is the
// same with or without them.
class ProgressLines {
 public:
  // Prints nothing unless `enabled`.
  ProgressLines(const Problem& problem, bool enabled);
  // Stops the thread (the last line stays as it was).
  ~ProgressLines();
  ProgressLines(const ProgressLines&) = delete;
  ProgressLines& operator=(const ProgressLines&) = delete;

  // For PlanOptions::progress: empty when not enabled.
  std::function<void(const Progress&)> Callback();

 private:
  void Loop();
  void Print(absl::Duration elapsed);  // with mutex_ held

  const Bytes lower_bound_;  // 0 with several pools: no ratio
  const absl::Time start_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Bytes> peak_;  // the best so far, with its planner
  std::string planner_;
  bool fresh_ = false;  // a smaller plan not yet printed
  bool done_ = false;
  std::thread thread_;  // last: starts after the members above
};

}  // namespace memplan::tool

#endif  // MEMPLAN_TOOLS_MEMPLAN_PROGRESS_H_
