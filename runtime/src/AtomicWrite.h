//===- AtomicWrite.h - Replacing a file in one step -------------*- C++ -*-===//
//
// Files the runtime writes (safetensors, profile traces) go to a temporary file renamed
// into place, so that a reader never sees one half-written and a failure leaves the old
// file as it was.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ATOMICWRITE_H
#define KILN_RUNTIME_ATOMICWRITE_H

#include <cstddef>
#include <string>
#include <vector>

namespace kiln::rt {

/// A run of bytes to write.
struct ByteRun {
  const void *data;
  size_t size;
};

/// Writes `runs` one after the other as the file `path`. Throws Error: NOT_FOUND when
/// the directory does not exist, IO_ERROR for any other failure.
void writeFileAtomically(const std::string &path, const std::vector<ByteRun> &runs);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ATOMICWRITE_H
