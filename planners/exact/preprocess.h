// What the exact planners (exact, cp) compute before they search, defined
// once (not public API). All of it is for a single-pool problem: alignments
// are the effective ones in pool 0.

#ifndef MEMPLAN_PLANNERS_EXACT_PREPROCESS_H_
#define MEMPLAN_PLANNERS_EXACT_PREPROCESS_H_

#include <span>
#include <vector>

#include "memplan/types.h"

namespace memplan::internal {

// The unit the search counts bytes in: the greatest common divisor of every
// size and fixed offset, reduced so that every alignment is a multiple or a
// divisor of it (alignments are powers of two). Canonical offsets - sums of
// sizes rounded up to alignments - are then multiples of it, and an
// alignment that divides it constrains nothing. 1 for a problem without
// bytes.
Bytes PlanningUnit(const Problem& problem);

// A buffer's alignment counted in `unit`s: 1 when it divides the unit.
int64_t AlignmentInUnits(const Problem& problem, BufferId buffer, Bytes unit);

// The time sections of `buffers`: the distinct starts and ends of their
// lifetimes, sorted. Section s is [times[s], times[s + 1]); a buffer alive
// over [start, end) spans sections [SectionOf(times, start),
// SectionOf(times, end)).
std::vector<Step> SectionTimes(const Problem& problem,
                               std::span<const BufferId> buffers);
// The index of `t`, one of `times`.
int SectionOf(const std::vector<Step>& times, Step t);

// Per buffer: the buffers it has an explicit conflict with that their
// lifetimes do not already imply, both with bytes (a buffer without bytes
// overlaps nothing); sorted, each once.
std::vector<std::vector<BufferId>> ExplicitConflicts(const Problem& problem);

// Interchangeable ("twin") buffers: two buffers neither fixed nor empty
// with the same size, the same alignment in `unit`s, the same lifetime and
// the same ExplicitConflicts(). Swapping two of them in any valid plan gives a
// valid plan with the same peak, so a search that tries one of them at a place
// need not try the others there. Per buffer: the least id of its class (its own
// id when it has no twin, is fixed or has no bytes).
std::vector<BufferId> TwinClasses(const Problem& problem, Bytes unit);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_EXACT_PREPROCESS_H_
