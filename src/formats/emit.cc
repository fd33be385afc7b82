// C header and TFLite Micro offline plan emitters.

#include "memplan/emit.h"

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
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
std::string LifetimeText(const Buffer& b, const Graph* graph) {
  std::string out =
      absl::StrCat("steps [", b.lifetime.start, ", ", b.lifetime.end, ")");
  if (graph != nullptr && b.lifetime.start < b.lifetime.end &&
      b.lifetime.end <= static_cast<Step>(graph->ops.size())) {
    absl::StrAppend(&out, ": ", graph->ops[b.lifetime.start].name);
    if (b.lifetime.end - 1 != b.lifetime.start) {
      absl::StrAppend(&out, " .. ", graph->ops[b.lifetime.end - 1].name);
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
    for (int k = 2; !used.insert(id).second; ++k) id = absl::StrCat(base, "_", k);
    return id;
  };
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const std::string pool = unique(
        absl::StrCat(prefix, "_POOL_", Identifier(problem.pools[p].name)));
    const Bytes used_bytes = p < plan.pool_used.size() ? plan.pool_used[p] : 0;
    absl::StrAppendFormat(&out,
                          "/* pool \"%s\": capacity %d (0: unbounded), "
                          "alignment %d */\n#define %s %d\n#define %s_SIZE %d\n",
                          CommentText(problem.pools[p].name),
                          problem.pools[p].capacity,
                          problem.pools[p].alignment, pool, p, pool,
                          used_bytes);
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
      absl::StrAppend(&out, "alive ", CommentText(LifetimeText(b, graph)));
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
