// Loading OR-tools' CP-SAT library. See ortools_library.h.

#include "ortools_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace memplan::internal {
namespace {

// ortools/sat/c_api/cp_solver_c.h. The response is malloc'ed by the
// library and freed by the caller.
using SolveFunction = void (*)(const void* model, int model_len,
                               const void* parameters, int parameters_len,
                               void** response, int* response_len);

#if defined(__SANITIZE_ADDRESS__)
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif
#else
constexpr int kOpenFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

std::mutex& LoadMutex() {
  static std::mutex mutex;
  return mutex;
}

// The libraries loaded (or that failed to load), by path.
std::map<std::string, absl::StatusOr<SolveFunction>>& Loaded() {
  static auto* loaded =
      new std::map<std::string, absl::StatusOr<SolveFunction>>();
  return *loaded;
}

// The entry point of the library at `path`, loaded once per path.
absl::StatusOr<SolveFunction> EntryPoint(const std::string& path) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  auto* loaded = &Loaded();
  if (auto it = loaded->find(path); it != loaded->end()) return it->second;
  absl::StatusOr<SolveFunction> entry;
  const std::string advice =
      "; the cpsat planner needs the ortools Python package "
      "(pip install memplan[cpsat] beside a wheel; in a build tree, "
      "scripts/install_deps.sh python installs it in .venv; another one: "
      "configure with -DMEMPLAN_ORTOOLS_DIR=<site-packages>/ortools)";
  if (void* handle = dlopen(path.c_str(), kOpenFlags); handle == nullptr) {
    const char* why = dlerror();
    entry = absl::FailedPreconditionError(absl::StrCat(
        "cannot load OR-tools' CP-SAT library: ", why != nullptr ? why : path,
        advice));
  } else if (void* symbol = dlsym(handle, "SolveCpModelWithParameters");
             symbol == nullptr) {
    entry = absl::FailedPreconditionError(absl::StrCat(
        path,
        " has no SolveCpModelWithParameters (OR-tools 9.x's C entry "
        "point)",
        advice));
  } else {
    entry = reinterpret_cast<SolveFunction>(symbol);
  }
  loaded->emplace(path, entry);
  return entry;
}

}  // namespace

bool CpSatLibraryTried(std::string_view library_path) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  return Loaded().contains(std::string(library_path));
}

absl::Status LoadCpSatLibrary(std::string_view library_path) {
  return EntryPoint(std::string(library_path)).status();
}

absl::StatusOr<std::string> SolveCpModel(std::string_view library_path,
                                         const std::string& model,
                                         const std::string& parameters) {
  absl::StatusOr<SolveFunction> solve = EntryPoint(std::string(library_path));
  if (!solve.ok()) return solve.status();
  void* response = nullptr;
  int response_len = 0;
  (*solve)(model.data(), static_cast<int>(model.size()), parameters.data(),
           static_cast<int>(parameters.size()), &response, &response_len);
  if (response == nullptr) {
    return absl::InternalError("CP-SAT returned no response");
  }
  std::string bytes(static_cast<const char*>(response), response_len);
  std::free(response);
  return bytes;
}

}  // namespace memplan::internal
