// memplan-plan-v1 JSON: PlanToJson, ParsePlanJson, ParsePlanProvenance and
// the ContentHash a plan records of its input (memplan/io.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "formats/json_util.h"
#include "memplan/formats.h"
#include "memplan/symbolic.h"
#include "memplan/tensor_placement.h"

namespace memplan {
namespace {

using internal::CheckKeys;
using internal::DimsFromJson;
using internal::DimsToJson;
using internal::Dump;
using internal::DumpString;
using internal::GetInt;
using internal::GetString;
using internal::Json;
using internal::ParseJson;
using internal::ToInt64;

constexpr absl::string_view kPlanFormat = "memplan-plan-v1";

}  // namespace

std::string ContentHash(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return absl::StrFormat("fnv1a64:%016x", hash);
}

namespace {

Json ProvenanceJson(const PlanProvenance& p, const Graph* graph) {
  Json build = {{"alignment", p.build.alignment},
                {"plan_constants", p.build.plan_constants},
                {"plan_inputs", p.build.plan_inputs},
                {"plan_outputs", p.build.plan_outputs},
                {"capacity", p.build.capacity},
                {"reorder", p.reorder}};
  if (!p.build.pools.empty()) {
    Json pools = Json::array();
    for (const Pool& pool : p.build.pools) {
      pools.push_back({{"name", pool.name},
                       {"capacity", pool.capacity},
                       {"alignment", pool.alignment}});
    }
    build["pools"] = pools;
  }
  if (!p.reorder.empty() && graph != nullptr) {
    Json order = Json::array();
    for (const Op& op : graph->ops) order.push_back(op.name);
    build["op_order"] = std::move(order);
  }
  return build;
}

// Text for a TextSink, handed over in pieces of about a megabyte.
class PieceWriter {
 public:
  explicit PieceWriter(const TextSink& write) : write_(write) {}
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;
  ~PieceWriter() { Flush(); }

  template <typename... Parts>
  void Append(const Parts&... parts) {
    absl::StrAppend(&buffer_, parts...);
    if (buffer_.size() >= kPieceBytes) Flush();
  }
  void Flush() {
    if (!buffer_.empty()) write_(buffer_);
    buffer_.clear();
  }

 private:
  static constexpr size_t kPieceBytes = 1 << 20;
  const TextSink& write_;
  std::string buffer_;
};

// "tensors": every tensor with its pool and offset, or "planned": false.
// A graph the problem was not built from leaves them out rather than
// listing wrong ones.
void WriteTensors(const Problem& problem, const Plan& plan, const Graph* graph,
                  PieceWriter& out) {
  absl::StatusOr<std::vector<TensorPlacement>> tensors;
  if (graph != nullptr) {
    tensors = PlaceTensors(*graph, problem, plan);
    if (!tensors.ok()) return;
  }
  out.Append(",\n\"tensors\":[\n");
  // What Dump gives for {"name", "pool", "offset"} (keys in order), written
  // directly: a graph has thousands of tensors.
  std::vector<std::string> pools;
  for (const Pool& pool : problem.pools) pools.push_back(DumpString(pool.name));
  bool first = true;
  auto add = [&](const std::string& name, int pool, Bytes offset) {
    out.Append(first ? "" : ",\n", "{\"name\":", DumpString(name));
    if (pool < 0) {
      out.Append(",\"planned\":false}");
    } else {
      out.Append(",\"offset\":", offset, ",\"pool\":", pools[pool], "}");
    }
    first = false;
  };
  if (graph != nullptr) {
    for (const TensorPlacement& t : *tensors) {
      add(t.name, t.planned() ? t.pool : -1, t.offset);
    }
  } else {
    for (const Assignment& a : plan.assignments) {
      for (const std::string& name : problem.buffers[a.buffer].tensors) {
        add(name, a.pool, a.offset);
      }
    }
  }
  out.Append(first ? "" : "\n", "]");
}

// "format" to "pools".
void WritePlanHead(const Problem& problem, const Plan& plan,
                   const PlanJsonOptions& options, PieceWriter& out) {
  out.Append("{\n\"format\":\"", kPlanFormat, "\"");
  if (options.provenance.has_value()) {
    const PlanProvenance& p = *options.provenance;
    out.Append(",\n\"input\":",
               Dump(Json({{"name", p.input}, {"hash", p.input_hash}})),
               ",\n\"build\":", Dump(ProvenanceJson(p, options.graph)));
  }
  out.Append(",\n\"planner\":", Dump(Json(plan.planner)),
             ",\n\"peak\":", plan.peak, ",\n\"naive_total\":", plan.naive_total,
             ",\n\"lower_bound\":", plan.lower_bound,
             ",\n\"proven_optimal\":", plan.proven_optimal ? "true" : "false");
  if (options.wall_time) {
    out.Append(",\n\"wall_time_ms\":",
               absl::ToDoubleMilliseconds(plan.wall_time));
  }
  // Only this counter, as before counters were kept in general: the JSON of
  // other planners' plans stays as it was.
  if (auto it = plan.counters.find("shared_objects");
      it != plan.counters.end() && it->second > 0) {
    out.Append(",\n\"shared_objects\":", it->second);
  }
  out.Append(",\n\"pools\":[\n");
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const Pool& pool = problem.pools[p];
    Json j = {{"name", pool.name},
              {"capacity", pool.capacity},
              {"alignment", pool.alignment},
              {"used", p < plan.pool_used.size() ? plan.pool_used[p] : 0}};
    out.Append(Dump(j), p + 1 < problem.pools.size() ? ",\n" : "\n");
  }
  out.Append("]");
}

}  // namespace

