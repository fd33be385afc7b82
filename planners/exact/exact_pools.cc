// exact across several pools (see exact_pools.h).

#include "exact_pools.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "exact/preprocess.h"
#include "exact_part.h"
#include "memplan/planners/caffe2.h"
#include "memplan/planners/greedy_by_size.h"
#include "memplan/planners/hill_climb.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "model/problem_util.h"
#include "planners.h"

namespace memplan::internal::exact {
namespace {

constexpr PoolId kUndecided = -1;

// Of the work: the search, then the pools without a capacity.
constexpr double kSearchShare = 0.75;
// The pools without a capacity get at most this share of the work: their
// tops only break ties.
constexpr int64_t kTopsShareDivisor = 8;
// A re-packing gets at most this share of the search's work: a part where
// the fast pool is tight re-packs often.
constexpr int64_t kRepacksPerBudget = 1024;

// `a` below `b` in SpillsLess's order of the bytes alone (pool 0 aside).
bool LexLess(const std::vector<Bytes>& a, const std::vector<Bytes>& b) {
  for (size_t p = a.size(); p-- > 1;) {
    if (a[p] != b[p]) return a[p] < b[p];
  }
  return false;
}

// `buffers` alone in pool `pool`: a single-pool problem (fixed placements
// moved to its pool 0, the explicit conflicts among them kept).
Problem SubProblem(const Problem& problem, std::vector<BufferId> buffers,
                   PoolId pool) {
  std::sort(buffers.begin(), buffers.end());
  Problem sub;
  sub.name = problem.name;
  sub.pools = {problem.pools[pool]};
  for (BufferId b : buffers) {
    Buffer copy = problem.buffers[b];
    copy.pools.clear();
    if (copy.fixed.has_value()) copy.fixed->pool = 0;
    sub.buffers.push_back(std::move(copy));
  }
  auto local = [&](BufferId b) -> BufferId {
    auto it = std::lower_bound(buffers.begin(), buffers.end(), b);
    return it != buffers.end() && *it == b
               ? static_cast<BufferId>(it - buffers.begin())
               : -1;
  };
  for (const BufferConflict& c : problem.conflicts) {
    const BufferId a = local(c.a), b = local(c.b);
    if (a >= 0 && b >= 0) sub.conflicts.push_back({.a = a, .b = b});
  }
  return sub;
}

// exact's search under a capacity is complete on `sub` (exact.h): its
// ResourceExhausted is then a proof.
bool SearchComplete(const Problem& sub) {
  if (!sub.conflicts.empty()) return false;
  const Bytes unit = PlanningUnit(sub);
  for (BufferId b = 0; b < static_cast<BufferId>(sub.buffers.size()); ++b) {
    if (sub.buffers[b].fixed.has_value()) return false;
    if (AlignmentInUnits(sub, b, unit) != 1) return false;
  }
  return true;
}

enum class Packing { kFits, kNone, kUnknown };

class PoolSearch {
 public:
  PoolSearch(const Problem& problem, const ExactOptions& options,
             const PlanOptions& plan_options)
      : problem_(problem),
        options_(options),
        seed_(plan_options.seed),
        plan_options_(plan_options),
        budget_(plan_options),
        pools_(static_cast<int>(problem.pools.size())) {
    const int n = static_cast<int>(problem.buffers.size());
    pool_of_.assign(n, kUndecided);
    offset_of_.assign(n, 0);
    fixed_in_.assign(pools_, {});
    explicit_of_.assign(n, {});
    for (const BufferConflict& c : problem.conflicts) {
      explicit_of_[c.a].push_back(c.b);
      explicit_of_[c.b].push_back(c.a);
    }
    for (auto& list : explicit_of_) std::sort(list.begin(), list.end());
  }

  absl::StatusOr<Plan> Run(Incumbent& incumbent);

 private:
  bool Bounded(PoolId p) const { return problem_.pools[p].capacity > 0; }
  Bytes Size(BufferId b) const { return problem_.buffers[b].size; }
  bool Explicit(BufferId a, BufferId b) const {
    const auto& list = explicit_of_[a];
    return std::binary_search(list.begin(), list.end(), b);
  }
  bool OutOfWork() {
    return budget_.work_done() >= part_work_end_ || budget_.OutOfTime();
  }

