// Progress on stderr (see progress.h).

#include "progress.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "memplan/registry.h"

namespace memplan::tool {
namespace {

bool StderrIsTerminal() {
  if (const char* forced = std::getenv("MEMPLAN_PROGRESS_TERMINAL")) {
    return std::string_view(forced) == "1";
  }
  return isatty(STDERR_FILENO) == 1;
}

// A counter of the plan naming a stop (a planner may count why it stopped).
std::optional<std::string> CountedStop(const Plan& plan) {
  for (const auto& [name, value] : plan.counters) {
    if (value == 0) continue;
    if (absl::StrContains(name, "time_limit") ||
        absl::StrContains(name, "deadline")) {
      return "time limit";
    }
    if (absl::StrContains(name, "work_limit") || name == "pass_abandoned") {
      return "work limit";
    }
    if (absl::StrContains(name, "patience")) return "patience";
  }
  return std::nullopt;
}

// The value of `info`'s option `name` in `given` (its default when not
// given), or nullopt when it has none.
std::optional<double> OptionValue(const PlannerInfo& info,
                                  const PlannerOptions& given,
                                  std::string_view name) {
  for (const PlannerOption& option : info.options) {
    if (option.name != name) continue;
    auto it = given.find(std::string(name));
    double value = 0;
    if (!absl::SimpleAtod(
            it != given.end() ? it->second : std::string(option.default_value),
            &value)) {
      return std::nullopt;
    }
    return value;
  }
  return std::nullopt;
}

// By the kind and options of `planner` (the default when empty): a
// heuristic is done after its pass; a search stops close enough to the
// bound (best's option enough), on its patience, else on its work limit.
std::string SearchStop(const Plan& plan, const std::string& planner,
                       const PlannerOptions& planner_options,
                       const PlanOptions& limits) {
  const std::string name =
      planner.empty() ? std::string(DefaultPlannerName()) : planner;
  for (const PlannerInfo& info : RegisteredPlanners()) {
    if (info.name != name) continue;
    if (info.kind == PlannerKind::kHeuristic) return "done";
    const std::optional<double> enough =
        OptionValue(info, planner_options, "enough");
    if (enough.has_value() && *enough > 0 && plan.pool_used.size() == 1 &&
        static_cast<double>(plan.peak) <=
            *enough * static_cast<double>(plan.lower_bound)) {
      return absl::StrFormat("within %gx of the lower bound (option enough)",
                             *enough);
    }
    const std::optional<double> patience =
        OptionValue(info, planner_options, "patience");
    if (limits.patience > 0 || (patience.has_value() && *patience > 0)) {
      return "patience (its searches stopped finding smaller plans)";
    }
    return "work limit";
  }
  return "done";
}

bool PastTimeLimit(const PlanOptions& limits, absl::Duration elapsed) {
  // The planners stop within about the limit; a run that reached 95 % of
  // it was stopped by it.
  return limits.time_limit != absl::InfiniteDuration() &&
         elapsed >= limits.time_limit * 0.95;
}

}  // namespace

std::optional<ProgressSettings> ProgressWanted(const Arguments& args) {
  if (absl::GetFlag(FLAGS_quiet)) return std::nullopt;
  const ProgressMode mode = absl::GetFlag(FLAGS_progress);
  if (mode == ProgressMode::kNever) return std::nullopt;
  ProgressSettings settings;
  settings.style =
      StderrIsTerminal() ? ProgressStyle::kInPlace : ProgressStyle::kLines;
  settings.first = settings.style == ProgressStyle::kInPlace
                       ? ProgressLine::kInPlaceFirst
                       : ProgressLine::kLinesFirst;
  if (mode == ProgressMode::kAlways) settings.first = absl::ZeroDuration();
  return settings;
}

std::string StopReason(const absl::StatusOr<Plan>& plan,
                       const std::string& planner,
                       const PlannerOptions& planner_options,
                       const PlanOptions& limits, absl::Duration elapsed) {
  if (!plan.ok()) return "failed";
  if (plan->proven_optimal) return "proven optimal";
  if (plan->pool_used.size() == 1 && plan->peak == plan->lower_bound) {
    return "at the lower bound";
  }
  if (std::optional<std::string> counted = CountedStop(*plan)) {
    return *counted;
  }
  if (PastTimeLimit(limits, elapsed)) return "time limit";
  // A search that counts its work (hill_climb) stopped on its own below it.
  if (auto work = plan->counters.find("work"); work != plan->counters.end()) {
    return work->second >= WorkLimit(limits) ? "work limit"
                                             : "no smaller plan in its last "
                                               "rounds";
  }
  return SearchStop(*plan, planner, planner_options, limits);
}

std::string SymbolicStopReason(bool ok, const PlanOptions& limits,
                               absl::Duration elapsed) {
  if (!ok) return "failed";
  return PastTimeLimit(limits, elapsed) ? "time limit" : "done";
}

ProgressLines::ProgressLines(const std::optional<ProgressSettings>& settings,
                             Bytes lower_bound, std::string running)
    : start_(absl::Now()) {
  if (!settings.has_value()) return;
  line_.emplace(settings->style, settings->first, lower_bound,
                std::move(running));
  thread_ = std::thread([this] { Loop(); });
}

// A run left without Finish() (an error on the way) still ends the line.
ProgressLines::~ProgressLines() { Finish("failed"); }

void ProgressLines::Stop() {
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
    std::lock_guard<std::mutex> lock(mutex_);
    line_->Improved(progress.peak, progress.planner);
  };
}

std::function<void(std::string_view)> ProgressLines::StageCallback() {
  if (!thread_.joinable()) return nullptr;
  return [this](std::string_view stage) {
    std::lock_guard<std::mutex> lock(mutex_);
    line_->Running(stage);
  };
}

void ProgressLines::Finish(std::string_view reason) {
  if (!thread_.joinable()) return;
  Stop();
  std::cerr << line_->Final(absl::Now() - start_, reason) << std::flush;
}

void ProgressLines::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!changed_.wait_for(lock, std::chrono::milliseconds(100),
                            [this] { return done_; })) {
    const std::string text = line_->Tick(absl::Now() - start_);
    if (!text.empty()) std::cerr << text << std::flush;
  }
}

absl::StatusOr<Plan> PlanShowingProgress(const Arguments& args,
                                         const Problem& problem,
                                         PlanMemoryOptions options) {
  const absl::Time start = absl::Now();
  // A sum over several pools is not compared with the one-pool bound.
  ProgressLines progress(
      ProgressWanted(args), problem.pools.size() == 1 ? LowerBound(problem) : 0,
      options.planner.empty() ? std::string(DefaultPlannerName())
                              : options.planner);
  options.plan.progress = progress.Callback();
  absl::StatusOr<Plan> plan = PlanMemory(problem, options);
  // A one-pass planner reports no progress: the final line shows its plan.
  if (plan.ok() && options.plan.progress) {
    options.plan.progress(
        Progress{.peak = plan->peak, .planner = plan->planner});
  }
  progress.Finish(StopReason(plan, options.planner, options.planner_options,
                             options.plan, absl::Now() - start));
  return plan;
}

}  // namespace memplan::tool
