// libFuzzer harness: CheckPlanJson (fuzz/fuzz_checks.h) on every input; a broken
// promise aborts, so libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::Status status = memplan::fuzz::CheckPlanJson(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::abort();
  }
  return 0;
}
