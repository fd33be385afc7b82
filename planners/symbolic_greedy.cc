// Symbolic planners: greedy by size with offsets that are expressions, and
// the upper-bound baseline. memplan/symbolic.h states the contracts.
//
// Every offset the greedy places is a polynomial in the binomial basis of
// the dims (symbolic/binomial_poly.h). A candidate is 0, the top of a placed
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
#include <cmath>
#include <random>
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
#include "memplan/registry.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_verify.h"
#include "memplan/verify.h"
#include "symbolic/binomial_poly.h"

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

// How a placement chooses among its candidates.
struct PlaceRule {
  // Beyond 0, each placed neighbour's top and the envelope of all of them:
  // the envelope of each top with the highest top at the minima and with the
  // highest at the maxima (apart from both, lower than the whole envelope).
  bool pair_envelopes = false;
  // Compare the candidates by their worst weighted sample first (then by the
  // sum of their ratios), instead of by the sum alone.
  bool worst_first = false;
};

// A plan's quality over the samples: the worst weighted ratio (1 at the
// target), then the sum of the ratios; smaller is better.
struct Score {
  double worst = std::numeric_limits<double>::infinity();
  double sum = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const {
    return worst != o.worst ? worst < o.worst : sum < o.sum;
  }
};

class Greedy {
 public:
  Greedy(const SymbolicProblem& problem, DimBox box)
      : problem_(problem), box_(std::move(box)), width_(box_.Widths()) {}

  absl::StatusOr<SymbolicPlan> Run(const SymbolicGreedyOptions& options) {
    MEMPLAN_RETURN_IF_ERROR(Prepare(DefaultSamples(box_), options.samples));
    std::optional<SymbolicPlan> best;
    double best_cost = 0;
    for (const std::vector<int>& order : Orders(/*more=*/false)) {
      MEMPLAN_RETURN_IF_ERROR(Layout(order, PlaceRule{}));
      const BinomialPoly peak = Peak(-1);
      std::vector<int64_t> values;
      PeakValues(peak, &values);
      double cost = 0;
      for (size_t s = 0; s < samples_.size(); ++s) {
        cost += static_cast<double>(values[s]) /
                static_cast<double>(lower_bounds_[s]);
      }
      if (best.has_value() && cost >= best_cost) continue;
      MEMPLAN_ASSIGN_OR_RETURN(best, MakePlan(peak, "symbolic_greedy"));
      best_cost = cost;
    }
    return *std::move(best);
  }

  // The samples: `base` (box coordinates) and the caller's values; the
  // sizes and neighbours of every buffer.
  absl::Status Prepare(std::vector<std::vector<int64_t>> base,
                       const std::vector<DimValues>& extra) {
    const int n = static_cast<int>(problem_.buffers.size());
    samples_ = std::move(base);
    for (const DimValues& values : extra) {
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
      MEMPLAN_ASSIGN_OR_RETURN(Problem p, problem_.Rounded(box_.ValuesAt(t)));
      lower_bounds_.push_back(std::max<int64_t>(1, LowerBound(p)));
    }
    sizes_.resize(n);
    for (int i = 0; i < n; ++i) {
      MEMPLAN_ASSIGN_OR_RETURN(
          BinomialPoly p, BinomialPoly::FromExpr(problem_.buffers[i].size, box_));
      sizes_[i] = p.Restrict(width_);
    }
    Neighbours();
    at_max_.resize(n);
    at_min_.resize(n);
    for (int i = 0; i < n; ++i) {
      if (!sizes_[i].Evaluate(width_, &at_max_[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "buffer \"", problem_.buffers[i].name,
            "\" overflows 64-bit integers at the dims' maxima"));
      }
      at_min_[i] = sizes_[i].ConstantTerm();
    }
    laid_.clear();
    offsets_.assign(n, BinomialPoly());
    tops_.assign(n, BinomialPoly());
    placed_.assign(n, false);
    return absl::OkStatus();
  }

