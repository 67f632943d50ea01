//===- FuzzInputFile.h - Fuzz bytes as a file -------------------*- C++ -*-===//
//
// The safetensors and .npy readers take a path, as their callers do; the fuzz targets
// hand them each input through one in-memory file (memfd), so a run costs no disk I/O
// and the reader's own open/stat/map path is what gets exercised.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_FUZZ_FUZZINPUTFILE_H
#define KILN_TEST_FUZZ_FUZZINPUTFILE_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::fuzz {

/// Makes the process's input file hold exactly `data` and returns its path.
inline const std::string &writeInputFile(const uint8_t *data, size_t size) {
  static const int fd = memfd_create("kiln-fuzz-input", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ftruncate(fd, 0) != 0 ||
      pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    perror("kiln fuzz: writing the input file");
    std::abort(); // the harness failed, not the reader: stop loudly
  }
  return path;
}

} // namespace kiln::fuzz

#endif // KILN_TEST_FUZZ_FUZZINPUTFILE_H
