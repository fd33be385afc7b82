// Status propagation for memplan's own code (Debian's abseil 20220623 ships
// no status macros).

#ifndef MEMPLAN_BASE_STATUS_MACROS_H_
#define MEMPLAN_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define MEMPLAN_STATUS_CONCAT_INNER_(a, b) a##b
#define MEMPLAN_STATUS_CONCAT_(a, b) MEMPLAN_STATUS_CONCAT_INNER_(a, b)

// Returns from the current function when `expr` is not OK.
#define MEMPLAN_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status memplan_status_ = (expr);           \
    if (!memplan_status_.ok()) return memplan_status_; \
  } while (false)

// `lhs = value of expr`, or returns its error. `lhs` may declare a variable.
#define MEMPLAN_ASSIGN_OR_RETURN(lhs, expr) \
  MEMPLAN_ASSIGN_OR_RETURN_IMPL_(           \
      MEMPLAN_STATUS_CONCAT_(memplan_statusor_, __LINE__), lhs, expr)

#define MEMPLAN_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // MEMPLAN_BASE_STATUS_MACROS_H_
