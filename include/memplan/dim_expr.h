// Symbolic sizes: integer polynomials over named dimensions.
//
// A graph may declare named dims with ranges ({"seq": {min 1, max 2048}}) and
// give a tensor's size as an expression in them ("32*seq*seq + 64"). A
// DimExpr is such an expression, kept in a canonical form: a sum of terms,
// each an integer coefficient times a product of dims with powers, no two
// terms with the same product, no zero coefficient.
//
//   text      := ["-"] term (("+" | "-") term)*
//   term      := factor ("*" factor)*
//   factor    := integer | dim            (dim: [A-Za-z_][A-Za-z0-9_]*)
//
// A dim's power in one product is at most 64 in parsed text.
// Graph sizes use the part of it DESIGN.md fixes (no "-": every term is
// non-negative); offsets and differences of a symbolic plan may have
// negative terms. Arithmetic is exact in int64: an operation or an
// evaluation that would overflow is InvalidArgument naming the expression,
// never a wrapped value.

#ifndef MEMPLAN_DIM_EXPR_H_
#define MEMPLAN_DIM_EXPR_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace memplan {

// The values of some dims, by name: a binding.
using DimValues = std::map<std::string, int64_t>;

// The values a dim takes: every integer in [min, max], 0 <= min <= max.
struct DimRange {
  int64_t min = 0;
  int64_t max = 0;
  bool operator==(const DimRange&) const = default;
};
using DimRanges = std::map<std::string, DimRange>;

// Checks names (identifiers) and ranges (0 <= min <= max); the error names
// the dim.
absl::Status ValidateDimRanges(const DimRanges& dims);

// Checks that every bound dim is declared in `dims` and its value lies in
// the dim's range; the error names the dim, its value and its range.
absl::Status CheckDimValues(const DimRanges& dims, const DimValues& values);

class DimExpr {
 public:
  // A product of dims with powers >= 1, by dim name; empty: the constant 1.
  using Monomial = std::vector<std::pair<std::string, int>>;

  DimExpr() = default;  // 0
  explicit DimExpr(int64_t constant);
  static DimExpr Dim(std::string name);

  // Parses the grammar above; the error names the text and the position.
  static absl::StatusOr<DimExpr> Parse(std::string_view text);

  // The canonical text: terms by decreasing degree, then by their dims;
  // powers written as repeated factors ("32*seq*seq + 64"), "0" for zero.
  // Parse(ToString()) gives the same expression.
  std::string ToString() const;

  // Coefficient of each product of dims; never a zero coefficient.
  const std::map<Monomial, int64_t>& terms() const { return terms_; }
  bool IsConstant() const;
  int64_t ConstantTerm() const;  // the coefficient of the empty product
  std::vector<std::string> Dims() const;     // the dims it uses, by name
  int Degree(const std::string& dim) const;  // highest power of `dim`

  // The value at `values`, which must bind every dim it uses; the error
  // names the expression and the missing dim, or the values at which it
  // overflows int64.
  absl::StatusOr<int64_t> Evaluate(const DimValues& values) const;

  // Each dim named in `by` replaced by its expression (the others stay).
  absl::StatusOr<DimExpr> Substitute(
      const std::map<std::string, DimExpr>& by) const;
  // Each dim of `values` replaced by its value: partial evaluation.
  absl::StatusOr<DimExpr> Bind(const DimValues& values) const;

  bool operator==(const DimExpr&) const = default;

  friend absl::StatusOr<DimExpr> Add(const DimExpr& a, const DimExpr& b);
  friend absl::StatusOr<DimExpr> Subtract(const DimExpr& a, const DimExpr& b);
  friend absl::StatusOr<DimExpr> Multiply(const DimExpr& a, const DimExpr& b);

 private:
  std::map<Monomial, int64_t> terms_;
};

absl::StatusOr<DimExpr> Add(const DimExpr& a, const DimExpr& b);
absl::StatusOr<DimExpr> Subtract(const DimExpr& a, const DimExpr& b);
absl::StatusOr<DimExpr> Multiply(const DimExpr& a, const DimExpr& b);

// True when `name` is a valid dim name.
bool IsDimName(std::string_view name);

}  // namespace memplan

#endif  // MEMPLAN_DIM_EXPR_H_
