// Symbolic problems: a graph with dims to buffers with expression sizes.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "symbolic/binomial_poly.h"

namespace memplan {

using internal::BinomialPoly;
using internal::DimBox;
using internal::ProveNonNegative;
using internal::SignProof;

absl::StatusOr<DimExpr> ReserveSize(const DimExpr& size, Bytes alignment,
                                    const DimRanges& dims) {
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(dims));
  MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly p, BinomialPoly::FromExpr(size, box));
  MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly reserved, p.RoundUp(alignment));
  return reserved.ToExpr(box);
}

namespace {

DimValues Corner(const DimRanges& dims, bool upper) {
  DimValues values;
  for (const auto& [name, range] : dims) {
    values[name] = upper ? range.max : range.min;
  }
  return values;
}

std::string Describe(const DimValues& values) {
  return absl::StrJoin(values, ", ", absl::PairFormatter("="));
}

// The buffers of `lo` and `hi` (one graph built at the dims' minima and
// maxima) must be the same but for their sizes.
absl::Status CheckSameBuffers(const Problem& lo, const Problem& hi,
                              const DimRanges& dims) {
  const std::string ends = absl::StrCat(Describe(Corner(dims, false)), " and ",
                                        Describe(Corner(dims, true)));
  if (lo.buffers.size() != hi.buffers.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the graph has ", lo.buffers.size(), " buffers at ",
        Describe(Corner(dims, false)), " but ", hi.buffers.size(), " at ",
        Describe(Corner(dims, true)),
        ": an in-place decision depends on the sizes, which a symbolic plan "
        "does not support"));
  }
  for (size_t i = 0; i < lo.buffers.size(); ++i) {
    const Buffer& a = lo.buffers[i];
    const Buffer& b = hi.buffers[i];
    if (a.name != b.name || a.tensors != b.tensors ||
        a.lifetime != b.lifetime || a.alignment != b.alignment ||
        a.pools != b.pools || a.fixed != b.fixed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the buffer of tensor \"", a.name, "\" differs between ", ends,
          " (an in-place decision depends on the sizes), which a symbolic "
          "plan does not support"));
    }
  }
  if (lo.conflicts != hi.conflicts) {
    return absl::InvalidArgumentError(
        absl::StrCat("the explicit conflicts differ between ", ends));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SymbolicProblem> BuildSymbolicProblem(
    const Graph& graph, const BuildOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(ValidateSymbolicSizes(graph));
  MEMPLAN_ASSIGN_OR_RETURN(DimBox box, DimBox::Of(graph.dims));
  MEMPLAN_ASSIGN_OR_RETURN(Graph lo_graph,
                           BindDims(graph, Corner(graph.dims, false)));
  MEMPLAN_ASSIGN_OR_RETURN(Graph hi_graph,
                           BindDims(graph, Corner(graph.dims, true)));
  MEMPLAN_ASSIGN_OR_RETURN(Problem lo, BuildProblem(lo_graph, options));
  MEMPLAN_ASSIGN_OR_RETURN(Problem hi, BuildProblem(hi_graph, options));
  MEMPLAN_RETURN_IF_ERROR(CheckSameBuffers(lo, hi, graph.dims));
  if (hi.pools.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a symbolic problem has one pool; the graph has ", hi.pools.size()));
  }
  absl::flat_hash_map<std::string, const Tensor*> tensors;
  for (const Tensor& t : graph.tensors) tensors[t.name] = &t;
  auto size_of = [&](const std::string& name) {
    const Tensor* t = tensors.at(name);
    return t->symbolic_size.has_value() ? *t->symbolic_size : DimExpr(t->size);
  };
  const std::vector<int64_t> width = box.Widths();

  SymbolicProblem out;
  out.name = hi.name;
  out.dims = graph.dims;
  out.pool = hi.pools[0];
  out.conflicts = hi.conflicts;
  for (BufferId i = 0; i < static_cast<BufferId>(hi.buffers.size()); ++i) {
    const Buffer& b = hi.buffers[i];
    if (b.fixed.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer \"", b.name,
                       "\" has a fixed placement, which a symbolic "
                       "problem does not support"));
    }
    const DimExpr size = size_of(b.name);
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly base,
                             BinomialPoly::FromExpr(size, box));
    // Every tensor merged into the buffer at both ends must fit in it at
    // every value, for the buffer's size is its base tensor's.
    for (const std::string& other : b.tensors) {
      if (other == b.name) continue;
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly p,
                               BinomialPoly::FromExpr(size_of(other), box));
      MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly slack, internal::Subtract(base, p));
      int64_t budget = 1000;
      const SignProof proof = ProveNonNegative(slack, width, &budget);
      if (proof.result != SignProof::kProven) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", other, "\" shares the buffer of \"", b.name,
            "\" but is ",
            proof.result == SignProof::kRefuted
                ? absl::StrCat("larger at ", box.Describe(proof.point))
                : std::string("not proven no larger over the dims' ranges"),
            ", which a symbolic plan does not support"));
      }
    }
    const Bytes alignment = std::max(b.alignment, out.pool.alignment);
    SymbolicBuffer buffer{.name = b.name,
                          .tensors = b.tensors,
                          .size = DimExpr(),
                          .alignment = alignment,
                          .lifetime = b.lifetime,
                          .tensor_size = size};
    MEMPLAN_ASSIGN_OR_RETURN(BinomialPoly reserved, base.RoundUp(alignment));
    MEMPLAN_ASSIGN_OR_RETURN(buffer.size, reserved.ToExpr(box));
    out.buffers.push_back(std::move(buffer));
  }
  return out;
}

