// The planner interface.
//
//   * Planner: Solve(problem, options) -> Plan, deterministic and verified.
//   * PlanOptions: what a user sets for any planner (budget, seed, threads).
//   * PlannerOption: how a planner declares its own options (name, type,
//     default, meaning), checked in one place. The registry that finds
//     planners by name is memplan/registry.h:
//       CreatePlanner("exact", {{"symmetry", "false"}, {"start_share", "0.2"}})

#ifndef MEMPLAN_PLANNER_H_
#define MEMPLAN_PLANNER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "memplan/types.h"

namespace memplan {

// A plan smaller than any before it in one Solve, as PlanOptions::progress
// reports it.
struct Progress {
  Bytes peak = 0;            // its peak, bytes over all pools
  std::string_view planner;  // the planner (or member of best) that found it
};

struct PlanOptions {
  // Wall-clock limit of one Solve, from its start.
  //   * Infinite (the default): no planner reads the clock; the same problem
  //     and options give the same plan on any machine, idle or busy, and the
  //     counted work alone bounds the effort.
  //   * Finite: results depend on the machine's speed and load. A search cut
  //     short returns its best plan so far (not proven optimal; exact and cp
  //     at worst their start); a one-pass greedy still going keeps what
  //     it placed and packs the rest (counter cut_by_time_limit; the naive
  //     plan only when even packing has no time); hill_climb before one
  //     pass returns DeadlineExceeded.
  //   * Set-up that cannot stop halfway is not begun when the limit leaves
  //     it no time, so a planner returns within about the limit.
  absl::Duration time_limit = absl::InfiniteDuration();
  // An absolute deadline (the earlier of it and the time limit applies).
  // A caller sets it to give several solves one wall-clock end (a batch of
  // inputs against one deadline); compositions (memplan/compose.h) set it
  // to hand a part the rest of their own time. Like a time limit, it makes
  // results depend on the machine's speed.
  absl::Time deadline = absl::InfiniteFuture();
  // Counted effort of every planner, in work units (about kWorkPerSecond
  // of them per second on a typical core):
  //   * the search planners (hill_climb, best, exact, cp) search for as
  //     long as it lasts;
  //   * a one-pass heuristic whose pass would cost more keeps what it
  //     placed and packs the rest above (counter cut_by_work_limit), so
  //     the limit bounds every planner at any size and density;
  //   * 0: kWorkPerSecond per second of a finite time limit, else
  //     kDefaultWorkLimit.
  int64_t work_limit = 0;
  // Seed of every random choice, so that the same input gives the same plan.
  uint64_t seed = 0;
  // Worker threads for planners that can use them.
  int threads = 1;
  // Counted patience of a search (hill_climb, and exact when minimising):
  // it stops once it has spent this many work units since its last smaller
  // plan, and at least four times as many as it spent before it, so that a
  // search runs only while it still pays. 0: the work limit alone. best
  // sets it (its option `patience`).
  int64_t patience = 0;
  // Called on the solving thread with each plan smaller than any before in
  // this Solve (best: once per smaller peak, whichever member found it; a
  // search as it finds one). For display only: it reads nothing the
  // planner uses, so it cannot change the plan. Empty: nothing reported.
  std::function<void(const Progress&)> progress;
};

// Work units a typical core does in a second (obstacles examined by the gap
// searches, or their equivalent in search nodes).
inline constexpr int64_t kWorkPerSecond = 40'000'000;
// The counted effort without a time limit or work limit: what ten seconds
// of work cost on a typical core, enough for `best` to fit every bundled
// MiniMalloc instance it can fit at all.
inline constexpr int64_t kDefaultWorkLimit = 10 * kWorkPerSecond;

// The work limit `options` grants (see PlanOptions::work_limit).
int64_t WorkLimit(const PlanOptions& options);

// A planner places every buffer of a whole Problem at once.
//   * Deterministic: the same problem and options give the same plan.
//   * Respects pools (in preference order), capacities, alignment, allowed
//     pools, fixed placements and explicit conflicts.
//   * A buffer that fits nowhere is ResourceExhausted naming the buffer, its
//     size and lifetime, and the pools' usage at that time.
//   * Honours the budget of its PlanOptions: it counts its work in work
//     units against WorkLimit(options) and stops at the time limit or
//     deadline when one is set. One unit for every planner; a planner's
//     share of a composition's budget is an option of the composition.
//   * Never returns a plan the verifier rejects.
class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string_view name() const = 0;
  virtual absl::StatusOr<Plan> Solve(const Problem& problem,
                                     const PlanOptions& options) const = 0;
};

// What a planner does with its budget.
enum class PlannerKind {
  kHeuristic,  // one pass: the same work whatever the budget, unless the
               // pass costs the whole work limit (then the naive plan)
  kSearch,     // improves its plan for as long as the budget lasts
  kExact,      // a complete search: proves optimality or infeasibility
               // where it finishes (within the budget)
};

// How its cost grows with the problem, for tools that size their inputs.
enum class PlannerCost {
  kLight,     // about O(n log n + overlapping pairs): 10^6 buffers in seconds
  kBudgeted,  // up to its work budget; about 10^4 buffers at the default
  kModel,     // a model or search state per conflicting pair: about 10^3
};

// The type of a planner's own option. Values are given as text and parsed
// by the registry: kBool "true" or "false"; kInt a decimal integer; kDouble
// a decimal number; kEnum one of the option's `choices`.
enum class OptionType { kBool, kInt, kDouble, kEnum };

// "bool", "int", "double" or "enum".
std::string_view OptionTypeName(OptionType type);

// One option a planner declares in its registry entry.
struct PlannerOption {
  std::string name;
  OptionType type = OptionType::kBool;
  std::string default_value;         // as text, parsed like a given value
  std::string description;           // one line: what it means
  std::vector<std::string> choices;  // kEnum: the valid values
  // kInt and kDouble: the valid range, inclusive.
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
};

// Declarations for registry tables: the default written as the registry
// reads it (a double with up to 6 significant digits).
PlannerOption BoolOption(std::string name, bool default_value,
                         std::string description);
PlannerOption IntOption(std::string name, int64_t default_value,
                        std::string description,
                        double min = -std::numeric_limits<double>::infinity(),
                        double max = std::numeric_limits<double>::infinity());
PlannerOption DoubleOption(
    std::string name, double default_value, std::string description,
    double min = -std::numeric_limits<double>::infinity(),
    double max = std::numeric_limits<double>::infinity());
PlannerOption EnumOption(std::string name, std::string default_value,
                         std::vector<std::string> choices,
                         std::string description);

// A planner's options as a user gives them: NAME -> VALUE, as text
// (`memplan plan --option NAME=VALUE`, `memplan.plan(..., options={...})`).
using PlannerOptions = std::map<std::string, std::string>;

// A planner's options once the registry has checked them: every declared
// option, given or default, parsed by its declared type. What a factory
// reads. Asking for a name the planner does not declare, or under another
// type, is a bug of the factory (an assert; the type's zero in release).
class OptionValues {
 public:
  using Value = std::variant<bool, int64_t, double, std::string>;

  bool Bool(std::string_view name) const;
  int64_t Int(std::string_view name) const;
  double Double(std::string_view name) const;
  const std::string& Enum(std::string_view name) const;

  void Set(std::string name, Value value) {
    values_[std::move(name)] = std::move(value);
  }

 private:
  const Value* Find(std::string_view name) const;
  std::map<std::string, Value, std::less<>> values_;
};

}  // namespace memplan

#endif  // MEMPLAN_PLANNER_H_
