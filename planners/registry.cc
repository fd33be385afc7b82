// The registry: one explicit table of the core's planners, the one place
// where they are composed, and the planners that optional components add
// through RegisterPlanner() (a static library drops object files nobody
// references, so a component's target links its registering object whole;
// see the memplan::cp target in CMakeLists.txt).

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "memplan/compose.h"
#include "planners.h"
#include "memplan/planner.h"
#include "memplan/planners/caffe2.h"
#include "memplan/planners/exact.h"
#include "memplan/planners/greedy_by_size.h"
#include "memplan/planners/hill_climb.h"

namespace memplan {
namespace {

// The work of best's quick try for a plan at the lower bound: a sixteenth
// of the default budget, 2.5x10^7 units (somas_resnet50's plan at its lower
// bound takes 23k nodes of 1042 buffers, 7x10^6 units).
constexpr int64_t kLowerBoundTryWork = kDefaultWorkLimit / 16;

std::unique_ptr<Planner> Best() {
  // The greedy placements. Dense problems, which afford few passes, run
  // the first few of the same with size classes first: there they are as
  // tight or tighter and placed faster (10^6 dense training-like buffers:
  // at the lower bound in 3.8 s, by size in 23 s; the trace S_1: 1.0005x,
  // by size 1.0158x).
  const std::vector<GreedyOptions> greedy = {
      {.order = PlacementOrder::kSize, .fit = Fit::kBest},
      {.order = PlacementOrder::kSizeClass, .fit = Fit::kBest},
      {.order = PlacementOrder::kSize, .fit = Fit::kFirst},
      {.order = PlacementOrder::kSizeThenId, .fit = Fit::kFirst},
      {.order = PlacementOrder::kArea, .fit = Fit::kBest},
      {.order = PlacementOrder::kArea, .fit = Fit::kFirst},
      {.order = PlacementOrder::kLifetime, .fit = Fit::kBest},
      {.order = PlacementOrder::kLifetime, .fit = Fit::kFirst}};
  std::vector<GreedyOptions> dense_order = greedy;
  std::swap(dense_order[0], dense_order[1]);
  auto planners = [](const std::vector<GreedyOptions>& options) {
    std::vector<std::unique_ptr<Planner>> out;
    for (const GreedyOptions& o : options) out.push_back(MakeGreedyPlanner(o));
    return out;
  };
  std::vector<std::unique_ptr<SearchPlanner>> searches;
  // A quick try for a plan at the lower bound, with exact's search. Real
  // traces and most of MiniMalloc's instances have such a plan; where the
  // try fails, the searches below run as without it.
  searches.push_back(WorkCapped(MakeExactPlanner({.lower_bound_only = true}),
                                kLowerBoundTryWork));
  searches.push_back(MakeHillClimbPlanner({}));
  // Below the best plan so far, with as many nodes as the budget pays for:
  // what fits MiniMalloc's challenging instances at their lower bound.
  searches.push_back(MakeExactPlanner({}));
  return ChooseBest("best", planners(greedy), std::move(searches),
                    planners(dense_order));
}

// The heuristic start's share of the budget of exact: its search needs most
// of it. The start's work is also capped at what the default budget gives it
// (the start is best, which stops early where it proves its plan), so that a
// longer time limit goes to exact's own search: proving MiniMalloc's C takes
// as long at 60 s as at 10 s. (cp, an optional component, composes itself
// in planners/cp.cc.)
constexpr double kExactStartShare = 0.1;
constexpr int64_t kExactStartWork = kDefaultWorkLimit / 10;

std::unique_ptr<Planner> Exact(std::unique_ptr<SearchPlanner> search) {
  return WarmStarted(std::move(search), internal::MakeHeuristicStart(),
                     kExactStartShare, kExactStartWork);
}

struct Entry {
  PlannerInfo info;
  std::unique_ptr<Planner> (*make)();
  // Entries built around a search planner: the same composition around a
  // caller's one (CreatePlanner(name, search)).
  std::unique_ptr<Planner> (*around)(std::unique_ptr<SearchPlanner>) = nullptr;
};

// Keep the order: cheapest first; the comparison tables follow it.
const std::vector<Entry>& Entries() {
  using enum PlannerKind;
  using enum PlannerCost;
  static const std::vector<Entry>* entries = new std::vector<Entry>{
      {{"naive", "every buffer its own bytes, one after another (no reuse)",
        kHeuristic, kLight},
       [] { return internal::MakeNaivePlanner(); }},
      {{"greedy_by_size",
        "largest first, each in the smallest gap that fits (Pisarchyk & Lee "
        "2020)",
        kHeuristic, kLight},
       [] { return MakeGreedyPlanner({}); }},
      {{"first_fit", "largest first, each at the lowest offset that fits",
        kHeuristic, kLight},
       [] { return internal::MakeFirstFitPlanner(); }},
      {{"position_greedy",
        "largest first (ties in buffer order), jumping past overlapping "
        "buffers",
        kHeuristic, kLight},
       [] { return internal::MakePositionGreedyPlanner(); }},
      {{"caffe2_greedy",
        "memonger's greedy: shared objects by last use, closest size first",
        kHeuristic, kLight},
       [] { return MakeCaffe2GreedyPlanner({}); }},
      {{"caffe2_dp",
        "memonger's dynamic program over shared objects, budgeted; never "
        "worse than caffe2_greedy",
        kSearch, kBudgeted},
       [] { return MakeCaffe2DpPlanner({}); }},
      {{"hill_climb",
        "seeded search over placement orders around the peak, from the best "
        "greedy",
        kSearch, kBudgeted},
       []() -> std::unique_ptr<Planner> { return MakeHillClimbPlanner({}); }},
      {{"best",
        "the smallest plan of the greedy placements (size, size class, area "
        "and lifetime orders, best and first fit; position_greedy), a short "
        "exact search at the lower bound, hill_climb, then exact's search "
        "below it",
        kSearch, kBudgeted},
       &Best},
      {{"exact",
        "branch-and-bound over canonical placements from best's plan; proves "
        "feasibility under a capacity or the minimum peak",
        kExact, kModel},
       [] { return Exact(MakeExactPlanner({})); }, &Exact},
  };
  return *entries;
}

// Planners of linked components, after the core's, in registration order.
// Registration usually runs during static initialisation, so the list is a
// function-local static (initialised on first use) behind a mutex.
struct AddedEntry {
  std::string name;
  std::string description;
  Entry entry;  // its info's strings view the two above
};
struct AddedPlanners {
  std::mutex mutex;
  std::deque<AddedEntry> entries;  // a deque keeps the strings where they are
};
AddedPlanners& Added() {  // never destroyed: used by static initialisers
  static AddedPlanners* added = new AddedPlanners;
  return *added;
}

// Every entry, the core's then the components', in the registry's order.
// Entries are never removed, so the pointers stay valid.
std::vector<const Entry*> AllEntries() {
  std::vector<const Entry*> all;
  for (const Entry& e : Entries()) all.push_back(&e);
  AddedPlanners& added = Added();
  std::lock_guard<std::mutex> lock(added.mutex);
  for (const AddedEntry& a : added.entries) all.push_back(&a.entry);
  return all;
}

std::string ValidNames() {
  std::string valid;
  for (const Entry* e : AllEntries()) {
    absl::StrAppend(&valid, valid.empty() ? "" : ", ", std::string(e->info.name));
  }
  return valid;
}

const Entry* Find(std::string_view name) {
  for (const Entry* e : AllEntries()) {
    if (e->info.name == name) return e;
  }
  return nullptr;
}

absl::Status UnknownPlanner(std::string_view name) {
  return absl::NotFoundError(absl::StrCat("unknown planner \"",
                                          std::string(name),
                                          "\"; valid planners: ", ValidNames()));
}

}  // namespace

namespace internal {

std::unique_ptr<Planner> MakeHeuristicStart() {
  return WithFallback(Best(), WithFallback(MakeGreedyPlanner({}),
                                           internal::MakeNaivePlanner()));
}

}  // namespace internal

absl::Status RegisterPlanner(
    const PlannerInfo& info, std::unique_ptr<Planner> (*make)(),
    std::unique_ptr<Planner> (*around)(std::unique_ptr<SearchPlanner>)) {
  if (info.name.empty() || make == nullptr) {
    return absl::InvalidArgumentError(
        "RegisterPlanner needs a name and a factory");
  }
  AddedPlanners& added = Added();
  std::lock_guard<std::mutex> lock(added.mutex);
  bool taken = false;
  for (const Entry& e : Entries()) taken = taken || e.info.name == info.name;
  for (const AddedEntry& a : added.entries) taken = taken || a.name == info.name;
  if (taken) {
    return absl::AlreadyExistsError(absl::StrCat(
        "a planner named \"", std::string(info.name),
        "\" is already registered"));
  }
  AddedEntry& a = added.entries.emplace_back();
  a.name = std::string(info.name);
  a.description = std::string(info.description);
  a.entry = {{a.name, a.description, info.kind, info.cost}, make, around};
  return absl::OkStatus();
}

std::vector<PlannerInfo> RegisteredPlanners() {
  std::vector<PlannerInfo> infos;
  for (const Entry* e : AllEntries()) infos.push_back(e->info);
  return infos;
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(std::string_view name) {
  const Entry* entry = Find(name);
  if (entry == nullptr) return UnknownPlanner(name);
  return entry->make();
}

absl::StatusOr<std::unique_ptr<Planner>> CreatePlanner(
    std::string_view name, std::unique_ptr<SearchPlanner> search) {
  const Entry* entry = Find(name);
  if (entry == nullptr) return UnknownPlanner(name);
  if (entry->around == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "planner \"", std::string(name), "\" is not built around a search"));
  }
  return entry->around(std::move(search));
}

std::string_view DefaultPlannerName() { return "best"; }

}  // namespace memplan
