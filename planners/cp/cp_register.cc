// The registry entry of the optional cp planner: its options and its
// composition (the search from the heuristic start).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cp.h"
#include "memplan/compose.h"
#include "memplan/planner.h"
#include "memplan/registry.h"
#include "planners.h"

namespace memplan {
namespace {

// The registered cp: the search from the heuristic start, which gets this
// share of the budget by default (its option start_share; its plan is what
// cp returns on the problems too large to prove).
constexpr double kCpStartShare = 0.5;

std::vector<PlannerOption> CpOptionList() {
  const CpOptions d;
  return {
      IntOption("threads", d.threads,
                "worker threads (0: PlanOptions' threads; more than 1 is not "
                "deterministic)",
                0, 1024),
      BoolOption("use_nooverlap", d.use_nooverlap,
                 "non-overlap as Gecode's nooverlap of rectangles"),
      BoolOption("redundant_cliques", d.redundant_cliques,
                 "a unary resource per set of buffers alive together"),
      BoolOption("dominance", d.dominance,
                 "the postpone rule and symmetry breaking of the brancher"),
      BoolOption("lowest_offset_first", d.lowest_offset_first,
                 "branch on the open buffer with the lowest offset first"),
      IntOption("max_conflicting_pairs", d.max_conflicting_pairs,
                "above this many conflicting pairs no model is built (0: no "
                "bound)",
                0),
      IntOption("max_clique_members", d.max_clique_members,
                "bound on the redundant cliques' summed sizes", 0),
      BoolOption("warm_start", true,
                 "start from best's plan (false: the search alone)"),
      DoubleOption("start_share", kCpStartShare,
                   "the warm start's share of the work limit", 0, 1),
  };
}

std::unique_ptr<Planner> RegisteredCp(const OptionValues& values) {
  CpOptions options;
  options.threads = static_cast<int>(values.Int("threads"));
  options.use_nooverlap = values.Bool("use_nooverlap");
  options.redundant_cliques = values.Bool("redundant_cliques");
  options.dominance = values.Bool("dominance");
  options.lowest_offset_first = values.Bool("lowest_offset_first");
  options.max_conflicting_pairs = values.Int("max_conflicting_pairs");
  options.max_clique_members = values.Int("max_clique_members");
  std::unique_ptr<SearchPlanner> search = MakeCpPlanner(options);
  if (!values.Bool("warm_start")) return search;
  return WarmStarted(std::move(search),
                     internal::MakeHeuristicStart(MemberWork::kShared),
                     values.Double("start_share"));
}

}  // namespace

// Explicit, not a static initialiser: a static library drops the objects
// nobody references, and a registration that depends on how the program is
// linked fails silently. tests/cp_registration_test.cc checks that linking
// alone registers nothing and that the call does.
absl::Status RegisterCpPlanner() {
  // Initialised once, thread-safely; later calls return the same status.
  static const absl::Status registered = RegisterPlanner(
      {"cp",
       "constraint programming (Gecode) from best's plan; proves the optimum "
       "of small problems",
       PlannerKind::kExact, PlannerCost::kModel, CpOptionList()},
      &RegisteredCp);
  return registered;
}

}  // namespace memplan
