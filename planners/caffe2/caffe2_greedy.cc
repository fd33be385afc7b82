// caffe2_greedy: memonger's greedy grouping of buffers into shared objects,
// and the object model both Caffe2 planners share (see caffe2.h).

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/arith.h"
#include "caffe2.h"
#include "caffe2_objects.h"
#include "memplan/problem.h"
#include "model/problem_util.h"
#include "planners.h"

namespace memplan {

std::vector<std::string> GraphInputOutputNames(const Graph& graph, bool inputs,
                                               bool outputs) {
  std::vector<std::string> names;
  for (const Tensor& tensor : graph.tensors) {
    if ((inputs && tensor.kind == TensorKind::kInput) ||
        (outputs && tensor.kind == TensorKind::kOutput)) {
      names.push_back(tensor.name);
    }
  }
  return names;
}

namespace internal {

Bytes ObjectTotal(const ObjectAssignment& objects) {
  Bytes total = 0;
  for (const SharedObject& object : objects) total += object.size;
  return total;
}

Caffe2Context::Caffe2Context(const Problem& problem,
                             const Caffe2Options& options)
    : problem_(problem) {
  const int n = static_cast<int>(problem.buffers.size());
  const absl::flat_hash_set<std::string> static_names(
      options.static_buffers.begin(), options.static_buffers.end());
  shareable_.assign(n, true);
  pool_class_.assign(n, 0);
  explicit_.assign(n, {});
  std::map<std::vector<PoolId>, int> classes;
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.fixed.has_value() || static_names.contains(buffer.name)) {
      shareable_[b] = false;
    }
    for (const std::string& tensor : buffer.tensors) {
      if (static_names.contains(tensor)) shareable_[b] = false;
    }
    pool_class_[b] =
        classes
            .emplace(AllowedPools(problem, b), static_cast<int>(classes.size()))
            .first->second;
    if (shareable_[b]) order_.push_back(b);
  }
  for (const BufferConflict& c : problem.conflicts) {
    explicit_[c.a].push_back(c.b);
    explicit_[c.b].push_back(c.a);
  }
  for (auto& partners : explicit_) std::sort(partners.begin(), partners.end());
  // By last use, as memonger sorts its live ranges; ties by start, then id.
  std::sort(order_.begin(), order_.end(), [&](BufferId a, BufferId b) {
    const Lifetime& la = problem.buffers[a].lifetime;
    const Lifetime& lb = problem.buffers[b].lifetime;
    if (la.end != lb.end) return la.end < lb.end;
    if (la.start != lb.start) return la.start < lb.start;
    return a < b;
  });
}

bool Caffe2Context::ExplicitConflict(BufferId a, BufferId b) const {
  return std::binary_search(explicit_[a].begin(), explicit_[a].end(), b);
}

bool Caffe2Context::Compatible(const SharedObject& object,
                               BufferId buffer) const {
  if (pool_class_[object.members.front()] != pool_class_[buffer]) return false;
  if (!HasExplicitConflicts(buffer)) return true;
  for (BufferId m : object.members) {
    if (ExplicitConflict(buffer, m)) return false;
  }
  return true;
}

bool Caffe2Context::CanJoin(const SharedObject& object, BufferId buffer) const {
  // Buffers join in order of their end, so the object's members all end by
  // `last_end`: starting there is disjoint from every member.
  return object.last_end <= problem_.buffers[buffer].lifetime.start &&
         Compatible(object, buffer);
}

void Caffe2Context::Join(SharedObject& object, BufferId buffer) const {
  const Buffer& b = problem_.buffers[buffer];
  object.members.push_back(buffer);
  object.last_end = std::max(object.last_end, b.lifetime.end);
  object.size = std::max(object.size, b.size);
}

SharedObject Caffe2Context::NewObject(BufferId buffer) const {
  const Buffer& b = problem_.buffers[buffer];
  return SharedObject{
      .members = {buffer}, .last_end = b.lifetime.end, .size = b.size};
}

