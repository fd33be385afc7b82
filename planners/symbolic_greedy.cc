// Symbolic planners: greedy by size with offsets that are expressions, and
// the upper-bound baseline. memplan/symbolic.h states the contracts.
//
// Every offset the greedy places is a polynomial in the binomial basis of
// the dims (model/binomial_poly.h). A candidate is 0, the top of a placed
// conflicting buffer, or the envelope of all their tops (the coefficient-
// wise maximum, >= each top over the whole box, so always valid above
// them), each rounded up to the buffer's alignment. The pairwise check is
// the verifier's: one side proven over the whole box.
//
//   offset ^        envelope(top_a, top_b) -> [  c  ]
//          |  top_b ----------------------/
//          |  [   b   ]   top_a ---------/
//          |  [   a   ]
//          +---------------------------------> dim value

#include <algorithm>
#include <functional>
#include <optional>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/verify.h"
#include "model/binomial_poly.h"

namespace memplan {
namespace {

using internal::BinomialPoly;
using internal::DimBox;
using internal::ProveNonNegative;
using internal::SignProof;

// Sub-boxes the pairwise check may split before it refuses a candidate.
constexpr int64_t kCandidateBudget = 64;

// The sample points, as box coordinates: every dim at the same fraction of
// its range, from its minimum to its maximum.
std::vector<std::vector<int64_t>> DefaultSamples(const DimBox& box) {
  const double fractions[] = {0, 1.0 / 1024, 1.0 / 256, 1.0 / 32, 1.0 / 4,
                              1.0 / 2, 1};
  const std::vector<int64_t> widths = box.Widths();
  std::vector<std::vector<int64_t>> samples;
  for (double f : fractions) {
    std::vector<int64_t> t;
    for (int64_t w : widths) {
      t.push_back(static_cast<int64_t>(f * static_cast<double>(w)));
    }
    if (std::find(samples.begin(), samples.end(), t) == samples.end()) {
      samples.push_back(t);
    }
  }
  return samples;
}

class Greedy {
 public:
  Greedy(const SymbolicProblem& problem, DimBox box)
      : problem_(problem), box_(std::move(box)), width_(box_.Widths()) {}

  absl::StatusOr<SymbolicPlan> Run(const SymbolicGreedyOptions& options) {
    const int n = static_cast<int>(problem_.buffers.size());
    MEMPLAN_RETURN_IF_ERROR(Samples(options));
    sizes_.resize(n);
    for (int i = 0; i < n; ++i) {
      MEMPLAN_ASSIGN_OR_RETURN(
          BinomialPoly p, BinomialPoly::FromExpr(problem_.buffers[i].size, box_));
      sizes_[i] = p.Restrict(width_);
    }
    Neighbours();
    // By size at the dims' maxima, then by id.
    std::vector<int64_t> at_max(n);
    for (int i = 0; i < n; ++i) {
      if (!sizes_[i].Evaluate(width_, &at_max[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer \"", problem_.buffers[i].name,
            "\" overflows 64-bit integers at the dims' maxima"));
      }
    }
    std::vector<int64_t> at_min(n);
    for (int i = 0; i < n; ++i) at_min[i] = sizes_[i].ConstantTerm();
    // Three orders, the best plan over the samples kept: by size at the
    // maxima; by size at the minima; longest lifetime first (long-lived
    // buffers such as a KV cache at the bottom, where their offsets stay
    // constant). Ties by size at the maxima, then by id.
    auto length = [&](int i) {
      const Lifetime& l = problem_.buffers[i].lifetime;
      return l.end - l.start;
    };
    const std::vector<std::function<bool(int, int)>> orders = {
        [&](int a, int b) {
          return at_max[a] != at_max[b] ? at_max[a] > at_max[b] : a < b;
        },
        [&](int a, int b) {
          if (at_min[a] != at_min[b]) return at_min[a] > at_min[b];
          return at_max[a] != at_max[b] ? at_max[a] > at_max[b] : a < b;
        },
        [&](int a, int b) {
          if (length(a) != length(b)) return length(a) > length(b);
          return at_max[a] != at_max[b] ? at_max[a] > at_max[b] : a < b;
        }};
    std::optional<SymbolicPlan> best;
    double best_cost = 0;
    for (const auto& by : orders) {
      std::vector<int> order(n);
      for (int i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), by);
      offsets_.assign(n, BinomialPoly());
      tops_.assign(n, BinomialPoly());
      placed_.assign(n, false);
      peak_values_.assign(samples_.size(), 0);
      for (int b : order) MEMPLAN_RETURN_IF_ERROR(Place(b));
      const BinomialPoly peak = Peak(at_max);
      double cost = 0;
      for (size_t s = 0; s < samples_.size(); ++s) {
        int64_t value = 0;
        if (!peak.Evaluate(samples_[s], &value)) {
          value = std::numeric_limits<int64_t>::max();
        }
        cost += static_cast<double>(value) /
                static_cast<double>(lower_bounds_[s]);
      }
      if (best.has_value() && cost >= best_cost) continue;
      SymbolicPlan plan;
      plan.planner = "symbolic_greedy";
      for (int i = 0; i < n; ++i) {
        MEMPLAN_ASSIGN_OR_RETURN(DimExpr offset, offsets_[i].ToExpr(box_));
        plan.offsets.push_back(std::move(offset));
      }
      MEMPLAN_ASSIGN_OR_RETURN(plan.peak, peak.ToExpr(box_));
      best = std::move(plan);
      best_cost = cost;
    }
    return *std::move(best);
  }

