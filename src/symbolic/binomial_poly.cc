#include "symbolic/binomial_poly.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace memplan::internal {
namespace {

using Wide = __int128;
constexpr Wide kInt64Max = INT64_MAX;
constexpr Wide kInt64Min = INT64_MIN;

bool Fits(Wide v) { return v >= kInt64Min && v <= kInt64Max; }

uint64_t WithPower(uint64_t key, int d, int power) {
  const uint64_t mask = uint64_t{0xff} << (8 * d);
  return (key & ~mask) | (static_cast<uint64_t>(power) << (8 * d));
}

// C(t, k) for t >= 0; false when it exceeds int64.
bool Choose(int64_t t, int k, Wide* out) {
  if (k > t) {
    *out = 0;
    return true;
  }
  // Degrees up to 3 at values below 2^20 (every dim of a real graph), in
  // 64-bit arithmetic: t (t - 1) (t - 2) < 2^60.
  if (k <= 3 && t < (int64_t{1} << 20)) {
    const int64_t choose[] = {1, t, t * (t - 1) / 2, t * (t - 1) * (t - 2) / 6};
    *out = choose[k];
    return true;
  }
  Wide c = 1;
  for (int i = 0; i < k; ++i) {
    c = c * (t - i) / (i + 1);  // exact: c * (t - i) is C(t, i + 1) * (i + 1)
    if (c > kInt64Max) return false;
  }
  *out = c;
  return true;
}

int64_t Factorial(int k) {
  int64_t f = 1;
  for (int i = 2; i <= k; ++i) f *= i;  // k <= 20: fits
  return f;
}

// k_0! * ... * k_{D-1}! for the term of `key`; false when it exceeds int64.
bool FactorialsOf(uint64_t key, int64_t* product) {
  *product = 1;
  for (int d = 0; d < kMaxPolyDims; ++d) {
    if (__builtin_mul_overflow(*product, Factorial(BinomialPoly::Power(key, d)),
                               product)) {
      return false;
    }
  }
  return true;
}

absl::Status PolyOverflow() {
  return absl::InvalidArgumentError(
      "a symbolic size or offset overflows 64-bit integers over the dims' "
      "ranges");
}

// Sorts by key, sums equal keys and drops zeros; false on overflow.
using RawTerms = absl::InlinedVector<std::pair<uint64_t, Wide>, 8>;

bool Normalize(RawTerms& raw, BinomialPoly::Terms* out) {
  std::sort(raw.begin(), raw.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out->clear();
  for (size_t i = 0; i < raw.size();) {
    Wide sum = 0;
    size_t j = i;
    for (; j < raw.size() && raw[j].first == raw[i].first; ++j) {
      sum += raw[j].second;
    }
    if (!Fits(sum)) return false;
    if (sum != 0) out->emplace_back(raw[i].first, static_cast<int64_t>(sum));
    i = j;
  }
  return true;
}

template <typename Combine>
bool Merge(const BinomialPoly::Terms& a, const BinomialPoly::Terms& b,
           Combine combine, BinomialPoly::Terms* out) {
  out->clear();
  out->reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    uint64_t key;
    int64_t x = 0, y = 0;
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      key = a[i].first;
      x = a[i++].second;
    } else if (i == a.size() || b[j].first < a[i].first) {
      key = b[j].first;
      y = b[j++].second;
    } else {
      key = a[i].first;
      x = a[i++].second;
      y = b[j++].second;
    }
    const Wide c = combine(Wide{x}, Wide{y});
    if (!Fits(c)) return false;
    if (c != 0) out->emplace_back(key, static_cast<int64_t>(c));
  }
  return true;
}

}  // namespace

absl::StatusOr<DimBox> DimBox::Of(const DimRanges& dims) {
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(dims));
  if (static_cast<int>(dims.size()) > kMaxPolyDims) {
    return absl::InvalidArgumentError(
        absl::StrCat("a symbolic problem has ", dims.size(), " dims; at most ",
                     kMaxPolyDims, " are supported"));
  }
  DimBox box;
  for (const auto& [name, range] : dims) {
    box.names.push_back(name);
    box.min.push_back(range.min);
    box.max.push_back(range.max);
  }
  return box;
}

DimValues DimBox::ValuesAt(const std::vector<int64_t>& t) const {
  DimValues values;
  for (int d = 0; d < size(); ++d) values[names[d]] = min[d] + t[d];
  return values;
}

