// OR-tools' CP-SAT solver, reached through the C entry point of the shared
// library the ortools Python package carries (ortools/.libs/libortools.so.9).

#ifndef MEMPLAN_PLANNERS_CPSAT_ORTOOLS_LIBRARY_H_
#define MEMPLAN_PLANNERS_CPSAT_ORTOOLS_LIBRARY_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace memplan::internal {

// Solves a serialized CpModelProto with serialized SatParameters and
// returns the serialized CpSolverResponse, through the library at `path`
// (loaded on first use and kept: OR-tools keeps static state).
//   * The library is opened with RTLD_DEEPBIND (not under AddressSanitizer,
//     which refuses it): it resolves its symbols in its own protobuf and
//     abseil first, not in the ones this program may link (Debian's
//     protobuf, through the ONNX importer), whose symbols share names.
//   * FailedPrecondition, naming the path and what to install, when it
//     does not load or lacks the entry point.
// OR-tools aborts the process on a message it cannot parse: the model must
// be well-formed (wire.h).
// Loads the library at `path` as SolveCpModel does (once; the same
// errors), without solving: for a caller that counts the load, about a
// second from a cold disk, against its deadline.
absl::Status LoadCpSatLibrary(std::string_view library_path);
// Whether the library at `path` was loaded already (or failed to load):
// SolveCpModel and LoadCpSatLibrary then cost no load.
bool CpSatLibraryTried(std::string_view library_path);

absl::StatusOr<std::string> SolveCpModel(std::string_view library_path,
                                         const std::string& model,
                                         const std::string& parameters);

}  // namespace memplan::internal

#endif  // MEMPLAN_PLANNERS_CPSAT_ORTOOLS_LIBRARY_H_
