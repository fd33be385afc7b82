// A transformer-like graph with a symbolic sequence length, for the tests
// and the benchmark of symbolic plans.
//
// Per layer (d = model width, h = heads, float32): the hidden state and its
// norm (4*d*seq bytes), q, k and v (4*d*seq), attention scores and their
// softmax (4*h*seq*seq), the attention output and its projection, a residual,
// a second norm, the MLP's up projection and activation (16*d*seq), its down
// projection and the next residual. Each layer's KV cache (two buffers of
// the maximum sequence's size, 4*d*max_seq) is a graph input read by its
// attention and by the last op (state kept for the next step): alive over
// the whole program, of fixed size. The last op makes the output y.

#ifndef MEMPLAN_WORKLOADS_SYMBOLIC_TRANSFORMER_H_
#define MEMPLAN_WORKLOADS_SYMBOLIC_TRANSFORMER_H_

#include <cstdint>

#include "memplan/types.h"

namespace memplan::internal {

struct SymbolicTransformerOptions {
  int layers = 4;
  int64_t width = 512;  // d
  int64_t heads = 8;    // h
  int64_t min_seq = 1;
  int64_t max_seq = 2048;
  bool kv_cache = true;
};

Graph SymbolicTransformer(const SymbolicTransformerOptions& options = {});

}  // namespace memplan::internal

#endif  // MEMPLAN_WORKLOADS_SYMBOLIC_TRANSFORMER_H_
