// The naive total and the lower bound of a symbolic problem as functions of
// the dims, against the ordinary figures of the problem at every value.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "memplan/symbolic.h"
#include "workloads/symbolic_transformer.h"

namespace memplan {
namespace {

DimExpr E(const std::string& text) {
  absl::StatusOr<DimExpr> e = DimExpr::Parse(text);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : DimExpr();
}

// Every value of the problem's dims (at most two dims).
std::vector<DimValues> AllValues(const DimRanges& dims) {
  std::vector<DimValues> all = {{}};
  for (const auto& [name, range] : dims) {
    std::vector<DimValues> next;
    for (const DimValues& v : all) {
      for (int64_t x = range.min; x <= range.max; ++x) {
        DimValues w = v;
        w[name] = x;
        next.push_back(w);
      }
    }
    all = std::move(next);
  }
  return all;
}

// The symbolic figures equal LowerBound() and NaiveTotal() of problem.At(v)
// at every value v; returns the number of pieces.
int CheckEverywhere(const SymbolicProblem& problem) {
  absl::StatusOr<SymbolicBound> bound = SymbolicLowerBound(problem);
  EXPECT_TRUE(bound.ok()) << bound.status();
  absl::StatusOr<DimExpr> naive = SymbolicNaiveTotal(problem);
  EXPECT_TRUE(naive.ok()) << naive.status();
  if (!bound.ok() || !naive.ok()) return -1;
  for (const DimValues& v : AllValues(problem.dims)) {
    absl::StatusOr<Problem> at = problem.At(v);
    EXPECT_TRUE(at.ok()) << at.status();
    if (!at.ok()) continue;
    absl::StatusOr<Bytes> lb = bound->Evaluate(v);
    EXPECT_TRUE(lb.ok()) << lb.status();
    if (lb.ok()) EXPECT_EQ(*lb, LowerBound(*at)) << problem.name;
    absl::StatusOr<int64_t> total = naive->Evaluate(v);
    EXPECT_TRUE(total.ok()) << total.status();
    if (total.ok()) EXPECT_EQ(*total, NaiveTotal(*at)) << problem.name;
  }
  return static_cast<int>(bound->pieces.size());
}

TEST(SymbolicBoundTest, TransformerAtEveryLength) {
  for (const bool kv_cache : {false, true}) {
    const Graph g = internal::SymbolicTransformer({.layers = 2,
                                                   .width = 32,
                                                   .heads = 2,
                                                   .min_seq = 1,
                                                   .max_seq = 300,
                                                   .kv_cache = kv_cache});
    absl::StatusOr<SymbolicProblem> p = BuildSymbolicProblem(g);
    ASSERT_TRUE(p.ok()) << p.status();
    const int pieces = CheckEverywhere(*p);
    // The scores (seq*seq) and the activations (seq) take turns: more than
    // one piece, far fewer than steps.
    EXPECT_GE(pieces, 1);
    EXPECT_LT(pieces, static_cast<int>(g.ops.size()));
  }
}

TEST(SymbolicBoundTest, KeepsTheCrossingStepsOnly) {
  SymbolicProblem p{.name = "cross",
                    .dims = {{"seq", {1, 200}}},
                    .pool = {.name = "default", .alignment = 1}};
  p.buffers = {{.name = "lin", .size = E("100*seq"), .lifetime = {0, 1}},
               {.name = "sq", .size = E("seq*seq"), .lifetime = {1, 2}},
               {.name = "small", .size = E("seq"), .lifetime = {2, 3}},
               {.name = "flat", .size = E("500"), .lifetime = {3, 4}}};
  ASSERT_EQ(CheckEverywhere(p), 3);
  absl::StatusOr<SymbolicBound> bound = SymbolicLowerBound(p);
  ASSERT_TRUE(bound.ok());
  // seq*seq is the largest at 200, 100*seq at 10, 500 at 1; "small" never
  // matters.
  EXPECT_EQ(bound->pieces[0].bytes, E("seq*seq"));
  EXPECT_EQ(bound->pieces[0].step, 1);
  EXPECT_EQ(bound->pieces[1].bytes, E("100*seq"));
  EXPECT_EQ(bound->pieces[2].bytes, E("500"));
  EXPECT_EQ(*bound->Largest({{"seq", 200}}), 0);
  EXPECT_EQ(*bound->Largest({{"seq", 10}}), 1);
  EXPECT_EQ(*bound->Evaluate({{"seq", 1}}), 500);
  // Values outside the range, or missing, are errors naming the dim.
  EXPECT_THAT(bound->Evaluate({{"seq", 201}}).status().message(),
              ::testing::HasSubstr("seq"));
  EXPECT_THAT(bound->Evaluate({}).status().message(),
              ::testing::HasSubstr("no value for dim \"seq\""));
}

TEST(SymbolicBoundTest, EmptyProblemIsZero) {
  SymbolicProblem p{.name = "empty",
                    .dims = {{"seq", {1, 4}}},
                    .pool = {.name = "default", .alignment = 1}};
  EXPECT_EQ(CheckEverywhere(p), 0);
}

// Random problems in two dims, sizes of degree up to 2, against every value.
TEST(SymbolicBoundTest, RandomProblemsInTwoDims) {
  std::mt19937 rng(30);
  const std::vector<std::string> terms = {"1", "b", "s", "b*s", "s*s", "b*b"};
  for (int round = 0; round < 40; ++round) {
    SymbolicProblem p{.name = "random" + std::to_string(round),
                      .dims = {{"b", {1, 5}}, {"s", {2, 14}}},
                      .pool = {.name = "default", .alignment = 1}};
    const int n = 3 + static_cast<int>(rng() % 10);
    for (int i = 0; i < n; ++i) {
      std::string size;
      for (const std::string& t : terms) {
        if (rng() % 3 != 0) continue;
        if (!size.empty()) size += " + ";
        size += std::to_string(1 + rng() % 40) + "*" + t;
      }
      const Step start = static_cast<Step>(rng() % 8);
      p.buffers.push_back(
          {.name = "t" + std::to_string(i),
           .tensors = {"t" + std::to_string(i)},
           .size = size.empty() ? DimExpr(0) : E(size),
           .lifetime = {start, start + 1 + static_cast<Step>(rng() % 4)}});
    }
    EXPECT_GE(CheckEverywhere(p), 1) << p.name;
  }
}

}  // namespace
}  // namespace memplan
