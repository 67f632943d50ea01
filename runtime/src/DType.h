//===- DType.h - Element types and their names ------------------*- C++ -*-===//
//
// The element types a Kiln model uses, and their names in the manifest, in safetensors
// and in Halide.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DTYPE_H
#define KILN_RUNTIME_DTYPE_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

bool isValidDType(kiln_dtype dtype);
/// BF16, F16 and I8: the stored forms of weights, never an input, output or state.
bool isWeightOnlyDType(kiln_dtype dtype);
const char *safetensorsDTypeName(kiln_dtype dtype); // "F32"
// Element size of any dtype the safetensors format defines (0 if unknown), so offsets of
// tensors we do not use can still be validated.
size_t safetensorsDTypeSize(std::string_view name);
std::optional<kiln_dtype> parseSafetensorsDType(std::string_view name);

// Elements in shape[from:], INT64_MAX on overflow.
int64_t elementCount(const std::vector<int64_t> &shape, size_t from = 0);
// Where the last element of a strided layout lies: offset + sum((shape[k] - 1) *
// strides[k]), INT64_MAX on overflow. The shape must have no zero extent.
int64_t lastElement(int64_t offset, const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &strides);

// "[B, S, 64]" style rendering of shapes for messages.
std::string formatShape(const std::vector<int64_t> &shape);
std::string formatDims(const std::vector<std::string> &dims);

} // namespace kiln::rt

#endif // KILN_RUNTIME_DTYPE_H
