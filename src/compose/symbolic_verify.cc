// The symbolic verifier: a plan checked over the whole box of dim values.
//
// Every condition is "some polynomial is >= 0 on the box" or "some
// polynomial is a multiple of a on the box"; both are decided in the
// binomial basis (symbolic/binomial_poly.h). For two conflicting buffers i and
// j the verifier asks for one side over the whole box: i below j
// (o_j - o_i - s_i >= 0 everywhere) or j below i. The side is the one that
// holds at the dims' minima; if it fails at some value where the other side
// holds, the pair changes sides inside the range, which is refused as not
// proven (such a plan may be valid, but the verifier does not accept what
// it has not proven).

#include "memplan/symbolic_verify.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/symbolic.h"
#include "symbolic/binomial_poly.h"
#include "symbolic/range_text.h"

namespace memplan {

using internal::RangeText;

namespace {

using internal::BinomialPoly;
using internal::DimBox;
using internal::ProveNonNegative;
using internal::SignProof;

// Sub-boxes the prover may split per condition before giving up.
constexpr int64_t kProofBudget = 4096;

struct Placed {
  BinomialPoly size;
  BinomialPoly offset;
  BinomialPoly top;  // offset + size
};

class Verifier {
 public:
  Verifier(const SymbolicProblem& problem, const SymbolicPlan& plan, DimBox box)
      : problem_(problem),
        plan_(plan),
        box_(std::move(box)),
        width_(box_.Widths()) {}

