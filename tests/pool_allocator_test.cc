// PoolAllocator: containers on one NodePool share its memory and reuse
// what they release.

#include "placement/pool_allocator.h"

#include <cstdint>
#include <functional>
#include <list>
#include <utility>

#include "absl/container/btree_map.h"
#include "gtest/gtest.h"
#include "placement/node_pool.h"

namespace memplan {
namespace {

using internal::NodePool;
using internal::PoolAllocator;

using Map = absl::btree_map<int64_t, int64_t, std::less<int64_t>,
                            PoolAllocator<std::pair<const int64_t, int64_t>>>;

TEST(PoolAllocatorTest, CopiesAndRebindsShareThePool) {
  NodePool pool;
  NodePool other;
  PoolAllocator<int> a(&pool);
  PoolAllocator<double> rebound(a);
  EXPECT_EQ(rebound.pool(), &pool);
  EXPECT_TRUE(a == PoolAllocator<int>(rebound));
  EXPECT_FALSE(a == PoolAllocator<int>(&other));
  int* p = a.allocate(3);
  a.deallocate(p, 3);
  // What one copy released, another takes.
  EXPECT_EQ(PoolAllocator<int>(rebound).allocate(3), p);
}

TEST(PoolAllocatorTest, ContainersTakeTheirNodesFromThePool) {
  NodePool pool;
  std::list<int64_t, PoolAllocator<int64_t>> list{
      PoolAllocator<int64_t>(&pool)};
  for (int64_t i = 0; i < 1000; ++i) list.push_back(i);
  EXPECT_EQ(pool.num_blocks(), 1u);
  int64_t sum = 0;
  for (int64_t v : list) sum += v;
  EXPECT_EQ(sum, 999 * 1000 / 2);
}

// A btree emptied and filled again many times, as the pending run sets of
// the gap index are: its nodes come back from the free lists, so the pool
// takes no block after the first round.
TEST(PoolAllocatorTest, AMapReusesTheNodesItReleased) {
  NodePool pool;
  Map map{PoolAllocator<std::pair<const int64_t, int64_t>>(&pool)};
  size_t blocks = 0;
  for (int round = 0; round < 50; ++round) {
    for (int64_t k = 0; k < 5000; ++k) map.emplace(k * 7 % 5000, k);
    ASSERT_EQ(map.size(), 5000u);
    EXPECT_EQ(map.begin()->first, 0);
    EXPECT_EQ(map.rbegin()->first, 4999);
    map.clear();
    if (round == 0) blocks = pool.num_blocks();
    EXPECT_EQ(pool.num_blocks(), blocks) << "round " << round;
  }
  EXPECT_GE(blocks, 1u);
}

}  // namespace
}  // namespace memplan