absl::Status Caffe2Context::Greedy(std::span<const BufferId> buffers,
                                   ObjectAssignment& objects,
                                   Budget* budget) const {
  for (BufferId b : buffers) {
    if (budget != nullptr) {
      budget->Tick(static_cast<int64_t>(objects.size()) + 1);
      if (budget->OutOfTime()) {
        return absl::DeadlineExceededError(absl::StrCat(
            "memonger's greedy was abandoned at its deadline, with ",
            objects.size(), " shared objects"));
      }
      if (budget->WorkSpent()) {
        return absl::AbortedError(absl::StrCat(
            "memonger's greedy spent its ", budget->work_limit(),
            " work units, with ", objects.size(), " shared objects"));
      }
    }
    const Bytes size = problem_.buffers[b].size;
    int best = -1;
    Bytes best_distance = 0;
    for (int k = 0; k < static_cast<int>(objects.size()); ++k) {
      if (!CanJoin(objects[k], b)) continue;
      const Bytes distance = objects[k].size > size ? objects[k].size - size
                                                    : size - objects[k].size;
      // Strictly closer only: on a tie the earliest object wins.
      if (best < 0 || distance < best_distance) {
        best = k;
        best_distance = distance;
      }
    }
    if (best >= 0) {
      Join(objects[best], b);
    } else {
      objects.push_back(NewObject(b));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Plan> Caffe2Context::Layout(const ObjectAssignment& objects,
                                           std::string_view planner) const {
  const int n = static_cast<int>(problem_.buffers.size());
  Plan plan;
  plan.planner = std::string(planner);
  plan.assignments.resize(n);
  std::vector<Offset> top(problem_.pools.size(), 0);
  ObjectAssignment all = objects;
  for (BufferId b = 0; b < n; ++b) {
    const Buffer& buffer = problem_.buffers[b];
    plan.assignments[b].buffer = b;
    if (buffer.fixed.has_value()) {
      plan.assignments[b].pool = buffer.fixed->pool;
      plan.assignments[b].offset = buffer.fixed->offset;
      Offset& t = top[buffer.fixed->pool];
      t = std::max(t, buffer.fixed->offset + buffer.size);
    } else if (!shareable_[b]) {
      all.push_back(NewObject(b));
    }
  }
  for (const SharedObject& object : all) {
    bool placed = false;
    for (PoolId p : AllowedPools(problem_, object.members.front())) {
      Bytes alignment = 1;
      for (BufferId m : object.members) {
        alignment = std::max(alignment, EffectiveAlignment(problem_, m, p));
      }
      const Offset offset = RoundUp(top[p], alignment);
      const Bytes capacity = problem_.pools[p].capacity;
      if (capacity > 0 && offset + object.size > capacity) continue;
      for (BufferId m : object.members) {
        plan.assignments[m].pool = p;
        plan.assignments[m].offset = offset;
      }
      top[p] = offset + object.size;
      placed = true;
      break;
    }
    if (!placed) {
      // The largest member alone would not fit there either.
      BufferId largest = object.members.front();
      for (BufferId m : object.members) {
        if (problem_.buffers[m].size > problem_.buffers[largest].size)
          largest = m;
      }
      return NoFitError(problem_, largest, top);
    }
  }
  int64_t& shared = plan.counters["shared_objects"];
  shared = static_cast<int64_t>(all.size());
  for (BufferId b = 0; b < n; ++b) {
    if (problem_.buffers[b].fixed.has_value()) ++shared;
  }
  ComputePlanStatistics(problem_, plan);
  plan.proven_optimal = AtTheBound(problem_, plan);
  return plan;
}

namespace {

class Caffe2GreedyPlanner : public Planner {
 public:
  explicit Caffe2GreedyPlanner(Caffe2Options options)
      : options_(std::move(options)) {}

  std::string_view name() const override { return "caffe2_greedy"; }

  absl::StatusOr<Plan> Solve(const Problem& problem,
                             const PlanOptions& options) const override {
    // One pass, O(n * objects), abandoned at the time limit; one that
    // spends the whole work limit gives way to the naive plan.
    Budget budget(options);
    const Caffe2Context context(problem, options_);
    ObjectAssignment objects;
    if (absl::Status s = context.Greedy(context.order(), objects, &budget);
        !s.ok()) {
      if (absl::IsAborted(s)) {
        return PlanAfterSpentPass(problem, s, budget.work_done());
      }
      return s;
    }
    return context.Layout(objects, name());
  }

 private:
  Caffe2Options options_;
};

}  // namespace

}  // namespace internal

std::unique_ptr<Planner> MakeCaffe2GreedyPlanner(const Caffe2Options& options) {
  return std::make_unique<internal::Caffe2GreedyPlanner>(options);
}

}  // namespace memplan
