//===- FuzzManifest.cpp - libFuzzer target: the manifest parser -----------===//
//
// parseManifest on arbitrary bytes must return a manifest or throw the runtime's Error
// (INVALID_MODEL or INCOMPATIBLE, with a message); anything else escaping, or a trap
// inside, is a finding. A manifest it accepts is described once, as error messages do.
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "Manifest.h"

#include <cstdlib>

using namespace kiln::rt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<Manifest> manifest;
  try {
    manifest =
        parseManifest(std::string_view(reinterpret_cast<const char *>(data), size));
  } catch (const Error &e) {
    if ((e.code() != KILN_STATUS_INVALID_MODEL && e.code() != KILN_STATUS_INCOMPATIBLE) ||
        !*e.what())
      std::abort();
    return 0;
  }
  for (const EntryDesc &entry : manifest->entries) {
    if (manifest->findEntry(entry.name) < 0)
      std::abort();
    for (const TensorDesc &t : entry.inputs)
      (void)t.describe();
    for (const BufferDesc &b : entry.buffers)
      (void)b.describe();
  }
  (void)manifest->entryNames();
  return 0;
}