void WritePlanJson(const Problem& problem, const Plan& plan,
                   const PlanJsonOptions& options, const TextSink& write) {
  PieceWriter out(write);
  WritePlanHead(problem, plan, options, out);
  out.Append(",\n\"buffers\":[\n");
  std::vector<std::string> pools;
  for (const Pool& pool : problem.pools) pools.push_back(DumpString(pool.name));
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const Assignment& a = plan.assignments[i];
    const Buffer& b = problem.buffers[a.buffer];
    // Dump's object, keys in order, written directly.
    out.Append("{\"end\":", b.lifetime.end, ",\"name\":", DumpString(b.name),
               ",\"offset\":", a.offset, ",\"pool\":", pools[a.pool],
               ",\"size\":", b.size, ",\"start\":", b.lifetime.start,
               ",\"tensors\":[");
    for (size_t t = 0; t < b.tensors.size(); ++t) {
      out.Append(t == 0 ? "" : ",", DumpString(b.tensors[t]));
    }
    out.Append("]}", i + 1 < plan.assignments.size() ? ",\n" : "\n");
  }
  out.Append("]");
  WriteTensors(problem, plan, options.graph, out);
  out.Append("\n}\n");
}

std::string PlanToJson(const Problem& problem, const Plan& plan,
                       const PlanJsonOptions& options) {
  std::string text;
  WritePlanJson(problem, plan, options,
                [&](std::string_view piece) { text.append(piece); });
  return text;
}

namespace {

// The root object of a memplan-plan-v1 file, its format checked.
absl::StatusOr<Json> ParsePlanRoot(std::string_view std_text) {
  const absl::string_view text(std_text.data(), std_text.size());
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParseJson(text));
  if (!root.is_object())
    return absl::InvalidArgumentError("a plan must be a JSON object");
  MEMPLAN_ASSIGN_OR_RETURN(std::string format,
                           GetString(root, "format", "the plan", true));
  if (format != kPlanFormat) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported plan format \"",
                                                   format, "\" (expected ",
                                                   kPlanFormat, ")"));
  }
  return root;
}

// The names of "op_order", a list of op names, into `order`.
absl::Status ParseRecordedOrder(const Json& json, const std::string& where,
                                std::vector<std::string>* order) {
  auto it = json.find("op_order");
  if (it == json.end()) return absl::OkStatus();
  if (!it->is_array()) {
    return absl::InvalidArgumentError(
        where + ": \"op_order\" must be an array of op names");
  }
  for (const Json& name : *it) {
    if (!name.is_string()) {
      return absl::InvalidArgumentError(
          where + ": \"op_order\" must be an array of op names");
    }
    order->push_back(name.get<std::string>());
  }
  return absl::OkStatus();
}

