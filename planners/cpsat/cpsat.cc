// cpsat: the seed notebook's model, solved with OR-tools' CP-SAT. See
// cpsat.h.

#include "cpsat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "effort/budget.h"
#include "effort/set_up.h"
#include "memplan/problem.h"
#include "memplan/verify.h"
#include "model/problem_util.h"
#include "ortools_library.h"
#include "planners.h"
#include "wire.h"

namespace memplan {
namespace {

namespace f = cpsat_wire::field;
using cpsat_wire::SolverStatus;
using cpsat_wire::Writer;

constexpr std::string_view kName = "cpsat";

// Work units per CP-SAT deterministic second. Its deterministic time counts
// far less than a core-second on these models: on MiniMalloc's C one
// deterministic second took 7.8 s of CPU (the second of a 2 s run over a
// 1 s one; bench/NOTES.md), so a deterministic second is worth 8 seconds'
// work, and the default work limit (10 s) grants about 1.25.
constexpr double kWorkPerDeterministicSecond = 8.0 * kWorkPerSecond;

// Under a capacity the warm start fits already; CP-SAT then looks for a
// lower top in slices of this share of its deterministic budget (at most
// kMaxCapacitySlice deterministic seconds, about 0.8 s of CPU), each from
// the last solution, while each slice finds one (on MiniMalloc's D and J
// the whole budget found none: 5 to 14 s of CPU for the start's plan;
// bench/NOTES.md).
constexpr double kCapacitySliceShare = 0.125;
constexpr double kMaxCapacitySlice = 0.1;

Plan FinishPlan(const Problem& problem, Plan plan, bool proven) {
  plan.planner = std::string(kName);
  plan.proven_optimal = proven;
  ComputePlanStatistics(problem, plan);
  return plan;
}

// The pools buffer `b` may use: its fixed pool, else its allowed pools
// (all when none are listed).
std::vector<PoolId> CandidatePools(const Problem& problem, BufferId b) {
  const Buffer& buffer = problem.buffers[b];
  if (buffer.fixed.has_value()) return {buffer.fixed->pool};
  if (!buffer.pools.empty()) return buffer.pools;
  std::vector<PoolId> all(problem.pools.size());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// The model's unit: divides every size, fixed offset and effective
// alignment above it (alignments are powers of two).
Bytes ModelUnit(const Problem& problem) {
  Bytes unit = 0;
  for (const Buffer& b : problem.buffers) {
    unit = std::gcd(unit, b.size);
    if (b.fixed.has_value()) unit = std::gcd(unit, b.fixed->offset);
  }
  if (unit == 0) unit = 1;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    for (PoolId p : CandidatePools(problem, b)) {
      const Bytes align = EffectiveAlignment(problem, b, p);
      if (unit % align != 0) unit = std::gcd(unit, align);
    }
  }
  return unit;
}

// One way to place a buffer: in `pool`, at offset align * slot units.
struct Choice {
  BufferId buffer = 0;
  PoolId pool = 0;
  int64_t align = 1;      // units
  int32_t slot = -1;      // variable
  int32_t presence = -1;  // variable; -1 when the only choice
  int32_t interval = -1;  // constraint: the offset interval
};

// The model as it is written, with what reading a solution needs.
struct Model {
  Bytes unit = 1;
  Writer proto;
  int32_t variables = 0;
  int32_t constraints = 0;
  std::vector<Choice> choices;
  std::vector<std::vector<int>> choices_of;  // per buffer: into choices
  std::vector<int32_t> time_interval;        // per buffer, or -1
  std::vector<int32_t> top;                  // per pool: variable, or -1
  std::vector<int64_t> pool_high;            // per pool: top's bound, units