  std::vector<Plan> Starts(Incumbent& incumbent);
  absl::Status Classify();
  std::vector<std::vector<BufferId>> Parts() const;
  bool SearchPart(const std::vector<BufferId>& part);
  absl::Status TakeStartPlacement(const std::vector<BufferId>& part,
                                  const std::vector<Plan>& starts,
                                  bool planned);
  absl::StatusOr<Plan> Finish(const std::vector<Plan>& starts, bool proven);
  void Dfs(int k);
  std::vector<Bytes> NodeBound(int k);
  Bytes Absorbable(const std::vector<BufferId>& flexible);
  Bytes MaxLoad(PoolId p, BufferId b) const;
  void SetLoad(PoolId p, BufferId b, Bytes sign);
  std::optional<Offset> FirstFit(BufferId b, PoolId p);
  Packing Repack(PoolId p, BufferId b);
  void Place(BufferId b, PoolId p, Offset at);
  void Unplace(BufferId b);
  absl::StatusOr<Plan> Compose();

  const Problem& problem_;
  const ExactOptions& options_;
  uint64_t seed_;
  const PlanOptions& plan_options_;
  Budget budget_;
  const int pools_;
  int64_t search_work_ = 0;
  int64_t repack_cap_ = 1;
  int64_t part_work_end_ = 0;  // the work done when the part must stop

  std::vector<std::vector<PoolId>> candidates_;  // per buffer: fitting pools
  std::vector<PoolId> pool_of_;
  std::vector<Offset> offset_of_;
  std::vector<std::vector<BufferId>> fixed_in_;  // per pool
  std::vector<std::vector<BufferId>> explicit_of_;
  std::vector<BufferId> searched_;  // buffers with a pool with a capacity

  // The part being searched.
  std::vector<BufferId> order_;     // largest first
  std::vector<bool> twin_of_prev_;  // same as the previous buffer of order_
  std::vector<Step> times_;         // its section boundaries
  std::vector<int> s0_, s1_;        // per buffer: sections [s0, s1)
  std::vector<std::vector<Bytes>> load_;     // per pool, per section
  std::vector<std::vector<BufferId>> here_;  // per pool: placed part buffers
  std::vector<Bytes> held_;
  std::vector<Bytes> best_held_;
  bool has_best_ = false;
  std::vector<std::pair<PoolId, Offset>> best_;  // per order_ entry
  bool stopped_ = false;