std::vector<int64_t> DimBox::Widths() const {
  std::vector<int64_t> widths;
  widths.reserve(names.size());
  for (int d = 0; d < size(); ++d) widths.push_back(max[d] - min[d]);
  return widths;
}

std::string DimBox::Describe(const std::vector<int64_t>& t) const {
  return absl::StrJoin(ValuesAt(t), ", ", absl::PairFormatter("="));
}

BinomialPoly BinomialPoly::Constant(int64_t c) {
  BinomialPoly p;
  if (c != 0) p.terms_.emplace_back(0, c);
  return p;
}

absl::StatusOr<BinomialPoly> BinomialPoly::FromExpr(const DimExpr& e,
                                                    const DimBox& box) {
  const int dims = box.size();
  std::vector<int> degree(dims, 0);
  for (const std::string& name : e.Dims()) {
    auto it = std::find(box.names.begin(), box.names.end(), name);
    if (it == box.names.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("expression \"", e.ToString(), "\" uses dim \"", name,
                       "\", which is not declared"));
    }
    const int d = static_cast<int>(it - box.names.begin());
    degree[d] = e.Degree(name);
    if (degree[d] > kMaxPolyDegree) {
      return absl::InvalidArgumentError(absl::StrCat(
          "expression \"", e.ToString(), "\" has degree ", degree[d], " in \"",
          name, "\"; at most ", kMaxPolyDegree, " is supported"));
    }
  }
  // Values on the grid t in [0, degree]: degree + 1 points determine it.
  std::vector<int> points(dims);
  std::vector<int64_t> stride(dims + 1, 1);
  for (int d = 0; d < dims; ++d) {
    points[d] = degree[d] + 1;
    stride[d + 1] = stride[d] * points[d];
  }
  std::vector<int64_t> grid(stride[dims]);
  std::vector<int64_t> t(dims, 0);
  for (int64_t i = 0; i < stride[dims]; ++i) {
    for (int d = 0; d < dims; ++d) t[d] = (i / stride[d]) % points[d];
    MEMPLAN_ASSIGN_OR_RETURN(grid[i], e.Evaluate(box.ValuesAt(t)));
  }
  return FromValues(points, std::move(grid));
}

absl::StatusOr<BinomialPoly> BinomialPoly::FromValues(
    const std::vector<int>& points, std::vector<int64_t> values) {
  const int dims = static_cast<int>(points.size());
  std::vector<int64_t> stride(dims + 1, 1);
  for (int d = 0; d < dims; ++d) stride[d + 1] = stride[d] * points[d];
  // Forward differences along each dim, in place: the grid then holds the
  // coefficients c_k.
  for (int d = 0; d < dims; ++d) {
    for (int64_t i = 0; i < stride[dims]; ++i) {
      if ((i / stride[d]) % points[d] != 0) continue;  // line starts
      for (int level = 1; level < points[d]; ++level) {
        for (int j = points[d] - 1; j >= level; --j) {
          int64_t& v = values[i + j * stride[d]];
          if (__builtin_sub_overflow(v, values[i + (j - 1) * stride[d]], &v)) {
            return PolyOverflow();
          }
        }
      }
    }
  }
  BinomialPoly p;
  for (int64_t i = 0; i < stride[dims]; ++i) {
    if (values[i] == 0) continue;
    uint64_t key = 0;
    for (int d = 0; d < dims; ++d) {
      key = WithPower(key, d, static_cast<int>((i / stride[d]) % points[d]));
    }
    p.terms_.emplace_back(key, values[i]);
  }
  std::sort(p.terms_.begin(), p.terms_.end());
  return p;
}

bool BinomialPoly::HasIntegerExpr() const {
  for (const auto& [key, c] : terms_) {
    int64_t divisor;
    // A product of factorials beyond int64 divides no nonzero c.
    if (!FactorialsOf(key, &divisor) || c % divisor != 0) return false;
  }
  return true;
}

