// TimeBuckets: after any sequence of additions and removals, listing a
// buffer's overlapping buffers gives exactly what a scan of every filed
// buffer gives, each once.

#include "placement/time_buckets.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "memplan/problem.h"
#include "placement/placement_index.h"
#include "test_util.h"

namespace memplan {
namespace {

using internal::GapSearch;
using internal::PlacementIndex;
using internal::TimeBuckets;

struct Filed {
  bool filed = false;
  PoolId pool = 0;
  Offset offset = 0;
  Offset end = 0;
};

using Listing = std::vector<std::tuple<BufferId, PoolId, Offset, Offset>>;

Listing List(const TimeBuckets& buckets, BufferId buffer, PoolId pool) {
  Listing out;
  buckets.ForEachOverlapping(buffer, pool, [&](const TimeBuckets::Entry& e) {
    out.push_back({e.buffer, e.pool, e.offset, e.end});
  });
  std::sort(out.begin(), out.end());
  return out;
}

Listing Scan(const Problem& problem, const std::vector<Filed>& filed,
             BufferId buffer, PoolId pool) {
  Listing out;
  for (BufferId o = 0; o < static_cast<BufferId>(filed.size()); ++o) {
    if (o == buffer || !filed[o].filed || filed[o].pool != pool) continue;
    if (Overlaps(problem.buffers[o].lifetime, problem.buffers[buffer].lifetime))
      out.push_back({o, pool, filed[o].offset, filed[o].end});
  }
  return out;
}

// Mostly short lifetimes with some spanning most of the steps, so buffers
// are filed at several levels.
TEST(TimeBucketsTest, ListsWhatAScanOfTheFiledBuffersFinds) {
  for (uint64_t seed = 0; seed < 12; ++seed) {
    std::mt19937_64 rng(seed);
    testing::RandomProblemOptions options;
    options.buffers = 400;
    options.horizon = 3000;
    options.max_lifetime = 2500;
    options.pools = 1 + seed % 3;
    Problem problem = testing::RandomProblem(seed, options);
    for (Buffer& b : problem.buffers) {
      if (rng() % 4 != 0)
        b.lifetime.end = b.lifetime.start + 1 + static_cast<Step>(rng() % 8);
      b.size = std::max<Bytes>(b.size, 1);
    }
    const PlacementIndex index(problem, GapSearch::kListed);
    ASSERT_GE(index.num_bucket_levels(), 2) << "seed " << seed;
    TimeBuckets buckets(index);
    const int n = static_cast<int>(problem.buffers.size());
    const int pools = static_cast<int>(problem.pools.size());
    std::vector<Filed> filed(n);
    for (int step = 0; step < 4000; ++step) {
      const BufferId b = static_cast<BufferId>(rng() % n);
      if (filed[b].filed) {
        buckets.Remove(b);
        filed[b].filed = false;
      } else {
        const PoolId pool = static_cast<PoolId>(rng() % pools);
        const Offset offset = static_cast<Offset>(rng() % 100000);
        buckets.Add(b, pool, offset, offset + problem.buffers[b].size);
        filed[b] = {true, pool, offset, offset + problem.buffers[b].size};
      }
      if (step % 400 != 399) continue;
      for (BufferId x = 0; x < n; ++x) {
        for (PoolId p = 0; p < pools; ++p) {
          ASSERT_EQ(List(buckets, x, p), Scan(problem, filed, x, p))
              << "seed " << seed << " step " << step << " buffer " << x
              << " pool " << p;
        }
      }
    }
  }
}

}  // namespace
}  // namespace memplan
