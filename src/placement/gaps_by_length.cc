// GapsByLength: the parts off the hot path of run merges.

#include "placement/gaps_by_length.h"

#include <algorithm>
#include <cstdint>

namespace memplan::internal {

void GapsByLength::Clear() {
  for (int c = NextClass(0); c < kClasses; c = NextClass(c + 1))
    buckets_[c].clear();
  where_.clear();
  for (uint64_t& word : nonempty_) word = 0;
}

int32_t GapsByLength::CountAtLeast(Bytes size, int32_t limit) const {
  // Only the first class mixes lengths below and above `size`: every gap of
  // a later class is long enough.
  const int first = ClassOf(size);
  int64_t count = 0;
  for (const Gap& gap : buckets_[first]) count += gap.length >= size;
  for (int c = NextClass(first + 1); c < kClasses && count <= limit;
       c = NextClass(c + 1)) {
    count += static_cast<int64_t>(buckets_[c].size());
  }
  return static_cast<int32_t>(std::min<int64_t>(count, limit + 1));
}

}  // namespace memplan::internal
