// DimExpr: parse, print, exact arithmetic and evaluation.

#include "memplan/dim_expr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace memplan {
namespace {

using Monomial = DimExpr::Monomial;

constexpr int kMaxParsedPower = 64;

std::string Quoted(const DimExpr& e) {
  return absl::StrCat("\"", e.ToString(), "\"");
}

absl::Status Overflow(const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " overflows 64-bit integers"));
}

// The product of two monomials: powers of the same dim add up.
Monomial Times(const Monomial& a, const Monomial& b) {
  Monomial out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].first < a[i].first) {
      out.push_back(b[j++]);
    } else {
      out.emplace_back(a[i].first, a[i].second + b[j].second);
      ++i, ++j;
    }
  }
  return out;
}

int TotalDegree(const Monomial& m) {
  int d = 0;
  for (const auto& [dim, power] : m) d += power;
  return d;
}

// Adds `c * m` to `terms`, dropping a zero sum; false on overflow.
bool Accumulate(std::map<Monomial, int64_t>& terms, const Monomial& m,
                int64_t c) {
  if (c == 0) return true;
  auto [it, inserted] = terms.emplace(m, c);
  if (inserted) return true;
  if (__builtin_add_overflow(it->second, c, &it->second)) return false;
  if (it->second == 0) terms.erase(it);
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<DimExpr> Parse() {
    DimExpr sum;
    SkipSpace();
    bool negative = false;
    if (Peek() == '-') {
      negative = true;
      ++pos_;
    }
    while (true) {
      MEMPLAN_ASSIGN_OR_RETURN(DimExpr term, Term());
      if (negative) {
        MEMPLAN_ASSIGN_OR_RETURN(sum, Subtract(sum, term));
      } else {
        MEMPLAN_ASSIGN_OR_RETURN(sum, Add(sum, term));
      }
      SkipSpace();
      if (pos_ == text_.size()) return sum;
      if (Peek() != '+' && Peek() != '-') return Error("expected + - or *");
      negative = Peek() == '-';
      ++pos_;
    }
  }

 private:
  absl::StatusOr<DimExpr> Term() {
    MEMPLAN_ASSIGN_OR_RETURN(DimExpr product, Factor());
    while (true) {
      SkipSpace();
      if (Peek() != '*') return product;
      ++pos_;
      MEMPLAN_ASSIGN_OR_RETURN(DimExpr factor, Factor());
      absl::StatusOr<DimExpr> next = Multiply(product, factor);
      if (!next.ok()) return Error("the product overflows 64-bit integers");
      product = *std::move(next);
      // A product is one monomial: a bound on its powers keeps every later
      // evaluation and conversion short.
      for (const auto& [monomial, c] : product.terms()) {
        for (const auto& [dim, power] : monomial) {
          if (power > kMaxParsedPower) {
            return Error("a dim's power exceeds 64");
          }
        }
      }
    }
  }

  absl::StatusOr<DimExpr> Factor() {
    SkipSpace();
    const size_t begin = pos_;
    if (std::isdigit(static_cast<unsigned char>(Peek()))) {
      int64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, Peek() - '0', &value)) {
          pos_ = begin;
          return Error("the number overflows 64-bit integers");
        }
        ++pos_;
      }
      if (std::isalpha(static_cast<unsigned char>(Peek())) || Peek() == '_') {
        return Error("a number runs into a name (write 2*seq)");
      }
      return DimExpr(value);
    }
    if (std::isalpha(static_cast<unsigned char>(Peek())) || Peek() == '_') {
      while (std::isalnum(static_cast<unsigned char>(Peek())) ||
             Peek() == '_') {
        ++pos_;
      }
      return DimExpr::Dim(std::string(text_.substr(begin, pos_ - begin)));
    }
    return Error("expected a number or a dim name");
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  absl::Status Error(const char* what) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "expression \"", text_, "\": ", what, " at position ", pos_,
        pos_ < text_.size() ? absl::StrCat(" ('", text_.substr(pos_, 1), "')")
                            : std::string(" (the end)")));
  }

  std::string text_;
  size_t pos_ = 0;
};

}  // namespace

bool IsDimName(std::string_view name) {
  if (name.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_')
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

absl::Status ValidateDimRanges(const DimRanges& dims) {
  for (const auto& [name, range] : dims) {
    if (!IsDimName(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name,
          "\": a dim name is a letter or _ then letters, digits or _"));
    }
    if (range.min < 0 || range.min > range.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" has range [", range.min, ", ", range.max,
          "]; a range is [min, max] with 0 <= min <= max"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDimValues(const DimRanges& dims, const DimValues& values) {
  for (const auto& [name, value] : values) {
    auto it = dims.find(name);
    if (it == dims.end()) {
      std::vector<std::string> names;
      for (const auto& [n, r] : dims) names.push_back(n);
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" is bound to ", value,
          " but the graph declares no such dim (its dims: ",
          names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
    }
    if (value < it->second.min || value > it->second.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" is bound to ", value, ", outside its range [",
          it->second.min, ", ", it->second.max, "]"));
    }
  }
  return absl::OkStatus();
}

DimExpr::DimExpr(int64_t constant) {
  if (constant != 0) terms_[{}] = constant;
}

DimExpr DimExpr::Dim(std::string name) {
  DimExpr e;
  e.terms_[{{std::move(name), 1}}] = 1;
  return e;
}

absl::StatusOr<DimExpr> DimExpr::Parse(std::string_view text) {
  return Parser(text).Parse();
}

std::string DimExpr::ToString() const {
  if (terms_.empty()) return "0";
  std::vector<std::pair<const Monomial*, int64_t>> order;
  for (const auto& [m, c] : terms_) order.emplace_back(&m, c);
  // Highest degree first, then by the factors as written (a*a before a*b).
  auto factors_of = [](const Monomial& m) {
    std::vector<std::string_view> factors;
    for (const auto& [dim, power] : m)
      factors.insert(factors.end(), power, dim);
    return factors;
  };
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    const int da = TotalDegree(*a.first), db = TotalDegree(*b.first);
    if (da != db) return da > db;
    return factors_of(*a.first) < factors_of(*b.first);
  });
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& [m, c] = order[i];
    // The magnitude as unsigned: -INT64_MIN does not fit int64.
    uint64_t magnitude = c < 0 ? uint64_t{0} - static_cast<uint64_t>(c)
                               : static_cast<uint64_t>(c);
    if (i == 0) {
      if (c < 0) out += "-";
    } else {
      out += c < 0 ? " - " : " + ";
    }
    std::vector<std::string> factors;
    if (magnitude != 1 || m->empty())
      factors.push_back(absl::StrCat(magnitude));
    for (const auto& [dim, power] : *m) {
      for (int p = 0; p < power; ++p) factors.push_back(dim);
    }
    out += absl::StrJoin(factors, "*");
  }
  return out;
}

