// MappedFile.cpp - mmap of weight files: no copy, pages shared by every process using
// them. The descriptor stays open so that a change to the file under the mapping can be
// seen (fstat) before the pages are touched: a shrunk file's pages raise SIGBUS.
#include "MappedFile.h"

#include "Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {

MappedFile::MappedFile(const std::string &path, const char *what)
    : path_(path), what_(what) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    fail(err == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_IO_ERROR, what, " '", path,
         "': cannot open: ", std::strerror(err));
  }
  try {
    struct stat st;
    if (::fstat(fd_, &st) != 0) {
      int err = errno;
      fail(KILN_STATUS_IO_ERROR, what, " '", path,
           "': cannot stat: ", std::strerror(err));
    }
    if (!S_ISREG(st.st_mode))
      fail(KILN_STATUS_IO_ERROR, what, " '", path, "' is not a regular file");
    size_ = size_t(st.st_size);
    modified_ = st.st_mtim;
    if (size_ > 0) { // mmap rejects length 0; an empty file is reported by the reader
      void *p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        fail(KILN_STATUS_IO_ERROR, what, " '", path,
             "': cannot map: ", std::strerror(err));
      }
      data_ = static_cast<const uint8_t *>(p);
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

void MappedFile::checkUnchanged() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    fail(KILN_STATUS_IO_ERROR, what_, " '", path_,
         "': cannot stat: ", std::strerror(err));
  }
  bool resized = size_t(st.st_size) != size_;
  if (resized || st.st_mtim.tv_sec != modified_.tv_sec ||
      st.st_mtim.tv_nsec != modified_.tv_nsec)
    fail(KILN_STATUS_FAILED_PRECONDITION, what_, " '", path_,
         "' changed on disk since it was opened (",
         resized ? cat("size ", size_, " -> ", st.st_size, " bytes")
                 : std::string("same size, modification time changed"),
         "); replace ", what_, "s by rename, not in place, and open the new file");
}

void MappedFile::release(const uint8_t *begin, size_t bytes) const {
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t first = (uintptr_t(begin) + page - 1) / page * page;
  uintptr_t last = (uintptr_t(begin) + bytes) / page * page;
  // Advice only: the mapping reads the same bytes whether or not the kernel takes it.
  if (first < last)
    ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(const_cast<uint8_t *>(data_), size_);
  ::close(fd_);
}

} // namespace kiln::rt
