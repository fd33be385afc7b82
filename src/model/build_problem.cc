// BuildProblem: from an op list in execution order to buffers with lifetimes.

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/arith.h"
#include "base/status_macros.h"
#include "memplan/problem.h"

namespace memplan {
namespace {

using internal::IsPowerOfTwo;

constexpr int kNone = -1;

// A sorted set of pool ids; nullopt = every pool.
using PoolSet = std::optional<std::vector<int>>;

// Union-find over tensor indices; the root of a set is its base tensor (the
// one whose bytes the others share).
class TensorGroups {
 public:
  explicit TensorGroups(int n) : parent_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
  }
  int Find(int t) {
    while (parent_[t] != t) {
      parent_[t] = parent_[parent_[t]];
      t = parent_[t];
    }
    return t;
  }
  // Makes `base`'s root the root of both.
  void Attach(int member, int base) { parent_[Find(member)] = Find(base); }

 private:
  std::vector<int> parent_;
};

// What BuildProblem learns about each tensor while walking the ops.
struct TensorUse {
  int producer = kNone;
  int last_reader = kNone;
  int scratch_op = kNone;
};

// Why op `reader` cannot read tensor `name` yet, said so that the fix is
// plain: a cycle (its ops, in order), an op listed too late (which to list
// first) or a tensor that nothing produces.
absl::Status EarlyRead(const Graph& graph, int reader,
                       const std::string& name) {
  const int n = static_cast<int>(graph.ops.size());
  absl::flat_hash_map<std::string, int> producer;
  absl::flat_hash_map<std::string, std::vector<int>> readers;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.ops[i].outputs)
      producer.emplace(out, i);
    for (const std::string& in : graph.ops[i].inputs) readers[in].push_back(i);
  }
  const std::string& op = graph.ops[reader].name;
  auto it = producer.find(name);
  if (it == producer.end() || it->second <= reader) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op \"", op, "\" reads tensor \"", name,
        "\", which no op produces before it and which is not a graph input or "
        "constant: add the op that produces it or declare it an input"));
  }
  // A path of reads from `reader` to the producer closes a cycle.
  const int target = it->second;
  std::vector<int> parent(n, kNone);
  std::vector<int> queue = {reader};
  parent[reader] = reader;
  for (size_t q = 0; q < queue.size() && parent[target] == kNone; ++q) {
    for (const std::string& out : graph.ops[queue[q]].outputs) {
      auto r = readers.find(out);
      if (r == readers.end()) continue;
      for (int j : r->second) {
        if (parent[j] != kNone) continue;
        parent[j] = queue[q];
        queue.push_back(j);
      }
    }
  }
  const std::string& first = graph.ops[target].name;
  if (parent[target] == kNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op \"", op, "\" reads tensor \"", name, "\" before op \"", first,
        "\" produces it: list op \"", first, "\" before op \"", op,
        "\" (ops must be in a topological order)"));
  }
  std::vector<std::string> cycle;
  for (int v = target; v != reader; v = parent[v]) {
    cycle.push_back(absl::StrCat("\"", graph.ops[v].name, "\""));
  }
  cycle.push_back(absl::StrCat("\"", op, "\""));
  std::reverse(cycle.begin(), cycle.end());
  cycle.push_back(cycle.front());
  if (cycle.size() > 12) {
    cycle.erase(cycle.begin() + 5, cycle.end() - 5);
    cycle.insert(cycle.begin() + 5, "...");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("ops ", absl::StrJoin(cycle, " -> "), " form a cycle (op \"",
                   op, "\" reads tensor \"", name, "\" of op \"", first,
                   "\"): a graph must be acyclic; break the cycle"));
}

class Builder {
 public:
  Builder(const Graph& graph, const BuildOptions& options)
      : graph_(graph), options_(options) {}

