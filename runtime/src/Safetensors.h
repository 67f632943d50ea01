//===- Safetensors.h - Reading safetensors files ----------------*- C++ -*-===//
//
// Reading the safetensors container: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__"?}, then the data.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SAFETENSORS_H
#define KILN_RUNTIME_SAFETENSORS_H

#include "MappedFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

struct SafetensorsTensor {
  std::string name;
  std::string dtype; // as written: "F32", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; // offsets into the data section
};

class SafetensorsFile {
public:
  // Maps and structurally validates the file. Throws Error naming the file: NOT_FOUND /
  // IO_ERROR for the file system, INVALID_WEIGHTS for anything malformed.
  explicit SafetensorsFile(const std::string &path);

  const std::string &path() const { return file_.path(); }
  const std::vector<SafetensorsTensor> &tensors() const { return tensors_; }
  const uint8_t *data(const SafetensorsTensor &t) const { return dataStart_ + t.begin; }
  // See MappedFile::checkUnchanged.
  void checkUnchanged() const { file_.checkUnchanged(); }
  // See MappedFile::release: `t`'s bytes, for a tensor read only to be converted.
  void release(const SafetensorsTensor &t) const {
    file_.release(data(t), t.end - t.begin);
  }

private:
  MappedFile file_;
  const uint8_t *dataStart_ = nullptr;
  std::vector<SafetensorsTensor> tensors_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_SAFETENSORS_H