  // Over the whole solve.
  bool complete_ = true;
  int64_t nodes_ = 0;
  int64_t repacks_ = 0;
  int parts_ = 0;
};

// The incumbent and the heuristics' plans: a part of the search takes the
// one that spills least there when the search finds nothing better, so that
// exact never spills more than any of them.
std::vector<Plan> PoolSearch::Starts(Incumbent& incumbent) {
  std::vector<Plan> starts;
  if (const absl::StatusOr<Plan>& s = incumbent.Get(); s.ok())
    starts.push_back(*s);
  // Each with the whole budget, as best's members: a heuristic run on its
  // own with the same options gives the same plan, so exact never spills
  // more than it (hill_climb with a share of the work kept 561128 bytes
  // of mobilenet_v2_train in the fast pool, with the whole 811844). What
  // they cost is not taken from the search's work.
  for (Plan& plan : HeuristicPlans(problem_, plan_options_))
    starts.push_back(std::move(plan));
  return starts;
}

// The pools each buffer fits in; the fixed buffers, and the buffers whose
// pools all lack a capacity (the fastest of them), are decided here.
absl::Status PoolSearch::Classify() {
  const int n = static_cast<int>(problem_.buffers.size());
  candidates_.assign(n, {});
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem_.buffers[b];
    if (buffer.fixed.has_value()) {
      pool_of_[b] = buffer.fixed->pool;
      offset_of_[b] = buffer.fixed->offset;
      if (buffer.size > 0) fixed_in_[buffer.fixed->pool].push_back(b);
      continue;
    }
    for (PoolId p : AllowedPools(problem_, b)) {
      if (!Bounded(p) || buffer.size <= problem_.pools[p].capacity)
        candidates_[b].push_back(p);
    }
    if (candidates_[b].empty()) {
      const std::vector<Bytes> usage(pools_, 0);
      return NoFitError(problem_, b, usage);
    }
    if (buffer.size == 0) {
      pool_of_[b] = candidates_[b].front();
      continue;
    }
    const bool any_bounded =
        std::any_of(candidates_[b].begin(), candidates_[b].end(),
                    [&](PoolId p) { return Bounded(p); });
    if (any_bounded) {
      searched_.push_back(b);
    } else {
      pool_of_[b] =
          *std::min_element(candidates_[b].begin(), candidates_[b].end());
    }
  }
  return absl::OkStatus();
}

// The searched buffers cut wherever none of them crosses a point in time
// (not at all with explicit conflicts, which reach across time).
std::vector<std::vector<BufferId>> PoolSearch::Parts() const {
  std::vector<BufferId> sorted = searched_;
  std::sort(sorted.begin(), sorted.end(), [&](BufferId a, BufferId b) {
    const Lifetime& la = problem_.buffers[a].lifetime;
    const Lifetime& lb = problem_.buffers[b].lifetime;
    return la.start != lb.start ? la.start < lb.start : a < b;
  });
  std::vector<std::vector<BufferId>> parts;
  Step end = 0;
  for (BufferId b : sorted) {
    const Lifetime& l = problem_.buffers[b].lifetime;
    if (parts.empty() || (problem_.conflicts.empty() && l.start >= end)) {
      parts.emplace_back();
    }
    parts.back().push_back(b);
    end = std::max(end, l.end);
  }
  return parts;
}

absl::StatusOr<Plan> PoolSearch::Run(Incumbent& incumbent) {
  MEMPLAN_RETURN_IF_ERROR(Classify());
  const std::vector<Plan> starts = Starts(incumbent);
  search_work_ = budget_.work_done() +
                 static_cast<int64_t>(static_cast<double>(budget_.work_limit() -
                                                          budget_.work_done()) *
                                      kSearchShare);
  repack_cap_ = std::max<int64_t>(
      1, (search_work_ - budget_.work_done()) / kRepacksPerBudget);
  const std::vector<std::vector<BufferId>> parts = Parts();
  bool proven = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::vector<BufferId>& part = parts[i];
    ++parts_;
    // Each part gets its share of the work left, so that one hard part
    // leaves the others theirs.
    part_work_end_ =
        budget_.work_done() + (search_work_ - budget_.work_done()) /
                                  static_cast<int64_t>(parts.size() - i);
    const bool planned = SearchPart(part);
    const bool part_proven = complete_ && !stopped_;
    if (!planned && part_proven) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "no plan fits in the pools' capacities: the exact search proved "
          "it for the ",
          part.size(), " buffers alive over steps [", times_.front(), ", ",
          times_.back(), ")"));
    }
    proven = proven && part_proven;
    MEMPLAN_RETURN_IF_ERROR(TakeStartPlacement(part, starts, planned));
  }
  return Finish(starts, proven);
}

// The part's placement in the start that holds less in the faster pools
// than the search's (best_held_), if one does, or in the first start when
// the search found no plan. Parts share no step (nor an explicit conflict),
// so a start's placement of a part goes with the others' placements as it
// is.
absl::Status PoolSearch::TakeStartPlacement(const std::vector<BufferId>& part,
                                            const std::vector<Plan>& starts,
                                            bool planned) {
  const Plan* from = nullptr;
  std::vector<Bytes> least = best_held_;
  for (const Plan& start : starts) {
    std::vector<Bytes> held(pools_, 0);
    for (BufferId b : part) held[start.assignments[b].pool] += Size(b);
    if ((!planned && from == nullptr) || LexLess(held, least)) {
      from = &start;
      least = held;
    }
  }
  if (from != nullptr) {
    for (BufferId b : part) {
      pool_of_[b] = from->assignments[b].pool;
      offset_of_[b] = from->assignments[b].offset;
    }
  } else if (!planned) {
    return absl::DeadlineExceededError(
        "the exact planner found no plan across the pools within its "
        "budget, and no heuristic planner gave one");
  }
  return absl::OkStatus();
}