  // Placement orders. The greedy's three: by size at the maxima; by size at
  // the minima; longest lifetime first (long-lived buffers such as a KV
  // cache at the bottom, where their offsets stay constant). `more` adds by
  // area (size at the maxima times lifetime) and by size at the middle of
  // the box. Ties by size at the maxima, then by id.
  std::vector<std::vector<int>> Orders(bool more) const {
    const int n = static_cast<int>(problem_.buffers.size());
    auto length = [&](int i) {
      const Lifetime& l = problem_.buffers[i].lifetime;
      return static_cast<int64_t>(l.end - l.start);
    };
    std::vector<int64_t> at_mid(n), area(n);
    std::vector<int64_t> middle(width_.size());
    for (size_t d = 0; d < width_.size(); ++d) middle[d] = width_[d] / 2;
    for (int i = 0; i < n; ++i) {
      if (!sizes_[i].Evaluate(middle, &at_mid[i])) at_mid[i] = at_max_[i];
      area[i] = static_cast<int64_t>(std::min<double>(
          static_cast<double>(at_max_[i]) * static_cast<double>(length(i)),
          9e18));
    }
    auto by = [&](const std::vector<int64_t>& key) {
      return [&](int a, int b) {
        if (key[a] != key[b]) return key[a] > key[b];
        return at_max_[a] != at_max_[b] ? at_max_[a] > at_max_[b] : a < b;
      };
    };
    std::vector<int64_t> lengths(n);
    for (int i = 0; i < n; ++i) lengths[i] = length(i);
    std::vector<const std::vector<int64_t>*> keys = {&at_max_, &at_min_,
                                                     &lengths};
    if (more) {
      keys.push_back(&area);
      keys.push_back(&at_mid);
    }
    std::vector<std::vector<int>> orders;
    for (const std::vector<int64_t>* key : keys) {
      std::vector<int> order(n);
      for (int i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), by(*key));
      orders.push_back(std::move(order));
    }
    return orders;
  }

  // Places the buffers in `order`, keeping the placements of the longest
  // prefix it shares with the previous layout (made with the same rule).
  absl::Status Layout(const std::vector<int>& order, const PlaceRule& rule) {
    size_t keep = 0;
    while (keep < laid_.size() && keep < order.size() &&
           laid_[keep] == order[keep]) {
      ++keep;
    }
    for (size_t p = keep; p < laid_.size(); ++p) placed_[laid_[p]] = false;
    laid_.resize(keep);
    prefix_peaks_.resize(keep + 1);
    if (keep == 0) prefix_peaks_[0].assign(samples_.size(), 0);
    peak_values_ = prefix_peaks_[keep];
    for (size_t p = keep; p < order.size(); ++p) {
      MEMPLAN_RETURN_IF_ERROR(Place(order[p], rule));
      laid_.push_back(order[p]);
      prefix_peaks_.push_back(peak_values_);
    }
    return absl::OkStatus();
  }

  // Forgets the previous layout (for a change of rule).
  void Reset() { Layout({}, PlaceRule{}).IgnoreError(); }

  // A polynomial >= every top over the box: the highest top at sample
  // `start` (at the maxima when -1), raised by each top not proven under
  // it: by their coefficient-wise envelope, or (`shift`) by the least
  // constant that the prover finds enough for every such top.
  BinomialPoly Peak(int start, bool shift = false) {
    const int n = static_cast<int>(tops_.size());
    const std::vector<int64_t>& at = start < 0 ? width_ : samples_[start];
    int highest = -1;
    int64_t highest_value = 0;
    for (int i = 0; i < n; ++i) {
      int64_t top = 0;
      if (!tops_[i].Evaluate(at, &top)) top = 0;
      if (highest < 0 || top > highest_value) {
        highest = i;
        highest_value = top;
      }
    }
    if (highest < 0) return BinomialPoly();
    work_ += n;
    BinomialPoly peak = tops_[highest];
    const BinomialPoly base = peak;
    int64_t lift = 0;  // with `shift`: the constant added to base
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<BinomialPoly> room = internal::Subtract(base, tops_[i]);
      if (room.ok() && room->AllNonNegative()) continue;
      if (room.ok() && room->ConstantTerm() >= 0 && Proven(*room, 0)) continue;
      if (!shift || !room.ok()) {
        peak = Envelope(peak, tops_[i]);
        continue;
      }
      // top_i - base <= its positive coefficients at the upper corner
      // (C(t, k) grows with t), so that constant is enough; search down.
      int64_t hi = 0, with = 0, without = 0;
      if (!Envelope(base, tops_[i]).Evaluate(width_, &with) ||
          !base.Evaluate(width_, &without)) {
        peak = Envelope(peak, tops_[i]);
        continue;
      }
      hi = with - without;
      if (hi <= lift) continue;
      int64_t lo = lift;  // not proven enough (or the lift so far)
      if (Proven(*room, lo)) continue;
      // To within 1/1024 of the lift: each step is a proof.
      while (hi - lo > std::max<int64_t>(1, hi >> 10)) {
        const int64_t mid = lo + (hi - lo) / 2;
        (Proven(*room, mid) ? hi : lo) = mid;
      }
      lift = hi;
    }
    if (shift && lift > 0) {
      absl::StatusOr<BinomialPoly> lifted =
          internal::Add(peak, BinomialPoly::Constant(lift));
      if (lifted.ok()) return *lifted;
      return Peak(start, false);
    }
    return peak;
  }

  // True when room + c >= 0 is proven over the box.
  bool Proven(const BinomialPoly& room, int64_t c) {
    absl::StatusOr<BinomialPoly> p =
        internal::Add(room, BinomialPoly::Constant(c));
    if (!p.ok()) return false;
    if (p->AllNonNegative()) return true;
    if (p->ConstantTerm() < 0) return false;
    int64_t budget = kCandidateBudget;
    const bool proven =
        ProveNonNegative(*p, width_, &budget).result == SignProof::kProven;
    work_ += kCandidateBudget - budget;
    return proven;
  }

  // The peak's value at each sample (int64 max where it overflows).
  void PeakValues(const BinomialPoly& peak, std::vector<int64_t>* values) const {
    values->assign(samples_.size(), 0);
    for (size_t s = 0; s < samples_.size(); ++s) {
      if (!peak.Evaluate(samples_[s], &(*values)[s])) {
        (*values)[s] = std::numeric_limits<int64_t>::max();
      }
    }
  }

  absl::StatusOr<SymbolicPlan> MakePlan(const BinomialPoly& peak,
                                        const std::string& planner) const {
    SymbolicPlan plan;
    plan.planner = planner;
    for (const BinomialPoly& offset : offsets_) {
      MEMPLAN_ASSIGN_OR_RETURN(DimExpr e, offset.ToExpr(box_));
      plan.offsets.push_back(std::move(e));
    }
    MEMPLAN_ASSIGN_OR_RETURN(plan.peak, peak.ToExpr(box_));
    return plan;
  }

  // Per-sample weights of the search's score: 1 / (target - 1), with the
  // end target at the box's upper corner.
  void SetTargets(double target, double end_target) {
    weights_.clear();
    for (const std::vector<int64_t>& t : samples_) {
      weights_.push_back(1.0 / ((t == width_ ? end_target : target) - 1.0));
    }
  }

  Score ScoreOf(const std::vector<int64_t>& values) const {
    Score score{0, 0};
    for (size_t s = 0; s < samples_.size(); ++s) {
      const double r = static_cast<double>(values[s]) /
                       static_cast<double>(lower_bounds_[s]);
      score.worst = std::max(score.worst, (r - 1) * weights_[s]);
      score.sum += r;
    }
    return score;
  }

  // The sample of the worst weighted ratio.
  int WorstSample(const std::vector<int64_t>& values) const {
    int worst = 0;
    double worst_ratio = -1;
    for (size_t s = 0; s < samples_.size(); ++s) {
      const double r = (static_cast<double>(values[s]) /
                            static_cast<double>(lower_bounds_[s]) -
                        1) *
                       weights_[s];
      if (r > worst_ratio) {
        worst = static_cast<int>(s);
        worst_ratio = r;
      }
    }
    return worst;
  }

  // The buffer whose top is highest at sample s.
  int HighestAt(int s) const {
    int highest = 0;
    int64_t highest_value = -1;
    for (size_t i = 0; i < tops_.size(); ++i) {
      int64_t top = 0;
      if (tops_[i].Evaluate(samples_[s], &top) && top > highest_value) {
        highest = static_cast<int>(i);
        highest_value = top;
      }
    }
    return highest;
  }

  const std::vector<std::vector<int64_t>>& samples() const { return samples_; }
  int64_t LowerBoundAt(size_t s) const { return lower_bounds_[s]; }
  int64_t work() const { return work_; }

 private:
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

  // True when the placement [offset, top) is proven apart from buffer k.
  bool Apart(const BinomialPoly& offset, const BinomialPoly& top, int k) {
    ++work_;
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
      work_ += kCandidateBudget - budget;
    }
    return false;
  }

  absl::Status Place(int b, const PlaceRule& rule) {
    const Bytes alignment =
        std::max(problem_.buffers[b].alignment, problem_.pool.alignment);
    std::vector<BinomialPoly> candidates = {BinomialPoly()};
    std::vector<int> placed;
    BinomialPoly envelope;
    int high_min = -1, high_max = -1;
    int64_t high_min_value = 0, high_max_value = 0;
    for (int k : neighbours_[b]) {
      if (!placed_[k] || sizes_[k].IsZero()) continue;
      placed.push_back(k);
      candidates.push_back(tops_[k]);
      envelope = Envelope(envelope, tops_[k]);
      if (!rule.pair_envelopes) continue;
      int64_t at_min = tops_[k].ConstantTerm(), at_max = 0;
      if (!tops_[k].Evaluate(width_, &at_max)) continue;
      if (high_min < 0 || at_min > high_min_value) {
        high_min = k;
        high_min_value = at_min;
      }
      if (high_max < 0 || at_max > high_max_value) {
        high_max = k;
        high_max_value = at_max;
      }
    }
    if (rule.pair_envelopes && high_min >= 0) {
      for (int k : placed) {
        for (int h : {high_min, high_max}) {
          if (h == k) continue;
          BinomialPoly pair = Envelope(tops_[k], tops_[h]);
          if (pair == envelope) continue;
          if (std::find(candidates.begin(), candidates.end(), pair) ==
              candidates.end()) {
            candidates.push_back(std::move(pair));
          }
        }
      }
    }
    candidates.push_back(envelope);  // apart from every placed neighbour
    struct Choice {
      Score score;
      double height = 0;
      int index = -1;
      BinomialPoly offset, top;
      std::vector<int64_t> values;
    } best;
    for (int c = 0; c < static_cast<int>(candidates.size()); ++c) {
      work_ += 1 + static_cast<int64_t>(samples_.size());
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly offset,
                               candidates[c].RoundUp(alignment));
      offset = offset.Restrict(width_);
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly top, internal::Add(offset, sizes_[b]));
      // The peak each sample would have, relative to its lower bound; then
      // the buffer's own height, so that a lower offset wins a tie.
      Score score{0, 0};
      double height = 0;
      std::vector<int64_t> values(samples_.size());
      bool fits = true;
      for (size_t s = 0; s < samples_.size(); ++s) {
        if (!top.Evaluate(samples_[s], &values[s])) {
          fits = false;
          break;
        }
        const double lb = static_cast<double>(lower_bounds_[s]);
        const double r =
            static_cast<double>(std::max(values[s], peak_values_[s])) / lb;
        score.sum += r;
        if (rule.worst_first) {
          score.worst = std::max(score.worst, (r - 1) * weights_[s]);
        }
        height += static_cast<double>(values[s]) / lb;
      }
      if (!fits) continue;
      if (best.index >= 0 &&
          !(score < best.score ||
            (!(best.score < score) && height < best.height))) {
        continue;
      }
      // Valid: proven apart from every placed neighbour (the envelope is,
      // by construction).
      bool valid =
          sizes_[b].IsZero() || c + 1 == static_cast<int>(candidates.size());
      for (size_t i = 0; !valid && i <= placed.size(); ++i) {
        if (i == placed.size()) {
          valid = true;
        } else if (!Apart(offset, top, placed[i])) {
          break;
        }
      }
      if (!valid) continue;
      best = {score, height, c, offset, top, std::move(values)};
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
  std::vector<double> weights_;        // per sample, for the search's score
  std::vector<BinomialPoly> sizes_;
  std::vector<int64_t> at_max_, at_min_;  // sizes at the box's corners
  std::vector<std::vector<int>> neighbours_;
  std::vector<BinomialPoly> offsets_;
  std::vector<BinomialPoly> tops_;
  std::vector<bool> placed_;
  std::vector<int64_t> peak_values_;
  std::vector<int> laid_;  // the order of the current layout
  std::vector<std::vector<int64_t>> prefix_peaks_;  // before each position
  int64_t work_ = 0;
};