  int32_t AddVariable(int64_t lo, int64_t hi) {
    Writer v;
    const int64_t domain[] = {lo, hi};
    v.Packed(f::kVariableDomain, domain);
    proto.Message(f::kModelVariables, v);
    return variables++;
  }
  int32_t AddConstraint(int body_field, const Writer& body,
                        int32_t enforcement = -1) {
    Writer c;
    if (enforcement >= 0) {
      const int32_t literal[] = {enforcement};
      c.Packed(f::kConstraintEnforcement, literal);
    }
    c.Message(body_field, body);
    proto.Message(f::kModelConstraints, c);
    return constraints++;
  }
  // An interval [start, start + size) of expressions start and end.
  int32_t AddInterval(const Writer& start, const Writer& end, int64_t size,
                      int32_t enforcement = -1) {
    Writer interval;
    interval.Message(f::kIntervalStart, start);
    interval.Message(f::kIntervalEnd, end);
    interval.Message(f::kIntervalSize, cpsat_wire::Expression({}, {}, size));
    return AddConstraint(f::kConstraintInterval, interval, enforcement);
  }
};

bool Overlap(const Lifetime& a, const Lifetime& b) {
  return a.start < b.end && b.start < a.end;
}

// The pairs of boxes the pools' 2-D no-overlaps keep apart: per pool, the
// pairs of buffers with bytes that fit there (fixed ones in their own pool)
// alive together. O(pools x buffers x log buffers).
int64_t OverlappingPairs(const Problem& problem) {
  int64_t pairs = 0;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    const Bytes capacity = problem.pools[p].capacity;
    std::vector<Lifetime> alive;
    for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size());
         ++b) {
      const Buffer& buffer = problem.buffers[b];
      if (buffer.size == 0 || (capacity > 0 && buffer.size > capacity))
        continue;
      const std::vector<PoolId> pools = CandidatePools(problem, b);
      if (std::find(pools.begin(), pools.end(), p) == pools.end()) continue;
      alive.push_back(buffer.lifetime);
    }
    std::sort(
        alive.begin(), alive.end(),
        [](const Lifetime& a, const Lifetime& b) { return a.start < b.start; });
    // Ends of the buffers started so far, smallest on top: those at or
    // before a start are over when it begins.
    std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> ends;
    for (const Lifetime& l : alive) {
      while (!ends.empty() && ends.top() <= l.start) ends.pop();
      if (l.start < l.end) pairs += static_cast<int64_t>(ends.size());
      ends.push(l.end);
    }
  }
  return pairs;
}

// The tops' bounds, per pool: the capacity, or a top no plan needs to
// exceed (every buffer stacked above the highest fixed end, each with room
// for its alignment, and at least `warm`'s top, so that its plan is a
// solution).
std::vector<int64_t> PoolHighs(const Problem& problem, Bytes unit,
                               const std::optional<Plan>& warm) {
  int64_t stacked = 0, fixed_end = 0;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    Bytes align = 1;
    for (PoolId p : CandidatePools(problem, b))
      align = std::max(align, EffectiveAlignment(problem, b, p));
    stacked += (buffer.size + align) / unit + 1;
    if (buffer.fixed.has_value())
      fixed_end =
          std::max(fixed_end, (buffer.fixed->offset + buffer.size) / unit);
  }
  std::vector<int64_t> highs(problem.pools.size());
  for (PoolId p = 0; p < static_cast<PoolId>(highs.size()); ++p) {
    const Bytes capacity = problem.pools[p].capacity;
    int64_t high = stacked + fixed_end;
    if (warm.has_value())
      high = std::max(high, (warm->pool_used[p] + unit - 1) / unit);
    highs[p] = capacity > 0 ? capacity / unit : high;
  }
  return highs;
}

// Buffer b's interval in time and its choices of pool: a slot variable and
// an offset interval each (optional, with exactly one present, when there
// are several). ResourceExhausted naming b when it fits in none.
absl::Status AddBuffer(const Problem& problem, BufferId b, Model& model) {
  const Buffer& buffer = problem.buffers[b];
  const Bytes unit = model.unit;
  const int64_t size = buffer.size / unit;
  std::vector<Choice> fits;
  for (PoolId p : CandidatePools(problem, b)) {
    const int64_t high = model.pool_high[p];
    Choice c{.buffer = b, .pool = p};
    if (buffer.fixed.has_value()) {
      const int64_t offset = buffer.fixed->offset / unit;
      if (offset + size > high) continue;
      c.slot = model.AddVariable(offset, offset);
    } else {
      const Bytes align = EffectiveAlignment(problem, b, p);
      c.align = align <= unit ? 1 : align / unit;
      if (size > high) continue;
      c.slot = model.AddVariable(0, (high - size) / c.align);
    }
    fits.push_back(c);
  }
  if (fits.empty()) {
    const std::vector<Bytes> usage(problem.pools.size(), 0);
    return internal::NoFitError(problem, b, usage);
  }
  const int64_t start = buffer.lifetime.start, end = buffer.lifetime.end;
  model.time_interval[b] =
      model.AddInterval(cpsat_wire::Expression({}, {}, start),
                        cpsat_wire::Expression({}, {}, end), end - start);
  std::vector<int32_t> literals;
  for (Choice& c : fits) {
    if (fits.size() > 1) {
      c.presence = model.AddVariable(0, 1);
      literals.push_back(c.presence);
    }
    const int32_t slot[] = {c.slot};
    const int64_t align[] = {c.align};
    c.interval = model.AddInterval(cpsat_wire::Expression(slot, align, 0),
                                   cpsat_wire::Expression(slot, align, size),
                                   size, c.presence);
    model.choices_of[b].push_back(static_cast<int>(model.choices.size()));
    model.choices.push_back(c);
  }
  if (literals.size() > 1) {
    Writer one;
    one.Packed(f::kBoolLiterals, literals);
    model.AddConstraint(f::kConstraintExactlyOne, one);
  }
  return absl::OkStatus();
}