// The plan of the pools the search decided, or the start that spills less,
// with its statistics and counters.
absl::StatusOr<Plan> PoolSearch::Finish(const std::vector<Plan>& starts,
                                        bool proven) {
  const Plan* start = nullptr;
  for (const Plan& s : starts) {
    if (start == nullptr || SpillsLess(problem_, s, *start)) start = &s;
  }
  absl::StatusOr<Plan> found = Compose();
  const std::vector<Bytes> found_bytes =
      found.ok() ? PoolBytes(problem_, *found) : std::vector<Bytes>();
  if (!found.ok() && start == nullptr) return found.status();
  Plan plan =
      !found.ok() || (start != nullptr && SpillsLess(problem_, *start, *found))
          ? *start
          : *std::move(found);
  ComputePlanStatistics(problem_, plan);
  plan.planner = "exact";
  const std::vector<Bytes> bytes = PoolBytes(problem_, plan);
  // Nothing beyond the first pool: optimal, whoever proves it.
  const bool nothing_spilled = std::all_of(bytes.begin() + 1, bytes.end(),
                                           [](Bytes b) { return b == 0; });
  // Compose keeps the pools the search decided, so a plan that spills as
  // much as the search's is as proven as it.
  plan.proven_optimal =
      nothing_spilled || (proven && found.ok() && found_bytes == bytes);
  plan.counters["nodes"] = nodes_;
  plan.counters["parts"] = parts_;
  plan.counters["repacks"] = repacks_;
  return plan;
}

// Searches one part; false when it has no plan (proven when complete_ and
// not stopped_ hold).
bool PoolSearch::SearchPart(const std::vector<BufferId>& part) {
  order_ = part;
  std::sort(order_.begin(), order_.end(), [&](BufferId a, BufferId b) {
    const Lifetime& la = problem_.buffers[a].lifetime;
    const Lifetime& lb = problem_.buffers[b].lifetime;
    if (Size(a) != Size(b)) return Size(a) > Size(b);
    if (la.start != lb.start) return la.start < lb.start;
    if (la.end != lb.end) return la.end < lb.end;
    return a < b;
  });
  times_.clear();
  for (BufferId b : part) {
    times_.push_back(problem_.buffers[b].lifetime.start);
    times_.push_back(problem_.buffers[b].lifetime.end);
  }
  std::sort(times_.begin(), times_.end());
  // The fixed buffers' ends cut sections too, so that a section's load is
  // what is alive at each of its steps (two fixed buffers one after the
  // other in a section are not there together).
  const Step first = times_.front(), last = times_.back();
  for (PoolId p = 0; p < pools_; ++p) {
    for (BufferId f : fixed_in_[p]) {
      const Lifetime& l = problem_.buffers[f].lifetime;
      if (l.end <= first || l.start >= last) continue;
      times_.push_back(std::max(first, l.start));
      times_.push_back(std::min(last, l.end));
    }
  }
  std::sort(times_.begin(), times_.end());
  times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
  const int sections = static_cast<int>(times_.size()) - 1;
  auto section_of = [&](Step t) {
    return static_cast<int>(std::upper_bound(times_.begin(), times_.end(), t) -
                            times_.begin()) -
           1;
  };
  s0_.assign(problem_.buffers.size(), 0);
  s1_.assign(problem_.buffers.size(), 0);
  for (BufferId b : part) {
    s0_[b] = section_of(problem_.buffers[b].lifetime.start);
    s1_[b] = section_of(problem_.buffers[b].lifetime.end);
  }
  // The fixed buffers' bytes, as loads of the sections they cross.
  load_.assign(pools_, std::vector<Bytes>(sections, 0));
  for (PoolId p = 0; p < pools_; ++p) {
    for (BufferId f : fixed_in_[p]) {
      const Lifetime& l = problem_.buffers[f].lifetime;
      for (int s = 0; s < sections; ++s) {
        if (l.start < times_[s + 1] && times_[s] < l.end)
          load_[p][s] += Size(f);
      }
    }
  }
  twin_of_prev_.assign(order_.size(), false);
  for (size_t k = 1; k < order_.size(); ++k) {
    const BufferId a = order_[k - 1], b = order_[k];
    twin_of_prev_[k] =
        Size(a) == Size(b) &&
        problem_.buffers[a].lifetime == problem_.buffers[b].lifetime &&
        problem_.buffers[a].alignment == problem_.buffers[b].alignment &&
        candidates_[a] == candidates_[b] && explicit_of_[a].empty() &&
        explicit_of_[b].empty();
  }
  here_.assign(pools_, {});
  held_.assign(pools_, 0);
  has_best_ = false;
  stopped_ = false;
  Dfs(0);
  if (!has_best_) return false;
  for (size_t k = 0; k < order_.size(); ++k) {
    pool_of_[order_[k]] = best_[k].first;
    offset_of_[order_[k]] = best_[k].second;
  }
  return true;
}