// The "build" object of a plan file: the BuildOptions, and the op ordering
// into `reorder` (with the order it gave into `op_order`).
absl::StatusOr<BuildOptions> ParseRecordedBuild(
    const Json& json, std::string* reorder,
    std::vector<std::string>* op_order) {
  BuildOptions build;
  const std::string where = "the plan's build";
  MEMPLAN_ASSIGN_OR_RETURN(build.alignment,
                           GetInt(json, "alignment", where, false, 1));
  MEMPLAN_ASSIGN_OR_RETURN(build.capacity,
                           GetInt(json, "capacity", where, false, 0));
  for (auto [key, field] : {std::pair{"plan_constants", &build.plan_constants},
                            std::pair{"plan_inputs", &build.plan_inputs},
                            std::pair{"plan_outputs", &build.plan_outputs}}) {
    auto it = json.find(key);
    if (it == json.end()) continue;
    if (!it->is_boolean()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"", key, "\" must be true or false"));
    }
    *field = it->get<bool>();
  }
  MEMPLAN_ASSIGN_OR_RETURN(*reorder, GetString(json, "reorder", where, false));
  MEMPLAN_RETURN_IF_ERROR(ParseRecordedOrder(json, where, op_order));
  if (auto pools = json.find("pools"); pools != json.end()) {
    if (!pools->is_array()) {
      return absl::InvalidArgumentError(where + ": \"pools\" must be an array");
    }
    for (const Json& pj : *pools) {
      if (!pj.is_object()) {
        return absl::InvalidArgumentError(where + ": a pool must be an object");
      }
      Pool pool;
      MEMPLAN_ASSIGN_OR_RETURN(pool.name, GetString(pj, "name", where, true));
      MEMPLAN_ASSIGN_OR_RETURN(pool.capacity,
                               GetInt(pj, "capacity", where, false, 0));
      MEMPLAN_ASSIGN_OR_RETURN(pool.alignment,
                               GetInt(pj, "alignment", where, false, 1));
      build.pools.push_back(pool);
    }
  }
  return build;
}

// The figures a plan file claims (peak, each pool's bytes, proven
// optimality) over those computed from its offsets, so that the verifier
// judges the claim.
absl::Status ReadClaims(
    const Json& root,
    const absl::flat_hash_map<std::string, PoolId>& pool_by_name, Plan& plan) {
  if (auto peak = root.find("peak"); peak != root.end() && !peak->is_null()) {
    MEMPLAN_ASSIGN_OR_RETURN(plan.peak, ToInt64(*peak, "the plan's \"peak\""));
  }
  if (auto pools = root.find("pools");
      pools != root.end() && pools->is_array()) {
    for (const Json& pj : *pools) {
      if (!pj.is_object()) continue;
      MEMPLAN_ASSIGN_OR_RETURN(std::string name,
                               GetString(pj, "name", "a plan pool", true));
      auto p = pool_by_name.find(name);
      if (p == pool_by_name.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the plan names unknown pool \"", name, "\""));
      }
      if (pj.contains("used")) {
        MEMPLAN_ASSIGN_OR_RETURN(
            plan.pool_used[p->second],
            GetInt(pj, "used", absl::StrCat("pool \"", name, "\""), true));
      }
    }
  }
  if (auto proven = root.find("proven_optimal");
      proven != root.end() && proven->is_boolean()) {
    plan.proven_optimal = proven->get<bool>();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<PlanProvenance>> ParsePlanProvenance(
    std::string_view std_text) {
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParsePlanRoot(std_text));
  auto input = root.find("input");
  auto build = root.find("build");
  if (input == root.end() && build == root.end()) return std::nullopt;
  if (input == root.end() || !input->is_object() || build == root.end() ||
      !build->is_object()) {
    return absl::InvalidArgumentError(
        "the plan's \"input\" and \"build\" must be objects, both or neither");
  }
  PlanProvenance p;
  MEMPLAN_ASSIGN_OR_RETURN(p.input,
                           GetString(*input, "name", "the plan's input", true));
  MEMPLAN_ASSIGN_OR_RETURN(p.input_hash,
                           GetString(*input, "hash", "the plan's input", true));
  MEMPLAN_ASSIGN_OR_RETURN(p.build,
                           ParseRecordedBuild(*build, &p.reorder, &p.op_order));
  return p;
}

