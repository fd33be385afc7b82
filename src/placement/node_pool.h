// NodePool: memory for the nodes of many small trees, handed out from
// large blocks and all returned at once (not public API).
//
//   block 0 (1 MiB)                              free lists by node size
//   [n1|n2|n3|n4|n5|  ...  |                ]    256 B: n4 -> n2 -> null
//    ^ live   ^ released: on its size's list     512 B: null
//                              next ^ --- left ---^
//
// A GapIndex keeps one pool for the btrees of all its run sets: thousands
// of trees of a few nodes each, of one or two node sizes, which through
// malloc would cost a call per node.
//
// How it works:
//   1. Sizes round up to the alignment of std::max_align_t.
//   2. Allocate takes the head of the free list of that size when there is
//      one, else carves the next bytes of the current block, else starts a
//      new block (1 MiB, or the request when larger).
//   3. Deallocate pushes the node on the free list of its size.
//   4. The blocks go back to the system only with the pool.
// Limits: memory released is reused only for nodes of the same size, never
// returned to the system or merged; the free lists are searched linearly,
// which suits the few node sizes of one btree type. Not thread-safe.

#ifndef MEMPLAN_PLACEMENT_NODE_POOL_H_
#define MEMPLAN_PLACEMENT_NODE_POOL_H_

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace memplan::internal {

class NodePool {
 public:
  NodePool() = default;
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  // `bytes` bytes aligned for any type, valid until Deallocate or the end
  // of the pool.
  void* Allocate(size_t bytes) {
    bytes = RoundUp(bytes);
    for (FreeList& list : free_) {
      if (list.bytes == bytes && list.head != nullptr) {
        void* node = list.head;
        list.head = *static_cast<void**>(node);
        return node;
      }
    }
    if (bytes > left_) {
      const size_t block = std::max(bytes, kBlockBytes);
      blocks_.push_back(std::make_unique<std::byte[]>(block));
      next_ = blocks_.back().get();
      left_ = block;
    }
    void* node = next_;
    next_ += bytes;
    left_ -= bytes;
    return node;
  }

  // Takes back `node`, allocated with the same `bytes`.
  void Deallocate(void* node, size_t bytes) {
    bytes = RoundUp(bytes);
    FreeList* list = nullptr;
    for (FreeList& l : free_) {
      if (l.bytes == bytes) list = &l;
    }
    if (list == nullptr) list = &free_.emplace_back(FreeList{bytes, nullptr});
    *static_cast<void**>(node) = list->head;
    list->head = node;
  }

  // The blocks taken from the system so far.
  size_t num_blocks() const { return blocks_.size(); }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kAlign = alignof(std::max_align_t);
    return (std::max(bytes, sizeof(void*)) + kAlign - 1) / kAlign * kAlign;
  }
  struct FreeList {
    size_t bytes;
    void* head;
  };
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  std::byte* next_ = nullptr;
  size_t left_ = 0;
  std::vector<FreeList> free_;  // a few node sizes
};

}  // namespace memplan::internal

#endif  // MEMPLAN_PLACEMENT_NODE_POOL_H_