// The search's samples: the greedy's, the smallest values (every dim at
// min + 1, 2, 3, 6) and each dim at 2^-j and 3 * 2^-j of its range.
std::vector<std::vector<int64_t>> DenseSamples(const DimBox& box) {
  std::vector<std::vector<int64_t>> samples = DefaultSamples(box);
  const std::vector<int64_t> widths = box.Widths();
  auto add = [&](const std::vector<int64_t>& t) {
    if (std::find(samples.begin(), samples.end(), t) == samples.end()) {
      samples.push_back(t);
    }
  };
  for (int64_t step : {1, 2, 3, 6}) {
    std::vector<int64_t> t;
    for (int64_t w : widths) t.push_back(std::min(w, step));
    add(t);
  }
  for (int j = 1; j <= 12; ++j) {
    for (double f : {std::ldexp(1.0, -j), 3 * std::ldexp(1.0, -j - 1)}) {
      std::vector<int64_t> t;
      for (int64_t w : widths) {
        t.push_back(static_cast<int64_t>(f * static_cast<double>(w)));
      }
      add(t);
    }
  }
  return samples;
}

// The improving search: placement orders and rules, then a hill climb over
// the order of the best, scored at the dense samples. Deterministic: moves
// come from a seeded generator and the budget counts work, not time.
class Search {
 public:
  Search(const SymbolicProblem& problem, const DimBox& box,
         const SymbolicSearchOptions& options)
      : problem_(problem), box_(box), options_(options), engine_(problem, box) {}

