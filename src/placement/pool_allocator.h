// PoolAllocator: a standard allocator that takes its memory from a
// NodePool (not public API).
//
//   RunSet A: btree --allocate--> PoolAllocator --> NodePool of the index
//   RunSet B: btree --allocate--> PoolAllocator ----^
//
// The run sets of one GapIndex give their btrees (absl::btree_map) an
// allocator on the index's NodePool: their nodes come from its blocks and
// go back to its free lists.
//
// How it works: allocate(n) asks the pool for n * sizeof(T) bytes;
// deallocate gives them back with the same size. Copies (rebinding to
// another T included) share the pool; two allocators are equal when they
// share one, so a container may free what another allocated.
// Limits: the pool must outlive every container using it; no
// propagation on container assignment beyond the standard defaults.

#ifndef MEMPLAN_PLACEMENT_POOL_ALLOCATOR_H_
#define MEMPLAN_PLACEMENT_POOL_ALLOCATOR_H_

#include <cstddef>

#include "placement/node_pool.h"

namespace memplan::internal {

template <typename T>
class PoolAllocator {
 public:
  using value_type = T;
  explicit PoolAllocator(NodePool* pool) : pool_(pool) {}
  template <typename U>
  PoolAllocator(const PoolAllocator<U>& other) : pool_(other.pool()) {}
  T* allocate(size_t n) {
    return static_cast<T*>(pool_->Allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { pool_->Deallocate(p, n * sizeof(T)); }
  NodePool* pool() const { return pool_; }
  friend bool operator==(const PoolAllocator& a, const PoolAllocator& b) {
    return a.pool_ == b.pool_;
  }

 private:
  NodePool* pool_;
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_POOL_ALLOCATOR_H_
