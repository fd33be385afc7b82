// The segment-tree walk of the gap index and exact's trees (not public API).

#ifndef MEMPLAN_PLACEMENT_COVER_NODES_H_
#define MEMPLAN_PLACEMENT_COVER_NODES_H_

#include <cstdint>

namespace memplan::internal {

// Calls visit(node) for the nodes of a perfect binary tree over `leaves`
// leaves (node 1 the root, node v's children 2v and 2v+1, leaf i at
// leaves + i) that together cover the leaves [lo, hi), lo < hi: the largest
// such nodes, at most two per level, in the order a segment tree's range
// query meets them.
template <typename Visit>
void ForEachCoverNode(int32_t leaves, int32_t lo, int32_t hi, Visit&& visit) {
  for (int32_t a = lo + leaves, b = hi + leaves; a < b; a >>= 1, b >>= 1) {
    if (a & 1) visit(a++);
    if (b & 1) visit(--b);
  }
}

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_COVER_NODES_H_
