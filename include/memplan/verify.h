// The one verifier every plan passes before a user sees it.

#ifndef MEMPLAN_VERIFY_H_
#define MEMPLAN_VERIFY_H_

#include "absl/status/status.h"
#include "memplan/types.h"

namespace memplan {

// OK when, so that no two conflicting tensors share a byte:
//   * every buffer is assigned exactly once, to a pool it is allowed in, at
//     an offset that is a multiple of its alignment and the pool's, inside
//     the pool's capacity, keeping fixed placements;
//   * every tensor of a buffer lies inside it (Buffer::spans: its bytes
//     inside the buffer's bytes, its lifetime inside the buffer's);
//   * no two conflicting buffers in the same pool share a byte.
// Otherwise InvalidArgument naming the offending buffers or tensors, their
// lifetimes and byte ranges (a tensor that sticks out of its buffer is
// named with a tensor it collides with).
//
// Independent of every planner: it uses neither the conflict graph nor any
// planner helper. O(n log n) plus the explicit conflicts.
absl::Status VerifyPlan(const Problem& problem, const Plan& plan);

}  // namespace memplan

#endif  // MEMPLAN_VERIFY_H_
