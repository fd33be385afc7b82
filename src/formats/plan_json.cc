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
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "formats/json_util.h"
#include "memplan/formats.h"
#include "memplan/tensor_placement.h"

namespace memplan {
namespace {

using internal::Dump;
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

Json ProvenanceJson(const PlanProvenance& p) {
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
  return build;
}

// "tensors": every tensor with its pool and offset, or "planned": false.
absl::StatusOr<std::string> TensorsJson(const Problem& problem,
                                        const Plan& plan, const Graph* graph) {
  std::string out = ",\n\"tensors\":[\n";
  bool first = true;
  auto add = [&](const Json& j) {
    absl::StrAppend(&out, first ? "" : ",\n", Dump(j));
    first = false;
  };
  if (graph != nullptr) {
    MEMPLAN_ASSIGN_OR_RETURN(std::vector<TensorPlacement> tensors,
                             PlaceTensors(*graph, problem, plan));
    for (const TensorPlacement& t : tensors) {
      if (t.planned()) {
        add({{"name", t.name},
             {"pool", problem.pools[t.pool].name},
             {"offset", t.offset}});
      } else {
        add({{"name", t.name}, {"planned", false}});
      }
    }
  } else {
    for (const Assignment& a : plan.assignments) {
      for (const std::string& name : problem.buffers[a.buffer].tensors) {
        add({{"name", name},
             {"pool", problem.pools[a.pool].name},
             {"offset", a.offset}});
      }
    }
  }
  absl::StrAppend(&out, first ? "" : "\n", "]");
  return out;
}

}  // namespace

std::string PlanToJson(const Problem& problem, const Plan& plan,
                       const PlanJsonOptions& options) {
  std::string out =
      absl::StrCat("{\n\"format\":\"", kPlanFormat, "\"");
  if (options.provenance.has_value()) {
    const PlanProvenance& p = *options.provenance;
    absl::StrAppend(&out, ",\n\"input\":",
                    Dump(Json({{"name", p.input}, {"hash", p.input_hash}})),
                    ",\n\"build\":", Dump(ProvenanceJson(p)));
  }
  absl::StrAppend(
      &out, ",\n\"planner\":", Dump(Json(plan.planner)),
      ",\n\"peak\":", plan.peak, ",\n\"naive_total\":", plan.naive_total,
      ",\n\"lower_bound\":", plan.lower_bound,
      ",\n\"proven_optimal\":", plan.proven_optimal ? "true" : "false");
  if (options.wall_time) {
    absl::StrAppend(&out, ",\n\"wall_time_ms\":",
                    absl::ToDoubleMilliseconds(plan.wall_time));
  }
  // Only this counter, as before counters were kept in general: the JSON of
  // other planners' plans stays as it was.
  if (auto it = plan.counters.find("shared_objects");
      it != plan.counters.end() && it->second > 0) {
    absl::StrAppend(&out, ",\n\"shared_objects\":", it->second);
  }
  absl::StrAppend(&out, ",\n\"pools\":[\n");
  for (size_t p = 0; p < problem.pools.size(); ++p) {
    const Pool& pool = problem.pools[p];
    Json j = {{"name", pool.name},
              {"capacity", pool.capacity},
              {"alignment", pool.alignment},
              {"used", p < plan.pool_used.size() ? plan.pool_used[p] : 0}};
    absl::StrAppend(&out, Dump(j),
                    p + 1 < problem.pools.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "],\n\"buffers\":[\n");
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const Assignment& a = plan.assignments[i];
    const Buffer& b = problem.buffers[a.buffer];
    Json j = {{"name", b.name},        {"tensors", b.tensors},
              {"size", b.size},        {"start", b.lifetime.start},
              {"end", b.lifetime.end}, {"pool", problem.pools[a.pool].name},
              {"offset", a.offset}};
    absl::StrAppend(&out, Dump(j),
                    i + 1 < plan.assignments.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&out, "]");
  // A graph the problem was not built from leaves the tensors out rather
  // than listing wrong ones.
  if (absl::StatusOr<std::string> tensors =
          TensorsJson(problem, plan, options.graph);
      tensors.ok()) {
    absl::StrAppend(&out, *tensors);
  }
  absl::StrAppend(&out, "\n}\n");
  return out;
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

// The "build" object of a plan file: the BuildOptions, and the op ordering
// into `reorder`.
absl::StatusOr<BuildOptions> ParseRecordedBuild(const Json& json,
                                                std::string* reorder) {
  BuildOptions build;
  const std::string where = "the plan's build";
  MEMPLAN_ASSIGN_OR_RETURN(build.alignment,
                           GetInt(json, "alignment", where, false, 1));
  MEMPLAN_ASSIGN_OR_RETURN(build.capacity,
                           GetInt(json, "capacity", where, false, 0));
  for (auto [key, field] :
       {std::pair{"plan_constants", &build.plan_constants},
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
  MEMPLAN_ASSIGN_OR_RETURN(*reorder,
                           GetString(json, "reorder", where, false));
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
  MEMPLAN_ASSIGN_OR_RETURN(
      p.input_hash, GetString(*input, "hash", "the plan's input", true));
  MEMPLAN_ASSIGN_OR_RETURN(p.build, ParseRecordedBuild(*build, &p.reorder));
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

}  // namespace memplan