  absl::StatusOr<Problem> Build() {
    MEMPLAN_RETURN_IF_ERROR(SetUpPools());
    MEMPLAN_RETURN_IF_ERROR(IndexTensors());
    MEMPLAN_RETURN_IF_ERROR(WalkOps());
    ComputeLifetimes();
    MergeAliases();
    MergeInPlace();
    MEMPLAN_RETURN_IF_ERROR(CheckViews());
    ReleaseMergeState();
    MEMPLAN_RETURN_IF_ERROR(MakeBuffers());
    MEMPLAN_RETURN_IF_ERROR(AddConflicts());
    return std::move(problem_);
  }

 private:
  absl::Status SetUpPools() {
    problem_.name = graph_.name;
    MEMPLAN_ASSIGN_OR_RETURN(problem_.pools,
                             ResolvePools(graph_.pools, options_));
    for (int p = 0; p < static_cast<int>(problem_.pools.size()); ++p) {
      pool_index_[problem_.pools[p].name] = p;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<PoolId> FindPool(const std::string& name,
                                  const Tensor& tensor) {
    auto it = pool_index_.find(name);
    if (it == pool_index_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", tensor.name, "\" names unknown pool \"", name, "\""));
    }
    return it->second;
  }

  absl::Status IndexTensors() {
    const int n = static_cast<int>(graph_.tensors.size());
    use_.resize(n);
    tensor_index_.reserve(n);
    for (int t = 0; t < n; ++t) {
      const Tensor& tensor = graph_.tensors[t];
      if (tensor.name.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor #", t, " has no name"));
      }
      if (!tensor_index_.emplace(tensor.name, t).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", tensor.name, "\" is defined twice"));
      }
      if (tensor.size < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", tensor.name, "\" has a negative size ", tensor.size));
      }
      if (tensor.alignment != 0 && !IsPowerOfTwo(tensor.alignment)) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", tensor.name, "\" has alignment ",
                         tensor.alignment, ", which is not a power of two"));
      }
      for (const std::string& pool : tensor.pools) {
        MEMPLAN_RETURN_IF_ERROR(FindPool(pool, tensor).status());
      }
      if (tensor.fixed.has_value()) {
        if (!tensor.fixed->pool.empty()) {
          MEMPLAN_RETURN_IF_ERROR(
              FindPool(tensor.fixed->pool, tensor).status());
        }
        if (tensor.fixed->offset < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tensor \"", tensor.name, "\" has a negative fixed offset ",
              tensor.fixed->offset));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> FindTensor(const std::string& name, const Op& op,
                                 absl::string_view role) {
    auto it = tensor_index_.find(name);
    if (it == tensor_index_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("op \"", op.name,
                                                     "\" names unknown ", role,
                                                     " tensor \"", name, "\""));
    }
    return it->second;
  }

  absl::Status CheckPairs(const Op& op, const std::vector<OperandPair>& pairs,
                          absl::string_view hint) {
    for (const OperandPair& pair : pairs) {
      if (pair.output < 0 ||
          pair.output >= static_cast<int>(op.outputs.size()) ||
          pair.input < 0 || pair.input >= static_cast<int>(op.inputs.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "op \"", op.name, "\" has ", hint, " hint [", pair.output, ", ",
            pair.input, "] out of range (", op.outputs.size(), " outputs, ",
            op.inputs.size(), " inputs)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckWrites(const Op& op) {
    for (size_t k = 0; k < op.writes.size(); ++k) {
      const int j = op.writes[k];
      if (j < 0 || j >= static_cast<int>(op.inputs.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op.name, "\" writes input ", j,
                         ", out of range (", op.inputs.size(), " inputs)"));
      }
      if (std::find(op.writes.begin(), op.writes.begin() + k, j) !=
          op.writes.begin() + k) {
        return absl::InvalidArgumentError(absl::StrCat(
            "op \"", op.name, "\" lists input ", j, " in writes twice"));
      }
    }
    return absl::OkStatus();
  }

  // A graph made in code is checked as the readers check a file.
  static absl::Status CheckCost(const Op& op) {
    if (op.cost.has_value() && !(std::isfinite(*op.cost) && *op.cost >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" has cost ", *op.cost,
                       ", not a non-negative finite number"));
    }
    if (op.recomputable && !op.writes.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op \"", op.name, "\" is recomputable but writes input ",
          op.writes[0],
          ": an op that writes is never recomputed (drop recomputable)"));
    }
    return absl::OkStatus();
  }

  absl::Status WalkOps() {
    absl::flat_hash_map<absl::string_view, int> op_names;
    op_names.reserve(graph_.ops.size());
    for (int i = 0; i < static_cast<int>(graph_.ops.size()); ++i) {
      const Op& op = graph_.ops[i];
      if (op.name.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("op #", i, " has no name"));
      }
      if (!op_names.emplace(op.name, i).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op.name, "\" is defined twice"));
      }
      MEMPLAN_RETURN_IF_ERROR(CheckPairs(op, op.inplace, "inplace"));
      MEMPLAN_RETURN_IF_ERROR(CheckPairs(op, op.alias, "alias"));
      MEMPLAN_RETURN_IF_ERROR(CheckWrites(op));
      MEMPLAN_RETURN_IF_ERROR(CheckCost(op));
      for (const std::string& name : op.inputs) {
        MEMPLAN_ASSIGN_OR_RETURN(int t, FindTensor(name, op, "input"));
        const Tensor& tensor = graph_.tensors[t];
        const bool available = use_[t].producer != kNone ||
                               ((tensor.kind == TensorKind::kInput ||
                                 tensor.kind == TensorKind::kConstant) &&
                                use_[t].scratch_op == kNone);
        if (!available) return EarlyRead(graph_, i, name);
        use_[t].last_reader = i;
      }
      for (const std::string& name : op.outputs) {
        MEMPLAN_ASSIGN_OR_RETURN(int t, FindTensor(name, op, "output"));
        const Tensor& tensor = graph_.tensors[t];
        if (use_[t].producer != kNone || use_[t].scratch_op != kNone) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tensor \"", name, "\" is produced twice (by op \"",
              graph_.ops[std::max(use_[t].producer, use_[t].scratch_op)].name,
              "\" and op \"", op.name, "\")"));
        }
        if (tensor.kind == TensorKind::kInput ||
            tensor.kind == TensorKind::kScratch) {
          return absl::InvalidArgumentError(
              absl::StrCat("op \"", op.name, "\" produces ",
                           std::string(TensorKindName(tensor.kind)),
                           " tensor \"", name, "\""));
        }
        if (use_[t].last_reader != kNone) {
          return absl::InvalidArgumentError(
              absl::StrCat("tensor \"", name, "\" is read by op \"",
                           graph_.ops[use_[t].last_reader].name,
                           "\" before op \"", op.name, "\" produces it"));
        }
        use_[t].producer = i;
      }
      for (const std::string& name : op.scratch) {
        MEMPLAN_ASSIGN_OR_RETURN(int t, FindTensor(name, op, "scratch"));
        if (use_[t].producer != kNone || use_[t].scratch_op != kNone ||
            use_[t].last_reader != kNone ||
            graph_.tensors[t].kind != TensorKind::kScratch) {
          return absl::InvalidArgumentError(absl::StrCat(
              "op \"", op.name, "\" uses tensor \"", name,
              "\" as scratch; scratch tensors must be of kind scratch and "
              "belong to exactly one op"));
        }
        use_[t].scratch_op = i;
      }
    }
    return CheckTensorsHaveOps();
  }

  // Every activation and output has a producer, every scratch tensor an op.
  absl::Status CheckTensorsHaveOps() const {
    for (int t = 0; t < static_cast<int>(graph_.tensors.size()); ++t) {
      const Tensor& tensor = graph_.tensors[t];
      const bool needs_producer = tensor.kind == TensorKind::kActivation ||
                                  tensor.kind == TensorKind::kOutput;
      if (needs_producer && use_[t].producer == kNone) {
        return absl::InvalidArgumentError(
            absl::StrCat(std::string(TensorKindName(tensor.kind)), " tensor \"",
                         tensor.name, "\" is produced by no op"));
      }
      if (tensor.kind == TensorKind::kScratch && use_[t].scratch_op == kNone) {
        return absl::InvalidArgumentError(absl::StrCat(
            "scratch tensor \"", tensor.name, "\" belongs to no op"));
      }
    }
    return absl::OkStatus();
  }

  void ComputeLifetimes() {
    const Step num_steps = static_cast<Step>(graph_.ops.size());
    const int n = static_cast<int>(graph_.tensors.size());
    lifetime_.resize(n);
    planned_.resize(n);
    for (int t = 0; t < n; ++t) {
      const Tensor& tensor = graph_.tensors[t];
      const TensorUse& use = use_[t];
      Step start = use.producer != kNone ? use.producer : 0;
      if (tensor.kind == TensorKind::kScratch) start = use.scratch_op;
      Step end = use.last_reader != kNone ? use.last_reader + 1 : start + 1;
      if (tensor.kind == TensorKind::kOutput) end = std::max(end, num_steps);
      end = std::max(end, start + 1);
      lifetime_[t] = Lifetime{.start = start, .end = end};
      switch (tensor.kind) {
        case TensorKind::kInput:
          planned_[t] = options_.plan_inputs;
          break;
        case TensorKind::kOutput:
          planned_[t] = options_.plan_outputs;
          break;
        case TensorKind::kConstant:
          planned_[t] = options_.plan_constants;
          break;
        default:
          planned_[t] = true;
      }
    }
  }

  // Views always share their base's bytes.
  void MergeAliases() {
    groups_ = std::make_unique<TensorGroups>(graph_.tensors.size());
    for (const Op& op : graph_.ops) {
      for (const OperandPair& pair : op.alias) {
        const int out = tensor_index_.at(op.outputs[pair.output]);
        const int in = tensor_index_.at(op.inputs[pair.input]);
        if (groups_->Find(out) == groups_->Find(in)) continue;
        groups_->Attach(out, in);
      }
    }
    GroupSummaries();
  }

  // Recomputes each root's summary (lifetime, planned flag, graph input or
  // output, fixed member, allowed pools, members) from its members.
  void GroupSummaries() {
    const int n = static_cast<int>(graph_.tensors.size());
    group_lifetime_.assign(n, Lifetime{std::numeric_limits<Step>::max(), 0});
    group_planned_.assign(n, true);
    group_io_.assign(n, false);
    group_fixed_.assign(n, false);
    group_pools_.assign(n, {});
    members_.assign(n, {});
    for (int t = 0; t < n; ++t) {
      const int root = groups_->Find(t);
      const Tensor& tensor = graph_.tensors[t];
      members_[root].push_back(t);
      Lifetime& l = group_lifetime_[root];
      l.start = std::min(l.start, lifetime_[t].start);
      l.end = std::max(l.end, lifetime_[t].end);
      group_planned_[root] = group_planned_[root] && planned_[t];
      if (tensor.kind == TensorKind::kInput ||
          tensor.kind == TensorKind::kOutput) {
        group_io_[root] = true;
      }
      if (tensor.fixed.has_value()) group_fixed_[root] = true;
      if (!tensor.pools.empty()) {
        group_pools_[root] =
            Intersect(group_pools_[root], PoolsOf(tensor.pools));
      }
    }
  }

  PoolSet PoolsOf(const std::vector<std::string>& names) {
    std::vector<int> ids;
    for (const std::string& name : names) ids.push_back(pool_index_.at(name));
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  static PoolSet Intersect(const PoolSet& a, const PoolSet& b) {
    if (!a.has_value()) return b;
    if (!b.has_value()) return a;
    std::vector<int> both;
    std::set_intersection(a->begin(), a->end(), b->begin(), b->end(),
                          std::back_inserter(both));
    return both;
  }

  // True when an explicit conflict names a member of each group.
  bool GroupsConflict(int out_root, int in_root) {
    for (int t : members_[out_root]) {
      for (int other : conflict_partners_[t]) {
        if (groups_->Find(other) == in_root) return true;
      }
    }
    return false;
  }

  // An output may take its input's bytes when that input (with all its views)
  // is dead after this op, is no graph input or output, and is large enough,
  // and when the output (with its views) is not already bytes of a tensor
  // alive before the op (a view of another input): the hint is optional, the
  // view is not. Explicitly conflicting tensors, fixed placements and
  // disjoint allowed pools also keep the two apart. The merged buffer is alive
  // over the union of all its members' lifetimes.
  void MergeInPlace() {
    conflict_partners_.assign(graph_.tensors.size(), {});
    for (const TensorConflict& c : graph_.conflicts) {
      auto a = tensor_index_.find(c.a);
      auto b = tensor_index_.find(c.b);
      if (a == tensor_index_.end() || b == tensor_index_.end()) continue;
      conflict_partners_[a->second].push_back(b->second);
      conflict_partners_[b->second].push_back(a->second);
    }
    for (int i = 0; i < static_cast<int>(graph_.ops.size()); ++i) {
      const Op& op = graph_.ops[i];
      for (const OperandPair& pair : op.inplace) {
        const int out =
            groups_->Find(tensor_index_.at(op.outputs[pair.output]));
        const int in = groups_->Find(tensor_index_.at(op.inputs[pair.input]));
        if (out == in || !group_planned_[in] || !group_planned_[out]) continue;
        if (group_io_[in] || group_lifetime_[in].end != i + 1) continue;
        if (group_lifetime_[out].start < i) continue;
        if (graph_.tensors[out].size > graph_.tensors[in].size) continue;
        if (group_fixed_[out] || group_fixed_[in]) continue;
        const PoolSet pools = Intersect(group_pools_[out], group_pools_[in]);
        if (pools.has_value() && pools->empty()) continue;
        if (GroupsConflict(out, in)) continue;
        groups_->Attach(out, in);
        Lifetime& l = group_lifetime_[in];
        l.start = std::min(l.start, group_lifetime_[out].start);
        l.end = std::max(l.end, group_lifetime_[out].end);
        group_io_[in] = group_io_[in] || group_io_[out];
        group_pools_[in] = pools;
        members_[in].insert(members_[in].end(), members_[out].begin(),
                            members_[out].end());
        members_[out].clear();
      }
    }
  }

  // What only the merges needed, freed before the buffers are made: at 10^6
  // tensors, 0.2 GB. The explicit conflicts keep their tensors' indices
  // (kNone: no such tensor, an error of AddConflicts).
  void ReleaseMergeState() {
    conflict_tensors_.reserve(graph_.conflicts.size());
    for (const TensorConflict& c : graph_.conflicts) {
      auto a = tensor_index_.find(c.a);
      auto b = tensor_index_.find(c.b);
      conflict_tensors_.push_back(
          {a == tensor_index_.end() ? kNone : a->second,
           b == tensor_index_.end() ? kNone : b->second});
    }
    absl::flat_hash_map<absl::string_view, int>().swap(tensor_index_);
    std::vector<TensorUse>().swap(use_);
    std::vector<bool>().swap(group_io_);
    std::vector<bool>().swap(group_fixed_);
    std::vector<PoolSet>().swap(group_pools_);
    std::vector<std::vector<int>>().swap(members_);
    std::vector<std::vector<int>>().swap(conflict_partners_);
  }

  // A view spans bytes of its base from the base's first byte; it may not
  // span more than the buffer it lives in (its base's, or the tensor the base
  // reuses in place).
  absl::Status CheckViews() {
    for (const Op& op : graph_.ops) {
      for (const OperandPair& pair : op.alias) {
        const int view = tensor_index_.at(op.outputs[pair.output]);
        const int base = tensor_index_.at(op.inputs[pair.input]);
        const Tensor& buffer = graph_.tensors[groups_->Find(view)];
        if (graph_.tensors[view].size > buffer.size) {
          return absl::InvalidArgumentError(absl::StrCat(
              "view \"", graph_.tensors[view].name, "\" of \"",
              graph_.tensors[base].name, "\" (op \"", op.name, "\") spans ",
              graph_.tensors[view].size, " bytes, more than the ", buffer.size,
              " bytes of ",
              buffer.name == graph_.tensors[base].name
                  ? "its base"
                  : absl::StrCat("buffer \"", buffer.name, "\""),
              "; a view's size is the bytes of its base it spans"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status MakeBuffers() {
    const int n = static_cast<int>(graph_.tensors.size());
    // Buffers in the order of their first tensor; members in tensor order.
    std::vector<int> buffer_of_root(n, kNone);
    size_t buffers = 0;
    for (int t = 0; t < n; ++t) {
      buffers += groups_->Find(t) == t && group_planned_[t];
    }
    problem_.buffers.reserve(buffers);
    buffer_of_tensor_.assign(n, kNone);
    for (int t = 0; t < n; ++t) {
      const int root = groups_->Find(t);
      if (!group_planned_[root]) continue;
      if (buffer_of_root[root] == kNone) {
        buffer_of_root[root] = static_cast<int>(problem_.buffers.size());
        Buffer buffer;
        buffer.name = graph_.tensors[root].name;
        buffer.size = graph_.tensors[root].size;
        buffer.alignment = options_.alignment;
        buffer.lifetime = group_lifetime_[root];
        problem_.buffers.push_back(std::move(buffer));
      }
      buffer_of_tensor_[t] = buffer_of_root[root];
      Buffer& buffer = problem_.buffers[buffer_of_root[root]];
      const Tensor& tensor = graph_.tensors[t];
      buffer.tensors.push_back(tensor.name);
      buffer.spans.push_back(
          TensorSpan{.size = tensor.size, .lifetime = lifetime_[t]});
      buffer.alignment = std::max(buffer.alignment, tensor.alignment);
      if (!tensor.pools.empty()) {
        MEMPLAN_RETURN_IF_ERROR(RestrictPools(buffer, tensor));
      }
      if (tensor.fixed.has_value()) {
        Placement fixed{.pool = 0, .offset = tensor.fixed->offset};
        if (!tensor.fixed->pool.empty())
          fixed.pool = pool_index_.at(tensor.fixed->pool);
        if (buffer.fixed.has_value() && *buffer.fixed != fixed) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tensor \"", tensor.name, "\" shares buffer \"", buffer.name,
              "\" but has a different fixed placement"));
        }
        buffer.fixed = fixed;
      }
    }
    for (Buffer& buffer : problem_.buffers) {
      if (buffer.size > std::numeric_limits<Bytes>::max() - buffer.alignment) {
        return absl::InvalidArgumentError(
            absl::StrCat("buffer \"", buffer.name, "\" of ", buffer.size,
                         " bytes overflows int64 when aligned"));
      }
      buffer.size = internal::RoundUp(buffer.size, buffer.alignment);
      if (buffer.fixed.has_value() && !buffer.pools.empty() &&
          std::find(buffer.pools.begin(), buffer.pools.end(),
                    buffer.fixed->pool) == buffer.pools.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("buffer \"", buffer.name, "\" is fixed in pool \"",
                         problem_.pools[buffer.fixed->pool].name,
                         "\", which its tensors do not allow"));
      }
    }
    return ValidateProblem(problem_);
  }

  // Views of one base share its bytes, so they must agree on the pools.
  absl::Status RestrictPools(Buffer& buffer, const Tensor& tensor) {
    std::vector<PoolId> allowed;
    for (const std::string& name : tensor.pools)
      allowed.push_back(pool_index_.at(name));
    if (buffer.pools.empty()) {  // the earlier members allow every pool
      buffer.pools = std::move(allowed);
      return absl::OkStatus();
    }
    std::vector<PoolId> both;
    for (PoolId p : buffer.pools) {
      if (std::find(allowed.begin(), allowed.end(), p) != allowed.end())
        both.push_back(p);
    }
    if (both.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", tensor.name, "\" is a view sharing buffer \"",
          buffer.name, "\", but no pool is allowed for both"));
    }
    buffer.pools = std::move(both);
    return absl::OkStatus();
  }

  absl::Status AddConflicts() {
    std::vector<BufferConflict> conflicts;
    for (size_t i = 0; i < graph_.conflicts.size(); ++i) {
      const TensorConflict& c = graph_.conflicts[i];
      const std::array<int, 2>& ids = conflict_tensors_[i];
      const std::string* names[2] = {&c.a, &c.b};
      for (int k = 0; k < 2; ++k) {
        if (ids[k] == kNone) {
          return absl::InvalidArgumentError(absl::StrCat(
              "conflict names unknown tensor \"", *names[k], "\""));
        }
      }
      const int a = buffer_of_tensor_[ids[0]];
      const int b = buffer_of_tensor_[ids[1]];
      if (a == kNone || b == kNone) continue;
      if (a == b) {
        return absl::InvalidArgumentError(
            absl::StrCat("conflict between tensors \"", c.a, "\" and \"", c.b,
                         "\", which share one buffer"));
      }
      conflicts.push_back(
          BufferConflict{.a = std::min(a, b), .b = std::max(a, b)});
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [](const BufferConflict& x, const BufferConflict& y) {
                return std::tie(x.a, x.b) < std::tie(y.a, y.b);
              });
    conflicts.erase(std::unique(conflicts.begin(), conflicts.end()),
                    conflicts.end());
    problem_.conflicts = std::move(conflicts);
    return absl::OkStatus();
  }

  const Graph& graph_;
  const BuildOptions& options_;
  Problem problem_;
  absl::flat_hash_map<std::string, int> pool_index_;
  // By name, viewing the graph's own strings.
  absl::flat_hash_map<absl::string_view, int> tensor_index_;
  std::vector<TensorUse> use_;
  std::vector<Lifetime> lifetime_;
  std::vector<bool> planned_;
  std::unique_ptr<TensorGroups> groups_;
  std::vector<Lifetime> group_lifetime_;
  std::vector<bool> group_planned_;
  std::vector<bool> group_io_;
  std::vector<bool> group_fixed_;
  std::vector<PoolSet> group_pools_;
  std::vector<std::vector<int>> members_;
  std::vector<std::vector<int>> conflict_partners_;
  std::vector<int> buffer_of_tensor_;  // kNone: not planned
  std::vector<std::array<int, 2>> conflict_tensors_;
};

}  // namespace

