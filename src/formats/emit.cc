// C header and TFLite Micro offline plan emitters.

#include "memplan/emit.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "memplan/symbolic.h"
#include "memplan/tensor_placement.h"

namespace memplan {
namespace {

// One tensor as the emitters list it.
struct Row {
  std::string name;
  std::string kind;
  Bytes size = 0;
  BufferId buffer = kNotPlanned;
  PoolId pool = 0;
  Offset offset = -1;
};

std::vector<Row> Rows(const Problem& problem, const Plan& plan,
                      const Graph* graph) {
  std::vector<Row> rows;
  if (graph != nullptr) {
    absl::StatusOr<std::vector<TensorPlacement>> tensors =
        PlaceTensors(*graph, problem, plan);
    if (tensors.ok()) {
      for (const TensorPlacement& t : *tensors) {
        rows.push_back({.name = t.name,
                        .kind = std::string(TensorKindName(t.kind)),
                        .size = t.size,
                        .buffer = t.buffer,
                        .pool = t.pool,
                        .offset = t.planned() ? t.offset : -1});
      }
      return rows;
    }
  }
  for (const Assignment& a : plan.assignments) {
    for (const std::string& name : problem.buffers[a.buffer].tensors) {
      rows.push_back({.name = name,
                      .kind = "buffer",
                      .size = problem.buffers[a.buffer].size,
                      .buffer = a.buffer,
                      .pool = a.pool,
                      .offset = a.offset});
    }
  }
  return rows;
}

// Upper-case letters, digits and single underscores.
std::string Identifier(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      out += absl::ascii_toupper(static_cast<unsigned char>(c));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "T" : out;
}

// Text safe inside a C comment: printable ASCII, no "*/".
std::string CommentText(std::string_view text) {
  std::string out;
  for (const char c : text) out += c >= 0x20 && c < 0x7f ? c : '?';
  return absl::StrReplaceAll(out, {{"*/", "* /"}});
}

// "steps [3, 5): conv1 .. relu" (op names when there is a graph).
std::string LifetimeText(const Lifetime& lifetime, const Graph* graph) {
  std::string out =
      absl::StrCat("steps [", lifetime.start, ", ", lifetime.end, ")");
  if (graph != nullptr && lifetime.start < lifetime.end &&
      lifetime.end <= static_cast<Step>(graph->ops.size())) {
    absl::StrAppend(&out, ": ", graph->ops[lifetime.start].name);
    if (lifetime.end - 1 != lifetime.start) {
      absl::StrAppend(&out, " .. ", graph->ops[lifetime.end - 1].name);
    }
  }
  return out;
}

}  // namespace

std::string PlanToCHeader(const Problem& problem, const Plan& plan,
                          const Graph* graph, std::string_view name,
                          std::string_view prefix_text) {
  const std::string prefix = Identifier(prefix_text);
  const std::string guard =
      absl::StrCat(prefix, "_", Identifier(name), "_PLAN_H_");
  std::string out = absl::StrCat(
      "/* Memory plan of ", CommentText(name), ", written by memplan.\n",
      " * Planner ", CommentText(plan.planner), ": ", plan.peak,
      " bytes in all; lower bound ", plan.lower_bound, " (one pool).\n",
      " * Offsets are bytes from the base of the tensor's pool; -1: not "
      "planned\n * (the runtime places it). */\n",
      "#ifndef ", guard, "\n#define ", guard, "\n\n");
  std::set<std::string> used;
  auto unique = [&](const std::string& base) {
    std::string id = base;
    for (int k = 2; !used.insert(id).second; ++k)
      id = absl::StrCat(base, "_", k);
    return id;
  };
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const std::string pool = unique(
        absl::StrCat(prefix, "_POOL_", Identifier(problem.pools[p].name)));
    const Bytes used_bytes = p < plan.pool_used.size() ? plan.pool_used[p] : 0;
    absl::StrAppendFormat(
        &out,
        "/* pool \"%s\": capacity %d (0: unbounded), "
        "alignment %d */\n#define %s %d\n#define %s_SIZE %d\n",
        CommentText(problem.pools[p].name), problem.pools[p].capacity,
        problem.pools[p].alignment, pool, p, pool, used_bytes);
  }
  if (problem.pools.size() == 1) {
    absl::StrAppendFormat(&out, "#define %s %d\n",
                          unique(absl::StrCat(prefix, "_ARENA_SIZE")),
                          plan.pool_used.empty() ? 0 : plan.pool_used[0]);
  }
  out += "\n";
  for (const Row& row : Rows(problem, plan, graph)) {
    const std::string id =
        unique(absl::StrCat(prefix, "_", Identifier(row.name)));
    absl::StrAppend(&out, "/* \"", CommentText(row.name), "\": ", row.kind,
                    ", ", row.size, " bytes, ");
    if (row.buffer == kNotPlanned) {
      absl::StrAppend(&out, "not planned */\n");
    } else {
      const Buffer& b = problem.buffers[row.buffer];
      absl::StrAppend(&out, "alive ",
                      CommentText(LifetimeText(b.lifetime, graph)));
      if (b.tensors.size() > 1) {
        absl::StrAppend(&out, ", shares buffer \"", CommentText(b.name), "\"");
      }
      absl::StrAppend(&out, " */\n");
    }
    // Keep the _OFFSET name unique too (a tensor may be called "x_offset").
    const std::string offset = unique(id + "_OFFSET");
    absl::StrAppend(&out, "#define ", offset, " ",
                    row.offset < 0 ? "(-1)" : absl::StrCat(row.offset), "\n");
    if (problem.pools.size() > 1 && row.buffer != kNotPlanned) {
      absl::StrAppend(&out, "#define ", unique(id + "_POOL"), " ", row.pool,
                      "\n");
    }
  }
  absl::StrAppend(&out, "\n#endif  /* ", guard, " */\n");
  return out;
}

