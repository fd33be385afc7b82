// Sizes and durations as people write them, read one way by the command-line
// tool and the Python module:
//
//   ParseByteSize("512KiB") == 524288     ParseByteSize("1MB") == 1000000
//   ParseDuration("500ms") == 0.5 s       ParseDuration("2") == 2 s
//
// Sizes: a non-negative number with an optional unit, B, K/KiB, M/MiB,
// G/GiB, T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), in any
// case; a fraction of a unit is rounded down to a whole byte
// (ParseByteSize("1.5G") == 1610612736). Durations: a non-negative number of
// seconds, or a finite duration such as 500ms, 1.5s, 2m. Anything else is
// InvalidArgument quoting the text.

#ifndef MEMPLAN_UNITS_H_
#define MEMPLAN_UNITS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "memplan/types.h"

namespace memplan {

absl::StatusOr<Bytes> ParseByteSize(absl::string_view text);
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text);

}  // namespace memplan

#endif  // MEMPLAN_UNITS_H_
