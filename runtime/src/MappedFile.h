//===- MappedFile.h - A read-only file mapping ------------------*- C++ -*-===//
//
// A read-only memory mapping of a whole file.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MAPPEDFILE_H
#define KILN_RUNTIME_MAPPEDFILE_H

#include <cstddef>
#include <cstdint>
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

private:
  std::string path_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_MAPPEDFILE_H
