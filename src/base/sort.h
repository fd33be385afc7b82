// Sorting by integer keys (not public API).

#ifndef MEMPLAN_BASE_SORT_H_
#define MEMPLAN_BASE_SORT_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace memplan::internal {

// Sorts `items` stably by key(item), an unsigned 64-bit integer: an LSD
// radix sort over the bytes in which the keys differ, a few linear passes
// (at 10^6 items several times faster than a comparison sort). `scratch`
// is working space, kept by callers that sort often.
template <typename T, typename Key>
void RadixSortBy(std::vector<T>& items, std::vector<T>& scratch, Key&& key) {
  uint64_t all_or = 0;
  uint64_t all_and = ~uint64_t{0};
  for (const T& item : items) {
    all_or |= key(item);
    all_and &= key(item);
  }
  const uint64_t varying = all_or ^ all_and;  // bits not shared by all
  if (varying == 0) return;
  scratch.resize(items.size());
  std::vector<T>* from = &items;
  std::vector<T>* to = &scratch;
  for (int shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;
    size_t count[257] = {};
    for (const T& item : *from) ++count[((key(item) >> shift) & 0xff) + 1];
    for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
    for (const T& item : *from)
      (*to)[count[(key(item) >> shift) & 0xff]++] = item;
    std::swap(from, to);
  }
  if (from != &items) items.swap(scratch);
}

}  // namespace memplan::internal

#endif  // MEMPLAN_BASE_SORT_H_