namespace {

absl::Status CheckAllBound(const DimRanges& dims, const DimValues& values) {
  MEMPLAN_RETURN_IF_ERROR(CheckDimValues(dims, values));
  for (const auto& [name, range] : dims) {
    if (!values.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("dim \"", name, "\" has no value"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Problem> SymbolicProblem::Rounded(
    const DimValues& values) const {
  MEMPLAN_ASSIGN_OR_RETURN(Problem p, At(values));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (!buffers[i].tensor_size.has_value()) continue;
    MEMPLAN_ASSIGN_OR_RETURN(Bytes size,
                             buffers[i].tensor_size->Evaluate(values));
    const Bytes a = buffers[i].alignment;
    // At most the reserve (which is aligned and >= the size): no overflow.
    p.buffers[i].size = (size + a - 1) / a * a;
  }
  return p;
}

absl::StatusOr<Problem> SymbolicProblem::At(const DimValues& values) const {
  MEMPLAN_RETURN_IF_ERROR(CheckAllBound(dims, values));
  Problem p;
  p.name = name;
  p.pools = {pool};
  p.conflicts = conflicts;
  p.buffers.reserve(buffers.size());
  for (const SymbolicBuffer& b : buffers) {
    Buffer buffer;
    buffer.name = b.name;
    buffer.tensors = b.tensors;
    buffer.alignment = b.alignment;
    buffer.lifetime = b.lifetime;
    MEMPLAN_ASSIGN_OR_RETURN(buffer.size, b.size.Evaluate(values));
    p.buffers.push_back(std::move(buffer));
  }
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(p));
  return p;
}

absl::StatusOr<SymbolicProblem> SymbolicProblem::Narrowed(
    const DimRanges& narrower) const {
  MEMPLAN_RETURN_IF_ERROR(ValidateDimRanges(narrower));
  for (const auto& [name, range] : dims) {
    auto it = narrower.find(name);
    if (it == narrower.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the narrowed ranges have no dim \"", name, "\""));
    }
    if (it->second.min < range.min || it->second.max > range.max) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" in [", it->second.min, ", ", it->second.max,
          "] is not inside its range [", range.min, ", ", range.max, "]"));
    }
  }
  if (narrower.size() != dims.size()) {
    return absl::InvalidArgumentError(
        "the narrowed ranges name a dim the problem does not have");
  }
  SymbolicProblem out = *this;
  out.dims = narrower;
  for (SymbolicBuffer& b : out.buffers) {
    if (!b.tensor_size.has_value()) continue;
    MEMPLAN_ASSIGN_OR_RETURN(
        b.size, ReserveSize(*b.tensor_size, b.alignment, narrower));
  }
  return out;
}

