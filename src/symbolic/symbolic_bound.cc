// The naive total and the lower bound of a symbolic problem as functions of
// its dims.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/symbolic.h"
#include "symbolic/binomial_poly.h"

namespace memplan {

using internal::BinomialPoly;
using internal::DimBox;
using internal::ProveNonNegative;
using internal::SignProof;

namespace {

// Sub-boxes one dominance question may split into before it counts as not
// proven (the piece is then kept: a superfluous piece changes no value).
constexpr int64_t kDominanceBudget = 64;

// Whether `a >= b` is proven over the box of `widths`.
bool ProvenAtLeast(const BinomialPoly& a, const BinomialPoly& b,
                   const std::vector<int64_t>& widths) {
  absl::StatusOr<BinomialPoly> d = Subtract(a, b);
  if (!d.ok()) return false;
  if (d->AllNonNegative()) return true;
  int64_t budget = kDominanceBudget;
  return ProveNonNegative(*d, widths, &budget).result == SignProof::kProven;
}

absl::Status CheckAllGiven(const DimRanges& dims, const DimValues& values) {
  MEMPLAN_RETURN_IF_ERROR(CheckDimValues(dims, values));
  for (const auto& [name, range] : dims) {
    if (!values.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("no value for dim \"", name, "\" (range [", range.min,
                       ", ", range.max, "]): give every dim a value"));
    }
  }
  return absl::OkStatus();
}

// The bytes alive after a step's events where something starts.
struct Candidate {
  BinomialPoly bytes;
  Step step;
  int64_t at_max;  // the value at the dims' maxima
};

// Events by step, ends before starts (lifetimes are half-open); the bytes
// alive after a step's events are a candidate when something starts there
// (after ends alone they are a subset of the step before's). `sizes` holds
// each buffer's reserve in the binomial basis.
absl::StatusOr<std::vector<Candidate>> AliveCandidates(
    const SymbolicProblem& problem, const std::vector<BinomialPoly>& sizes,
    const std::vector<int64_t>& widths) {
  struct Event {
    Step step;
    bool start;
    size_t buffer;
  };
  std::vector<Event> events;
  events.reserve(2 * problem.buffers.size());
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    events.push_back({problem.buffers[i].lifetime.start, true, i});
    events.push_back({problem.buffers[i].lifetime.end, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    if (a.step != b.step) return a.step < b.step;
    return a.start < b.start;
  });
  std::vector<Candidate> candidates;
  BinomialPoly live;
  for (size_t e = 0; e < events.size();) {
    const Step step = events[e].step;
    bool started = false;
    for (; e < events.size() && events[e].step == step; ++e) {
      const BinomialPoly& size = sizes[events[e].buffer];
      if (events[e].start) {
        MEMPLAN_ASSIGN_OR_RETURN(live, Add(live, size));
        started = true;
      } else {
        MEMPLAN_ASSIGN_OR_RETURN(live, Subtract(live, size));
      }
    }
    if (!started || live.IsZero()) continue;
    int64_t at_max = 0;
    if (!live.Evaluate(widths, &at_max)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the bytes alive at step ", step, " of \"", problem.name,
                       "\" overflow int64 at the dims' maxima"));
    }
    candidates.push_back({live, step, at_max});
  }
  return candidates;
}

// The candidates no other one is proven to reach on the box, in the order
// of their values at the maxima (largest first). Sorts `candidates` and
// drops repeated polynomials (keeping the first step of each).
std::vector<const Candidate*> Undominated(std::vector<Candidate>& candidates,
                                          const std::vector<int64_t>& widths) {
  // Distinct polynomials (the first step of each), largest at the maxima
  // first: a piece is more often reached by one before it.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (a.bytes.terms() != b.bytes.terms()) {
                       return a.bytes.terms() < b.bytes.terms();
                     }
                     return a.step < b.step;
                   });
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const Candidate& a, const Candidate& b) {
                                 return a.bytes == b.bytes;
                               }),
                   candidates.end());
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) {
              if (a.at_max != b.at_max) return a.at_max > b.at_max;
              return a.step < b.step;
            });
  std::vector<const Candidate*> kept;
  for (const Candidate& c : candidates) {
    bool dominated = false;
    for (const Candidate* k : kept) {
      if (ProvenAtLeast(k->bytes, c.bytes, widths)) {
        dominated = true;
        break;
      }
    }
    if (!dominated) kept.push_back(&c);
  }
  // A piece kept early may be reached by one kept after it (equal at the
  // maxima, larger elsewhere). Distinct polynomials on the box never reach
  // each other both ways, so dropping each such piece keeps the maximum.
  std::vector<bool> drop(kept.size(), false);
  for (size_t i = 0; i < kept.size(); ++i) {
    for (size_t j = 0; j < kept.size() && !drop[i]; ++j) {
      if (j != i && !drop[j] &&
          ProvenAtLeast(kept[j]->bytes, kept[i]->bytes, widths)) {
        drop[i] = true;
      }
    }
  }
  std::vector<const Candidate*> pieces;
  for (size_t i = 0; i < kept.size(); ++i) {
    if (!drop[i]) pieces.push_back(kept[i]);
  }
  return pieces;
}

}  // namespace

absl::StatusOr<DimExpr> SymbolicNaiveTotal(const SymbolicProblem& problem) {
  DimExpr total;
  for (const SymbolicBuffer& b : problem.buffers) {
    MEMPLAN_ASSIGN_OR_RETURN(total, Add(total, b.size));
  }
  return total;
}

absl::StatusOr<SymbolicBound> SymbolicLowerBound(
    const SymbolicProblem& problem) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  const std::vector<int64_t> widths = box.Widths();
  // Each buffer's reserve in the binomial basis, once.
  std::vector<BinomialPoly> sizes;
  sizes.reserve(problem.buffers.size());
  for (const SymbolicBuffer& b : problem.buffers) {
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly p,
                             BinomialPoly::FromExpr(b.size, box));
    sizes.push_back(p.Restrict(widths));
  }
  MEMPLAN_ASSIGN_OR_RETURN(std::vector<Candidate> candidates,
                           AliveCandidates(problem, sizes, widths));
  SymbolicBound bound;
  bound.dims = problem.dims;
  for (const Candidate* c : Undominated(candidates, widths)) {
    MEMPLAN_ASSIGN_OR_RETURN(DimExpr bytes, c->bytes.ToExpr(box));
    bound.pieces.push_back({std::move(bytes), c->step});
  }
  return bound;
}

absl::StatusOr<int> SymbolicBound::Largest(const DimValues& values) const {
  MEMPLAN_RETURN_IF_ERROR(CheckAllGiven(dims, values));
  int best = -1;
  Bytes best_bytes = 0;
  for (int i = 0; i < static_cast<int>(pieces.size()); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(Bytes bytes, pieces[i].bytes.Evaluate(values));
    if (best < 0 || bytes > best_bytes) {
      best = i;
      best_bytes = bytes;
    }
  }
  return best;
}

absl::StatusOr<Bytes> SymbolicBound::Evaluate(const DimValues& values) const {
  MEMPLAN_ASSIGN_OR_RETURN(int best, Largest(values));
  if (best < 0) return Bytes{0};
  MEMPLAN_ASSIGN_OR_RETURN(Bytes bytes, pieces[best].bytes.Evaluate(values));
  return std::max<Bytes>(bytes, 0);
}

}  // namespace memplan