void PoolSearch::Dfs(int k) {
  const int m = static_cast<int>(order_.size());
  if (OutOfWork()) {
    stopped_ = true;
    return;
  }
  ++nodes_;
  // As an exact node of m buffers: the bound scans the undecided buffers
  // about as fast as the single-pool search's node does its items.
  budget_.Tick(NodeWork(m));
  if (k == m) {
    if (!has_best_ || LexLess(held_, best_held_)) {
      has_best_ = true;
      best_held_ = held_;
      best_.resize(m);
      for (int i = 0; i < m; ++i)
        best_[i] = {pool_of_[order_[i]], offset_of_[order_[i]]};
    }
    return;
  }
  if (has_best_ && !LexLess(NodeBound(k), best_held_)) return;
  const BufferId b = order_[k];
  const std::vector<PoolId>& candidates = candidates_[b];
  // Interchangeable buffers take their pools in the order of their
  // candidates: swapping two of them changes no plan's bytes.
  size_t first = 0;
  if (twin_of_prev_[k]) {
    first = static_cast<size_t>(std::find(candidates.begin(), candidates.end(),
                                          pool_of_[order_[k - 1]]) -
                                candidates.begin());
  }
  for (size_t i = first; i < candidates.size() && !stopped_; ++i) {
    const PoolId p = candidates[i];
    if (!Bounded(p)) {
      Place(b, p, 0);
      Dfs(k + 1);
      Unplace(b);
      continue;
    }
    // More bytes alive than the capacity: no packing exists.
    if (MaxLoad(p, b) + Size(b) > problem_.pools[p].capacity) continue;
    if (std::optional<Offset> at = FirstFit(b, p)) {
      Place(b, p, *at);
      Dfs(k + 1);
      Unplace(b);
      continue;
    }
    std::vector<Offset> saved;
    for (BufferId o : here_[p]) saved.push_back(offset_of_[o]);
    const Packing packing = Repack(p, b);
    if (packing == Packing::kUnknown) complete_ = false;
    if (packing != Packing::kFits) continue;
    const Offset at = offset_of_[b];
    Place(b, p, at);
    Dfs(k + 1);
    Unplace(b);
    for (size_t j = 0; j < saved.size(); ++j)
      offset_of_[here_[p][j]] = saved[j];
  }
}

// A lower bound, per pool, on the bytes every plan below this node holds
// there: what it holds now, the undecided buffers that have one pool left,
// and, in the last pool, what the faster pools cannot absorb.
std::vector<Bytes> PoolSearch::NodeBound(int k) {
  std::vector<Bytes> bound = held_;
  const PoolId last = pools_ - 1;
  std::vector<BufferId> flexible;  // may go to the last pool or faster ones
  Bytes flexible_bytes = 0;
  for (size_t i = k; i < order_.size(); ++i) {
    const BufferId b = order_[i];
    const std::vector<PoolId>& c = candidates_[b];
    if (c.size() == 1) {
      bound[c[0]] += Size(b);
      continue;
    }
    if (std::find(c.begin(), c.end(), last) == c.end()) continue;
    // A faster pool without a capacity takes it in any case.
    if (std::any_of(c.begin(), c.end(),
                    [&](PoolId p) { return p != last && !Bounded(p); })) {
      continue;
    }
    flexible.push_back(b);
    flexible_bytes += Size(b);
  }
  if (!flexible.empty())
    bound[last] += std::max<Bytes>(0, flexible_bytes - Absorbable(flexible));
  return bound;
}

// At most the bytes of `flexible` the faster pools with a capacity can take:
// every buffer crosses one of the steps of a stabbing set (each the last
// section of the earliest-ending buffer not yet crossed), and at each of
// them the pools take at most their free bytes.
Bytes PoolSearch::Absorbable(const std::vector<BufferId>& flexible) {
  std::vector<BufferId> by_end = flexible;
  std::sort(by_end.begin(), by_end.end(), [&](BufferId a, BufferId b) {
    return s1_[a] != s1_[b] ? s1_[a] < s1_[b] : a < b;
  });
  std::vector<int> points;
  for (BufferId b : by_end) {
    if (!points.empty() && s0_[b] <= points.back()) continue;
    points.push_back(s1_[b] - 1);
  }
  Bytes total = 0;
  for (int s : points) {
    Bytes free = 0;
    for (PoolId p = 0; p + 1 < pools_; ++p) {
      if (Bounded(p))
        free += std::max<Bytes>(0, problem_.pools[p].capacity - load_[p][s]);
    }
    Bytes alive = 0;
    for (BufferId b : flexible) {
      if (s0_[b] <= s && s < s1_[b]) alive += Size(b);
    }
    total += std::min(free, alive);
  }
  // The scans above, at about 32 of them to a work unit (measured on
  // the bundled models: 40 million units a second, as the budget means).
  budget_.Tick(
      static_cast<int64_t>((points.size() + 1) * flexible.size() / 32));
  return total;
}