// Per pool: its top above every end there, and the 2-D no-overlap.
void AddPools(const Problem& problem, Model& model) {
  const int pools = static_cast<int>(problem.pools.size());
  model.top.assign(pools, -1);
  for (const Choice& c : model.choices) {
    if (model.top[c.pool] < 0)
      model.top[c.pool] = model.AddVariable(0, model.pool_high[c.pool]);
  }
  std::vector<std::vector<int32_t>> xs(pools), ys(pools);
  for (const Choice& c : model.choices) {
    const int64_t size = problem.buffers[c.buffer].size / model.unit;
    Writer linear;  // top - align * slot >= size
    const int32_t vars[] = {model.top[c.pool], c.slot};
    const int64_t coeffs[] = {1, -c.align};
    const int64_t domain[] = {size, model.pool_high[c.pool]};
    linear.Packed(f::kLinearVars, vars);
    linear.Packed(f::kLinearCoeffs, coeffs);
    linear.Packed(f::kLinearDomain, domain);
    model.AddConstraint(f::kConstraintLinear, linear, c.presence);
    xs[c.pool].push_back(model.time_interval[c.buffer]);
    ys[c.pool].push_back(c.interval);
  }
  for (PoolId p = 0; p < pools; ++p) {
    if (xs[p].size() < 2) continue;
    Writer boxes;
    boxes.Packed(f::kNoOverlap2DX, xs[p]);
    boxes.Packed(f::kNoOverlap2DY, ys[p]);
    model.AddConstraint(f::kConstraintNoOverlap2D, boxes);
  }
}

// Explicit conflicts between buffers alive at different times: their
// offset intervals in a pool both use do not overlap (the 2-D no-overlap
// already keeps apart those alive together).
void AddExplicitConflicts(const Problem& problem, Model& model) {
  for (const BufferConflict& conflict : problem.conflicts) {
    const Buffer& a = problem.buffers[conflict.a];
    const Buffer& b = problem.buffers[conflict.b];
    if (conflict.a == conflict.b || a.size == 0 || b.size == 0 ||
        Overlap(a.lifetime, b.lifetime)) {
      continue;
    }
    for (int i : model.choices_of[conflict.a]) {
      for (int j : model.choices_of[conflict.b]) {
        if (model.choices[i].pool != model.choices[j].pool) continue;
        Writer pair;
        const int32_t intervals[] = {model.choices[i].interval,
                                     model.choices[j].interval};
        pair.Packed(f::kNoOverlapIntervals, intervals);
        model.AddConstraint(f::kConstraintNoOverlap, pair);
      }
    }
  }
}

// Builds the model of `problem` (see cpsat.h); a buffer that fits in none of
// its pools is ResourceExhausted naming it.
absl::StatusOr<Model> BuildModel(const Problem& problem,
                                 const std::optional<Plan>& warm) {
  const int n = static_cast<int>(problem.buffers.size());
  Model model;
  model.unit = ModelUnit(problem);
  model.pool_high = PoolHighs(problem, model.unit, warm);
  model.choices_of.assign(n, {});
  model.time_interval.assign(n, -1);
  for (BufferId b = 0; b < n; ++b) {
    if (problem.buffers[b].size == 0) continue;
    MEMPLAN_RETURN_IF_ERROR(AddBuffer(problem, b, model));
  }
  AddPools(problem, model);
  AddExplicitConflicts(problem, model);
  return model;
}

// Minimise the sum of the tops.
Writer TopsObjective(const Model& model) {
  std::vector<int32_t> tops;
  for (int32_t t : model.top)
    if (t >= 0) tops.push_back(t);
  const std::vector<int64_t> ones(tops.size(), 1);
  Writer objective;
  objective.Packed(f::kObjectiveVars, tops);
  objective.Packed(f::kObjectiveCoeffs, ones);
  return objective;
}

// The bytes, in units, held in pool `p`: sum(coeffs * vars) + constant
// (the buffers whose only choice is p).
struct PoolBytesTerm {
  std::vector<int32_t> vars;
  std::vector<int64_t> coeffs;
  int64_t constant = 0;
};

PoolBytesTerm HeldIn(const Problem& problem, const Model& model, PoolId p) {
  PoolBytesTerm term;
  for (const Choice& c : model.choices) {
    if (c.pool != p) continue;
    const int64_t size = problem.buffers[c.buffer].size / model.unit;
    if (c.presence < 0) {
      term.constant += size;
    } else {
      term.vars.push_back(c.presence);
      term.coeffs.push_back(size);
    }
  }
  return term;
}

