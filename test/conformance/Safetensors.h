//===- Safetensors.h - Reading safetensors files in tests -------*- C++ -*-===//
//
// The tests read PyTorch's weights and reference outputs straight from the files
// make_reference.py writes, independently of the runtime's loader under test.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_CONFORMANCE_SAFETENSORS_H
#define KILN_TEST_CONFORMANCE_SAFETENSORS_H

#include "kiln/backends/reference/Interpreter.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

namespace kiln::test {

/// Reads every F32 / I32 tensor of a safetensors file.
inline llvm::Expected<reference::TensorMap> readSafetensors(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read %s", path.c_str());
  llvm::StringRef data = (*buffer)->getBuffer();
  uint64_t headerSize = 0;
  if (data.size() < 8)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s is too short",
                                   path.c_str());
  std::memcpy(&headerSize, data.data(), 8);
  auto header = llvm::json::parse(data.substr(8, headerSize));
  if (!header)
    return header.takeError();
  llvm::StringRef payload = data.substr(8 + headerSize);
  reference::TensorMap tensors;
  for (const auto &entry : *header->getAsObject()) {
    if (entry.first == "__metadata__")
      continue;
    const llvm::json::Object *info = entry.second.getAsObject();
    std::vector<int64_t> shape;
    for (const llvm::json::Value &d : *info->getArray("shape"))
      shape.push_back(*d.getAsInteger());
    const llvm::json::Array *offsets = info->getArray("data_offsets");
    int64_t begin = *(*offsets)[0].getAsInteger(), end = *(*offsets)[1].getAsInteger();
    llvm::StringRef bytes = payload.slice(begin, end);
    llvm::StringRef dtype = *info->getString("dtype");
    reference::HostTensor t;
    if (dtype == "F32") {
      t = reference::HostTensor::floats(shape);
      std::memcpy(t.f32.data(), bytes.data(), bytes.size());
    } else if (dtype == "I32") {
      t = reference::HostTensor::ints(shape);
      std::memcpy(t.i32.data(), bytes.data(), bytes.size());
    } else {
      continue;
    }
    tensors[entry.first.str()] = std::move(t);
  }
  return tensors;
}

/// max|a - b| / max|b|, the measure the conformance requirements are stated in.
inline double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double maxDiff = 0, maxRef = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    maxDiff = std::max(maxDiff, std::abs(double(a[i]) - double(b[i])));
    maxRef = std::max(maxRef, std::abs(double(b[i])));
  }
  return a.size() != b.size() ? INFINITY : maxDiff / maxRef;
}

} // namespace kiln::test

#endif // KILN_TEST_CONFORMANCE_SAFETENSORS_H
