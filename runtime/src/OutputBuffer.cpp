//===- OutputBuffer.cpp - The C boundary for detached outputs -------------===//
//
// kiln_buffer is an OutputBuffer; its accessors never fail, and accept NULL.
//
//===----------------------------------------------------------------------===//

#include "OutputBuffer.h"

using namespace kiln::rt;

namespace {
const OutputBuffer *unwrap(const kiln_buffer *b) {
  return reinterpret_cast<const OutputBuffer *>(b);
}
} // namespace

extern "C" {

KILN_API void *kiln_buffer_data(const kiln_buffer *buffer) {
  return buffer ? unwrap(buffer)->data : nullptr;
}

KILN_API kiln_tensor kiln_buffer_tensor(const kiln_buffer *buffer) {
  if (!buffer)
    return kiln_tensor{};
  const OutputBuffer &b = *unwrap(buffer);
  return {b.name.c_str(), b.dtype, int32_t(b.shape.size()), b.shape.data(), b.data};
}

KILN_API void kiln_buffer_release(kiln_buffer *buffer) {
  delete reinterpret_cast<OutputBuffer *>(buffer);
}

} // extern "C"
