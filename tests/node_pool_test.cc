// NodePool: released nodes are reused by size, live nodes never share a
// byte, and blocks are taken only when the current one is used up.

#include "placement/node_pool.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace memplan {
namespace {

using internal::NodePool;

TEST(NodePoolTest, ReusesAReleasedNodeOfTheSameSize) {
  NodePool pool;
  void* a = pool.Allocate(100);
  void* b = pool.Allocate(100);
  EXPECT_NE(a, b);
  pool.Deallocate(a, 100);
  pool.Deallocate(b, 100);
  // Last released, first reused.
  EXPECT_EQ(pool.Allocate(100), b);
  EXPECT_EQ(pool.Allocate(100), a);
  // The free list of 100-byte nodes is empty: a new node.
  void* c = pool.Allocate(100);
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
}

TEST(NodePoolTest, DoesNotReuseANodeForAnotherSize) {
  NodePool pool;
  void* small = pool.Allocate(64);
  pool.Deallocate(small, 64);
  void* large = pool.Allocate(512);
  EXPECT_NE(large, small);
  // Sizes that round to the same multiple of the alignment share a list.
  constexpr size_t kAlign = alignof(std::max_align_t);
  void* odd = pool.Allocate(64 - kAlign + 1);
  EXPECT_EQ(odd, small);
}

TEST(NodePoolTest, AlignsEveryNodeAndTakesBlocksOnlyWhenFull) {
  NodePool pool;
  EXPECT_EQ(pool.num_blocks(), 0u);
  // 1 MiB blocks: 4096 nodes of 256 bytes fill one exactly.
  for (int i = 0; i < 4096; ++i) {
    void* node = pool.Allocate(256);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(node) % alignof(std::max_align_t),
              0u);
  }
  EXPECT_EQ(pool.num_blocks(), 1u);
  pool.Allocate(256);
  EXPECT_EQ(pool.num_blocks(), 2u);
  // A request larger than a block gets a block of its own size.
  void* huge = pool.Allocate(size_t{3} << 20);
  EXPECT_EQ(pool.num_blocks(), 3u);
  std::memset(huge, 0xab, size_t{3} << 20);
}

// Random allocations and releases of a few sizes: every live node keeps the
// bytes written to it, so no two live nodes overlap.
TEST(NodePoolTest, LiveNodesNeverOverlap) {
  std::mt19937_64 rng(7);
  NodePool pool;
  const size_t sizes[] = {24, 48, 200, 4000};
  std::map<void*, std::pair<size_t, uint8_t>> live;  // node -> (size, tag)
  for (int step = 0; step < 20000; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      auto it = live.begin();
      std::advance(it, rng() % live.size());
      const auto [size, tag] = it->second;
      const auto* bytes = static_cast<const uint8_t*>(it->first);
      for (size_t i = 0; i < size; ++i) ASSERT_EQ(bytes[i], tag) << step;
      pool.Deallocate(it->first, size);
      live.erase(it);
    } else {
      const size_t size = sizes[rng() % 4];
      const auto tag = static_cast<uint8_t>(rng());
      void* node = pool.Allocate(size);
      ASSERT_EQ(live.count(node), 0u);
      std::memset(node, tag, size);
      live[node] = {size, tag};
    }
  }
  for (const auto& [node, entry] : live) {
    const auto* bytes = static_cast<const uint8_t*>(node);
    for (size_t i = 0; i < entry.first; ++i) ASSERT_EQ(bytes[i], entry.second);
  }
}

}  // namespace
}  // namespace memplan
