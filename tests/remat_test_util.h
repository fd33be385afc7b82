// What the rematerialization tests check of every rewrite: the rewritten
// graph, run on hashed values, computes what the original does.

#ifndef MEMPLAN_TESTS_REMAT_TEST_UTIL_H_
#define MEMPLAN_TESTS_REMAT_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/formats.h"
#include "memplan/load.h"
#include "memplan/remat.h"
#include "memplan/types.h"
#include "memplan/verify.h"
#include "test_util.h"
#include "workloads/byte_costs.h"

namespace memplan::testing {

// The op or tensor a recomputed one stands in for ("f1" for "f1.recompute"
// and "f1.recompute_2").
inline std::string Origin(const std::string& name) {
  return name.substr(0, name.find(kRecomputeSuffix));
}

// Runs `graph` on hashed values: an op's outputs hash its (original) name
// and its inputs' values, a write replaces the written input's value. Calls
// `made` with each output and its value.
inline absl::flat_hash_map<std::string, uint64_t> RunOnHashes(
    const Graph& graph,
    const std::function<void(const std::string&, uint64_t)>& made = nullptr) {
  absl::flat_hash_map<std::string, uint64_t> value;
  auto hash = [](uint64_t h, uint64_t v) {
    return (h ^ v) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
  };
  for (const Tensor& t : graph.tensors) {
    value[t.name] = std::hash<std::string>()(t.name);
  }
  for (const Op& op : graph.ops) {
    uint64_t h = std::hash<std::string>()(Origin(op.name));
    for (const std::string& in : op.inputs) h = hash(h, value[in]);
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      value[op.outputs[k]] = hash(h, k);
      if (made) made(op.outputs[k], value[op.outputs[k]]);
    }
    for (int j : op.writes) value[op.inputs[j]] = hash(h, 1000 + j);
  }
  return value;
}

// What every rewrite must keep: the outputs' values, every recomputed
// tensor equal to the one it stands in for, the recomputed ops pure and
// named after their originals, their cost, and a verified plan within the
// budget.
inline void ExpectSoundRewrite(const Graph& original, const RematResult& result,
                               Bytes budget) {
  ASSERT_TRUE(VerifyPlan(result.plan.problem, result.plan.plan).ok());
  EXPECT_LE(result.plan.plan.peak, budget);
  absl::flat_hash_map<std::string, uint64_t> first;
  RunOnHashes(original,
              [&](const std::string& t, uint64_t v) { first[t] = v; });
  absl::flat_hash_map<std::string, uint64_t> before = RunOnHashes(original);
  absl::flat_hash_map<std::string, uint64_t> after =
      RunOnHashes(result.graph, [&](const std::string& t, uint64_t v) {
        const std::string origin = Origin(t);
        EXPECT_EQ(v, first[origin])
            << t << " holds other bytes than " << origin;
      });
  for (const Tensor& t : original.tensors) {
    if (t.kind == TensorKind::kOutput) {
      EXPECT_EQ(after[t.name], before[t.name]) << t.name;
    }
  }
  double cost = 0;
  absl::flat_hash_map<std::string, const Op*> by_name;
  for (const Op& op : original.ops) by_name[op.name] = &op;
  for (const std::string& name : result.recomputed) {
    const std::string origin = Origin(name);
    ASSERT_TRUE(by_name.contains(origin)) << name;
    const Op& op = *by_name[origin];
    EXPECT_TRUE(op.recomputable && op.writes.empty()) << name;
    cost += op.cost.value_or(0);
  }
  EXPECT_DOUBLE_EQ(result.added_cost, cost);
  EXPECT_EQ(result.graph.ops.size(),
            original.ops.size() + result.recomputed.size());
}

// n layers of 100 bytes, forward then backward, each backward op reading
// its layer's activation; the input is read by the first layers both ways.
// The forward ops are recomputable at costs 1, 10, 20, ...: 2n + 3 ops.
inline Graph LongChain(int n) {
  Graph g{.name = "long"};
  g.tensors = {{.name = "x", .size = 100, .kind = TensorKind::kInput},
               {.name = "a0", .size = 100},
               {.name = "g0", .size = 100, .kind = TensorKind::kOutput}};
  g.ops = {Op{.name = "f0", .inputs = {"x"}, .outputs = {"a0"}}};
  for (int i = 1; i <= n; ++i) {
    g.tensors.push_back({.name = absl::StrCat("a", i), .size = 100});
    g.ops.push_back(Op{.name = absl::StrCat("f", i),
                       .inputs = {absl::StrCat("a", i - 1)},
                       .outputs = {absl::StrCat("a", i)},
                       .cost = 10.0 * i});
  }
  g.tensors.push_back({.name = absl::StrCat("g", n + 1), .size = 100});
  g.ops.push_back(Op{.name = "loss",
                     .inputs = {absl::StrCat("a", n)},
                     .outputs = {absl::StrCat("g", n + 1)}});
  for (int i = n; i >= 1; --i) {
    if (i > 1) g.tensors.push_back({.name = absl::StrCat("g", i), .size = 100});
    g.ops.push_back(
        Op{.name = absl::StrCat("b", i),
           .inputs = {absl::StrCat("g", i + 1), absl::StrCat("a", i - 1)},
           .outputs = {i > 1 ? absl::StrCat("g", i) : "g0"}});
  }
  for (Op& op : g.ops) op.recomputable = op.name[0] == 'f';
  g.ops[0].cost = 1;
  return g;
}

// A bundled training step of bench/data/training (views, a loss) with
// every op that writes nothing and is not pinned made recomputable at a
// cost of the bytes it makes.
inline Graph TrainingStepWithByteCosts(const std::string& name) {
  absl::StatusOr<std::string> text =
      ReadFile(DataPath(absl::StrCat("training/", name, ".json")));
  EXPECT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(text.value_or(""));
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return Graph{};
  return WithByteCosts(*std::move(graph));
}

}  // namespace memplan::testing

#endif  // MEMPLAN_TESTS_REMAT_TEST_UTIL_H_