namespace {

// The name of a dim as a macro parameter: itself, unless C or the header
// gives it a meaning.
std::string ParameterName(const std::string& dim) {
  static const auto* const kTaken = new std::set<std::string>{
      "auto",     "break",    "case",     "char",   "const",   "continue",
      "default",  "do",       "double",   "else",   "enum",    "extern",
      "float",    "for",      "goto",     "if",     "inline",  "int",
      "long",     "register", "restrict", "return", "short",   "signed",
      "sizeof",   "static",   "struct",   "switch", "typedef", "union",
      "unsigned", "void",     "volatile", "while",  "int64_t", "INT64_C"};
  if (kTaken->contains(dim) || dim.starts_with("__") ||
      (dim.size() > 1 && dim[0] == '_' && absl::ascii_isupper(dim[1]))) {
    return absl::StrCat("dim", dim);
  }
  return dim;
}

// `e` as a C expression in int64_t of the macro's parameters (each
// parenthesised and cast, so that any integer expression may be passed).
std::string CExpression(const DimExpr& e,
                        const std::map<std::string, std::string>& parameter) {
  if (e.terms().empty()) return "INT64_C(0)";
  // Highest degree first, as DimExpr::ToString() prints.
  std::vector<std::pair<DimExpr::Monomial, int64_t>> terms(e.terms().begin(),
                                                           e.terms().end());
  auto degree = [](const DimExpr::Monomial& m) {
    int d = 0;
    for (const auto& [dim, power] : m) d += power;
    return d;
  };
  std::stable_sort(terms.begin(), terms.end(),
                   [&](const auto& a, const auto& b) {
                     return degree(a.first) > degree(b.first);
                   });
  std::string out = "(";
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& [monomial, c] = terms[i];
    const uint64_t magnitude =
        c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    if (i == 0) {
      if (c < 0) out += "-";
    } else {
      out += c < 0 ? " - " : " + ";
    }
    absl::StrAppend(&out, "INT64_C(", magnitude, ")");
    for (const auto& [dim, power] : monomial) {
      for (int k = 0; k < power; ++k) {
        absl::StrAppend(&out, "*(int64_t)(", parameter.at(dim), ")");
      }
    }
  }
  return out + ")";
}

std::string RangeText(const DimRange& range) {
  return absl::StrCat("[", range.min, ", ", range.max, "]");
}

// The dim the buckets cut: the one whose range the first bucket narrows;
// empty for a plan of one bucket.
std::string CutDim(const SymbolicGraphPlan& plan) {
  if (plan.buckets.size() <= 1) return "";
  for (const auto& [dim, range] : plan.problem.dims) {
    auto it = plan.buckets.front().dims.find(dim);
    if (it != plan.buckets.front().dims.end() && !(it->second == range)) {
      return dim;
    }
  }
  return "";
}

// The C expressions of a symbolic plan's macros: one expression per bucket,
// chosen by the cut dim's value. The buckets cover its range in order, so
// each one's maximum separates it from the next.
class BucketedExpressions {
 public:
  BucketedExpressions(const SymbolicGraphPlan& plan,
                      const std::map<std::string, std::string>& parameter)
      : plan_(plan), parameter_(parameter), cut_(CutDim(plan)) {
    // What each bucket's expressions take for a dim: the parameter, and for
    // a dim it counts in steps of m, parameter / m and parameter % m.
    argument_.assign(plan.buckets.size(), parameter);
    for (size_t b = 0; b < plan.buckets.size(); ++b) {
      for (const auto& [dim, step] : plan.buckets[b].steps) {
        if (!parameter.contains(dim) || step < 2) continue;
        for (const auto& [name, op] : {std::pair{StepDivName(dim), " / "},
                                       std::pair{StepModName(dim), " % "}}) {
          argument_[b][name] = absl::StrCat("(int64_t)(", parameter.at(dim),
                                            ")", op, "INT64_C(", step, ")");
        }
      }
    }
  }

