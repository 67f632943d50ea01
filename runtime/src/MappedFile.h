//===- MappedFile.h - A read-only file mapping ------------------*- C++ -*-===//
//
// A read-only memory mapping of a whole file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MAPPEDFILE_H
#define KILN_RUNTIME_MAPPEDFILE_H

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>

namespace kiln::rt {

class MappedFile {
public:
  // Throws Error naming the file: NOT_FOUND if it does not exist, IO_ERROR otherwise.
  // `what` names the file's role in messages ("weights file").
  MappedFile(const std::string &path, const char *what);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  // Throws Error (FAILED_PRECONDITION) when the file's size or modification time is not
  // what it was at open: it was rewritten in place, and the mapping may now read other
  // bytes or, past a new end, raise SIGBUS. A file replaced by rename is unaffected: the
  // mapping holds the old one.
  void checkUnchanged() const;
  // Drops the whole pages within [begin, begin + bytes) from the process's resident set,
  // for bytes it will not read again (a weight converted into memory of its own). They
  // stay in the page cache, and reading them again would fault them back in.
  void release(const uint8_t *begin, size_t bytes) const;

private:
  std::string path_;
  const char *what_;
  int fd_ = -1;
  timespec modified_{};
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_MAPPEDFILE_H
