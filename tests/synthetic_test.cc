#include "memplan/synthetic.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "memplan/problem.h"

namespace memplan {
namespace {

class SyntheticKindTest : public ::testing::TestWithParam<SyntheticKind> {};

TEST_P(SyntheticKindTest, SameSeedSameProblemOtherSeedOtherProblem) {
  SyntheticOptions options{.buffers = 500, .seed = 7};
  absl::StatusOr<Problem> a = SyntheticProblem(GetParam(), options);
  absl::StatusOr<Problem> b = SyntheticProblem(GetParam(), options);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  options.seed = 8;
  absl::StatusOr<Problem> c = SyntheticProblem(GetParam(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(a->buffers, c->buffers);
}

TEST_P(SyntheticKindTest, ValidWithTheRequestedBufferCountAndSizes) {
  for (int64_t n : {4, 5, 6, 7, 31, 1000}) {
    SyntheticOptions options{.buffers = n,
                             .seed = static_cast<uint64_t>(n),
                             .min_size = 100,
                             .max_size = 5000,
                             .granule = 32};
    absl::StatusOr<Problem> problem = SyntheticProblem(GetParam(), options);
    ASSERT_TRUE(problem.ok()) << n << ": " << problem.status();
    EXPECT_TRUE(ValidateProblem(*problem).ok()) << ValidateProblem(*problem);
    ASSERT_EQ(problem->buffers.size(), static_cast<size_t>(n));
    for (const Buffer& b : problem->buffers) {
      EXPECT_EQ(b.size % 32, 0) << b.name;
      EXPECT_GE(b.size, 128) << b.name;  // 100 rounded up to the granule
      EXPECT_LE(b.size, 5024) << b.name;
    }
    // Some reuse is possible once there are enough buffers.
    if (n >= 31) EXPECT_GT(NaiveTotal(*problem), LowerBound(*problem)) << n;
  }
}

TEST_P(SyntheticKindTest, GraphFamiliesAreGraphs) {
  absl::StatusOr<Graph> graph = SyntheticGraph(GetParam(), {.buffers = 100});
  if (GetParam() == SyntheticKind::kIntervals ||
      GetParam() == SyntheticKind::kDenseTraining) {
    EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
    return;
  }
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tensors.size(), 100u);
  absl::StatusOr<Problem> built = BuildProblem(*graph);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->buffers.size(), 100u);
}

TEST_P(SyntheticKindTest, RejectsBadOptions) {
  for (const SyntheticOptions& bad :
       {SyntheticOptions{.buffers = 3}, SyntheticOptions{.min_size = 0},
        SyntheticOptions{.min_size = 10, .max_size = 5},
        SyntheticOptions{.granule = 48}, SyntheticOptions{.max_lifetime = 0}}) {
    EXPECT_EQ(SyntheticProblem(GetParam(), bad).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, SyntheticKindTest, ::testing::ValuesIn(AllSyntheticKinds()),
    [](const ::testing::TestParamInfo<SyntheticKind>& info) {
      return std::string(SyntheticKindName(info.param));
    });

TEST(SyntheticTest, ChainHasShortLifetimesAndResiduals) {
  absl::StatusOr<Problem> p =
      SyntheticProblem(SyntheticKind::kChain, {.buffers = 1000});
  ASSERT_TRUE(p.ok()) << p.status();
  int residuals = 0;
  for (size_t i = 1; i + 1 < p->buffers.size(); ++i) {
    const Lifetime& l = p->buffers[i].lifetime;
    EXPECT_LE(l.end - l.start, 5) << p->buffers[i].name;
    residuals += l.end - l.start > 2;
  }
  EXPECT_GT(residuals, 100);  // a block of 2-4 ops: about 1000 / 3 of them
  EXPECT_EQ(p->buffers.back().lifetime.end,
            999);  // the output lives to the end
}

TEST(SyntheticTest, BranchyHasParallelBranches) {
  absl::StatusOr<Graph> g = SyntheticBranchyGraph({.buffers = 1000, .seed = 3});
  ASSERT_TRUE(g.ok()) << g.status();
  int concats = 0;
  for (const Op& op : g->ops) {
    if (op.type != "Concat") continue;
    ++concats;
    EXPECT_GE(op.inputs.size(), 2u);
    EXPECT_LE(op.inputs.size(), 4u);
  }
  EXPECT_GT(concats, 50);
  // The block input feeds several branches, so more bytes are alive at once
  // than in any two neighbours of a chain.
  absl::StatusOr<Problem> p = BuildProblem(*g);
  ASSERT_TRUE(p.ok()) << p.status();
  int fanout = 0;
  for (const Buffer& b : p->buffers)
    fanout += b.lifetime.end - b.lifetime.start > 3;
  EXPECT_GT(fanout, 50);
}

TEST(SyntheticTest, TrainingActivationsNestAndSpanTheProgram) {
  absl::StatusOr<Problem> p =
      SyntheticProblem(SyntheticKind::kTraining, {.buffers = 301, .seed = 5});
  ASSERT_TRUE(p.ok()) << p.status();
  // 301 = 3 * 100 + 1: 100 layers, 201 ops.
  std::vector<Lifetime> acts;
  for (int i = 1; i < 100; ++i) {
    const std::string name = absl::StrCat("act", i);
    auto it = std::find_if(p->buffers.begin(), p->buffers.end(),
                           [&](const Buffer& b) { return b.name == name; });
    ASSERT_NE(it, p->buffers.end()) << name;
    acts.push_back(it->lifetime);
  }
  // act1 is produced by op 0 and read back by the last backward op.
  EXPECT_EQ(acts.front().start, 0);
  EXPECT_GE(acts.front().end - acts.front().start, 190);
  for (size_t i = 1; i < acts.size(); ++i) {
    EXPECT_LT(acts[i - 1].start, acts[i].start) << i;
    EXPECT_GT(acts[i - 1].end, acts[i].end) << i;
  }
  // At the turn of forward and backward every activation is alive: the lower
  // bound holds them all.
  Bytes acts_total = 0;
  for (const Buffer& b : p->buffers) {
    if (b.name.starts_with("act")) acts_total += b.size;
  }
  EXPECT_GE(LowerBound(*p), acts_total);
}

TEST(SyntheticTest, TrainingRemainderBecomesScratch) {
  absl::StatusOr<Graph> g =
      SyntheticTrainingGraph({.buffers = 12});  // 3 * 3 + 1 + 2
  ASSERT_TRUE(g.ok()) << g.status();
  int scratch = 0;
  for (const Tensor& t : g->tensors) scratch += t.kind == TensorKind::kScratch;
  EXPECT_EQ(scratch, 2);
}

TEST(SyntheticTest, IntervalsRespectTheLifetimeBound) {
  absl::StatusOr<Problem> p =
      SyntheticIntervalProblem({.buffers = 2000, .max_lifetime = 50});
  ASSERT_TRUE(p.ok()) << p.status();
  Step longest = 0;
  for (const Buffer& b : p->buffers) {
    EXPECT_GE(b.lifetime.start, 0);
    EXPECT_LT(b.lifetime.start, 2000);
    longest = std::max(longest, b.lifetime.end - b.lifetime.start);
  }
  EXPECT_LE(longest, 50);
  EXPECT_GT(longest, 25);
}

TEST(SyntheticTest, LargeInstanceComesOutWhole) {
  // Not a timing assertion: one large instance must simply come out whole.
  absl::StatusOr<Problem> p =
      SyntheticIntervalProblem({.buffers = 100000, .seed = 1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->buffers.size(), 100000u);
  EXPECT_TRUE(ValidateProblem(*p).ok());
}

TEST(SyntheticTest, DenseTrainingKeepsHalfTheBuffersAliveInTheMiddle) {
  absl::StatusOr<Problem> p = SyntheticProblem(SyntheticKind::kDenseTraining,
                                               {.buffers = 1001, .seed = 4});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->buffers.size(), 1001u);
  EXPECT_TRUE(ValidateProblem(*p).ok());
  // 500 activations: act i alive [i, 1000 - i), read back by backward step
  // 999 - i; all of them alive at the turn (step 499).
  int alive_at_turn = 0;
  for (const Buffer& b : p->buffers) {
    if (b.name.starts_with("act")) {
      const int64_t i = std::stoll(b.name.substr(3));
      EXPECT_EQ(b.lifetime.start, i);
      EXPECT_EQ(b.lifetime.end, 1000 - i);
    } else {
      EXPECT_TRUE(b.name.starts_with("grad")) << b.name;
      EXPECT_GE(b.lifetime.start, 500) << b.name;
      EXPECT_LE(b.lifetime.end - b.lifetime.start, 3) << b.name;
    }
    alive_at_turn += b.lifetime.start <= 499 && 499 < b.lifetime.end;
  }
  EXPECT_EQ(alive_at_turn, 500);
  // Overlapping pairs grow quadratically: at least (n/2)^2 / 2.
  int64_t pairs = 0;
  for (size_t a = 0; a < p->buffers.size(); ++a) {
    for (size_t b = a + 1; b < p->buffers.size(); ++b)
      pairs += Overlaps(p->buffers[a].lifetime, p->buffers[b].lifetime);
  }
  EXPECT_GE(pairs, 500 * 500 / 2);
}

}  // namespace
}  // namespace memplan