  absl::StatusOr<SymbolicPlan> Run() {
    MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan greedy,
                             PlanSymbolicGreedy(problem_, options_.greedy));
    MEMPLAN_ASSIGN_OR_RETURN(greedy_ratio_, WorstSampledRatio(problem_, greedy));
    default_samples_ = DefaultSamples(box_).size();
    MEMPLAN_RETURN_IF_ERROR(
        engine_.Prepare(DenseSamples(box_), options_.greedy.samples));
    engine_.SetTargets(options_.target_ratio, options_.end_target_ratio);
    // The greedy's plan is the one to beat.
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly greedy_peak,
                             BinomialPoly::FromExpr(greedy.peak, box_));
    std::vector<int64_t> values;
    engine_.PeakValues(greedy_peak, &values);
    const Score greedy_score = engine_.ScoreOf(values);
    const PlaceRule rules[] = {{}, {.pair_envelopes = true, .worst_first = true},
                               {.pair_envelopes = true}};
    for (const PlaceRule& rule : rules) {
      engine_.Reset();
      for (const std::vector<int>& order : engine_.Orders(/*more=*/true)) {
        MEMPLAN_RETURN_IF_ERROR(Try(order, rule));
      }
    }
    // The hill climb over the best order: move the buffer at the peak of
    // the worst sample earlier, or swap two, or move one anywhere; keep a
    // change when the score drops.
    std::mt19937_64 rng(options_.seed);
    engine_.Reset();
    const int n = static_cast<int>(best_.order.size());
    while (n >= 2 && engine_.work() < options_.budget) {
      std::vector<int> order = best_.order;
      const uint64_t kind = rng() % 3;
      const int pos = static_cast<int>(
          std::find(order.begin(), order.end(), best_.highest) - order.begin());
      if (kind == 0 && pos > 0 && pos < n) {
        const int to = static_cast<int>(rng() % pos);
        std::rotate(order.begin() + to, order.begin() + pos,
                    order.begin() + pos + 1);
      } else if (kind == 1) {
        const int i = static_cast<int>(rng() % n);
        const int j = static_cast<int>(rng() % n);
        if (i == j) continue;
        std::swap(order[i], order[j]);
      } else {
        const int i = static_cast<int>(rng() % n);
        const int j = static_cast<int>(rng() % n);
        if (i == j) continue;
        const int b = order[i];
        order.erase(order.begin() + i);
        order.insert(order.begin() + j, b);
      }
      MEMPLAN_RETURN_IF_ERROR(Try(order, best_.rule));
    }
    if (!(best_.score < greedy_score) || !best_.no_worse_than_greedy) {
      greedy.planner = "symbolic_search";
      return greedy;
    }
    engine_.Reset();
    MEMPLAN_RETURN_IF_ERROR(engine_.Layout(best_.order, best_.rule));
    return engine_.MakePlan(engine_.Peak(best_.peak_start, best_.peak_shift),
                            "symbolic_search");
  }

 private:
  // Lays out `order` under `rule`; keeps it when its score is the best yet.
  absl::Status Try(const std::vector<int>& order, const PlaceRule& rule) {
    MEMPLAN_RETURN_IF_ERROR(engine_.Layout(order, rule));
    // Two peak expressions: from the highest top at the maxima, and at the
    // minima.
    for (int start : {-1, 0}) {
      for (bool shift : {false, true}) {
        const BinomialPoly peak = engine_.Peak(start, shift);
        std::vector<int64_t> values;
        engine_.PeakValues(peak, &values);
        const Score score = engine_.ScoreOf(values);
        if (!(score < best_.score)) continue;
        best_ = {score, order, rule, start, shift,
                 engine_.HighestAt(engine_.WorstSample(values)),
                 NoWorseThanGreedy(values)};
      }
    }
    return absl::OkStatus();
  }

  bool NoWorseThanGreedy(const std::vector<int64_t>& values) const {
    for (size_t s = 0; s < default_samples_; ++s) {
      if (static_cast<double>(values[s]) >
          greedy_ratio_ * static_cast<double>(engine_.LowerBoundAt(s))) {
        return false;
      }
    }
    return true;
  }

  const SymbolicProblem& problem_;
  const DimBox& box_;
  const SymbolicSearchOptions& options_;
  Greedy engine_;
  double greedy_ratio_ = 0;
  size_t default_samples_ = 0;
  struct Best {
    Score score;
    std::vector<int> order;
    PlaceRule rule;
    int peak_start = -1;
    bool peak_shift = false;
    int highest = -1;  // the buffer at the peak of the worst sample
    bool no_worse_than_greedy = false;  // over the greedy's samples
  } best_;
};

