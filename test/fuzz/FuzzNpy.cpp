//===- FuzzNpy.cpp - libFuzzer target: kiln-run's .npy reader -------------===//
//
// Input: one byte choosing the dtype the input wants, then the file. readNpy must return
// a tensor whose bytes match its shape and dtype, or throw DriverError with a message.
//
//===----------------------------------------------------------------------===//

#include "DriverError.h"
#include "FuzzInputFile.h"
#include "Npy.h"

#include <cstdlib>

using namespace kiln::driver;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const kiln_dtype kWants[] = {KILN_DTYPE_F32, KILN_DTYPE_I32, KILN_DTYPE_I64};
  const kiln_dtype want = kWants[data[0] % 3];
  const std::string &path = kiln::fuzz::writeInputFile(data + 1, size - 1);
  try {
    HostTensor t = readNpy(path, want);
    uint64_t bytes = 0;
    if (t.dtype != want || !t.byteCount(kiln_dtype_size(want), bytes) ||
        bytes != t.bytes.size())
      std::abort();
    for (int64_t i = 0; i < t.count(); ++i)
      (void)t.at(i);
  } catch (const DriverError &e) {
    if (!*e.what())
      std::abort();
  }
  return 0;
}
