// absl::Status as Python exceptions: memplan.Error and the classes derived
// from it (the table in memplan_module.cc).
#include <string>

#include "absl/status/status.h"
#include "module.h"

namespace memplan::python {

PyObject* g_error = nullptr;           // memplan.Error
PyObject* g_capacity_error = nullptr;  // memplan.CapacityError
PyObject* g_time_limit_error = nullptr;

[[noreturn]] void Raise(const absl::Status& status, bool file) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      if (file) {
        PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
        throw py::error_already_set();
      }
      throw py::value_error(message);
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      throw py::value_error(message);
    case absl::StatusCode::kResourceExhausted:
      if (file) {  // a file over the size limit, or larger than memory
        PyErr_SetString(g_error, message.c_str());
        throw py::error_already_set();
      }
      PyErr_SetString(g_capacity_error, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kDeadlineExceeded:
      PyErr_SetString(g_time_limit_error, message.c_str());
      throw py::error_already_set();
    case absl::StatusCode::kUnimplemented:
      PyErr_SetString(PyExc_NotImplementedError, message.c_str());
      throw py::error_already_set();
    default:
      PyErr_SetString(g_error, message.c_str());
      throw py::error_already_set();
  }
}

void BindErrors(py::module_& m) {
  static py::exception<void> error(m, "Error", PyExc_RuntimeError);
  static py::exception<void> capacity(m, "CapacityError", error.ptr());
  static py::exception<void> time_limit(m, "TimeLimitError", error.ptr());
  g_error = error.ptr();
  g_capacity_error = capacity.ptr();
  g_time_limit_error = time_limit.ptr();
}

}  // namespace memplan::python
