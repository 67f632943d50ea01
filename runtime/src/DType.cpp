// DType.cpp - dtype names and sizes.
#include "DType.hpp"

#include "Error.hpp"

namespace kiln::rt {

bool isValidDType(kiln_dtype dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_I32 || dtype == KILN_DTYPE_I64;
}

std::optional<kiln_dtype> parseManifestDType(std::string_view name) {
  if (name == "f32")
    return KILN_DTYPE_F32;
  if (name == "i32")
    return KILN_DTYPE_I32;
  if (name == "i64")
    return KILN_DTYPE_I64;
  return std::nullopt;
}

const char *safetensorsDTypeName(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return "F32";
  case KILN_DTYPE_I32:
    return "I32";
  case KILN_DTYPE_I64:
    return "I64";
  }
  return "?";
}

size_t safetensorsDTypeSize(std::string_view name) {
  struct Entry {
    std::string_view name;
    size_t size;
  };
  static constexpr Entry table[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"F64", 8}, {"I64", 8},     {"U64", 8}};
  for (const Entry &e : table)
    if (e.name == name)
      return e.size;
  return 0;
}

std::optional<kiln_dtype> parseSafetensorsDType(std::string_view name) {
  if (name == "F32")
    return KILN_DTYPE_F32;
  if (name == "I32")
    return KILN_DTYPE_I32;
  if (name == "I64")
    return KILN_DTYPE_I64;
  return std::nullopt;
}

int64_t elementCount(const std::vector<int64_t> &shape, size_t from) {
  int64_t n = 1;
  for (size_t d = from; d < shape.size(); ++d)
    if (__builtin_mul_overflow(n, shape[d], &n))
      return INT64_MAX;
  return n;
}

int64_t lastElement(int64_t offset, const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &strides) {
  int64_t last = offset;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t step;
    if (__builtin_mul_overflow(shape[k] - 1, strides[k], &step) ||
        __builtin_add_overflow(last, step, &last))
      return INT64_MAX;
  }
  return last;
}

// Appending (not "[" + s) sidesteps a GCC 12 -Wrestrict false positive.
std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  out += join(shape, [](int64_t d) { return std::to_string(d); });
  return out += "]";
}

std::string formatDims(const std::vector<std::string> &dims) {
  std::string out = "[";
  out += join(dims, [](const std::string &d) { return d; });
  return out += "]";
}

} // namespace kiln::rt

extern "C" {

KILN_API const char *kiln_dtype_name(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return "f32";
  case KILN_DTYPE_I32:
    return "i32";
  case KILN_DTYPE_I64:
    return "i64";
  }
  return "?";
}

KILN_API size_t kiln_dtype_size(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return 4;
  case KILN_DTYPE_I32:
    return 4;
  case KILN_DTYPE_I64:
    return 8;
  }
  return 0;
}

} // extern "C"