absl::StatusOr<Plan> ParsePlanJson(std::string_view std_text,
                                   const Problem& problem) {
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParsePlanRoot(std_text));
  absl::flat_hash_map<std::string, BufferId> buffer_by_name;
  for (BufferId b = 0; b < static_cast<BufferId>(problem.buffers.size()); ++b) {
    buffer_by_name.emplace(problem.buffers[b].name, b);
    for (const std::string& t : problem.buffers[b].tensors)
      buffer_by_name.emplace(t, b);
  }
  absl::flat_hash_map<std::string, PoolId> pool_by_name;
  for (PoolId p = 0; p < static_cast<PoolId>(problem.pools.size()); ++p) {
    pool_by_name.emplace(problem.pools[p].name, p);
  }
  Plan plan;
  MEMPLAN_ASSIGN_OR_RETURN(plan.planner,
                           GetString(root, "planner", "the plan", false));
  auto buffers = root.find("buffers");
  if (buffers == root.end() || !buffers->is_array()) {
    return absl::InvalidArgumentError("the plan has no \"buffers\" array");
  }
  for (size_t i = 0; i < buffers->size(); ++i) {
    const Json& j = (*buffers)[i];
    const std::string where = absl::StrCat("plan buffer #", i);
    if (!j.is_object())
      return absl::InvalidArgumentError(where + " must be an object");
    MEMPLAN_ASSIGN_OR_RETURN(std::string name,
                             GetString(j, "name", where, true));
    auto b = buffer_by_name.find(name);
    if (b == buffer_by_name.end()) {
      // A tensor the problem does not plan (a constant, say) has no buffer.
      return absl::InvalidArgumentError(
          absl::StrCat("the plan places \"", name,
                       "\", which is no planned buffer of the input"));
    }
    MEMPLAN_ASSIGN_OR_RETURN(
        std::string pool_name,
        GetString(j, "pool", where, false, problem.pools[0].name));
    auto p = pool_by_name.find(pool_name);
    if (p == pool_by_name.end()) {
      return absl::InvalidArgumentError(absl::StrCat("the plan places \"", name,
                                                     "\" in unknown pool \"",
                                                     pool_name, "\""));
    }
    MEMPLAN_ASSIGN_OR_RETURN(Offset offset, GetInt(j, "offset", where, true));
    plan.assignments.push_back(
        {.buffer = b->second, .pool = p->second, .offset = offset});
  }
  ComputePlanStatistics(problem, plan);
  // Keep what the file claims, so that the verifier judges the claim.
  MEMPLAN_RETURN_IF_ERROR(ReadClaims(root, pool_by_name, plan));
  return plan;
}

// ---------------------------------------------------------------------------
// Symbolic plans.

namespace {

std::string RangeText(const DimRange& range) {
  return absl::StrCat("[", range.min, ", ", range.max, "]");
}

// The sum of the buffers' sizes.
absl::StatusOr<DimExpr> NaiveTotal(const SymbolicProblem& problem) {
  DimExpr total;
  for (const SymbolicBuffer& b : problem.buffers) {
    MEMPLAN_ASSIGN_OR_RETURN(total, Add(total, b.size));
  }
  return total;
}

}  // namespace