// The warm start plan as a solution hint (every variable).
Writer Hint(const Problem& problem, const Plan& plan, const Model& model) {
  std::vector<int64_t> values(model.variables, 0);
  for (const Choice& c : model.choices) {
    const Assignment& a = plan.assignments[c.buffer];
    const bool here = a.pool == c.pool;
    if (c.presence >= 0) values[c.presence] = here ? 1 : 0;
    values[c.slot] = here ? a.offset / model.unit / c.align : 0;
    if (problem.buffers[c.buffer].fixed.has_value())
      values[c.slot] = problem.buffers[c.buffer].fixed->offset / model.unit;
  }
  for (PoolId p = 0; p < static_cast<PoolId>(model.top.size()); ++p) {
    if (model.top[p] >= 0)
      values[model.top[p]] = (plan.pool_used[p] + model.unit - 1) / model.unit;
  }
  std::vector<int32_t> vars(model.variables);
  std::iota(vars.begin(), vars.end(), 0);
  Writer hint;
  hint.Packed(f::kHintVars, vars);
  hint.Packed(f::kHintValues, values);
  return hint;
}

// A solution as a hint.
Writer Hint(const std::vector<int64_t>& solution) {
  std::vector<int32_t> vars(solution.size());
  std::iota(vars.begin(), vars.end(), 0);
  Writer hint;
  hint.Packed(f::kHintVars, vars);
  hint.Packed(f::kHintValues, solution);
  return hint;
}

// The model with `extra` constraints (each a ConstraintProto), an objective
// and, when it has bytes, a hint.
std::string ModelBytes(const Model& model, const std::vector<Writer>& extra,
                       const Writer& objective, const Writer& hint) {
  Writer proto = model.proto;
  for (const Writer& c : extra) proto.Message(f::kModelConstraints, c);
  proto.Message(f::kModelObjective, objective);
  if (!hint.bytes().empty()) proto.Message(f::kModelSolutionHint, hint);
  return proto.bytes();
}

// The plan of a solution (zero-size buffers at 0 of their first pool, or at
// their fixed placement).
Plan ExtractPlan(const Problem& problem, const Model& model,
                 const std::vector<int64_t>& solution) {
  const int n = static_cast<int>(problem.buffers.size());
  Plan plan;
  plan.assignments.resize(n);
  for (BufferId b = 0; b < n; ++b) {
    Assignment& a = plan.assignments[b];
    a.buffer = b;
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value()) {
      a.pool = buffer.fixed->pool;
      a.offset = buffer.fixed->offset;
    } else {
      a.pool = CandidatePools(problem, b).front();
    }
    for (int i : model.choices_of[b]) {
      const Choice& c = model.choices[i];
      if (c.presence >= 0 && solution[c.presence] == 0) continue;
      a.pool = c.pool;
      a.offset = solution[c.slot] * c.align * model.unit;
    }
  }
  return plan;
}

// The plan of CP-SAT's response: its solution when the verifier accepts it
// and it beats the warm start, else the warm start; proven as CP-SAT says.
// CP-SAT proved that no plan fits; `warm_error` says why the heuristic
// start found none either.
absl::Status NothingFits(const Problem& problem,
                         const absl::Status& warm_error) {
  std::string why =
      absl::StrCat("no plan of the ", problem.buffers.size(),
                   " buffers fits in the pools' capacities (proven by CP-SAT)");
  if (!warm_error.ok())
    absl::StrAppend(&why, "; the heuristic: ", warm_error.message());
  return absl::ResourceExhaustedError(why);
}

absl::Status ModelRejected(const cpsat_wire::Response& response) {
  return absl::InternalError(absl::StrCat("CP-SAT rejected the cpsat model: ",
                                          response.solution_info));
}

absl::StatusOr<Plan> PlanOfResponse(const Problem& problem, const Model& model,
                                    const cpsat_wire::Response& response,
                                    std::optional<Plan> warm,
                                    const absl::Status& warm_error) {
  // CP-SAT's lower bound on the sum of the tops, in bytes.
  const Bytes bound =
      static_cast<Bytes>(std::ceil(response.best_objective_bound - 1e-6)) *
      model.unit;
  const auto with_counters = [&](Plan plan) {
    plan.counters["conflicts"] = response.num_conflicts;
    plan.counters["branches"] = response.num_branches;
    plan.counters["objective_bound"] = bound;
    return plan;
  };
  switch (response.status) {
    case SolverStatus::kModelInvalid:
      return ModelRejected(response);
    case SolverStatus::kInfeasible: {
      if (warm.has_value()) {
        // A valid start contradicts it: keep the start, claim nothing.
        return with_counters(FinishPlan(problem, *std::move(warm), false));
      }
      return NothingFits(problem, warm_error);
    }
    case SolverStatus::kFeasible:
    case SolverStatus::kOptimal:
      break;
    default:  // out of budget before a first solution
      if (warm.has_value())
        return with_counters(FinishPlan(problem, *std::move(warm), false));
      return absl::DeadlineExceededError(
          "the cpsat planner found no plan within its budget and proved none "
          "impossible");
  }

  std::optional<Plan> found;
  if (response.solution.size() == static_cast<size_t>(model.variables)) {
    Plan plan = ExtractPlan(problem, model, response.solution);
    ComputePlanStatistics(problem, plan);
    if (VerifyPlan(problem, plan).ok()) found = std::move(plan);
  }
  if (!found.has_value() && !warm.has_value()) {
    return absl::InternalError(
        "CP-SAT's solution of the cpsat model fails the verifier");
  }
  Plan best =
      !found.has_value() || (warm.has_value() && warm->peak <= found->peak)
          ? *std::move(warm)
          : *std::move(found);
  const bool proven = (response.status == SolverStatus::kOptimal &&
                       found.has_value() && best.peak <= found->peak) ||
                      bound >= best.peak;
  return with_counters(FinishPlan(problem, std::move(best), proven));
}

