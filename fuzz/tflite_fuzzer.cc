// libFuzzer harness: CheckTflite (fuzz/fuzz_checks.h) on every input; a
// broken promise aborts, so libFuzzer keeps the input.
#include <cstddef>
#include <cstdint>

#include "fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return memplan::fuzz::RunHarness(memplan::fuzz::CheckTflite, data, size);
}