std::string SymbolicPlanToJson(const SymbolicGraphPlan& plan,
                               const PlanJsonOptions& options) {
  const SymbolicProblem& problem = plan.problem;
  // A lone bucket counted in steps keeps the bucket form, which has them.
  const bool one = plan.buckets.size() == 1 && plan.buckets[0].steps.empty();
  std::string out = absl::StrCat("{\n\"format\":\"", kPlanFormat, "\"");
  if (options.provenance.has_value()) {
    const PlanProvenance& p = *options.provenance;
    absl::StrAppend(&out, ",\n\"input\":",
                    Dump(Json({{"name", p.input}, {"hash", p.input_hash}})),
                    ",\n\"build\":", Dump(ProvenanceJson(p, nullptr)));
  }
  absl::StrAppend(&out, ",\n\"planner\":", Dump(Json(plan.planner)),
                  ",\n\"dims\":", Dump(DimsToJson(problem.dims)));
  if (one) {
    absl::StrAppend(
        &out, ",\n\"peak\":", Dump(Json(plan.buckets[0].plan.peak.ToString())));
  }
  // A sum of sizes that overflows somewhere in the range is left out.
  if (absl::StatusOr<DimExpr> naive = NaiveTotal(problem); naive.ok()) {
    absl::StrAppend(&out, ",\n\"naive_total\":", Dump(Json(naive->ToString())));
  }
  absl::StrAppend(&out, ",\n\"pools\":[\n",
                  Dump(Json({{"name", problem.pool.name},
                             {"capacity", problem.pool.capacity},
                             {"alignment", problem.pool.alignment}})),
                  "\n],\n\"buffers\":[\n");
  for (size_t i = 0; i < problem.buffers.size(); ++i) {
    const SymbolicBuffer& b = problem.buffers[i];
    Json j = {{"name", b.name},
              {"tensors", b.tensors},
              {"size", b.size.ToString()},
              {"start", b.lifetime.start},
              {"end", b.lifetime.end},
              {"pool", problem.pool.name}};
    if (one && i < plan.buckets[0].plan.offsets.size()) {
      j["offset"] = plan.buckets[0].plan.offsets[i].ToString();
    }
    absl::StrAppend(&out, Dump(j),
                    i + 1 < problem.buffers.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "]");
  if (!one) {
    absl::StrAppend(&out, ",\n\"buckets\":[\n");
    for (size_t k = 0; k < plan.buckets.size(); ++k) {
      const SymbolicBucket& bucket = plan.buckets[k];
      Json offsets = Json::array();
      for (const DimExpr& o : bucket.plan.offsets)
        offsets.push_back(o.ToString());
      Json j = {{"dims", DimsToJson(bucket.dims)}};
      if (!bucket.steps.empty()) j["steps"] = Json(bucket.steps);
      j["peak"] = bucket.plan.peak.ToString();
      j["offsets"] = std::move(offsets);
      // Each size reserved over the bucket's ranges, in its steps (a plan
      // whose buckets lie outside the problem's ranges has none to give).
      if (absl::StatusOr<SymbolicProblem> narrowed = bucket.ProblemOf(problem);
          narrowed.ok()) {
        Json sizes = Json::array();
        for (const SymbolicBuffer& b : narrowed->buffers) {
          sizes.push_back(b.size.ToString());
        }
        j["sizes"] = std::move(sizes);
      }
      absl::StrAppend(&out, Dump(j),
                      k + 1 < plan.buckets.size() ? ",\n" : "\n");
    }
    absl::StrAppend(&out, "]");
  }
  absl::StrAppend(&out, "\n}\n");
  return out;
}

bool IsSymbolicPlanJson(std::string_view std_text) {
  absl::StatusOr<Json> root =
      ParseJson(absl::string_view(std_text.data(), std_text.size()));
  return root.ok() && root->is_object() && root->contains("dims");
}

namespace {

// An expression of the file: a string in DimExpr's grammar, or an integer;
// using only `dims`. `what` names it in errors ("buffer \"q\" offset").
absl::StatusOr<DimExpr> ReadExpr(const Json& value, const DimRanges& dims,
                                 const std::string& what) {
  DimExpr e;
  if (value.is_number_integer()) {
    MEMPLAN_ASSIGN_OR_RETURN(int64_t v, ToInt64(value, what));
    e = DimExpr(v);
  } else if (value.is_string()) {
    absl::StatusOr<DimExpr> parsed = DimExpr::Parse(value.get<std::string>());
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", parsed.status().message()));
    }
    e = *std::move(parsed);
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an expression (a string) or an integer"));
  }
  for (const std::string& d : e.Dims()) {
    if (!dims.contains(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " \"", e.ToString(), "\" uses dim \"", d,
                       "\", which the plan's dims do not declare"));
    }
  }
  return e;
}

// The first difference of the file's dims from the graph's, or OK.
absl::Status SameDims(const DimRanges& file, const DimRanges& graph) {
  for (const auto& [name, range] : graph) {
    auto it = file.find(name);
    if (it == file.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan has no dim \"", name, "\" (the graph's ranges over ",
          RangeText(range), "): a plan made with --dim ", name,
          "=N is checked with the same binding"));
    }
    if (it->second != range) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan's dim \"", name, "\" ranges over ", RangeText(it->second),
          "; the graph's over ", RangeText(range)));
    }
  }
  for (const auto& [name, range] : file) {
    if (!graph.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan's dim \"", name, "\" is not a dim of the graph as ",
          "read (a dim bound by --dim is no longer one)"));
    }
  }
  return absl::OkStatus();
}

absl::Status SamePool(const Json& root, const Pool& pool) {
  auto pools = root.find("pools");
  if (pools == root.end()) return absl::OkStatus();
  if (!pools->is_array() || pools->size() != 1 || !(*pools)[0].is_object()) {
    return absl::InvalidArgumentError(
        "a symbolic plan's \"pools\" must be an array of one pool");
  }
  const Json& pj = (*pools)[0];
  MEMPLAN_ASSIGN_OR_RETURN(std::string name,
                           GetString(pj, "name", "the plan's pool", true));
  const std::string where = absl::StrCat("pool \"", name, "\"");
  MEMPLAN_ASSIGN_OR_RETURN(Bytes capacity,
                           GetInt(pj, "capacity", where, false, pool.capacity));
  MEMPLAN_ASSIGN_OR_RETURN(
      Bytes alignment, GetInt(pj, "alignment", where, false, pool.alignment));
  if (name != pool.name || capacity != pool.capacity ||
      alignment != pool.alignment) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan's pool \"", name, "\" (capacity ", capacity, ", alignment ",
        alignment, ") is not the graph's \"", pool.name, "\" (capacity ",
        pool.capacity, ", alignment ", pool.alignment, ")"));
  }
  return absl::OkStatus();
}