bool NothingSpilled(const Problem& problem, const Plan& plan) {
  const std::vector<Bytes> bytes = PoolBytes(problem, plan);
  return std::all_of(bytes.begin() + 1, bytes.end(),
                     [](Bytes b) { return b == 0; });
}

// The start returned unsearched: across pools, proven only when it spills
// nothing.
Plan StartAsPlan(const Problem& problem, Plan start) {
  Plan plan = internal::StartAsPlanOf(problem, std::move(start), kName);
  if (problem.pools.size() > 1)
    plan.proven_optimal = NothingSpilled(problem, plan);
  return plan;
}

// The linear constraint "held in the pool <= value", which fixes a pool's
// minimum for the stages that follow.
Writer AtMost(const PoolBytesTerm& held, int64_t value) {
  Writer at_most;
  at_most.Packed(f::kLinearVars, held.vars);
  at_most.Packed(f::kLinearCoeffs, held.coeffs);
  const int64_t domain[] = {std::numeric_limits<int64_t>::min() / 4, value};
  at_most.Packed(f::kLinearDomain, domain);
  Writer constraint;
  constraint.Message(f::kConstraintLinear, at_most);
  return constraint;
}

// The plan of the stages across pools, or the warm start when it spills no
// more; proven when nothing spills or it spills as little as a proven
// solution.
absl::StatusOr<Plan> BestAcrossPools(const Problem& problem,
                                     std::optional<Plan> found,
                                     std::optional<Plan> warm, bool proven,
                                     int64_t conflicts, int64_t branches,
                                     int stages) {
  if (!found.has_value() && !warm.has_value()) {
    return absl::DeadlineExceededError(
        "the cpsat planner found no plan within its budget and proved none "
        "impossible");
  }
  const std::vector<Bytes> found_bytes =
      found.has_value() ? PoolBytes(problem, *found) : std::vector<Bytes>();
  Plan best = !found.has_value() ||
                      (warm.has_value() && !SpillsLess(problem, *found, *warm))
                  ? *std::move(warm)
                  : *std::move(found);
  // A start that spills as much as a proven solution is as proven.
  const bool spills_least = found_bytes.size() > 0 && proven &&
                            PoolBytes(problem, best) == found_bytes;
  best = FinishPlan(problem, std::move(best), false);
  best.proven_optimal = spills_least || NothingSpilled(problem, best);
  best.counters["conflicts"] = conflicts;
  best.counters["branches"] = branches;
  best.counters["stages"] = stages;
  return best;
}

// The plan to start from: the incumbent, and across pools the plan that
// spills least of it and the heuristics' (best keeps the smallest peak),
// each with the whole budget as best's members. `warm_error` gets why
// there is none.
std::optional<Plan> WarmStart(const Problem& problem,
                              const PlanOptions& options, Incumbent& start,
                              CpsatStats& stats, absl::Status& warm_error) {
  std::optional<Plan> warm;
  if (!start.none()) {
    const absl::StatusOr<Plan>& plan = start.Get();
    if (plan.ok()) {
      warm = *plan;
      stats.used_warm_start = true;
    } else {
      warm_error = plan.status();
    }
  }
  if (problem.pools.size() > 1 && !start.none()) {
    for (Plan& plan : internal::HeuristicPlans(problem, options)) {
      if (!warm.has_value() || SpillsLess(problem, plan, *warm)) {
        warm = std::move(plan);
        warm_error = absl::OkStatus();
      }
    }
    stats.used_warm_start = warm.has_value();
  }
  return warm;
}

// A model CP-SAT cannot search within the budget: `pairs` of buffers alive
// together, more than max_pairs_per_second in `seconds`. The warm start
// as the plan, with counters that say why.
absl::StatusOr<Plan> ModelTooLarge(const Problem& problem, int64_t pairs,
                                   int64_t max_pairs_per_second, double seconds,
                                   std::optional<Plan> warm,
                                   const absl::Status& warm_error) {
  if (!warm.has_value()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the cpsat model of ", pairs,
        " pairs of buffers alive together is too large for the budget (",
        max_pairs_per_second, " pairs per CP-SAT deterministic second, ",
        seconds, " seconds) and there is no warm start plan",
        warm_error.ok() ? "" : "; the warm start: ", warm_error.message()));
  }
  Plan plan = StartAsPlan(problem, *std::move(warm));
  plan.counters["model_too_large"] = 1;
  plan.counters["pairs"] = pairs;
  return plan;
}