// The slack (target - 1) the search gives a ratio at `values`: the end
// target's at the maxima of `whole`, the target's elsewhere. A target of 1
// (or below) asks for the bound itself: any excess is then very large,
// never a division by zero.
double Slack(const DimValues& values, const DimRanges& whole,
             const SymbolicSearchOptions& options) {
  bool end = true;
  for (const auto& [name, range] : whole) {
    end = end && values.at(name) == range.max;
  }
  return std::max(
      1e-9, (end ? options.end_target_ratio : options.target_ratio) - 1);
}

// The search's score of `plan` on `sub` (the problem, its dims maybe
// narrowed): the worst (peak / LB - 1) / (target - 1) over the search's
// samples, with the end target at the maxima of `whole`.
// A plan of sub.Stepped(steps) is taken at StepValues() of each sample.
absl::StatusOr<double> TargetExcess(const SymbolicProblem& sub,
                                    const DimValues& steps,
                                    const SymbolicPlan& plan,
                                    const SymbolicSearchOptions& options,
                                    const DimRanges& whole,
                                    DimValues* worst_at = nullptr) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(sub.dims));
  double worst = -1;
  for (const std::vector<int64_t>& t : DenseSamples(box)) {
    const DimValues values = box.ValuesAt(t);
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, sub.Rounded(values));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t peak,
                             plan.peak.Evaluate(StepValues(values, steps)));
    const double ratio =
        static_cast<double>(peak) /
        static_cast<double>(std::max<int64_t>(1, LowerBound(at)));
    const double excess = (ratio - 1) / Slack(values, whole, options);
    if (excess > worst) {
      worst = excess;
      if (worst_at != nullptr) *worst_at = values;
    }
  }
  return std::max(worst, 0.0);
}

}  // namespace