// The file's buffer #i against the rebuilt problem's buffer of its name;
// its index in the problem.
absl::StatusOr<size_t> MatchBuffer(
    const Json& j, size_t i, const SymbolicProblem& problem,
    const absl::flat_hash_map<std::string, size_t>& by_name) {
  const std::string where = absl::StrCat("plan buffer #", i);
  if (!j.is_object())
    return absl::InvalidArgumentError(where + " must be an object");
  MEMPLAN_ASSIGN_OR_RETURN(std::string name, GetString(j, "name", where, true));
  auto it = by_name.find(name);
  if (it == by_name.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan places \"", name, "\", which is no buffer of the graph"));
  }
  const SymbolicBuffer& b = problem.buffers[it->second];
  const std::string what = absl::StrCat("buffer \"", name, "\"");
  MEMPLAN_ASSIGN_OR_RETURN(std::vector<std::string> tensors,
                           internal::GetStrings(j, "tensors", what));
  if (j.contains("tensors") && tensors != b.tensors) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the plan lists tensors ", absl::StrJoin(tensors, ", "),
        "; the graph's buffer holds ", absl::StrJoin(b.tensors, ", ")));
  }
  MEMPLAN_ASSIGN_OR_RETURN(Step start, GetInt(j, "start", what, true));
  MEMPLAN_ASSIGN_OR_RETURN(Step end, GetInt(j, "end", what, true));
  if (start != b.lifetime.start || end != b.lifetime.end) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the plan's lifetime is [", start, ", ", end,
        "]; the graph's is [", b.lifetime.start, ", ", b.lifetime.end, "]"));
  }
  auto size = j.find("size");
  if (size == j.end())
    return absl::InvalidArgumentError(what + " has no \"size\"");
  MEMPLAN_ASSIGN_OR_RETURN(DimExpr s,
                           ReadExpr(*size, problem.dims, what + " size"));
  if (s != b.size) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the plan's size is ", s.ToString(),
                     "; the graph's is ", b.size.ToString()));
  }
  MEMPLAN_ASSIGN_OR_RETURN(
      std::string pool, GetString(j, "pool", what, false, problem.pool.name));
  if (pool != problem.pool.name) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is in pool \"", pool,
                                                   "\"; the graph's pool is \"",
                                                   problem.pool.name, "\""));
  }
  return it->second;
}

// A bucket's "steps": dim -> the step it is counted in.
absl::Status ReadSteps(const Json& steps, const std::string& where,
                       const SymbolicProblem& problem, SymbolicBucket& bucket) {
  if (!steps.is_object()) {
    return absl::InvalidArgumentError(
        where + ": \"steps\" must be an object of dim: step");
  }
  for (const auto& [name, step] : steps.items()) {
    if (!problem.dims.contains(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": \"steps\" names dim \"", name,
                       "\", which the graph does not have"));
    }
    if (!step.is_number_integer() || step.get<int64_t>() < 2 ||
        step.get<int64_t>() > (int64_t{1} << 20)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": the step of dim \"", name, "\" is ",
                       step.dump(), "; an integer in [2, 2^20]"));
    }
    bucket.steps[name] = step.get<int64_t>();
  }
  return absl::OkStatus();
}