// The start returned unsearched because the deadline came first.
Plan CutByTime(const Problem& problem, Plan start) {
  Plan plan = StartAsPlan(problem, std::move(start));
  plan.counters["cut_by_time_limit"] = 1;
  return plan;
}

// What a first load of OR-tools' library may take, from a warm disk cache
// on a typical core (0.2 to 0.4 s measured; a cold disk takes over a
// second): a load cannot stop halfway, so one the deadline leaves less time
// for is not begun.
constexpr absl::Duration kLibraryLoad = absl::Milliseconds(250);

// Loads OR-tools' library (kept once loaded) within the deadline:
// DeadlineExceeded when the deadline passed before the load or during it,
// or leaves less than kLibraryLoad for a first one; else the load's own
// error.
absl::Status LoadWithinDeadline(const Budget& budget,
                                const std::string& library) {
  if (budget.OutOfTimeNow()) {
    return absl::DeadlineExceededError(
        "the deadline passed before OR-tools' CP-SAT library was loaded");
  }
  if (budget.deadline() != absl::InfiniteFuture() &&
      !internal::CpSatLibraryTried(library) &&
      budget.deadline() - absl::Now() < kLibraryLoad) {
    return absl::DeadlineExceededError(absl::StrCat(
        "OR-tools' CP-SAT library was not loaded: a first load takes about ",
        absl::FormatDuration(kLibraryLoad),
        ", more than is left before the deadline"));
  }
  MEMPLAN_RETURN_IF_ERROR(internal::LoadCpSatLibrary(library));
  if (budget.OutOfTimeNow()) {
    return absl::DeadlineExceededError(
        "the deadline passed while OR-tools' CP-SAT library loaded");
  }
  return absl::OkStatus();
}

class CpsatPlanner : public SearchPlanner {
 public:
  CpsatPlanner(const CpsatOptions& options, CpsatStats* stats)
      : options_(options), stats_(stats) {}

  std::string_view name() const override { return kName; }

  absl::StatusOr<Plan> Search(const Problem& problem,
                              const PlanOptions& options,
                              Incumbent& start) const override {
    CpsatStats local_stats;
    CpsatStats& stats = stats_ != nullptr ? *stats_ : local_stats;
    stats = CpsatStats{};
    return SolveImpl(problem, options, start, stats);
  }

 private:
  absl::StatusOr<Plan> SolveImpl(const Problem& problem,
                                 const PlanOptions& options, Incumbent& start,
                                 CpsatStats& stats) const;
  std::string Library() const {
    return options_.library.empty() ? CpsatDefaultLibrary() : options_.library;
  }
  std::string Parameters(const PlanOptions& options, const Budget& budget,
                         double deterministic_seconds) const;
  absl::StatusOr<Plan> SolveAcrossPools(
      const Problem& problem, const PlanOptions& options, const Budget& budget,
      const Model& model, const Writer& hint, std::optional<Plan> warm,
      const absl::Status& warm_error, CpsatStats& stats) const;
  absl::StatusOr<Plan> SolveOnePool(
      const Problem& problem, const PlanOptions& options, const Budget& budget,
      const Model& model, const Writer& hint, std::optional<Plan> warm,
      const absl::Status& warm_error, CpsatStats& stats) const;

  CpsatOptions options_;
  CpsatStats* stats_;
};

std::string CpsatPlanner::Parameters(const PlanOptions& options,
                                     const Budget& budget,
                                     double deterministic_seconds) const {
  Writer parameters;
  parameters.Int(
      f::kParamNumWorkers,
      std::max(1, options_.threads > 0 ? options_.threads : options.threads));
  parameters.Int(f::kParamRandomSeed,
                 static_cast<int64_t>(options.seed & 0x7fffffff));
  parameters.Double(f::kParamMaxDeterministicTime, deterministic_seconds);
  if (budget.deadline() != absl::InfiniteFuture()) {
    parameters.Double(
        f::kParamMaxTimeInSeconds,
        std::max(0.0, absl::ToDoubleSeconds(budget.deadline() - absl::Now())));
  }
  return parameters.bytes();
}