  absl::Status Run() {
    const size_t n = problem_.buffers.size();
    if (plan_.offsets.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan has ", plan_.offsets.size(), " offsets for ",
                       n, " buffers"));
    }
    MEMPLAN_ASSIGN_OR_RETURN(peak_, BinomialPoly::FromExpr(plan_.peak, box_));
    placed_.reserve(n);
    for (BufferId i = 0; i < static_cast<BufferId>(n); ++i) {
      MEMPLAN_RETURN_IF_ERROR(CheckBuffer(i));
    }
    // Pairs whose lifetimes overlap: a sweep by start.
    std::vector<BufferId> order(n);
    for (BufferId i = 0; i < static_cast<BufferId>(n); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](BufferId a, BufferId b) {
      const Lifetime& x = problem_.buffers[a].lifetime;
      const Lifetime& y = problem_.buffers[b].lifetime;
      return x.start != y.start ? x.start < y.start : a < b;
    });
    std::vector<BufferId> alive;
    for (BufferId b : order) {
      const Lifetime& life = problem_.buffers[b].lifetime;
      std::erase_if(alive, [&](BufferId a) {
        return problem_.buffers[a].lifetime.end <= life.start;
      });
      for (BufferId a : alive) MEMPLAN_RETURN_IF_ERROR(CheckPair(a, b));
      alive.push_back(b);
    }
    for (const BufferConflict& c : problem_.conflicts) {
      if (c.a < 0 || c.b < 0 || c.a >= static_cast<BufferId>(n) ||
          c.b >= static_cast<BufferId>(n)) {
        return absl::InvalidArgumentError("a conflict names no buffer");
      }
      if (c.a != c.b) MEMPLAN_RETURN_IF_ERROR(CheckPair(c.a, c.b));
    }
    return absl::OkStatus();
  }

 private:
  std::string Name(BufferId i) const {
    return absl::StrCat("buffer \"", problem_.buffers[i].name, "\"");
  }

  std::string LifetimeText(BufferId i) const {
    const memplan::Lifetime& l = problem_.buffers[i].lifetime;
    return absl::StrCat("[", l.start, ", ", l.end, ")");
  }

  // "[o, o + s) = [96, 160) at seq=3".
  std::string ByteRange(BufferId i, const std::vector<int64_t>& t) const {
    int64_t o = 0, top = 0;
    const Placed& p = placed_[i];
    if (!p.offset.Evaluate(t, &o) || !p.top.Evaluate(t, &top)) {
      return "(overflows)";
    }
    return absl::StrCat("bytes [", plan_.offsets[i].ToString(), ", ",
                        plan_.offsets[i].ToString(), " + ",
                        problem_.buffers[i].size.ToString(), ") = [", o, ", ",
                        top, ")");
  }

  // OK when p >= 0 on the box, else an error "`what` at <values>".
  absl::Status NonNegative(const BinomialPoly& p, const std::string& what) {
    int64_t budget = kProofBudget;
    const SignProof proof = ProveNonNegative(p, width_, &budget);
    if (proof.result == SignProof::kProven) return absl::OkStatus();
    if (proof.result == SignProof::kRefuted) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " at ", box_.Describe(proof.point)));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not proven over the dims' ranges"));
  }

  // A value of the box where p is not a multiple of a (p must have one):
  // the coefficients are differences of the values on the grid [0, degree],
  // so one of those values is not a multiple.
  std::vector<int64_t> Misaligned(const BinomialPoly& p, int64_t a) const {
    std::vector<int64_t> limit(width_.size(), 0);
    for (const auto& [key, c] : p.terms()) {
      for (size_t d = 0; d < limit.size(); ++d) {
        limit[d] = std::max<int64_t>(
            limit[d], BinomialPoly::Power(key, static_cast<int>(d)));
      }
    }
    std::vector<int64_t> t(width_.size(), 0);
    while (true) {
      int64_t v = 0;
      if (!p.Evaluate(t, &v) || v % a != 0) return t;
      size_t d = 0;
      for (; d < t.size(); ++d) {
        if (t[d] < limit[d]) {
          ++t[d];
          break;
        }
        t[d] = 0;
      }
      if (d == t.size()) return t;  // unreachable for a misaligned p
    }
  }

  absl::Status CheckBuffer(BufferId i) {
    const SymbolicBuffer& b = problem_.buffers[i];
    Placed p;
    MEMPLAN_ASSIGN_OR_RETURN(p.size, BinomialPoly::FromExpr(b.size, box_));
    MEMPLAN_ASSIGN_OR_RETURN(p.offset,
                             BinomialPoly::FromExpr(plan_.offsets[i], box_));
    MEMPLAN_ASSIGN_OR_RETURN(p.top, internal::Add(p.offset, p.size));
    p.size = p.size.Restrict(width_);
    p.offset = p.offset.Restrict(width_);
    p.top = p.top.Restrict(width_);
    placed_.push_back(p);
    const std::string name = Name(i);
    MEMPLAN_RETURN_IF_ERROR(
        NonNegative(p.size, absl::StrCat(name, " has a negative size \"",
                                         b.size.ToString(), "\"")));
    const int64_t a = std::max(b.alignment, problem_.pool.alignment);
    if (!p.size.AlignedTo(b.alignment)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": size \"", b.size.ToString(),
          "\" is not a multiple of its "
          "alignment ",
          b.alignment, " at ", box_.Describe(Misaligned(p.size, b.alignment))));
    }
    MEMPLAN_RETURN_IF_ERROR(
        NonNegative(p.offset, absl::StrCat(name, " has a negative offset \"",
                                           plan_.offsets[i].ToString(), "\"")));
    if (!p.offset.AlignedTo(a)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": offset \"", plan_.offsets[i].ToString(),
                       "\" is not a multiple of its alignment ", a, " at ",
                       box_.Describe(Misaligned(p.offset, a))));
    }
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly under_peak,
                             internal::Subtract(peak_, p.top));
    MEMPLAN_RETURN_IF_ERROR(
        NonNegative(under_peak, absl::StrCat(name, " ends above the peak \"",
                                             plan_.peak.ToString(), "\"")));
    if (problem_.pool.capacity > 0) {
      MEMPLAN_ASSIGN_OR_RETURN(
          BinomialPoly room,
          internal::Subtract(BinomialPoly::Constant(problem_.pool.capacity),
                             p.top));
      MEMPLAN_RETURN_IF_ERROR(
          NonNegative(room, absl::StrCat(name, " ends beyond the capacity ",
                                         problem_.pool.capacity, " of pool \"",
                                         problem_.pool.name, "\"")));
    }
    return absl::OkStatus();
  }

  absl::Status CheckPair(BufferId i, BufferId j) {
    const Placed& x = placed_[i];
    const Placed& y = placed_[j];
    if (x.size.IsZero() || y.size.IsZero()) return absl::OkStatus();
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly i_below,
                             internal::Subtract(y.offset, x.top));
    if (i_below.AllNonNegative()) return absl::OkStatus();
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly j_below,
                             internal::Subtract(x.offset, y.top));
    if (j_below.AllNonNegative()) return absl::OkStatus();
    // The side at the dims' minima (both tests' values there) must hold
    // everywhere.
    const bool below = i_below.ConstantTerm() >= 0;
    if (!below && j_below.ConstantTerm() < 0) {
      return Overlap(i, j, std::vector<int64_t>(width_.size(), 0));
    }
    const BinomialPoly& side = below ? i_below : j_below;
    const BinomialPoly& other = below ? j_below : i_below;
    int64_t budget = kProofBudget;
    const SignProof proof = ProveNonNegative(side, width_, &budget);
    if (proof.result == SignProof::kProven) return absl::OkStatus();
    // Both sides may hold at the minima (a buffer of size 0 there): the
    // other one may hold everywhere.
    if (other.ConstantTerm() >= 0) {
      int64_t other_budget = kProofBudget;
      if (ProveNonNegative(other, width_, &other_budget).result ==
          SignProof::kProven) {
        return absl::OkStatus();
      }
    }
    const std::string pair =
        absl::StrCat(Name(i), " (lifetime ", LifetimeText(i), ") and ", Name(j),
                     " (lifetime ", LifetimeText(j), ")");
    if (proof.result == SignProof::kUnknown) {
      return absl::InvalidArgumentError(absl::StrCat(
          pair, " conflict and are not proven apart over the dims' ranges"));
    }
    int64_t v = 0;
    if (other.Evaluate(proof.point, &v) && v >= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          pair, " conflict and change sides between ",
          box_.Describe(std::vector<int64_t>(width_.size(), 0)), " and ",
          box_.Describe(proof.point),
          ": not proven apart (a plan keeps each pair on one side)"));
    }
    return Overlap(i, j, proof.point);
  }

  absl::Status Overlap(BufferId i, BufferId j, const std::vector<int64_t>& t) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(i), " (lifetime ", LifetimeText(i), ", ", ByteRange(i, t),
        ") and ", Name(j), " (lifetime ", LifetimeText(j), ", ",
        ByteRange(j, t), ") conflict and overlap at ", box_.Describe(t)));
  }

  const SymbolicProblem& problem_;
  const SymbolicPlan& plan_;
  DimBox box_;
  std::vector<int64_t> width_;
  BinomialPoly peak_;
  std::vector<Placed> placed_;
};

}  // namespace

