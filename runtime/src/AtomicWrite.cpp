//===- AtomicWrite.cpp - Replacing a file in one step ---------------------===//

#include "AtomicWrite.h"

#include "Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace kiln::rt {

void writeFileAtomically(const std::string &path, const std::vector<ByteRun> &runs) {
  std::string tmp = cat(path, ".tmp.", ::getpid());
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    fail(errno == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_IO_ERROR,
         "cannot create '", path, "': ", std::strerror(errno));
  try {
    for (const ByteRun &run : runs)
      if (run.size && std::fwrite(run.data, 1, run.size, f) != run.size)
        fail(KILN_STATUS_IO_ERROR, "cannot write '", tmp, "': ", std::strerror(errno));
    if (std::fclose(f) != 0) {
      f = nullptr;
      fail(KILN_STATUS_IO_ERROR, "cannot write '", tmp, "': ", std::strerror(errno));
    }
    f = nullptr;
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail(KILN_STATUS_IO_ERROR, "cannot rename '", tmp, "' to '", path,
           "': ", std::strerror(errno));
  } catch (...) {
    if (f)
      std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

} // namespace kiln::rt
