// CpsatDefaultLibrary(): the OR-tools library memplan was configured with,
// else the one of the ortools Python package installed beside this program
// (a wheel's build: pip install memplan ortools, or memplan[cpsat]).

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "cpsat.h"

namespace memplan {
namespace {

namespace fs = std::filesystem;

// The first libortools.so.* (in name order) in <site_packages>/ortools/.libs.
std::string InSitePackages(const fs::path& site_packages) {
  std::error_code error;
  const fs::path libs = site_packages / "ortools" / ".libs";
  std::vector<std::string> found;
  for (fs::directory_iterator it(libs, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind("libortools.so.", 0) == 0) found.push_back(it->path());
  }
  if (found.empty()) return "";
  std::sort(found.begin(), found.end());
  return found.front();
}

// The file this code was loaded from: the Python extension module
// (<site-packages>/memplan/_memplan*.so) or the program (<env>/bin/memplan).
fs::path ThisBinary() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&InSitePackages), &info) != 0 &&
      info.dli_fname != nullptr) {
    std::error_code error;
    fs::path path = fs::canonical(info.dli_fname, error);
    if (!error) return path;
  }
  std::error_code error;
  return fs::read_symlink("/proc/self/exe", error);
}

// The ortools package beside this binary: in the same site-packages as the
// extension module, or in <env>/lib/python3*/site-packages of the program.
std::string BesideThisBinary() {
  const fs::path binary = ThisBinary();
  if (binary.empty()) return "";
  const fs::path dir = binary.parent_path();
  if (std::string found = InSitePackages(dir.parent_path()); !found.empty()) {
    return found;
  }
  std::error_code error;
  const fs::path lib = dir.parent_path() / "lib";
  std::vector<fs::path> pythons;
  for (fs::directory_iterator it(lib, error), end; !error && it != end;
       it.increment(error)) {
    if (it->path().filename().string().rfind("python3", 0) == 0) {
      pythons.push_back(it->path());
    }
  }
  std::sort(pythons.begin(), pythons.end());
  for (const fs::path& python : pythons) {
    if (std::string found = InSitePackages(python / "site-packages");
        !found.empty()) {
      return found;
    }
  }
  return "";
}

}  // namespace

std::string CpsatDefaultLibrary() {
  static const std::string* const library = [] {
    std::string configured = MEMPLAN_ORTOOLS_LIBRARY;
    if (configured.empty()) configured = BesideThisBinary();
    return new std::string(std::move(configured));
  }();
  return *library;
}

}  // namespace memplan