absl::StatusOr<DimExpr> BinomialPoly::ToExpr(const DimBox& box) const {
  DimExpr sum;
  for (const auto& [key, c] : terms_) {
    int64_t divisor;
    if (!FactorialsOf(key, &divisor)) return PolyOverflow();
    if (c % divisor != 0) {
      return absl::InternalError(
          "a binomial coefficient is not divisible by "
          "its factorials");
    }
    DimExpr term(c / divisor);
    for (int d = 0; d < box.size(); ++d) {
      for (int i = 0; i < Power(key, d); ++i) {
        // (x_d - min_d - i): the falling factorial of t_d.
        MEMPLAN_ASSIGN_OR_RETURN(
            DimExpr factor,
            Subtract(DimExpr::Dim(box.names[d]), DimExpr(box.min[d] + i)));
        MEMPLAN_ASSIGN_OR_RETURN(term, Multiply(term, factor));
      }
    }
    MEMPLAN_ASSIGN_OR_RETURN(sum, Add(sum, term));
  }
  return sum;
}

int64_t BinomialPoly::ConstantTerm() const {
  return !terms_.empty() && terms_[0].first == 0 ? terms_[0].second : 0;
}

bool BinomialPoly::AllNonNegative() const {
  return std::all_of(terms_.begin(), terms_.end(),
                     [](const Term& t) { return t.second >= 0; });
}

bool BinomialPoly::IsMultilinear() const {
  for (const auto& [key, c] : terms_) {
    for (int d = 0; d < kMaxPolyDims; ++d) {
      if (Power(key, d) > 1) return false;
    }
  }
  return true;
}

bool BinomialPoly::AlignedTo(int64_t a) const {
  return std::all_of(terms_.begin(), terms_.end(),
                     [a](const Term& t) { return t.second % a == 0; });
}

bool BinomialPoly::Evaluate(const std::vector<int64_t>& t,
                            int64_t* value) const {
  Wide sum = 0;
  for (const auto& [key, c] : terms_) {
    Wide term = c;
    for (size_t d = 0; d < t.size() && term != 0; ++d) {
      const int k = Power(key, static_cast<int>(d));
      if (k == 0) continue;
      Wide choose;
      if (!Choose(t[d], k, &choose)) return false;
      term *= choose;
      if (!Fits(term)) return false;
    }
    sum += term;
    if (!Fits(sum)) return false;
  }
  *value = static_cast<int64_t>(sum);
  return true;
}

absl::StatusOr<BinomialPoly> BinomialPoly::RoundUp(int64_t alignment) const {
  BinomialPoly out;
  for (const auto& [key, c] : terms_) {
    int64_t unit = alignment;
    for (int d = 0; d < kMaxPolyDims; ++d) {
      const int64_t f = Factorial(Power(key, d));
      const int64_t g = std::gcd(unit, f);
      if (__builtin_mul_overflow(unit / g, f, &unit)) return PolyOverflow();
    }
    Wide rounded = c >= 0 ? (Wide{c} + unit - 1) / unit * unit
                          : -(Wide{-Wide{c}} / unit * unit);
    if (!Fits(rounded)) return PolyOverflow();
    if (rounded != 0)
      out.terms_.emplace_back(key, static_cast<int64_t>(rounded));
  }
  return out;
}

absl::StatusOr<BinomialPoly> BinomialPoly::Shift(int d, int64_t a) const {
  RawTerms raw;
  for (const auto& [key, c] : terms_) {
    const int k = Power(key, d);
    for (int j = 0; j <= k; ++j) {
      Wide choose;
      if (!Choose(a, k - j, &choose)) return PolyOverflow();
      const Wide v = Wide{c} * choose;
      if (!Fits(v)) return PolyOverflow();
      if (v != 0) raw.emplace_back(WithPower(key, d, j), v);
    }
  }
  BinomialPoly out;
  if (!Normalize(raw, &out.terms_)) return PolyOverflow();
  return out;
}

BinomialPoly BinomialPoly::Restrict(const std::vector<int64_t>& width) const {
  BinomialPoly out;
  for (const Term& t : terms_) {
    bool vanishes = false;
    for (size_t d = 0; d < width.size(); ++d) {
      vanishes |= Power(t.first, static_cast<int>(d)) > width[d];
    }
    if (!vanishes) out.terms_.push_back(t);
  }
  return out;
}

absl::StatusOr<BinomialPoly> Add(const BinomialPoly& a, const BinomialPoly& b) {
  BinomialPoly out;
  if (!Merge(
          a.terms_, b.terms_, [](Wide x, Wide y) { return x + y; },
          &out.terms_)) {
    return PolyOverflow();
  }
  return out;
}

