// RunSet: indexing the gaps of a set that has none indexed yet.

#include "placement/run_set.h"

#include <memory>

namespace memplan::internal {

void RunSet::IndexGaps() {
  gaps = std::make_unique<GapsByLength>();
  Offset below = 0;
  for (const auto& [begin, end] : runs) {
    if (begin > below) gaps->Add(begin, begin - below);
    below = end;
  }
}

}  // namespace memplan::internal
