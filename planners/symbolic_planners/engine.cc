// The symbolic planners' placement engine (engine.h).

#include "symbolic_planners/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "memplan/symbolic_planner.h"
#include "symbolic/binomial_poly.h"

namespace memplan::internal::symbolic {
namespace {

// Sub-boxes the pairwise check may split before it refuses a candidate.
constexpr int64_t kCandidateBudget = 64;

}  // namespace

std::vector<std::vector<int64_t>> DefaultSamples(const DimBox& box) {
  const double fractions[] = {0,       1.0 / 1024, 1.0 / 256, 1.0 / 32,
                              1.0 / 4, 1.0 / 2,    1};
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

Engine::Engine(const SymbolicProblem& problem, DimBox box)
    : problem_(problem), box_(std::move(box)), width_(box_.Widths()) {}

absl::Status Engine::Prepare(std::vector<std::vector<int64_t>> base,
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
      return absl::InvalidArgumentError(
          absl::StrCat("buffer \"", problem_.buffers[i].name,
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

std::vector<std::vector<int>> Engine::Orders(bool more) const {
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

absl::Status Engine::Layout(const std::vector<int>& order,
                            const PlaceRule& rule) {
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

BinomialPoly Engine::Peak(int start, bool shift) {
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

bool Engine::Proven(const BinomialPoly& room, int64_t c) {
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

void Engine::PeakValues(const BinomialPoly& peak,
                        std::vector<int64_t>* values) const {
  values->assign(samples_.size(), 0);
  for (size_t s = 0; s < samples_.size(); ++s) {
    if (!peak.Evaluate(samples_[s], &(*values)[s])) {
      (*values)[s] = std::numeric_limits<int64_t>::max();
    }
  }
}

absl::StatusOr<SymbolicPlan> Engine::MakePlan(
    const BinomialPoly& peak, const std::string& planner) const {
  SymbolicPlan plan;
  plan.planner = planner;
  for (const BinomialPoly& offset : offsets_) {
    MEMPLAN_ASSIGN_OR_RETURN(DimExpr e, offset.ToExpr(box_));
    plan.offsets.push_back(std::move(e));
  }
  MEMPLAN_ASSIGN_OR_RETURN(plan.peak, peak.ToExpr(box_));
  return plan;
}

void Engine::SetTargets(double target, double end_target) {
  weights_.clear();
  for (const std::vector<int64_t>& t : samples_) {
    weights_.push_back(1.0 / ((t == width_ ? end_target : target) - 1.0));
  }
}

Score Engine::ScoreOf(const std::vector<int64_t>& values) const {
  Score score{0, 0};
  for (size_t s = 0; s < samples_.size(); ++s) {
    const double r =
        static_cast<double>(values[s]) / static_cast<double>(lower_bounds_[s]);
    score.worst = std::max(score.worst, (r - 1) * weights_[s]);
    score.sum += r;
  }
  return score;
}

int Engine::WorstSample(const std::vector<int64_t>& values) const {
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

int Engine::HighestAt(int s) const {
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

void Engine::Neighbours() {
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

bool Engine::Apart(const BinomialPoly& offset, const BinomialPoly& top, int k) {
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
    if (ProveNonNegative(*side, width_, &budget).result == SignProof::kProven) {
      return true;
    }
    work_ += kCandidateBudget - budget;
  }
  return false;
}

std::vector<BinomialPoly> Engine::Candidates(int b, const PlaceRule& rule,
                                             std::vector<int>* placed) const {
  std::vector<BinomialPoly> candidates = {BinomialPoly()};
  BinomialPoly envelope;
  int high_min = -1, high_max = -1;
  int64_t high_min_value = 0, high_max_value = 0;
  for (int k : neighbours_[b]) {
    if (!placed_[k] || sizes_[k].IsZero()) continue;
    placed->push_back(k);
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
    for (int k : *placed) {
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
  return candidates;
}

absl::Status Engine::Place(int b, const PlaceRule& rule) {
  if (OutOfTime()) {
    return absl::DeadlineExceededError("the symbolic plan's deadline passed");
  }
  const Bytes alignment =
      std::max(problem_.buffers[b].alignment, problem_.pool.alignment);
  std::vector<int> placed;
  const std::vector<BinomialPoly> candidates = Candidates(b, rule, &placed);
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
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly top,
                             internal::Add(offset, sizes_[b]));
    Choice choice{.index = c};
    if (!ScoreAt(top, rule, &choice.score, &choice.height, &choice.values) ||
        (best.index >= 0 &&
         !(choice.score < best.score ||
           (!(best.score < choice.score) && choice.height < best.height)))) {
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
    choice.offset = std::move(offset);
    choice.top = std::move(top);
    best = std::move(choice);
  }
  if (best.index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer \"", problem_.buffers[b].name,
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

bool Engine::ScoreAt(const BinomialPoly& top, const PlaceRule& rule,
                     Score* score, double* height,
                     std::vector<int64_t>* values) const {
  // The peak each sample would have, relative to its lower bound; then the
  // buffer's own height, so that a lower offset wins a tie.
  *score = Score{0, 0};
  *height = 0;
  values->assign(samples_.size(), 0);
  for (size_t s = 0; s < samples_.size(); ++s) {
    if (!top.Evaluate(samples_[s], &(*values)[s])) return false;
    const double lb = static_cast<double>(lower_bounds_[s]);
    const double r =
        static_cast<double>(std::max((*values)[s], peak_values_[s])) / lb;
    score->sum += r;
    if (rule.worst_first) {
      score->worst = std::max(score->worst, (r - 1) * weights_[s]);
    }
    *height += static_cast<double>((*values)[s]) / lb;
  }
  return true;
}

void Engine::Sync() {
  if (budget_ == nullptr) return;
  const int64_t work = SymbolicCandidateWork(work_);
  budget_->Tick(work - ticked_);
  ticked_ = work;
}

bool Engine::WorkSpent() {
  Sync();
  return budget_ != nullptr && budget_->WorkSpent();
}

bool Engine::OutOfTime() {
  Sync();
  return budget_ != nullptr && budget_->OutOfTime();
}

}  // namespace memplan::internal::symbolic
