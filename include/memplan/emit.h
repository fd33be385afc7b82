// Plans as inputs of runtimes: a C header of offsets, and TensorFlow Lite
// Micro's offline memory plan.

#ifndef MEMPLAN_EMIT_H_
#define MEMPLAN_EMIT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "memplan/symbolic.h"
#include "memplan/types.h"

namespace memplan {

// A C99 header for `plan` of `problem`, which was built from `graph` (or,
// with graph == nullptr, read as buffers: each buffer's tensors are listed):
//   #define <PREFIX>_POOL_<NAME>_SIZE  bytes of each pool's arena
//   #define <PREFIX>_ARENA_SIZE        the same, when there is one pool
//   #define <PREFIX>_<TENSOR>_OFFSET   bytes from its pool's base, -1 when the
//                                      tensor is not planned
//   #define <PREFIX>_<TENSOR>_POOL     its pool's index (several pools only)
// each tensor with a comment giving its size, its kind and its lifetime as op
// steps (and op names). Names are made C identifiers (letters, digits and
// '_', upper case) and unique (a suffix _2, _3, ... where two collide).
// `name` is the include guard's and the comment's (e.g. the input's name).
std::string PlanToCHeader(const Problem& problem, const Plan& plan,
                          const Graph* graph, std::string_view name,
                          std::string_view prefix = "MEMPLAN");

// A C99 header for a symbolic plan of `graph` (PlanSymbolicMemory(graph)):
// the offsets and the arena size as function-like macros of the dims, one
// parameter per dim in the order of the plan's dims (by name), each
// parenthesised and cast to int64_t, every constant INT64_C():
//   #define <PREFIX>_ARENA_SIZE(seq)      the plan's peak expression
//   #define <PREFIX>_<TENSOR>_OFFSET(seq) bytes from the arena's base, -1 when
//                                         the tensor is not planned
//   #define <PREFIX>_DIM_<DIM>_MIN / _MAX each dim's range
// With several buckets each macro is a conditional expression on the cut
// dim (the first bucket whose range holds the value). The macros hold for
// values inside the ranges only. A comment gives each dim's range, the
// buckets' cuts and peaks; each tensor's comment its size expression, kind
// and lifetime. Names as PlanToCHeader() makes them; a dim that is a C
// keyword (or int64_t, INT64_C, a reserved name) becomes the parameter
// "dim<name>". A plan without buckets (never PlanSymbolicMemory's) gives a
// header that is an #error.
std::string SymbolicPlanToCHeader(const SymbolicGraphPlan& plan,
                                  const Graph& graph, std::string_view name,
                                  std::string_view prefix = "MEMPLAN");

// TensorFlow Lite Micro's offline memory plan (the int32 array of the model's
// "OfflineMemoryAllocation" metadata): format version 0, subgraph 0, the
// number of tensors n, then n offsets into the arena, -1 for tensors left to
// the runtime (not planned here). Tensors in the graph's order (the model's
// tensor order when the graph came from it); buffers' tensors without a
// graph. InvalidArgument for a plan in several pools (the runtime has one
// arena) or an offset beyond int32.
absl::StatusOr<std::vector<int32_t>> TflmOfflinePlan(const Problem& problem,
                                                     const Plan& plan,
                                                     const Graph* graph);
// The array as the metadata buffer holds it: little-endian int32s.
std::string TflmOfflinePlanBytes(const std::vector<int32_t>& plan);

}  // namespace memplan

#endif  // MEMPLAN_EMIT_H_
