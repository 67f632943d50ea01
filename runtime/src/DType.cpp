// DType.cpp - dtype names and sizes.
#include "DType.h"

#include "Error.h"
#include "kiln/abi/Manifest.h"

namespace kiln::rt {

namespace {
/// What the runtime knows of each dtype beside its manifest name (kiln/abi/Manifest.h).
struct DTypeInfo {
  kiln_dtype dtype;
  const char *safetensorsName;
  size_t size;
  bool weightOnly;
};
constexpr DTypeInfo kDTypes[] = {
    {KILN_DTYPE_F32, "F32", 4, false}, {KILN_DTYPE_I32, "I32", 4, false},
    {KILN_DTYPE_I64, "I64", 8, false}, {KILN_DTYPE_BF16, "BF16", 2, true},
    {KILN_DTYPE_F16, "F16", 2, true},  {KILN_DTYPE_I8, "I8", 1, true}};

const DTypeInfo *dtypeInfo(kiln_dtype dtype) {
  for (const DTypeInfo &d : kDTypes)
    if (d.dtype == dtype)
      return &d;
  return nullptr;
}
} // namespace

bool isValidDType(kiln_dtype dtype) { return dtypeInfo(dtype) != nullptr; }

bool isWeightOnlyDType(kiln_dtype dtype) {
  const DTypeInfo *d = dtypeInfo(dtype);
  return d && d->weightOnly;
}

const char *safetensorsDTypeName(kiln_dtype dtype) {
  const DTypeInfo *d = dtypeInfo(dtype);
  return d ? d->safetensorsName : "?";
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
  for (const DTypeInfo &d : kDTypes)
    if (name == d.safetensorsName)
      return d.dtype;
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
  const char *name = kiln::abi::dtypeName(dtype);
  return name ? name : "?";
}

KILN_API size_t kiln_dtype_size(kiln_dtype dtype) {
  const kiln::rt::DTypeInfo *d = kiln::rt::dtypeInfo(dtype);
  return d ? d->size : 0;
}

} // extern "C"
