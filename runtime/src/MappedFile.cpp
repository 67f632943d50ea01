// MappedFile.cpp - mmap of weight files: no copy, pages shared by every process using
// them.
#include "MappedFile.h"

#include "Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {

MappedFile::MappedFile(const std::string &path, const char *what) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    fail(err == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_IO_ERROR, what, " '", path,
         "': cannot open: ", std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(KILN_STATUS_IO_ERROR, what, " '", path, "': cannot stat: ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(KILN_STATUS_IO_ERROR, what, " '", path, "' is not a regular file");
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) { // mmap rejects length 0; an empty file is reported by the reader
    void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail(KILN_STATUS_IO_ERROR, what, " '", path, "': cannot map: ", std::strerror(err));
    }
    data_ = static_cast<const uint8_t *>(p);
  }
  ::close(fd); // the mapping keeps the file alive
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
}

} // namespace kiln::rt
