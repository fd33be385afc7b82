// The valid op orders of a small graph, checked independently of the
// library's DAG (order/op_dag.h), for tests that try every permutation; and
// what the tests of the orderings measure orders and build graphs with.

#ifndef MEMPLAN_TESTS_VALID_ORDERS_H_
#define MEMPLAN_TESTS_VALID_ORDERS_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "memplan/reorder.h"
#include "memplan/types.h"

namespace memplan::testing {

// The orders LowerBoundOverOrders() speaks of, found by trying every
// permutation: each op after the producers of its inputs; an op that reads its
// in-place input last still does; every reader of written bytes on its side of
// the writer, and writers of the same bytes in their order; pinned ops in their
// order. Bytes are shared by alias hints and by the buffers BuildProblem made
// (its in-place merges).
class ValidOrders {
 public:
  explicit ValidOrders(const Graph& graph) : graph_(graph) {
    for (int t = 0; t < static_cast<int>(graph.tensors.size()); ++t) {
      index_.emplace(graph.tensors[t].name, t);
    }
    const int t_count = static_cast<int>(graph.tensors.size());
    group_.resize(t_count);
    std::iota(group_.begin(), group_.end(), 0);
    for (const Op& op : graph.ops) {
      for (const OperandPair& pair : op.alias) {
        Unite(index_.at(op.outputs[pair.output]),
              index_.at(op.inputs[pair.input]));
      }
    }
    const Problem problem = *BuildProblem(graph);
    for (const Buffer& b : problem.buffers) {
      for (const std::string& name : b.tensors) {
        Unite(index_.at(b.tensors[0]), index_.at(name));
      }
    }
    last_reader_.assign(t_count, -1);
    for (int i = 0; i < static_cast<int>(graph.ops.size()); ++i) {
      for (const std::string& in : graph.ops[i].inputs) {
        last_reader_[index_.at(in)] = i;
      }
    }
  }

  bool Valid(const std::vector<int>& order) const {
    const int n = static_cast<int>(order.size());
    std::vector<int> step(n);
    for (int k = 0; k < n; ++k) step[order[k]] = k;
    std::vector<int> producer(graph_.tensors.size(), -1);
    for (int i = 0; i < n; ++i) {
      for (const std::string& out : graph_.ops[i].outputs) {
        producer[index_.at(out)] = i;
      }
    }
    int previous_pinned = -1;
    for (int i = 0; i < n; ++i) {
      if (!graph_.ops[i].pinned) continue;
      if (previous_pinned != -1 && step[previous_pinned] > step[i]) {
        return false;
      }
      previous_pinned = i;
    }
    for (int i = 0; i < n; ++i) {
      const Op& op = graph_.ops[i];
      for (const std::string& in : op.inputs) {
        const int p = producer[index_.at(in)];
        if (p != -1 && step[p] > step[i]) return false;
      }
      for (const OperandPair& pair : op.inplace) {
        const int t = index_.at(op.inputs[pair.input]);
        if (last_reader_[t] != i) continue;
        for (int r = 0; r < n; ++r) {
          if (r != i && step[r] > step[i] && Reads(graph_.ops[r], t)) {
            return false;
          }
        }
      }
      for (int j : op.writes) {
        const int g = Group(index_.at(op.inputs[j]));
        for (int r = 0; r < n; ++r) {
          if (r == i || !ReadsGroup(graph_.ops[r], g)) continue;
          if ((r < i) != (step[r] < step[i])) return false;
        }
      }
    }
    return true;
  }

 private:
  int Group(int t) const {
    while (group_[t] != t) t = group_[t];
    return t;
  }
  void Unite(int a, int b) {
    a = Group(a);
    b = Group(b);
    if (a != b) group_[std::max(a, b)] = std::min(a, b);
  }
  bool Reads(const Op& op, int t) const {
    return std::any_of(
        op.inputs.begin(), op.inputs.end(),
        [&](const std::string& in) { return index_.at(in) == t; });
  }
  bool ReadsGroup(const Op& op, int g) const {
    return std::any_of(
        op.inputs.begin(), op.inputs.end(),
        [&](const std::string& in) { return Group(index_.at(in)) == g; });
  }

  const Graph& graph_;
  absl::flat_hash_map<std::string, int> index_;
  std::vector<int> group_;
  std::vector<int> last_reader_;
};

// The lower bound of `graph` with its ops in `order` (-1, and a failure,
// when BuildProblem refuses it).
inline Bytes OrderBound(const Graph& graph, const std::vector<int>& order,
                        const BuildOptions& options = {}) {
  absl::StatusOr<Problem> problem =
      BuildProblem(PermuteOps(graph, order), options);
  EXPECT_TRUE(problem.ok()) << problem.status();
  return problem.ok() ? LowerBound(*problem) : -1;
}

// The graph's own order of n ops.
inline std::vector<int> Identity(size_t n) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

// About one op in `one_in` writes one of its inputs.
inline Graph WithWrites(Graph graph, uint64_t seed, int one_in = 4) {
  std::mt19937_64 rng(seed);
  for (Op& op : graph.ops) {
    if (rng() % one_in == 0) {
      op.writes = {static_cast<int>(rng() % op.inputs.size())};
    }
  }
  return graph;
}

// The smaller OrderBound() of the graph's own order and "memory"'s: what
// an ordering must not exceed (-1, and a failure, when "memory" fails).
inline Bytes OwnOrMemoryBound(const Graph& graph,
                              const BuildOptions& options = {}) {
  const Bytes own = OrderBound(graph, Identity(graph.ops.size()), options);
  absl::StatusOr<std::vector<int>> memory =
      ComputeOpOrder(graph, "memory", options);
  EXPECT_TRUE(memory.ok()) << memory.status();
  if (!memory.ok()) return -1;
  return std::min(own, OrderBound(graph, *memory, options));
}

// The smallest OrderBound() of the graph's own order and every valid order
// (tried as permutations: small graphs only).
inline Bytes BestValidBound(const Graph& graph, const ValidOrders& valid,
                            const BuildOptions& options = {}) {
  std::vector<int> order = Identity(graph.ops.size());
  Bytes best = OrderBound(graph, order, options);
  do {
    if (valid.Valid(order)) {
      best = std::min(best, OrderBound(graph, order, options));
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace memplan::testing

#endif  // MEMPLAN_TESTS_VALID_ORDERS_H_
