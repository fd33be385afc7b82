// The symbolic verifier: a plan of a SymbolicProblem proven for every value
// of its dims, and a plan of a symbolic graph bucket by bucket (the symbolic
// problem and plans themselves: memplan/symbolic.h).

#ifndef MEMPLAN_SYMBOLIC_VERIFY_H_
#define MEMPLAN_SYMBOLIC_VERIFY_H_

#include "absl/status/status.h"
#include "memplan/symbolic.h"

namespace memplan {

// Proves over the whole box of dim ranges that every offset is >= 0 and a
// multiple of its buffer's alignment, that no two conflicting buffers share
// a byte, and that every buffer lies under the peak and the pool's
// capacity; or names the buffer or the pair and a value of the dims where
// it fails. A pair that keeps no one side over the range, or a condition
// the prover cannot decide within its budget, is refused as "not proven",
// never accepted.
absl::Status VerifySymbolicPlan(const SymbolicProblem& problem,
                                const SymbolicPlan& plan);

// Checks that the buckets cover every value of the problem's dims exactly
// once, each cutting the same dim (or one bucket covering everything),
// without proving their plans: what must hold before a plan's bucket is
// looked up at one value of the dims.
absl::Status VerifyBucketStructure(const SymbolicGraphPlan& plan);

// Proves that the buckets cover every value of the problem's dims exactly
// once (each bucket's ranges inside the problem's), and every bucket's plan
// over its ranges (VerifySymbolicPlan).
absl::Status VerifySymbolicGraphPlan(const SymbolicGraphPlan& plan);

}  // namespace memplan

#endif  // MEMPLAN_SYMBOLIC_VERIFY_H_