Bytes PoolSearch::MaxLoad(PoolId p, BufferId b) const {
  Bytes most = 0;
  for (int s = s0_[b]; s < s1_[b]; ++s) most = std::max(most, load_[p][s]);
  // An explicit partner elsewhere in time shares no step, yet no byte
  // either; the first fit and the re-packing see it.
  return most;
}

void PoolSearch::SetLoad(PoolId p, BufferId b, Bytes sign) {
  for (int s = s0_[b]; s < s1_[b]; ++s) load_[p][s] += sign * Size(b);
}

// The lowest aligned offset of `b` in `p` (a pool with a capacity) clear of
// the buffers there it conflicts with.
std::optional<Offset> PoolSearch::FirstFit(BufferId b, PoolId p) {
  std::vector<std::pair<Offset, Offset>> taken;
  auto add_if_conflict = [&](BufferId o, bool overlap) {
    if (overlap || Explicit(b, o))
      taken.push_back({offset_of_[o], offset_of_[o] + Size(o)});
  };
  for (BufferId o : here_[p])
    add_if_conflict(o, s0_[o] < s1_[b] && s0_[b] < s1_[o]);
  const Lifetime& life = problem_.buffers[b].lifetime;
  for (BufferId f : fixed_in_[p]) {
    const Lifetime& l = problem_.buffers[f].lifetime;
    add_if_conflict(f, l.start < life.end && life.start < l.end);
  }
  budget_.Tick(static_cast<int64_t>(here_[p].size() + fixed_in_[p].size()));
  std::sort(taken.begin(), taken.end());
  const Bytes align = EffectiveAlignment(problem_, b, p);
  Offset at = 0;
  for (const auto& [lo, hi] : taken) {
    if (hi <= at) continue;
    if (lo >= at + Size(b)) break;
    at = (hi + align - 1) / align * align;
  }
  if (at + Size(b) > problem_.pools[p].capacity) return std::nullopt;
  return at;
}

// exact's search under p's capacity, on the part's buffers there plus `b`
// (and the pool's fixed buffers): on kFits, every one of them has its new
// offset (b's in offset_of_[b]).
Packing PoolSearch::Repack(PoolId p, BufferId b) {
  const int64_t work =
      std::min(repack_cap_, part_work_end_ - budget_.work_done());
  if (work <= 0) return Packing::kUnknown;
  ++repacks_;
  std::vector<BufferId> buffers = here_[p];
  buffers.push_back(b);
  buffers.insert(buffers.end(), fixed_in_[p].begin(), fixed_in_[p].end());
  std::sort(buffers.begin(), buffers.end());
  const Problem sub = SubProblem(problem_, buffers, p);
  ExactOptions single = options_;
  single.lower_bound_only = false;
  PlanOptions plan_options{
      .deadline = budget_.deadline(), .work_limit = work, .seed = seed_};
  const absl::StatusOr<Plan> plan =
      MakeExactPlanner(single)->Solve(sub, plan_options);
  if (!plan.ok()) {
    budget_.Carry(work);  // the part's search counted its own
    return absl::IsResourceExhausted(plan.status()) && SearchComplete(sub)
               ? Packing::kNone
               : Packing::kUnknown;
  }
  // The part's search counted its nodes as it ran.
  const auto nodes = plan->counters.find("nodes");
  budget_.Carry(
      std::min(work, (nodes != plan->counters.end() ? nodes->second : 0) *
                         NodeWork(static_cast<int64_t>(sub.buffers.size()))));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!problem_.buffers[buffers[i]].fixed.has_value())
      offset_of_[buffers[i]] = plan->assignments[i].offset;
  }
  return Packing::kFits;
}