absl::StatusOr<SymbolicPlan> PlanSymbolicGreedy(
    const SymbolicProblem& problem, const SymbolicGreedyOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan,
                           Greedy(problem, std::move(box)).Run(options));
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, plan));
  return plan;
}

absl::StatusOr<SymbolicPlan> PlanSymbolicSearch(
    const SymbolicProblem& problem, const SymbolicSearchOptions& options) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicPlan plan,
                           Search(problem, box, options).Run());
  MEMPLAN_RETURN_IF_ERROR(VerifySymbolicPlan(problem, plan));
  return plan;
}

namespace {

// WorstSampledRatio() of a plan of problem.Stepped(steps).
absl::StatusOr<double> WorstStepped(const SymbolicProblem& problem,
                                    const DimValues& steps,
                                    const SymbolicPlan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  double worst = 0;
  for (const std::vector<int64_t>& t : DefaultSamples(box)) {
    const DimValues values = box.ValuesAt(t);
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, problem.Rounded(values));
    MEMPLAN_ASSIGN_OR_RETURN(int64_t peak,
                             plan.peak.Evaluate(StepValues(values, steps)));
    worst = std::max(worst, static_cast<double>(peak) /
                                static_cast<double>(
                                    std::max<int64_t>(1, LowerBound(at))));
  }
  return worst;
}

}  // namespace

absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicPlan& plan) {
  return WorstStepped(problem, {}, plan);
}

absl::StatusOr<double> WorstSampledRatio(const SymbolicProblem& problem,
                                         const SymbolicBucket& bucket) {
  MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                           problem.Narrowed(bucket.dims));
  return WorstStepped(narrowed, bucket.steps, bucket.plan);
}

namespace {

// The step of `dim` a bucket's plan counts it in (SymbolicProblem::
// Stepped()): 1 (none), 2, 4, ... 64, the one whose reserved sizes' lower
// bound is least above the sizes' over the search's samples of `narrowed`
// (the bucket's problem): the worst (ratio - 1) / (target - 1), the end
// target at the maxima of `whole` (the targets of `search`; without it,
// the worst ratio). A size that is not a multiple of its alignment at
// every value, such as
// 8*seq*seq bytes at alignment 64, is reserved with a coefficient that
// grows like 32*seq*seq in the binomial basis; counted in steps of 4 (seq =
// 4*div + mod), the same size is 128*div*div + 64*div*mod + 8*mod*mod,
// reserved within a few hundred bytes. A step is kept only where it lowers
// that worst excess by more than 0.1 (0.2 % of the ratio at an end target
// of 1.02): reserves already close to the sizes keep steps of 1, and the
// bucket is planned once.
absl::StatusOr<DimValues> ChooseSteps(
    const SymbolicProblem& narrowed, const std::string& dim,
    const DimRanges& whole,
    const std::optional<SymbolicSearchOptions>& search) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(narrowed.dims));
  std::vector<DimValues> samples;
  std::vector<Bytes> bounds;
  std::vector<double> slack;  // target - 1 at each sample
  for (const std::vector<int64_t>& t : DenseSamples(box)) {
    samples.push_back(box.ValuesAt(t));
    MEMPLAN_ASSIGN_OR_RETURN(Problem at, narrowed.Rounded(samples.back()));
    bounds.push_back(std::max<Bytes>(1, LowerBound(at)));
    slack.push_back(search.has_value() ? Slack(samples.back(), whole, *search)
                                       : 1.0);
  }
  DimValues best;
  double best_excess = 0;
  for (int64_t step = 1; step <= 64; step *= 2) {
    const DimValues steps = {{dim, step}};
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem stepped,
                             narrowed.Stepped(steps));
    double excess = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
      MEMPLAN_ASSIGN_OR_RETURN(Problem at,
                               stepped.At(StepValues(samples[i], steps)));
      const double ratio = static_cast<double>(LowerBound(at)) /
                           static_cast<double>(bounds[i]);
      excess = std::max(excess, (ratio - 1) / slack[i]);
    }
    if (step == 1) {
      best_excess = excess;
    } else if (excess < best_excess - 0.1) {
      best = steps;
      best_excess = excess;
    }
  }
  return best;
}

