// Integer polynomials over a box of dims, in the binomial basis: the working
// form of symbolic sizes and offsets (DimExpr is the named, printed form).
//
// With dims x_0..x_{D-1} ranging over [min_d, max_d] and t_d = x_d - min_d,
//
//   p(x) = sum over k of  c_k * C(t_0, k_0) * ... * C(t_{D-1}, k_{D-1})
//
// (C(t, j) the binomial coefficient). Every polynomial with integer
// coefficients has integer c_k, and c_k is the k-th forward difference of p
// at the box's lower corner. The basis makes the questions a plan asks easy:
//   * p >= 0 on the box when every c_k >= 0, since C(t, j) >= 0 for integer
//     t >= 0 (a sufficient test; ProveNonNegative completes it);
//   * p(x) is a multiple of a at every integer point of the box exactly when
//     every c_k is: c_k is an integer combination of values of p, and
//     conversely every term is then a multiple of a. Alignment is decided
//     from the coefficients, with no enumeration.
//   * a polynomial whose coefficients are each >= those of several others is
//     >= each of them on the box (an upper envelope).
// A polynomial with integer monomial coefficients has c_k divisible by
// k_0! * ... * k_{D-1}! (t^n = sum_j S(n, j) j! C(t, j)); the operations here
// keep that, so ToExpr() always gives integer coefficients again.
//
// Limits: at most 8 dims and degree 20 in each; arithmetic is exact in
// int64 and reports overflow instead of wrapping.

#ifndef MEMPLAN_SYMBOLIC_BINOMIAL_POLY_H_
#define MEMPLAN_SYMBOLIC_BINOMIAL_POLY_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "memplan/dim_expr.h"

namespace memplan::internal {

inline constexpr int kMaxPolyDims = 8;
inline constexpr int kMaxPolyDegree = 20;

// The dims of a symbolic problem, in DimRanges (name) order.
struct DimBox {
  std::vector<std::string> names;
  std::vector<int64_t> min;
  std::vector<int64_t> max;
  static absl::StatusOr<DimBox> Of(const DimRanges& dims);
  int size() const { return static_cast<int>(names.size()); }
  // The values at box coordinates t (x = min + t), by name.
  DimValues ValuesAt(const std::vector<int64_t>& t) const;
  // "seq=17, batch=2" at box coordinates t.
  std::string Describe(const std::vector<int64_t>& t) const;
  // The box coordinates of its upper corner: max - min per dim.
  std::vector<int64_t> Widths() const;
};

class BinomialPoly {
 public:
  // k packed 8 bits per dim (dim 0 lowest); c_k != 0; sorted by key.
  using Term = std::pair<uint64_t, int64_t>;
  // A size in one dim of degree <= 3 has at most 4 terms: no allocation.
  using Terms = absl::InlinedVector<Term, 4>;

  BinomialPoly() = default;
  static BinomialPoly Constant(int64_t c);
  static absl::StatusOr<BinomialPoly> FromExpr(const DimExpr& e,
                                               const DimBox& box);
  // The polynomial of degree < points[d] in each dim d through `values`,
  // given on the grid t_d = 0..points[d]-1 (dim 0 varying fastest): their
  // forward differences along each dim are its coefficients. Fails only on
  // overflow.
  static absl::StatusOr<BinomialPoly> FromValues(const std::vector<int>& points,
                                                 std::vector<int64_t> values);
  // Every c_k is a multiple of k_0! * ... * k_{D-1}!, so that ToExpr() has
  // integer coefficients. Always so for FromExpr and the operations here;
  // FromValues of arbitrary values may fail it (values 0, 1, 3 are t(t+1)/2).
  bool HasIntegerExpr() const;
  // The expression in the box's dims: each C(t_d, k) written out as the
  // falling factorial (x_d - min_d)(x_d - min_d - 1)... / k!.
  absl::StatusOr<DimExpr> ToExpr(const DimBox& box) const;

  const Terms& terms() const { return terms_; }
  bool IsZero() const { return terms_.empty(); }
  int64_t ConstantTerm() const;  // p at the box's lower corner
  bool AllNonNegative() const;
  bool IsMultilinear() const;
  // Every value on the box is a multiple of `a` (exact, see above).
  bool AlignedTo(int64_t a) const;

  // p at box coordinates t; false on overflow.
  bool Evaluate(const std::vector<int64_t>& t, int64_t* value) const;

  // The smallest polynomial q with integer coefficients, q(x) >= p(x) and
  // q(x) a multiple of `alignment` at every point of the box with x >= min:
  // each c_k rounded up to a multiple of lcm(alignment, prod k_d!).
  absl::StatusOr<BinomialPoly> RoundUp(int64_t alignment) const;

  // t_d replaced by a + t_d: the polynomial of the box moved by a in dim d
  // (Vandermonde: C(a + t, k) = sum_j C(a, k - j) C(t, j)).
  absl::StatusOr<BinomialPoly> Shift(int d, int64_t a) const;
  // Terms that vanish on the whole box [0, width] removed: C(t, k) = 0 for
  // 0 <= t < k. The same function on the box, so AlignedTo() of the result
  // is exact for the box.
  BinomialPoly Restrict(const std::vector<int64_t>& width) const;

  bool operator==(const BinomialPoly&) const = default;

  friend absl::StatusOr<BinomialPoly> Add(const BinomialPoly& a,
                                          const BinomialPoly& b);
  friend absl::StatusOr<BinomialPoly> Subtract(const BinomialPoly& a,
                                               const BinomialPoly& b);
  // Coefficient-wise maximum: >= both on the box, aligned when both are.
  friend BinomialPoly Envelope(const BinomialPoly& a, const BinomialPoly& b);

  static int Power(uint64_t key, int d) {
    return static_cast<int>((key >> (8 * d)) & 0xff);
  }

 private:
  Terms terms_;
};

absl::StatusOr<BinomialPoly> Add(const BinomialPoly& a, const BinomialPoly& b);
absl::StatusOr<BinomialPoly> Subtract(const BinomialPoly& a,
                                      const BinomialPoly& b);
BinomialPoly Envelope(const BinomialPoly& a, const BinomialPoly& b);

// Whether p >= 0 at every integer point of the box t in [0, width].
struct SignProof {
  enum Result { kProven, kRefuted, kUnknown } result = kUnknown;
  std::vector<int64_t> point;  // kRefuted: box coordinates where p < 0
};

// Decides p >= 0 on the box [0, width] exactly, within `budget` sub-boxes:
//   1. every coefficient >= 0: proven;
//   2. p < 0 at the lower or the upper corner: refuted there;
//   3. p of degree <= 1 in each dim (multilinear): its minimum over a box is
//      at a vertex, so the vertices decide;
//   4. otherwise the box is split in two along its widest dim (the upper
//      half moved to 0 by Shift) and each half decided; a box of one point
//      is decided by its value. Each split spends one unit of *budget; at 0
//      the answer is kUnknown (never a guess).
SignProof ProveNonNegative(const BinomialPoly& p,
                           const std::vector<int64_t>& width, int64_t* budget);

}  // namespace memplan::internal

#endif  // MEMPLAN_SYMBOLIC_BINOMIAL_POLY_H_