  const std::string& cut() const { return cut_; }

  // `exprs` holds one expression per bucket.
  std::string operator()(const std::vector<DimExpr>& exprs) const {
    if (cut_.empty()) return CExpression(exprs.front(), argument_.front());
    std::string out = "(";
    for (size_t b = 0; b + 1 < plan_.buckets.size(); ++b) {
      absl::StrAppend(&out, "(int64_t)(", parameter_.at(cut_), ") <= INT64_C(",
                      plan_.buckets[b].dims.at(cut_).max, ") ? ",
                      CExpression(exprs[b], argument_[b]), " : ");
    }
    return absl::StrCat(out, CExpression(exprs.back(), argument_.back()), ")");
  }

 private:
  const SymbolicGraphPlan& plan_;
  const std::map<std::string, std::string>& parameter_;
  const std::string cut_;
  std::vector<std::map<std::string, std::string>> argument_;
};

// The opening comment of a symbolic plan's header: dims, buckets, peaks.
std::string SymbolicHeaderComment(const SymbolicGraphPlan& plan,
                                  std::string_view name,
                                  const std::string& cut) {
  std::string out = absl::StrCat(
      "/* Memory plan of ", CommentText(name),
      ", written by memplan: one plan for every value of the dims.\n",
      " * Planner ", CommentText(plan.planner), "; one pool.\n");
  for (const auto& [dim, range] : plan.problem.dims) {
    absl::StrAppend(&out, " * dim ", CommentText(dim), ": ", RangeText(range),
                    "\n");
  }
  if (cut.empty()) {
    absl::StrAppend(&out,
                    " * One bucket: the same expressions over the "
                    "whole ranges.\n");
  } else {
    absl::StrAppend(&out, " * ", plan.buckets.size(), " buckets, cut on ",
                    CommentText(cut), ":");
    for (const SymbolicBucket& b : plan.buckets) {
      absl::StrAppend(&out, " ", RangeText(b.dims.at(cut)));
    }
    absl::StrAppend(&out, "\n");
  }
  for (const SymbolicBucket& b : plan.buckets) {
    absl::StrAppend(&out, " * peak",
                    cut.empty() ? std::string()
                                : absl::StrCat(" on ", CommentText(cut), " in ",
                                               RangeText(b.dims.at(cut))),
                    ": ", CommentText(b.plan.peak.ToString()));
    for (const auto& [dim, step] : b.steps) {
      absl::StrAppend(&out, ", ", CommentText(dim), " counted in steps of ",
                      step, " (", CommentText(StepDivName(dim)), " = ",
                      CommentText(dim), " / ", step, ", ",
                      CommentText(StepModName(dim)), " = ", CommentText(dim),
                      " % ", step, ")");
    }
    absl::StrAppend(&out, "\n");
  }
  return out;
}

// Macro names made unique by a suffix _2, _3, ... when two would clash.
class UniqueIds {
 public:
  std::string operator()(const std::string& base) {
    std::string id = base;
    for (int k = 2; !used_.insert(id).second; ++k) {
      id = absl::StrCat(base, "_", k);
    }
    return id;
  }

 private:
  std::set<std::string> used_;
};

// One comment and one offset macro per tensor of `graph`.
std::string TensorOffsetMacros(const SymbolicGraphPlan& plan,
                               const Graph& graph, const std::string& prefix,
                               const std::string& params,
                               const BucketedExpressions& by_bucket,
                               UniqueIds& unique) {
  const SymbolicProblem& problem = plan.problem;
  std::map<std::string, size_t> buffer_of;
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    for (const std::string& t : problem.buffers[i].tensors) buffer_of[t] = i;
  }
  std::string out;
  for (const Tensor& tensor : graph.tensors) {
    const std::string id =
        unique(absl::StrCat(prefix, "_", Identifier(tensor.name)));
    const std::string size = tensor.symbolic_size.has_value()
                                 ? tensor.symbolic_size->ToString()
                                 : absl::StrCat(tensor.size);
    out += absl::StrCat("/* \"", CommentText(tensor.name),
                        "\": ", std::string(TensorKindName(tensor.kind)), ", ",
                        CommentText(size), " bytes, ");
    auto it = buffer_of.find(tensor.name);
    std::string offset_expr = "(INT64_C(-1))";
    if (it == buffer_of.end()) {
      absl::StrAppend(&out, "not planned */\n");
    } else {
      const SymbolicBuffer& b = problem.buffers[it->second];
      absl::StrAppend(&out, "alive ",
                      CommentText(LifetimeText(b.lifetime, &graph)));
      if (b.tensors.size() > 1) {
        absl::StrAppend(&out, ", shares buffer \"", CommentText(b.name), "\"");
      }
      absl::StrAppend(&out, " */\n");
      std::vector<DimExpr> offsets;
      for (const SymbolicBucket& bucket : plan.buckets) {
        offsets.push_back(bucket.plan.offsets[it->second]);
      }
      offset_expr = by_bucket(offsets);
    }
    absl::StrAppend(&out, "#define ", unique(id + "_OFFSET"), "(", params, ") ",
                    offset_expr, "\n");
  }
  return out;
}

}  // namespace

