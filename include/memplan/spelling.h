// Suggestions for a misspelt name: the tool's flags and commands, planner
// names and options, all answer "did you mean" the same way.
//
//   DidYouMean("planer", {"planner", "planners", "pool"})
//       == " (did you mean \"planner\"?)"

#ifndef MEMPLAN_SPELLING_H_
#define MEMPLAN_SPELLING_H_

#include <string>
#include <string_view>
#include <vector>

namespace memplan {

// The name of `names` closest to `given` in edit distance (insertions,
// deletions, substitutions and swaps of neighbours, case ignored) when it
// is close enough to be a likely misspelling: at most a third of the
// longer name's letters, and at least one. A name's first word (up to its
// first "_") counts as well, so "gredy" finds "greedy_by_size". Empty when
// none is close enough; the first of equally close names wins.
std::string ClosestName(std::string_view given,
                        const std::vector<std::string>& names);

// " (did you mean \"NAME\"?)" for ClosestName's answer, or "" when none.
std::string DidYouMean(std::string_view given,
                       const std::vector<std::string>& names);

}  // namespace memplan

#endif  // MEMPLAN_SPELLING_H_