bool DimExpr::IsConstant() const {
  return terms_.empty() ||
         (terms_.size() == 1 && terms_.begin()->first.empty());
}

int64_t DimExpr::ConstantTerm() const {
  auto it = terms_.find(Monomial{});
  return it == terms_.end() ? 0 : it->second;
}

std::vector<std::string> DimExpr::Dims() const {
  std::vector<std::string> dims;
  for (const auto& [m, c] : terms_) {
    for (const auto& [dim, power] : m) dims.push_back(dim);
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

int DimExpr::Degree(const std::string& dim) const {
  int degree = 0;
  for (const auto& [m, c] : terms_) {
    for (const auto& [d, power] : m) {
      if (d == dim) degree = std::max(degree, power);
    }
  }
  return degree;
}

absl::StatusOr<int64_t> DimExpr::Evaluate(const DimValues& values) const {
  int64_t sum = 0;
  for (const auto& [m, c] : terms_) {
    int64_t term = c;
    for (const auto& [dim, power] : m) {
      auto it = values.find(dim);
      if (it == values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("expression ", Quoted(*this), " uses dim \"", dim,
                         "\", which has no value"));
      }
      for (int p = 0; p < power; ++p) {
        if (__builtin_mul_overflow(term, it->second, &term)) {
          return Overflow(absl::StrCat(
              "expression ", Quoted(*this), " at ",
              absl::StrJoin(values, ", ", absl::PairFormatter("="))));
        }
      }
    }
    if (__builtin_add_overflow(sum, term, &sum)) {
      return Overflow(
          absl::StrCat("expression ", Quoted(*this), " at ",
                       absl::StrJoin(values, ", ", absl::PairFormatter("="))));
    }
  }
  return sum;
}

absl::StatusOr<DimExpr> DimExpr::Substitute(
    const std::map<std::string, DimExpr>& by) const {
  DimExpr sum;
  for (const auto& [m, c] : terms_) {
    DimExpr term(c);
    Monomial kept;
    for (const auto& [dim, power] : m) {
      auto it = by.find(dim);
      if (it == by.end()) {
        kept.emplace_back(dim, power);
        continue;
      }
      for (int p = 0; p < power; ++p) {
        MEMPLAN_ASSIGN_OR_RETURN(term, Multiply(term, it->second));
      }
    }
    if (!kept.empty()) {
      DimExpr rest;
      rest.terms_[kept] = 1;
      MEMPLAN_ASSIGN_OR_RETURN(term, Multiply(term, rest));
    }
    MEMPLAN_ASSIGN_OR_RETURN(sum, Add(sum, term));
  }
  return sum;
}

absl::StatusOr<DimExpr> DimExpr::Bind(const DimValues& values) const {
  std::map<std::string, DimExpr> by;
  for (const auto& [dim, value] : values) by.emplace(dim, DimExpr(value));
  absl::StatusOr<DimExpr> bound = Substitute(by);
  if (!bound.ok()) {
    return Overflow(
        absl::StrCat("expression ", Quoted(*this), " at ",
                     absl::StrJoin(values, ", ", absl::PairFormatter("="))));
  }
  return bound;
}

absl::StatusOr<DimExpr> Add(const DimExpr& a, const DimExpr& b) {
  DimExpr sum = a;
  for (const auto& [m, c] : b.terms_) {
    if (!Accumulate(sum.terms_, m, c)) {
      return Overflow(absl::StrCat(Quoted(a), " + ", Quoted(b)));
    }
  }
  return sum;
}

absl::StatusOr<DimExpr> Subtract(const DimExpr& a, const DimExpr& b) {
  DimExpr difference = a;
  for (const auto& [m, c] : b.terms_) {
    int64_t negated = 0;
    if (__builtin_sub_overflow(int64_t{0}, c, &negated) ||
        !Accumulate(difference.terms_, m, negated)) {
      return Overflow(absl::StrCat(Quoted(a), " - ", Quoted(b)));
    }
  }
  return difference;
}

absl::StatusOr<DimExpr> Multiply(const DimExpr& a, const DimExpr& b) {
  DimExpr product;
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      int64_t c = 0;
      if (__builtin_mul_overflow(ca, cb, &c) ||
          !Accumulate(product.terms_, Times(ma, mb), c)) {
        return Overflow(
            absl::StrCat("(", a.ToString(), ") * (", b.ToString(), ")"));
      }
    }
  }
  return product;
}

}  // namespace memplan