 private:
  absl::Status Samples(const SymbolicGreedyOptions& options) {
    samples_ = DefaultSamples(box_);
    for (const DimValues& values : options.samples) {
      MEMPLAN_RETURN_IF_ERROR(CheckDimValues(problem_.dims, values));
      std::vector<int64_t> t;
      for (int d = 0; d < box_.size(); ++d) {
        auto it = values.find(box_.names[d]);
        if (it == values.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "a sample gives no value to dim \"", box_.names[d], "\""));
        }
        t.push_back(it->second - box_.min[d]);
      }
      samples_.push_back(std::move(t));
    }
    for (const std::vector<int64_t>& t : samples_) {
      MEMPLAN_ASSIGN_OR_RETURN(Problem p, problem_.At(box_.ValuesAt(t)));
      lower_bounds_.push_back(std::max<int64_t>(1, LowerBound(p)));
    }
    return absl::OkStatus();
  }

  void Neighbours() {
    const int n = static_cast<int>(problem_.buffers.size());
    neighbours_.assign(n, {});
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const Lifetime& x = problem_.buffers[a].lifetime;
      const Lifetime& y = problem_.buffers[b].lifetime;
      return x.start != y.start ? x.start < y.start : a < b;
    });
    std::vector<int> alive;
    for (int b : order) {
      const Step start = problem_.buffers[b].lifetime.start;
      std::erase_if(alive, [&](int a) {
        return problem_.buffers[a].lifetime.end <= start;
      });
      for (int a : alive) {
        neighbours_[a].push_back(b);
        neighbours_[b].push_back(a);
      }
      alive.push_back(b);
    }
    for (const BufferConflict& c : problem_.conflicts) {
      if (c.a == c.b) continue;
      neighbours_[c.a].push_back(c.b);
      neighbours_[c.b].push_back(c.a);
    }
    for (std::vector<int>& list : neighbours_) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }

  // A polynomial >= every top over the box: the highest top at the maxima,
  // raised (coefficient-wise envelope) by each top not proven under it.
  BinomialPoly Peak(const std::vector<int64_t>& at_max) {
    const int n = static_cast<int>(tops_.size());
    std::vector<int64_t> top_at_max(n, 0);
    int highest = -1;
    for (int i = 0; i < n; ++i) {
      int64_t offset = 0;
      if (!offsets_[i].Evaluate(width_, &offset)) offset = 0;
      top_at_max[i] = offset + at_max[i];
      if (highest < 0 || top_at_max[i] > top_at_max[highest]) highest = i;
    }
    if (highest < 0) return BinomialPoly();
    BinomialPoly peak = tops_[highest];
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<BinomialPoly> room = internal::Subtract(peak, tops_[i]);
      if (room.ok() && room->AllNonNegative()) continue;
      int64_t budget = kCandidateBudget;
      if (room.ok() && room->ConstantTerm() >= 0 &&
          ProveNonNegative(*room, width_, &budget).result ==
              SignProof::kProven) {
        continue;
      }
      peak = Envelope(peak, tops_[i]);
    }
    return peak;
  }

  // True when the placement [offset, top) is proven apart from buffer k.
  bool Apart(const BinomialPoly& offset, const BinomialPoly& top, int k) {
    absl::StatusOr<BinomialPoly> above = internal::Subtract(offset, tops_[k]);
    if (!above.ok()) return false;
    if (above->AllNonNegative()) return true;
    absl::StatusOr<BinomialPoly> below = internal::Subtract(offsets_[k], top);
    if (!below.ok()) return false;
    if (below->AllNonNegative()) return true;
    // A side that holds at the dims' minima, proven over the box.
    for (const BinomialPoly* side : {&*above, &*below}) {
      if (side->ConstantTerm() < 0) continue;
      int64_t budget = kCandidateBudget;
      if (ProveNonNegative(*side, width_, &budget).result ==
          SignProof::kProven) {
        return true;
      }
    }
    return false;
  }

  absl::Status Place(int b) {
    const Bytes alignment =
        std::max(problem_.buffers[b].alignment, problem_.pool.alignment);
    std::vector<BinomialPoly> candidates = {BinomialPoly()};
    std::vector<int> placed;
    BinomialPoly envelope;
    for (int k : neighbours_[b]) {
      if (!placed_[k] || sizes_[k].IsZero()) continue;
      placed.push_back(k);
      candidates.push_back(tops_[k]);
      envelope = Envelope(envelope, tops_[k]);
    }
    candidates.push_back(envelope);  // apart from every placed neighbour
    struct Choice {
      double cost = std::numeric_limits<double>::infinity();
      double height = 0;
      int index = -1;
      BinomialPoly offset, top;
      std::vector<int64_t> values;
    } best;
    for (int c = 0; c < static_cast<int>(candidates.size()); ++c) {
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly offset,
                               candidates[c].RoundUp(alignment));
      offset = offset.Restrict(width_);
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly top, internal::Add(offset, sizes_[b]));
      bool valid = sizes_[b].IsZero() || c + 1 == static_cast<int>(candidates.size());
      if (!valid) {
        valid = true;
        for (int k : placed) {
          if (!Apart(offset, top, k)) {
            valid = false;
            break;
          }
        }
      }
      if (!valid) continue;
      // The peak each sample would have, relative to its lower bound; then
      // the buffer's own height, so that a lower offset wins a tie.
      double cost = 0, height = 0;
      std::vector<int64_t> values(samples_.size());
      bool fits = true;
      for (size_t s = 0; s < samples_.size(); ++s) {
        if (!top.Evaluate(samples_[s], &values[s])) {
          fits = false;
          break;
        }
        const double lb = static_cast<double>(lower_bounds_[s]);
        cost += static_cast<double>(std::max(values[s], peak_values_[s])) / lb;
        height += static_cast<double>(values[s]) / lb;
      }
      if (!fits) continue;
      if (cost < best.cost || (cost == best.cost && height < best.height)) {
        best = {cost, height, c, offset, top, std::move(values)};
      }
    }
    if (best.index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer \"", problem_.buffers[b].name,
          "\" has no offset that fits in 64-bit integers"));
    }
    offsets_[b] = std::move(best.offset);
    tops_[b] = std::move(best.top);
    for (size_t s = 0; s < samples_.size(); ++s) {
      peak_values_[s] = std::max(peak_values_[s], best.values[s]);
    }
    placed_[b] = true;
    return absl::OkStatus();
  }

  const SymbolicProblem& problem_;
  DimBox box_;
  std::vector<int64_t> width_;
  std::vector<std::vector<int64_t>> samples_;
  std::vector<int64_t> lower_bounds_;  // per sample
  std::vector<BinomialPoly> sizes_;
  std::vector<std::vector<int>> neighbours_;
  std::vector<BinomialPoly> offsets_;
  std::vector<BinomialPoly> tops_;
  std::vector<bool> placed_;
  std::vector<int64_t> peak_values_;
};

}  // namespace