absl::StatusOr<Plan> CpsatPlanner::SolveImpl(const Problem& problem,
                                             const PlanOptions& options,
                                             Incumbent& start,
                                             CpsatStats& stats) const {
  Budget budget(options);
  absl::Status warm_error = absl::OkStatus();
  std::optional<Plan> warm =
      WarmStart(problem, options, start, stats, warm_error);
  if (warm.has_value() && warm->peak <= LowerBound(problem) &&
      (problem.pools.size() == 1 || NothingSpilled(problem, *warm))) {
    return internal::StartAsPlanOf(problem, *std::move(warm), kName);
  }
  int64_t with_bytes = 0;
  for (const Buffer& b : problem.buffers) with_bytes += b.size > 0 ? 1 : 0;
  if (with_bytes == 0) {
    Model model;
    model.choices_of.assign(problem.buffers.size(), {});
    return FinishPlan(problem, ExtractPlan(problem, model, {}),
                      /*proven=*/true);
  }
  const bool too_large =
      options_.max_buffers > 0 && with_bytes > options_.max_buffers;
  absl::Status set_up = internal::TimeForSetUp(
      budget, problem, internal::kPlacementSetUpPerBuffer, "the cpsat model");
  if (too_large || !set_up.ok()) {
    if (warm.has_value() && !set_up.ok())
      return CutByTime(problem, *std::move(warm));
    if (warm.has_value()) return StartAsPlan(problem, *std::move(warm));
    if (!set_up.ok()) return set_up;
    return absl::UnimplementedError(absl::StrCat(
        "the cpsat planner builds no model of ", with_bytes,
        " buffers (CpsatOptions::max_buffers is ", options_.max_buffers,
        ") and has no warm start plan",
        warm_error.ok() ? "" : "; the warm start: ", warm_error.message()));
  }

  // A model CP-SAT cannot search within the budget. Its deterministic time
  // barely counts the no-overlap propagation, which grows with the pairs
  // of boxes alive together: on mobilenet_v2_train across two pools (3.4 x
  // 10^5 pairs) presolve turns the 2-D no-overlaps into 422 no-overlaps of
  // 128188 intervals and probes them for 16 s of CPU counted as 0.05
  // deterministic seconds, and 57 s of CPU count 0.19 of the 0.63 its
  // budget grants (about 300 s of CPU a deterministic second, against 8 on
  // MiniMalloc's C).
  const double seconds =
      static_cast<double>(budget.work_limit()) / kWorkPerDeterministicSecond;
  const int64_t pairs = OverlappingPairs(problem);
  if (options_.max_pairs_per_second > 0 &&
      static_cast<double>(pairs) >
          static_cast<double>(options_.max_pairs_per_second) * seconds) {
    return ModelTooLarge(problem, pairs, options_.max_pairs_per_second, seconds,
                         std::move(warm), warm_error);
  }
  MEMPLAN_ASSIGN_OR_RETURN(Model model, BuildModel(problem, warm));
  const Writer hint = warm.has_value() ? Hint(problem, *warm, model) : Writer();
  stats.model_built = true;
  stats.variables = model.variables;
  stats.constraints = model.constraints;
  if (model.proto.bytes().size() >
      static_cast<size_t>(std::numeric_limits<int32_t>::max() / 2)) {
    if (warm.has_value()) return StartAsPlan(problem, *std::move(warm));
    return absl::UnimplementedError("the cpsat model exceeds a gigabyte");
  }
  // The library's load counts against the deadline like the rest of the
  // Solve: the solve begins only when time is left after it.
  if (absl::Status loaded = LoadWithinDeadline(budget, Library());
      !loaded.ok()) {
    if (absl::IsDeadlineExceeded(loaded) && warm.has_value())
      return CutByTime(problem, *std::move(warm));
    return loaded;
  }
  if (problem.pools.size() > 1) {
    return SolveAcrossPools(problem, options, budget, model, hint,
                            std::move(warm), warm_error, stats);
  }
  return SolveOnePool(problem, options, budget, model, hint, std::move(warm),
                      warm_error, stats);
}

// One pool: the sum of the tops minimised in one solve; under a capacity
// with a warm start, in slices while they lower the top (kCapacitySliceShare).
absl::StatusOr<Plan> CpsatPlanner::SolveOnePool(
    const Problem& problem, const PlanOptions& options, const Budget& budget,
    const Model& model, const Writer& hint, std::optional<Plan> warm,
    const absl::Status& warm_error, CpsatStats& stats) const {
  const std::string library = Library();
  const double seconds =
      static_cast<double>(budget.work_limit()) / kWorkPerDeterministicSecond;
  const bool sliced = problem.pools[0].capacity > 0 && warm.has_value();
  const double slice =
      sliced ? std::min(seconds * kCapacitySliceShare, kMaxCapacitySlice)
             : seconds;
  const double start_top = static_cast<double>(
      warm.has_value() && !warm->pool_used.empty()
          ? (warm->pool_used[0] + model.unit - 1) / model.unit
          : 0);
  double left = seconds, last_top = start_top;
  Writer slice_hint = hint;
  std::optional<cpsat_wire::Response> kept;
  int64_t conflicts = 0, branches = 0, slices = 0;
  for (;;) {
    MEMPLAN_ASSIGN_OR_RETURN(
        const std::string bytes,
        internal::SolveCpModel(
            library, ModelBytes(model, {}, TopsObjective(model), slice_hint),
            Parameters(options, budget, std::max(std::min(slice, left), 0.0))));
    MEMPLAN_ASSIGN_OR_RETURN(cpsat_wire::Response response,
                             cpsat_wire::ParseResponse(bytes));
    ++slices;
    left -= response.deterministic_time;
    conflicts += response.num_conflicts;
    branches += response.num_branches;
    stats.status = static_cast<int>(response.status);
    stats.deterministic_time += response.deterministic_time;
    const bool solved =
        response.status == SolverStatus::kFeasible &&
        response.solution.size() == static_cast<size_t>(model.variables);
    // A slice without a solution keeps the last one (its bound too).
    if (!kept.has_value() || solved ||
        response.status != SolverStatus::kUnknown) {
      kept = std::move(response);
    }
    if (!sliced || !solved || kept->objective_value > last_top - 0.5 ||
        left <= 0) {
      break;
    }
    last_top = kept->objective_value;
    slice_hint = Hint(kept->solution);
  }
  absl::StatusOr<Plan> plan =
      PlanOfResponse(problem, model, *kept, std::move(warm), warm_error);
  if (plan.ok() && sliced) {
    plan->counters["conflicts"] = conflicts;
    plan->counters["branches"] = branches;
    plan->counters["slices"] = slices;
  }
  return plan;
}