void PoolSearch::Place(BufferId b, PoolId p, Offset at) {
  pool_of_[b] = p;
  offset_of_[b] = at;
  held_[p] += Size(b);
  if (Bounded(p)) {
    SetLoad(p, b, 1);
    here_[p].push_back(b);
  }
}

void PoolSearch::Unplace(BufferId b) {
  const PoolId p = pool_of_[b];
  held_[p] -= Size(b);
  if (Bounded(p)) {
    SetLoad(p, b, -1);
    // Buffers are placed and removed last in, first out.
    here_[p].pop_back();
  }
  pool_of_[b] = kUndecided;
}

// The plan of the decided pools: the packings found in the pools with a
// capacity, exact's single-pool plan in each pool without one.
absl::StatusOr<Plan> PoolSearch::Compose() {
  const int n = static_cast<int>(problem_.buffers.size());
  Plan plan;
  plan.assignments.resize(n);
  for (BufferId b = 0; b < n; ++b)
    plan.assignments[b] = {
        .buffer = b, .pool = pool_of_[b], .offset = offset_of_[b]};
  std::vector<PoolId> unbounded;
  for (PoolId p = 0; p < pools_; ++p)
    if (!Bounded(p)) unbounded.push_back(p);
  for (size_t i = 0; i < unbounded.size(); ++i) {
    const PoolId p = unbounded[i];
    std::vector<BufferId> buffers;
    for (BufferId b = 0; b < n; ++b)
      if (pool_of_[b] == p && Size(b) > 0) buffers.push_back(b);
    if (buffers.empty()) continue;
    const Problem sub = SubProblem(problem_, buffers, p);
    const int64_t left = std::max<int64_t>(
        1, std::min(budget_.work_limit() / kTopsShareDivisor,
                    (budget_.work_limit() - budget_.work_done()) /
                        static_cast<int64_t>(unbounded.size() - i)));
    ExactOptions single = options_;
    single.lower_bound_only = false;
    absl::StatusOr<Plan> sub_plan = MakeExactPlanner(single)->Solve(
        sub,
        {.deadline = budget_.deadline(), .work_limit = left, .seed = seed_});
    if (!sub_plan.ok()) return sub_plan.status();
    // The part's search counted its nodes as it ran.
    const auto nodes = sub_plan->counters.find("nodes");
    budget_.Carry(
        std::min(left, (nodes != sub_plan->counters.end() ? nodes->second : 0) *
                           NodeWork(static_cast<int64_t>(sub.buffers.size()))));
    // SubProblem keeps the buffers in id order.
    for (size_t j = 0; j < buffers.size(); ++j)
      plan.assignments[buffers[j]].offset = sub_plan->assignments[j].offset;
  }
  ComputePlanStatistics(problem_, plan);
  return plan;
}

}  // namespace

absl::StatusOr<Plan> SolveAcrossPools(const Problem& problem,
                                      const PlanOptions& plan_options,
                                      const ExactOptions& options,
                                      Incumbent& incumbent) {
  PoolSearch search(problem, options, plan_options);
  return search.Run(incumbent);
}

}  // namespace memplan::internal::exact

namespace memplan::internal {

std::vector<Plan> HeuristicPlans(const Problem& problem,
                                 const PlanOptions& options) {
  const Budget budget(options);
  std::vector<std::unique_ptr<Planner>> one_pass;
  for (PlacementOrder order :
       {PlacementOrder::kSize, PlacementOrder::kSizeClass,
        PlacementOrder::kSizeThenId, PlacementOrder::kArea,
        PlacementOrder::kLifetime}) {
    for (Fit fit : {Fit::kBest, Fit::kFirst})
      one_pass.push_back(MakeGreedyPlanner({.order = order, .fit = fit}));
  }
  one_pass.push_back(MakeCaffe2GreedyPlanner({}));
  one_pass.push_back(MakeCaffe2DpPlanner({}));
  one_pass.push_back(MakeHillClimbPlanner({}));
  PlanOptions each = options;
  each.deadline = budget.deadline();
  std::vector<Plan> plans;
  for (const auto& planner : one_pass) {
    absl::StatusOr<Plan> plan = planner->Solve(problem, each);
    if (plan.ok() && VerifyPlan(problem, *plan).ok()) {
      ComputePlanStatistics(problem, *plan);
      plans.push_back(*std::move(plan));
    }
  }
  return plans;
}

}  // namespace memplan::internal