// The sizes a bucket gives (optional) are the graph's, reserved over the
// bucket's ranges.
absl::Status CheckBucketSizes(const Json& sizes, const std::string& where,
                              const SymbolicProblem& problem,
                              const SymbolicBucket& bucket,
                              const DimRanges& expr_dims,
                              const std::vector<size_t>& index,
                              const std::vector<std::string>& names) {
  if (!sizes.is_array() || sizes.size() != index.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"sizes\" must be an array of ", index.size(),
                     " expressions, one per buffer"));
  }
  absl::StatusOr<SymbolicProblem> narrowed = bucket.ProblemOf(problem);
  if (!narrowed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", narrowed.status().message()));
  }
  for (size_t i = 0; i < index.size(); ++i) {
    const std::string what =
        absl::StrCat(where, " size of buffer \"", names[i], "\"");
    MEMPLAN_ASSIGN_OR_RETURN(DimExpr size, ReadExpr(sizes[i], expr_dims, what));
    const DimExpr& reserved = narrowed->buffers[index[i]].size;
    if (size != reserved) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is ", size.ToString(), "; the graph's, ",
          "reserved over the bucket's ranges, is ", reserved.ToString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SymbolicBucket> ReadBucket(
    const Json& j, size_t k, const SymbolicProblem& problem,
    const std::vector<size_t>& index, const std::vector<std::string>& names) {
  const std::string where = absl::StrCat("plan bucket #", k);
  if (!j.is_object())
    return absl::InvalidArgumentError(where + " must be an object");
  MEMPLAN_RETURN_IF_ERROR(
      CheckKeys(j, where, {"dims", "steps", "peak", "offsets", "sizes"}));
  SymbolicBucket bucket;
  auto dims = j.find("dims");
  if (dims == j.end())
    return absl::InvalidArgumentError(where + " has no \"dims\"");
  MEMPLAN_ASSIGN_OR_RETURN(bucket.dims, DimsFromJson(*dims, where + ": "));
  if (auto steps = j.find("steps"); steps != j.end()) {
    MEMPLAN_RETURN_IF_ERROR(ReadSteps(*steps, where, problem, bucket));
  }
  // The dims the bucket's expressions may use: a dim counted in steps is
  // replaced by its quotient and remainder (SymbolicProblem::Stepped).
  absl::StatusOr<DimRanges> expr_dims = SteppedDims(problem.dims, bucket.steps);
  if (!expr_dims.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", expr_dims.status().message()));
  }
  auto peak = j.find("peak");
  if (peak == j.end())
    return absl::InvalidArgumentError(where + " has no \"peak\"");
  MEMPLAN_ASSIGN_OR_RETURN(bucket.plan.peak,
                           ReadExpr(*peak, *expr_dims, where + " peak"));
  auto offsets = j.find("offsets");
  if (offsets == j.end() || !offsets->is_array() ||
      offsets->size() != index.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"offsets\" must be an array of ", index.size(),
                     " expressions, one per buffer"));
  }
  bucket.plan.offsets.resize(problem.buffers.size());
  for (size_t i = 0; i < index.size(); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(
        bucket.plan.offsets[index[i]],
        ReadExpr((*offsets)[i], *expr_dims,
                 absl::StrCat(where, " offset of buffer \"", names[i], "\"")));
  }
  if (auto sizes = j.find("sizes"); sizes != j.end()) {
    MEMPLAN_RETURN_IF_ERROR(CheckBucketSizes(*sizes, where, problem, bucket,
                                             *expr_dims, index, names));
  }
  return bucket;
}

// The file's buffers matched to the problem's: `index` gets the problem's
// buffer of each file buffer, `names` its name. Each buffer is placed once.
absl::Status MatchBuffers(const Json& buffers, const SymbolicProblem& rebuilt,
                          std::vector<size_t>& index,
                          std::vector<std::string>& names) {
  absl::flat_hash_map<std::string, size_t> by_name;
  for (size_t b = 0; b < rebuilt.buffers.size(); ++b) {
    by_name.emplace(rebuilt.buffers[b].name, b);
  }
  std::vector<bool> seen(rebuilt.buffers.size(), false);
  for (size_t i = 0; i < buffers.size(); ++i) {
    MEMPLAN_ASSIGN_OR_RETURN(size_t b,
                             MatchBuffer(buffers[i], i, rebuilt, by_name));
    if (seen[b]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan places buffer \"", rebuilt.buffers[b].name, "\" twice"));
    }
    seen[b] = true;
    index.push_back(b);
    names.push_back(rebuilt.buffers[b].name);
  }
  for (size_t b = 0; b < rebuilt.buffers.size(); ++b) {
    if (!seen[b]) {
      return absl::InvalidArgumentError(
          absl::StrCat("the plan does not place buffer \"",
                       rebuilt.buffers[b].name, "\" of the graph"));
    }
  }
  return absl::OkStatus();
}

// A plan of one bucket: "peak" and each buffer's "offset".
absl::StatusOr<SymbolicBucket> ReadSingleBucket(
    const Json& root, const Json& buffers, const SymbolicProblem& rebuilt,
    const std::vector<size_t>& index, const std::vector<std::string>& names) {
  SymbolicBucket bucket;
  bucket.dims = rebuilt.dims;
  auto peak = root.find("peak");
  if (peak == root.end()) {
    return absl::InvalidArgumentError(
        "the plan has neither \"peak\" nor \"buckets\"");
  }
  MEMPLAN_ASSIGN_OR_RETURN(bucket.plan.peak,
                           ReadExpr(*peak, rebuilt.dims, "the plan's peak"));
  bucket.plan.offsets.resize(rebuilt.buffers.size());
  for (size_t i = 0; i < index.size(); ++i) {
    const std::string what = absl::StrCat("buffer \"", names[i], "\" offset");
    auto offset = buffers[i].find("offset");
    if (offset == buffers[i].end()) {
      return absl::InvalidArgumentError(what + " is missing");
    }
    MEMPLAN_ASSIGN_OR_RETURN(bucket.plan.offsets[index[i]],
                             ReadExpr(*offset, rebuilt.dims, what));
  }
  return bucket;
}

