// The registry entry of the optional cpsat planner: its options and its
// composition (the search from the heuristic start).

#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cpsat.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/registry.h"
#include "planners.h"

namespace memplan {
namespace {

// The heuristic start's share of the work limit (as cp's).
constexpr double kCpsatStartShare = 0.5;

std::vector<PlannerOption> CpsatOptionList() {
  const CpsatOptions d;
  return {
      IntOption("threads", d.threads,
                "worker threads (0: PlanOptions' threads; more than 1 is not "
                "deterministic)",
                0, 256),
      IntOption("max_buffers", d.max_buffers,
                "above this many buffers with bytes no model is built (0: no "
                "bound)",
                0),
      IntOption("max_pairs_per_second", d.max_pairs_per_second,
                "above this many pairs of buffers alive together (per pool) "
                "per CP-SAT deterministic second of the budget no model is "
                "built (0: no bound)",
                0),
      BoolOption("warm_start", true,
                 "start from best's plan (false: the search alone)"),
      DoubleOption("start_share", kCpsatStartShare,
                   "the warm start's share of the work limit", 0, 1),
  };
}

std::unique_ptr<Planner> RegisteredCpsat(const OptionValues& values) {
  CpsatOptions options;
  options.threads = static_cast<int>(values.Int("threads"));
  options.max_buffers = values.Int("max_buffers");
  options.max_pairs_per_second = values.Int("max_pairs_per_second");
  std::unique_ptr<SearchPlanner> search = MakeCpsatPlanner(options);
  if (!values.Bool("warm_start")) return search;
  return WarmStarted(std::move(search),
                     internal::MakeHeuristicStart(MemberWork::kShared),
                     values.Double("start_share"));
}

}  // namespace

// Explicit, not a static initialiser, as RegisterCpPlanner().
absl::Status RegisterCpsatPlanner() {
  if (CpsatDefaultLibrary().empty()) return absl::OkStatus();
  static const absl::Status registered = RegisterPlanner(
      {"cpsat",
       "the seed notebook's model with OR-tools' CP-SAT, from best's plan",
       PlannerKind::kExact, PlannerCost::kModel, CpsatOptionList()},
      &RegisteredCpsat);
  return registered;
}

}  // namespace memplan