bool IsSymbolic(const Graph& graph) {
  if (!graph.dims.empty()) return true;
  for (const Tensor& t : graph.tensors) {
    if (t.symbolic_size.has_value()) return true;
  }
  return false;
}

absl::Status CheckConcrete(const Graph& graph) {
  if (!IsSymbolic(graph)) return absl::OkStatus();
  std::vector<std::string> dims;
  for (const auto& [name, range] : graph.dims) dims.push_back(name);
  if (dims.empty()) {  // a symbolic size without declared dims
    for (const Tensor& t : graph.tensors) {
      if (t.symbolic_size.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", t.name, "\" has the symbolic size \"",
            t.symbolic_size->ToString(), "\" but the graph declares no dims"));
      }
    }
  }
  std::vector<std::string> flags;
  for (const std::string& d : dims)
    flags.push_back(absl::StrCat("--dim ", d, "=N"));
  return absl::InvalidArgumentError(absl::StrCat(
      "graph \"", graph.name, "\" has symbolic dims ",
      absl::StrJoin(dims, ", "), ": bind them with ", absl::StrJoin(flags, " "),
      " (Python: dims={...}) to plan it at one size"));
}

absl::StatusOr<Problem> BuildProblem(const Graph& graph,
                                     const BuildOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(CheckConcrete(graph));
  return Builder(graph, options).Build();
}

}  // namespace memplan