// Several pools: the bytes held in the last pool minimised first, then
// fixed at their minimum (a linear constraint) while the pool before is
// minimised, and so on; last the sum of the tops. Each stage starts from
// the previous stage's solution and gets the deterministic time left. A
// stage that ends without proving its minimum ends the solve, unproven.
absl::StatusOr<Plan> CpsatPlanner::SolveAcrossPools(
    const Problem& problem, const PlanOptions& options, const Budget& budget,
    const Model& model, const Writer& hint, std::optional<Plan> warm,
    const absl::Status& warm_error, CpsatStats& stats) const {
  const std::string library = Library();
  double seconds_left =
      static_cast<double>(budget.work_limit()) / kWorkPerDeterministicSecond;
  std::vector<Writer> fixed_stages;
  Writer stage_hint = hint;
  std::optional<Plan> found;
  bool proven = true;
  int stages = 0;
  int64_t conflicts = 0, branches = 0;
  const int pools = static_cast<int>(problem.pools.size());
  for (PoolId p = pools - 1; p >= 0; --p) {
    const bool tops = p == 0;  // the last stage: the sum of the tops
    const PoolBytesTerm held =
        tops ? PoolBytesTerm() : HeldIn(problem, model, p);
    if (!tops && held.vars.empty()) continue;  // the same in every plan
    Writer objective;
    if (tops) {
      objective = TopsObjective(model);
    } else {
      objective.Packed(f::kObjectiveVars, held.vars);
      objective.Packed(f::kObjectiveCoeffs, held.coeffs);
    }
    MEMPLAN_ASSIGN_OR_RETURN(
        const std::string bytes,
        internal::SolveCpModel(
            library, ModelBytes(model, fixed_stages, objective, stage_hint),
            Parameters(options, budget, std::max(seconds_left, 0.0))));
    MEMPLAN_ASSIGN_OR_RETURN(const cpsat_wire::Response response,
                             cpsat_wire::ParseResponse(bytes));
    ++stages;
    seconds_left -= response.deterministic_time;
    conflicts += response.num_conflicts;
    branches += response.num_branches;
    stats.status = static_cast<int>(response.status);
    stats.deterministic_time += response.deterministic_time;
    if (response.status == SolverStatus::kModelInvalid) {
      return ModelRejected(response);
    }
    if (response.status == SolverStatus::kInfeasible && stages == 1 &&
        !warm.has_value()) {
      return NothingFits(problem, warm_error);
    }
    const bool solved =
        (response.status == SolverStatus::kFeasible ||
         response.status == SolverStatus::kOptimal) &&
        response.solution.size() == static_cast<size_t>(model.variables);
    if (!solved) {
      if (!tops) proven = false;
      break;
    }
    Plan plan = ExtractPlan(problem, model, response.solution);
    ComputePlanStatistics(problem, plan);
    if (!VerifyPlan(problem, plan).ok()) {
      if (!tops) proven = false;
      break;
    }
    found = std::move(plan);
    if (tops) break;
    const int64_t value =
        static_cast<int64_t>(std::llround(response.objective_value));
    const bool optimal =
        response.status == SolverStatus::kOptimal ||
        response.best_objective_bound >= response.objective_value - 1e-6;
    if (!optimal) {
      proven = false;
      break;
    }
    // Held in p <= its minimum, for the stages that follow.
    fixed_stages.push_back(AtMost(held, value));
    stage_hint = Hint(response.solution);
  }
  return BestAcrossPools(problem, std::move(found), std::move(warm), proven,
                         conflicts, branches, stages);
}

}  // namespace

std::unique_ptr<SearchPlanner> MakeCpsatPlanner(const CpsatOptions& options,
                                                CpsatStats* stats) {
  return std::make_unique<CpsatPlanner>(options, stats);
}

}  // namespace memplan