// A bucket's plan and its score (TargetExcess() with the search, the worst
// sampled ratio without), with the value where it is worst.
struct BucketPlan {
  DimValues steps;
  SymbolicPlan plan;
  double score = 0;
  DimValues worst_at;
};

// The bucket of `narrowed` planned in steps of 1 and, when ChooseSteps()
// picks other steps, in those too, the search with 1 / `divisor` of its
// budget: the better score is kept (steps of 1 on a tie). The choice of
// steps looks at the reserves alone; a plan may still do better without.
absl::StatusOr<BucketPlan> PlanBucket(const SymbolicProblem& narrowed,
                                      const std::string& dim,
                                      const DimRanges& whole,
                                      const SymbolicBucketOptions& options,
                                      int64_t divisor) {
  MEMPLAN_ASSIGN_OR_RETURN(const DimValues chosen,
                           ChooseSteps(narrowed, dim, whole, options.search));
  std::optional<BucketPlan> best;
  for (const DimValues& steps : {DimValues{}, chosen}) {
    if (best.has_value() && steps.empty()) break;
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub,
                             narrowed.Stepped(steps));
    BucketPlan p{.steps = steps};
    if (options.search.has_value()) {
      SymbolicSearchOptions search = *options.search;
      search.budget /= divisor;
      MEMPLAN_ASSIGN_OR_RETURN(p.plan, PlanSymbolicSearch(sub, search));
      MEMPLAN_ASSIGN_OR_RETURN(
          p.score, TargetExcess(narrowed, steps, p.plan, *options.search,
                                whole, &p.worst_at));
    } else {
      MEMPLAN_ASSIGN_OR_RETURN(p.plan, PlanSymbolicGreedy(sub, options.greedy));
      MEMPLAN_ASSIGN_OR_RETURN(p.score, WorstStepped(narrowed, steps, p.plan));
    }
    if (!best.has_value() || p.score < best->score) best = std::move(p);
  }
  return *std::move(best);
}

// The buckets (a, b), in order, of the cover of (ends[0], ends[m - 1]] by
// at most `max_buckets` planned ranges (ends[a], ends[b]] whose largest
// ratio is least, then whose sum of ratios is least (a bucket that cannot
// lower the worst, elsewhere, still lowers its own part); fewer buckets win
// ties.
std::vector<std::pair<int, int>> Cover(
    const std::vector<std::vector<double>>& ratio,
    const std::vector<std::vector<std::optional<SymbolicPlan>>>& plans,
    int max_buckets) {
  const int m = static_cast<int>(ratio.size());
  // cost[k][b]: the least (worst, sum) of ratios covering (ends[0],
  // ends[b]] with k buckets, the last starting after ends[from[k][b]].
  using Cost = std::pair<double, double>;
  const double kNone = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Cost>> cost(max_buckets + 1,
                                      std::vector<Cost>(m, {kNone, kNone}));
  std::vector<std::vector<int>> from(max_buckets + 1, std::vector<int>(m, -1));
  for (int k = 1; k <= max_buckets; ++k) {
    for (int b = 1; b < m; ++b) {
      for (int a = 0; a < b; ++a) {
        const bool covered = k == 1 ? a == 0 : from[k - 1][a] >= 0;
        if (!plans[a][b].has_value() || !covered) continue;
        const Cost before = k == 1 ? Cost{0, 0} : cost[k - 1][a];
        const Cost c = {std::max(before.first, ratio[a][b]),
                        before.second + ratio[a][b]};
        // A cover whose ratio is unbounded still beats no cover at all.
        if (c < cost[k][b] || from[k][b] < 0) {
          cost[k][b] = c;
          from[k][b] = a;
        }
      }
    }
  }
  int k_best = 1;
  for (int k = 2; k <= max_buckets; ++k) {
    if (from[k][m - 1] >= 0 && cost[k][m - 1] < cost[k_best][m - 1]) {
      k_best = k;
    }
  }
  std::vector<std::pair<int, int>> cover;
  for (int k = k_best, b = m - 1; k > 0; --k) {
    cover.emplace_back(from[k][b], b);
    b = from[k][b];
  }
  std::reverse(cover.begin(), cover.end());
  return cover;
}