absl::StatusOr<DimRanges> SteppedDims(const DimRanges& dims,
                                      const DimValues& steps) {
  DimRanges out = dims;
  for (const auto& [name, step] : steps) {
    auto it = out.find(name);
    if (it == out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("a step is given for dim \"", name,
                       "\", which the problem does not have"));
    }
    if (step < 1 || step > (int64_t{1} << 20)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" has step ", step, "; a step is in [1, 2^20]"));
    }
    if (step == 1) continue;
    const std::string div = StepDivName(name), mod = StepModName(name);
    for (const std::string& taken : {div, mod}) {
      if (dims.contains(taken)) {
        return absl::InvalidArgumentError(
            absl::StrCat("dim \"", name,
                         "\" cannot be counted in steps: the problem "
                         "already has a dim \"",
                         taken, "\""));
      }
    }
    const DimRange range = it->second;
    out.erase(it);
    out[div] = {range.min / step, range.max / step};
    out[mod] = {0, step - 1};
  }
  return out;
}

absl::StatusOr<SymbolicProblem> SymbolicProblem::Stepped(
    const DimValues& steps) const {
  SymbolicProblem out = *this;
  MEMPLAN_ASSIGN_OR_RETURN(out.dims, SteppedDims(dims, steps));
  // Each dim counted in steps is step * div + mod in the sizes.
  std::map<std::string, DimExpr> by;
  for (const auto& [name, step] : steps) {
    if (step == 1) continue;
    MEMPLAN_ASSIGN_OR_RETURN(
        DimExpr whole,
        Multiply(DimExpr(step), DimExpr::Dim(StepDivName(name))));
    MEMPLAN_ASSIGN_OR_RETURN(by[name],
                             Add(whole, DimExpr::Dim(StepModName(name))));
  }
  if (by.empty()) return out;
  for (SymbolicBuffer& b : out.buffers) {
    if (b.tensor_size.has_value()) {
      MEMPLAN_ASSIGN_OR_RETURN(b.tensor_size, b.tensor_size->Substitute(by));
      MEMPLAN_ASSIGN_OR_RETURN(
          b.size, ReserveSize(*b.tensor_size, b.alignment, out.dims));
    } else {
      // Aligned at every integer value of the dims, so at every
      // step * div + mod.
      MEMPLAN_ASSIGN_OR_RETURN(b.size, b.size.Substitute(by));
    }
  }
  return out;
}

std::string StepDivName(const std::string& dim) { return dim + "_div"; }
std::string StepModName(const std::string& dim) { return dim + "_mod"; }

DimValues StepValues(const DimValues& values, const DimValues& steps) {
  DimValues out = values;
  for (const auto& [name, step] : steps) {
    auto it = out.find(name);
    if (it != out.end() && step > 1) {
      const int64_t value = it->second;
      out.erase(it);
      out[StepDivName(name)] = value / step;
      out[StepModName(name)] = value % step;
    }
  }
  return out;
}

absl::StatusOr<SymbolicProblem> SymbolicBucket::ProblemOf(
    const SymbolicProblem& whole) const {
  MEMPLAN_ASSIGN_OR_RETURN(SymbolicProblem narrowed, whole.Narrowed(dims));
  for (const auto& [name, step] : steps) {
    if (step < 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim \"", name, "\" has step ", step, "; a bucket's steps are >= 2"));
    }
  }
  return narrowed.Stepped(steps);
}

absl::StatusOr<int64_t> SymbolicBucket::PeakAt(const DimValues& values) const {
  return plan.peak.Evaluate(StepValues(values, steps));
}

absl::StatusOr<Plan> SymbolicPlan::At(const SymbolicProblem& problem,
                                      const DimValues& values) const {
  MEMPLAN_ASSIGN_OR_RETURN(Problem p, problem.At(values));
  if (offsets.size() != p.buffers.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan has ", offsets.size(), " offsets for ",
                     p.buffers.size(), " buffers"));
  }
  Plan plan;
  plan.planner = planner;
  for (BufferId i = 0; i < static_cast<BufferId>(p.buffers.size()); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(Offset offset, offsets[i].Evaluate(values));
    Bytes top = 0;
    if (offset < 0 || __builtin_add_overflow(offset, p.buffers[i].size, &top) ||
        top > kMaxBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("buffer \"", p.buffers[i].name, "\" at offset ", offset,
                       " lies outside [0, 2^62) at ", Describe(values)));
    }
    plan.assignments.push_back({.buffer = i, .pool = 0, .offset = offset});
  }
  ComputePlanStatistics(p, plan);
  return plan;
}

}  // namespace memplan