absl::StatusOr<BinomialPoly> Subtract(const BinomialPoly& a,
                                      const BinomialPoly& b) {
  BinomialPoly out;
  if (!Merge(
          a.terms_, b.terms_, [](Wide x, Wide y) { return x - y; },
          &out.terms_)) {
    return PolyOverflow();
  }
  return out;
}

BinomialPoly Envelope(const BinomialPoly& a, const BinomialPoly& b) {
  BinomialPoly out;
  Merge(
      a.terms_, b.terms_, [](Wide x, Wide y) { return std::max(x, y); },
      &out.terms_);  // a maximum of two int64 values never overflows
  return out;
}

namespace {

SignProof Unknown() { return SignProof{SignProof::kUnknown, {}}; }
SignProof Proven() { return SignProof{SignProof::kProven, {}}; }

// ProveNonNegative on the box lo + [0, width], p already moved to lo.
SignProof Decide(BinomialPoly p, std::vector<int64_t> width,
                 std::vector<int64_t> lo, int64_t* budget) {
  const int dims = static_cast<int>(width.size());
  p = p.Restrict(width);
  // A dim in which p is monotone: its minimum is at one end of the dim, so
  // the box shrinks to that end. The forward difference in dim d is
  // sum c_k C(t_d, k_d - 1) prod_e C(t_e, k_e) over the terms with k_d >= 1:
  // >= 0 when all their c_k are, <= 0 when all are <= 0.
  for (int d = 0; d < dims; ++d) {
    if (width[d] == 0) continue;
    bool up = true, down = true;
    for (const auto& [key, c] : p.terms()) {
      if (BinomialPoly::Power(key, d) == 0) continue;
      up &= c >= 0;
      down &= c <= 0;
    }
    if (down && !up) {
      absl::StatusOr<BinomialPoly> moved = p.Shift(d, width[d]);
      if (!moved.ok()) return Unknown();
      p = *std::move(moved);
      lo[d] += width[d];
    }
    if (up || down) {
      width[d] = 0;
      p = p.Restrict(width);
    }
  }
  auto refuted = [&](const std::vector<int64_t>& t) {
    SignProof proof{SignProof::kRefuted, {}};
    for (int d = 0; d < dims; ++d) proof.point.push_back(lo[d] + t[d]);
    return proof;
  };
  if (p.AllNonNegative()) return Proven();
  if (p.ConstantTerm() < 0) return refuted(std::vector<int64_t>(dims, 0));
  int64_t value;
  if (!p.Evaluate(width, &value)) return Unknown();
  if (value < 0) return refuted(width);
  if (p.IsMultilinear()) {
    // Linear in each dim alone: the minimum over the box is at a vertex.
    std::vector<int64_t> t(dims);
    for (uint32_t mask = 0; mask < (uint32_t{1} << dims); ++mask) {
      for (int d = 0; d < dims; ++d) t[d] = (mask >> d) & 1 ? width[d] : 0;
      if (!p.Evaluate(t, &value)) return Unknown();
      if (value < 0) return refuted(t);
    }
    return Proven();
  }
  if (*budget <= 0) return Unknown();
  --*budget;
  const int d = static_cast<int>(std::max_element(width.begin(), width.end()) -
                                 width.begin());
  const int64_t half = width[d] / 2;  // [0, half] and [half + 1, width]
  std::vector<int64_t> lower_width = width;
  lower_width[d] = half;
  SignProof lower = Decide(p, lower_width, lo, budget);
  if (lower.result == SignProof::kRefuted) return lower;
  absl::StatusOr<BinomialPoly> moved = p.Shift(d, half + 1);
  if (!moved.ok()) return Unknown();
  std::vector<int64_t> upper_width = width;
  upper_width[d] = width[d] - half - 1;
  std::vector<int64_t> upper_lo = lo;
  upper_lo[d] += half + 1;
  SignProof upper = Decide(*std::move(moved), upper_width, upper_lo, budget);
  if (upper.result != SignProof::kProven) return upper;
  return lower;
}

}  // namespace

SignProof ProveNonNegative(const BinomialPoly& p,
                           const std::vector<int64_t>& width, int64_t* budget) {
  return Decide(p, width, std::vector<int64_t>(width.size(), 0), budget);
}

}  // namespace memplan::internal