// The buckets the probes chose, each planned with the whole budget; then,
// while fewer than options.max_buckets, the worst is cut at the last of
// `ends` below its worst sample, when both parts, planned with the whole
// budget, score better. The probes (a small part of the budget) may miss
// what the whole budget finds in a bucket that starts elsewhere.
absl::Status PlanAndCutBuckets(const SymbolicProblem& problem,
                               const std::string& dim,
                               const std::vector<int64_t>& ends,
                               const SymbolicBucketOptions& options,
                               std::vector<SymbolicBucket>& buckets) {
  // Each chosen bucket planned with the whole budget, scored, and the
  // value where it is worst.
  struct Scored {
    double excess = 0;
    DimValues worst_at;
  };
  auto full = [&](SymbolicBucket& b) -> absl::StatusOr<Scored> {
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                             problem.Narrowed(b.dims));
    MEMPLAN_ASSIGN_OR_RETURN(BucketPlan p,
                             PlanBucket(narrowed, dim, problem.dims, options, 1));
    b.steps = std::move(p.steps);
    b.plan = std::move(p.plan);
    return Scored{.excess = p.score, .worst_at = std::move(p.worst_at)};
  };
  std::vector<Scored> scores;
  for (SymbolicBucket& b : buckets) {
    MEMPLAN_ASSIGN_OR_RETURN(Scored s, full(b));
    scores.push_back(std::move(s));
  }
  while (static_cast<int>(buckets.size()) < options.max_buckets) {
    const size_t w = std::max_element(scores.begin(), scores.end(),
                                      [](const Scored& a, const Scored& b) {
                                        return a.excess < b.excess;
                                      }) -
                     scores.begin();
    const DimRange r = buckets[w].dims.at(dim);
    const int64_t at = scores[w].worst_at.at(dim);
    int64_t cut = r.min - 1;  // the last value of the lower part
    for (int64_t e : ends) {
      if (e >= r.min && e < at && e < r.max) cut = std::max(cut, e);
    }
    if (cut < r.min || scores[w].excess <= 0) break;
    SymbolicBucket low = buckets[w], high = buckets[w];
    low.dims[dim] = {r.min, cut};
    high.dims[dim] = {cut + 1, r.max};
    MEMPLAN_ASSIGN_OR_RETURN(Scored low_score, full(low));
    MEMPLAN_ASSIGN_OR_RETURN(Scored high_score, full(high));
    if (std::max(low_score.excess, high_score.excess) >= scores[w].excess) {
      break;
    }
    buckets[w] = std::move(high);
    scores[w] = std::move(high_score);
    buckets.insert(buckets.begin() + w, std::move(low));
    scores.insert(scores.begin() + w, std::move(low_score));
  }
  return absl::OkStatus();
}

}  // namespace

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
  // Bucket ends: the range's, and each power of two inside it (with the
  // search, also each 3 * 2^k); bucket i spans [ends[a] + 1, ends[b]] (the
  // first starts at range.min).
  std::vector<int64_t> ends = {range.min - 1};
  for (int64_t p = 1; p > 0 && p < range.max; p *= 2) {
    if (p >= range.min) ends.push_back(p);
    const int64_t three = 3 * p / 2;
    if (options.search.has_value() && p >= 2 && three >= range.min &&
        three < range.max) {
      ends.push_back(three);
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  ends.push_back(range.max);
  const int m = static_cast<int>(ends.size());
  // plans[a][b]: the greedy plan of the bucket (ends[a], ends[b]].
  std::vector<std::vector<std::optional<SymbolicPlan>>> plans(
      m, std::vector<std::optional<SymbolicPlan>>(m));
  std::vector<std::vector<DimValues>> steps(m, std::vector<DimValues>(m));
  std::vector<std::vector<double>> ratio(m, std::vector<double>(m, 0));
  // The ranges of the bucket (ends[a], ends[b]].
  auto ranges = [&](int a, int b) {
    DimRanges dims = problem.dims;
    dims[dim] = {ends[a] + 1, ends[b]};
    return dims;
  };
  const bool one = options.max_buckets == 1;
  const int candidates = one ? 1 : m * (m - 1) / 2;
  int planned = 0;
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b) {
      if (one && (a != 0 || b != m - 1)) continue;
      MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem narrowed,
                               problem.Narrowed(ranges(a, b)));
      MEMPLAN_ASSIGN_OR_RETURN(
          BucketPlan p, PlanBucket(narrowed, dim, problem.dims, options, 64));
      steps[a][b] = std::move(p.steps);
      ratio[a][b] = p.score;
      plans[a][b] = std::move(p.plan);
      if (options.progress) options.progress(++planned, candidates);
    }
  }
  std::vector<SymbolicBucket> buckets;
  for (const auto& [a, b] : Cover(ratio, plans, options.max_buckets)) {
    buckets.push_back({.dims = ranges(a, b),
                       .steps = steps[a][b],
                       .plan = *std::move(plans[a][b])});
  }
  if (!options.search.has_value()) return buckets;
  MEMPLAN_RETURN_IF_ERROR(
      PlanAndCutBuckets(problem, dim, ends, options, buckets));
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