absl::Status VerifySymbolicPlan(const SymbolicProblem& problem,
                                const SymbolicPlan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(problem.dims));
  return Verifier(problem, plan, std::move(box)).Run();
}

namespace {

// The dim the buckets cut (empty when one bucket covers everything), once
// the buckets are known to cover every value of the dims exactly once.
absl::StatusOr<std::string> CutDimOfBuckets(const SymbolicGraphPlan& plan) {
  const SymbolicProblem& problem = plan.problem;
  if (plan.buckets.empty()) {
    return absl::InvalidArgumentError("the plan has no bucket");
  }
  // The buckets cut one dim (any, when there is one bucket): every other dim
  // keeps the problem's range, and the cut dim's ranges follow each other
  // from the problem's minimum to its maximum.
  std::string cut;
  for (const SymbolicBucket& b : plan.buckets) {
    if (b.dims.size() != problem.dims.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a bucket has ", b.dims.size(),
                       " dims; the problem has ", problem.dims.size()));
    }
    for (const auto& [name, range] : b.dims) {
      auto it = problem.dims.find(name);
      if (it == problem.dims.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("a bucket names dim \"", name,
                         "\", which the problem does not have"));
      }
      if (range == it->second) continue;
      if (!cut.empty() && cut != name) {
        return absl::InvalidArgumentError(
            absl::StrCat("the buckets narrow both \"", cut, "\" and \"", name,
                         "\": buckets may cut one dim only"));
      }
      cut = name;
    }
  }
  if (plan.buckets.size() > 1 && cut.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        plan.buckets.size(), " buckets each cover the whole range"));
  }
  if (!cut.empty()) {
    const DimRange whole = problem.dims.at(cut);
    int64_t next = whole.min;
    for (const SymbolicBucket& b : plan.buckets) {
      const DimRange r = b.dims.at(cut);
      if (r.min != next || r.max < r.min) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bucket ", RangeText(r), " of dim \"", cut, "\" should start at ",
            next, ": the buckets must cover ", RangeText(whole),
            " in order, each value once"));
      }
      next = r.max + 1;
    }
    if (next != whole.max + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("the buckets of dim \"", cut, "\" end at ", next - 1,
                       ", before its maximum ", whole.max));
    }
  }
  return cut;
}

}  // namespace

absl::Status VerifyBucketStructure(const SymbolicGraphPlan& plan) {
  return CutDimOfBuckets(plan).status();
}

absl::Status VerifySymbolicGraphPlan(const SymbolicGraphPlan& plan) {
  MEMPLAN_ASSIGN_OR_RETURN(const std::string cut, CutDimOfBuckets(plan));
  for (const SymbolicBucket& b : plan.buckets) {
    MEMPLAN_ASSIGN_OR_RETURN(const SymbolicProblem sub,
                             b.ProblemOf(plan.problem));
    if (absl::Status s = VerifySymbolicPlan(sub, b.plan); !s.ok()) {
      if (plan.buckets.size() == 1) return s;
      return absl::Status(
          s.code(), absl::StrCat("bucket ", cut, " in ",
                                 RangeText(b.dims.at(cut)), ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace memplan
