// Suggestions for misspelt names (memplan/spelling.h).

#include "memplan/spelling.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace memplan {
namespace {

// The optimal string alignment distance of a and b, letters compared
// without case: insertions, deletions, substitutions and adjacent swaps.
size_t Distance(std::string_view a, std::string_view b) {
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) &&
          same(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string ClosestName(std::string_view given,
                        const std::vector<std::string>& names) {
  // Names are short; a long text (a path, a whole value) is no misspelling.
  constexpr size_t kLongest = 64;
  if (given.empty() || given.size() > kLongest) return "";
  std::string best;
  size_t best_distance = 0;
  for (const std::string& name : names) {
    if (name.empty() || name.size() > kLongest || name == given) continue;
    // The whole name, or its first word: "gredy" means "greedy_by_size".
    const std::string_view whole = name;
    const std::string_view word = whole.substr(0, whole.find('_'));
    for (std::string_view form : {whole, word}) {
      if (form.size() < 3 && form.size() < whole.size()) continue;
      const size_t distance = Distance(given, form);
      const size_t allowed =
          std::max<size_t>(1, std::max(given.size(), form.size()) / 3);
      if (distance > allowed) continue;
      if (best.empty() || distance < best_distance) {
        best = name;
        best_distance = distance;
      }
    }
  }
  return best;
}

std::string DidYouMean(std::string_view given,
                       const std::vector<std::string>& names) {
  const std::string closest = ClosestName(given, names);
  return closest.empty() ? "" : " (did you mean \"" + closest + "\"?)";
}

}  // namespace memplan