absl::StatusOr<SymbolicPlan> PlanSymbolicGreedy(
    const SymbolicProblem& problem, const SymbolicGreedyOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan,
                           Greedy(problem, std::move(box)).Run(options));
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, plan));
  return plan;
}

absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicPlan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  double worst = 0;
  for (const std::vector<int64_t>& t : DefaultSamples(box)) {
    const DimValues values = box.ValuesAt(t);
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, problem.At(values));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t peak, plan.peak.Evaluate(values));
    worst = std::max(worst, static_cast<double>(peak) /
                                static_cast<double>(
                                    std::max<int64_t>(1, LowerBound(at))));
  }
  return worst;
}

absl::StatusOr<std::vector<SymbolicBucket>> PlanSymbolicBuckets(
    const SymbolicProblem& problem, const SymbolicBucketOptions& options) {
  if (options.max_buckets < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_buckets is ", options.max_buckets, "; at least 1"));
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(problem.dims));
  std::string dim = options.dim;
  if (dim.empty()) {
    double widest = 0;
    for (const auto& [name, range] : problem.dims) {
      const double ratio = static_cast<double>(range.max + 1) /
                           static_cast<double>(range.min + 1);
      if (dim.empty() || ratio > widest) {
        dim = name;
        widest = ratio;
      }
    }
  }
  auto it = problem.dims.find(dim);
  if (it == problem.dims.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dim \"", dim, "\" is not a dim of the problem"));
  }
  const DimRange range = it->second;
  // Bucket ends: the range's, and each power of two inside it; bucket i
  // spans [ends[a] + 1, ends[b]] (the first starts at range.min).
  std::vector<int64_t> ends = {range.min - 1};
  for (int64_t p = 1; p > 0 && p < range.max; p *= 2) {
    if (p >= range.min) ends.push_back(p);
  }
  ends.push_back(range.max);
  const int m = static_cast<int>(ends.size());
  // plans[a][b]: the greedy plan of the bucket (ends[a], ends[b]].
  std::vector<std::vector<std::optional<SymbolicPlan>>> plans(
      m, std::vector<std::optional<SymbolicPlan>>(m));
  std::vector<std::vector<double>> ratio(m, std::vector<double>(m, 0));
  auto narrowed = [&](int a, int b) {
    SymbolicProblem sub = problem;
    sub.dims[dim] = {ends[a] + 1, ends[b]};
    return sub;
  };
  const bool one = options.max_buckets == 1;
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b) {
      if (one && (a != 0 || b != m - 1)) continue;
      const SymbolicProblem sub = narrowed(a, b);
      MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan,
                               PlanSymbolicGreedy(sub, options.greedy));
      MEMPLAN_ASSIGN_OR_RETURN(ratio[a][b], WorstSampledRatio(sub, plan));
      plans[a][b] = std::move(plan);
    }
  }
  // cost[k][b]: the least worst ratio covering (ends[0], ends[b]] with k
  // buckets; fewer buckets win ties.
  const double kNone = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(
      options.max_buckets + 1, std::vector<double>(m, kNone));
  std::vector<std::vector<int>> from(options.max_buckets + 1,
                                     std::vector<int>(m, -1));
  cost[0][0] = 0;
  for (int k = 1; k <= options.max_buckets; ++k) {
    for (int b = 1; b < m; ++b) {
      for (int a = 0; a < b; ++a) {
        if (!plans[a][b].has_value() || cost[k - 1][a] == kNone) continue;
        const double c = std::max(cost[k - 1][a], ratio[a][b]);
        if (c < cost[k][b]) {
          cost[k][b] = c;
          from[k][b] = a;
        }
      }
    }
  }
  int k_best = 1;
  for (int k = 2; k <= options.max_buckets; ++k) {
    if (cost[k][m - 1] < cost[k_best][m - 1]) k_best = k;
  }
  std::vector<SymbolicBucket> buckets;
  for (int k = k_best, b = m - 1; k > 0; --k) {
    const int a = from[k][b];
    buckets.push_back({narrowed(a, b).dims, *std::move(plans[a][b])});
    b = a;
  }
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

absl::StatusOr<SymbolicPlan> PlanSymbolicUpperBound(
    const SymbolicProblem& problem) {
  DimValues maxima;
  for (const auto& [name, range] : problem.dims) maxima[name] = range.max;
  MEMPLAN_ASSIGN_OR_RETURN(Problem at_max, problem.At(maxima));
  MEMPLAN_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                           CreatePlanner("greedy_by_size"));
  MEMPLAN_ASSIGN_OR_RETURN(Plan plan, planner->Solve(at_max, PlanOptions{}));
  MEMPLAN_RETURN_IF_ERROR(VerifyPlan(at_max, plan));
  SymbolicPlan out;
  out.planner = "upper_bound";
  for (const Assignment& a : plan.assignments) {
    out.offsets.push_back(DimExpr(a.offset));
  }
  out.peak = DimExpr(plan.peak);
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, out));
  return out;
}

}  // namespace memplan