// A plan of "buckets", each with its peak and offsets.
absl::Status ReadBuckets(const Json& root, const Json& buckets,
                         const Json& buffers, const SymbolicProblem& rebuilt,
                         const std::vector<size_t>& index,
                         const std::vector<std::string>& names,
                         SymbolicGraphPlan& plan) {
  if (!buckets.is_array() || buckets.empty()) {
    return absl::InvalidArgumentError(
        "the plan's \"buckets\" must be a non-empty array");
  }
  if (root.contains("peak")) {
    return absl::InvalidArgumentError(
        "a plan with \"buckets\" has a peak per bucket, not \"peak\"");
  }
  for (size_t i = 0; i < index.size(); ++i) {
    if (buffers[i].contains("offset")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffer \"", names[i], "\" has an \"offset\"; with \"buckets\" ",
          "each bucket gives the offsets"));
    }
  }
  for (size_t k = 0; k < buckets.size(); ++k) {
    MEMPLAN_ASSIGN_OR_RETURN(SymbolicBucket bucket,
                             ReadBucket(buckets[k], k, rebuilt, index, names));
    plan.buckets.push_back(std::move(bucket));
  }
  return absl::OkStatus();
}

// The naive total the file claims (optional) is the sum of the sizes it
// lists.
absl::Status CheckNaiveTotal(const Json& root, const SymbolicProblem& rebuilt) {
  auto naive = root.find("naive_total");
  if (naive == root.end()) return absl::OkStatus();
  MEMPLAN_ASSIGN_OR_RETURN(DimExpr claimed, ReadExpr(*naive, rebuilt.dims,
                                                     "the plan's naive_total"));
  MEMPLAN_ASSIGN_OR_RETURN(DimExpr total, NaiveTotal(rebuilt));
  if (claimed != total) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan claims naive_total ", claimed.ToString(),
                     "; its buffers' sizes sum to ", total.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SymbolicGraphPlan> ParseSymbolicPlanJson(
    std::string_view std_text, const SymbolicProblem& rebuilt) {
  MEMPLAN_ASSIGN_OR_RETURN(Json root, ParsePlanRoot(std_text));
  auto dims = root.find("dims");
  if (dims == root.end()) {
    return absl::InvalidArgumentError(
        "the plan has no \"dims\": it is a plan at one value of the dims");
  }
  MEMPLAN_ASSIGN_OR_RETURN(DimRanges file_dims,
                           DimsFromJson(*dims, "the plan: "));
  MEMPLAN_RETURN_IF_ERROR(SameDims(file_dims, rebuilt.dims));
  MEMPLAN_RETURN_IF_ERROR(SamePool(root, rebuilt.pool));
  SymbolicGraphPlan plan;
  plan.problem = rebuilt;
  MEMPLAN_ASSIGN_OR_RETURN(plan.planner,
                           GetString(root, "planner", "the plan", false));
  auto buffers = root.find("buffers");
  if (buffers == root.end() || !buffers->is_array()) {
    return absl::InvalidArgumentError("the plan has no \"buffers\" array");
  }
  std::vector<size_t> index;  // the problem's buffer of each file buffer
  std::vector<std::string> names;
  MEMPLAN_RETURN_IF_ERROR(MatchBuffers(*buffers, rebuilt, index, names));
  auto buckets = root.find("buckets");
  if (buckets == root.end()) {
    MEMPLAN_ASSIGN_OR_RETURN(
        SymbolicBucket bucket,
        ReadSingleBucket(root, *buffers, rebuilt, index, names));
    plan.buckets.push_back(std::move(bucket));
  } else {
    MEMPLAN_RETURN_IF_ERROR(
        ReadBuckets(root, *buckets, *buffers, rebuilt, index, names, plan));
  }
  for (SymbolicBucket& bucket : plan.buckets)
    bucket.plan.planner = plan.planner;
  MEMPLAN_RETURN_IF_ERROR(CheckNaiveTotal(root, rebuilt));
  return plan;
}

}  // namespace memplan