std::string SymbolicPlanToCHeader(const SymbolicGraphPlan& plan,
                                  const Graph& graph, std::string_view name,
                                  std::string_view prefix_text) {
  const SymbolicProblem& problem = plan.problem;
  if (plan.buckets.empty()) {  // PlanSymbolicMemory always gives one
    return "#error \"memplan: a symbolic plan without buckets\"\n";
  }
  const std::string prefix = Identifier(prefix_text);
  const std::string guard =
      absl::StrCat(prefix, "_", Identifier(name), "_PLAN_H_");
  std::map<std::string, std::string> parameter;
  std::vector<std::string> parameters;
  for (const auto& [dim, range] : problem.dims) {
    parameters.push_back(ParameterName(dim));
    parameter[dim] = parameters.back();
  }
  const std::string params = absl::StrJoin(parameters, ", ");
  const BucketedExpressions by_bucket(plan, parameter);

  std::string out = SymbolicHeaderComment(plan, name, by_bucket.cut());
  absl::StrAppend(
      &out,
      " * The macros take the dims in this order and hold for values inside "
      "the\n * ranges only; int64_t arithmetic. Offsets are bytes from the "
      "arena's base;\n * -1: not planned (the runtime places it). */\n",
      "#ifndef ", guard, "\n#define ", guard, "\n\n#include <stdint.h>\n\n");
  UniqueIds unique;
  for (const auto& [dim, range] : problem.dims) {
    const std::string id = absl::StrCat(prefix, "_DIM_", Identifier(dim));
    absl::StrAppend(&out, "#define ", unique(id + "_MIN"), " INT64_C(",
                    range.min, ")\n#define ", unique(id + "_MAX"), " INT64_C(",
                    range.max, ")\n");
  }
  std::vector<DimExpr> peaks;
  for (const SymbolicBucket& b : plan.buckets) peaks.push_back(b.plan.peak);
  absl::StrAppendFormat(&out,
                        "/* pool \"%s\": capacity %d (0: unbounded), "
                        "alignment %d */\n#define %s(%s) %s\n\n",
                        CommentText(problem.pool.name), problem.pool.capacity,
                        problem.pool.alignment,
                        unique(absl::StrCat(prefix, "_ARENA_SIZE")), params,
                        by_bucket(peaks));
  out += TensorOffsetMacros(plan, graph, prefix, params, by_bucket, unique);
  absl::StrAppend(&out, "\n#endif  /* ", guard, " */\n");
  return out;
}

absl::StatusOr<std::vector<int32_t>> TflmOfflinePlan(const Problem& problem,
                                                     const Plan& plan,
                                                     const Graph* graph) {
  if (problem.pools.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a TFLite Micro offline plan has one arena; this plan has ",
        problem.pools.size(), " pools"));
  }
  const std::vector<Row> rows = Rows(problem, plan, graph);
  if (rows.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError("too many tensors for int32");
  }
  std::vector<int32_t> out = {0, 0, static_cast<int32_t>(rows.size())};
  for (const Row& row : rows) {
    if (row.offset > std::numeric_limits<int32_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor \"", row.name, "\" at offset ", row.offset,
                       " is beyond an int32 offset"));
    }
    out.push_back(static_cast<int32_t>(row.offset));
  }
  return out;
}

std::string TflmOfflinePlanBytes(const std::vector<int32_t>& plan) {
  std::string out;
  out.reserve(plan.size() * 4);
  for (const int32_t v : plan) {
    const uint32_t u = static_cast<uint32_t>(v);
    for (int shift = 0; shift < 32; shift += 8) {
      out += static_cast<char>((u >> shift) & 0xff);
    }
  }
  return out;
}

}  // namespace memplan
