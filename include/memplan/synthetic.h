// Seeded synthetic workloads for benchmarks and tests.
//
// Four families, each deterministic for a given SyntheticOptions (a seeded
// std::mt19937_64) and built in O(n) time for n buffers:
//   * chain:     a CNN-like op chain; every few ops a residual Add reads a
//                tensor a few ops back, so a few lifetimes span a block.
//   * branchy:   inception-like blocks: one block input feeds 2-4 parallel
//                branches of 1-3 ops each, joined by a Concat.
//   * training:  a forward pass whose activations stay alive until their
//                backward op reads them (nested lifetimes, the outermost one
//                spanning almost the whole program), plus weight gradients
//                that are graph outputs.
//   * intervals: random buffers like MiniMalloc's benchmarks: start uniform
//                in [0, buffers), log-uniform lifetime and size.
//   * dense_training: a training step's buffer list as a trace would give
//                it: half the buffers are forward activations alive from
//                their forward step until their backward step (nested, so
//                about half the buffers are alive in the middle of the
//                program), the other half short-lived gradients and
//                temporaries of the backward steps. The live set grows with
//                n: placement must not be quadratic in it.
// The graph families are Graphs (so BuildProblem is exercised): with default
// BuildOptions each yields exactly `buffers` planned buffers (no in-place or
// alias hints, no constants). Sizes are multiples of `granule` in
// [min_size, max_size] (min_size and max_size are rounded up to the granule).
//
//   time ->    chain               training (forward | backward)
//   a0 ##                          a0 ##########################
//   a1  ##                         a1  ######################
//   a2   #####  (residual)         a2    ##################
//   a3    ##                       ...       (nested)

#ifndef MEMPLAN_SYNTHETIC_H_
#define MEMPLAN_SYNTHETIC_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/types.h"

namespace memplan {

struct SyntheticOptions {
  int64_t buffers = 1000;  // planned buffers to produce (at least 4)
  uint64_t seed = 0;
  Bytes min_size = 1024;
  Bytes max_size = Bytes{1} << 20;
  Bytes granule = 64;       // every size is a multiple of this (a power of two)
  Step max_lifetime = 100;  // intervals only: the longest lifetime in steps
};

enum class SyntheticKind {
  kChain,
  kBranchy,
  kTraining,
  kIntervals,
  kDenseTraining
};

// "chain", "branchy", "training", "intervals", "dense_training".
std::string_view SyntheticKindName(SyntheticKind kind);
std::vector<SyntheticKind> AllSyntheticKinds();

// InvalidArgument for fewer than 4 buffers, non-positive sizes, min > max, or
// a granule that is not a power of two.
absl::StatusOr<Graph> SyntheticChainGraph(const SyntheticOptions& options);
absl::StatusOr<Graph> SyntheticBranchyGraph(const SyntheticOptions& options);
absl::StatusOr<Graph> SyntheticTrainingGraph(const SyntheticOptions& options);
// One unbounded pool "default"; buffers named "b<i>".
absl::StatusOr<Problem> SyntheticIntervalProblem(
    const SyntheticOptions& options);
// One unbounded pool "default"; activations "act<i>", the others "grad<j>".
absl::StatusOr<Problem> SyntheticDenseTrainingProblem(
    const SyntheticOptions& options);

// The graph of a graph family (InvalidArgument for kIntervals and
// kDenseTraining, which are buffer lists).
absl::StatusOr<Graph> SyntheticGraph(SyntheticKind kind,
                                     const SyntheticOptions& options);
// Any family as a Problem: graph families go through BuildProblem with
// default BuildOptions.
absl::StatusOr<Problem> SyntheticProblem(SyntheticKind kind,
                                         const SyntheticOptions& options);

}  // namespace memplan

#endif  // MEMPLAN_SYNTHETIC_H_
