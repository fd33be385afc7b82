// The conflict graph of a Problem, for planners that need every conflicting
// pair at hand (cp's model); not public API: the contract is the conflict
// rule of memplan/problem.h (lifetimes overlap, or an explicit conflict).
//
//   * Built by a sweep over time: O(n log n + conflicts), memory
//     O(n + conflicts). Most planners never build it: the placement index
//     finds the overlapping buffers it needs as it goes.

#ifndef MEMPLAN_MODEL_CONFLICT_GRAPH_H_
#define MEMPLAN_MODEL_CONFLICT_GRAPH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "memplan/types.h"

namespace memplan {

// Compact adjacency (CSR) of the conflict graph: lifetime overlaps found by a
// sweep over time plus the explicit conflicts. Neighbours are sorted by id and
// unique. Memory is O(n + conflicts).
class ConflictGraph {
 public:
  static ConflictGraph Build(const Problem& problem);

  int size() const { return static_cast<int>(begin_.size()) - 1; }
  std::span<const BufferId> neighbors(BufferId b) const {
    return {adjacency_.data() + begin_[b],
            static_cast<size_t>(begin_[b + 1] - begin_[b])};
  }
  int64_t num_edges() const {
    return static_cast<int64_t>(adjacency_.size()) / 2;
  }
  bool Conflict(BufferId a, BufferId b) const;  // O(log degree)

 private:
  std::vector<int64_t> begin_ = {0};
  std::vector<BufferId> adjacency_;
};

}  // namespace memplan

#endif  // MEMPLAN_MODEL_CONFLICT_GRAPH_H_
