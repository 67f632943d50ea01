//===- FuzzSafetensors.cpp - libFuzzer target: the safetensors loader ----===//
//
// SafetensorsFile is what kiln_weights_open runs on the file before it matches tensors to
// a model's parameters. On arbitrary bytes it must accept or throw INVALID_WEIGHTS; what
// it accepts must tile the data section, and every accepted tensor's bytes are read so
// that AddressSanitizer sees any range past the mapping.
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "FuzzInputFile.h"
#include "Safetensors.h"

#include <cstdlib>

using namespace kiln::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string &path = kiln::fuzz::writeInputFile(data, size);
  try {
    SafetensorsFile file(path);
    uint64_t covered = 0;
    unsigned sum = 0;
    for (const SafetensorsTensor &t : file.tensors()) {
      covered += t.end - t.begin;
      for (const uint8_t *p = file.data(t), *end = p + (t.end - t.begin); p < end; ++p)
        sum += *p;
    }
    // Tiling: the tensors cover exactly the bytes after the header.
    if (size < 8 + covered)
      std::abort();
    volatile unsigned sink = sum;
    (void)sink;
  } catch (const Error &e) {
    if (e.code() != KILN_STATUS_INVALID_WEIGHTS || !*e.what())
      std::abort();
  }
  return 0;
}
