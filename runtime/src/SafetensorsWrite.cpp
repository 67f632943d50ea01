// SafetensorsWrite.cpp - kiln_safetensors_write: tests and tools make weight files with
// it.
#include "AtomicWrite.h"
#include "DType.h"
#include "Error.h"
#include "Json.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace kiln::rt {
namespace {

uint64_t tensorBytes(const kiln_tensor &t, size_t index) {
  uint64_t count = 1;
  for (int32_t d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensors[", index, "] ('", t.name,
           "'): negative size ", t.shape[d], " in dim ", d);
    if (__builtin_mul_overflow(count, uint64_t(t.shape[d]), &count))
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensors[", index, "] ('", t.name,
           "'): too large");
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(count, uint64_t(kiln_dtype_size(t.dtype)), &bytes))
    fail(KILN_STATUS_INVALID_ARGUMENT, "tensors[", index, "] ('", t.name,
         "'): too large");
  return bytes;
}

void checkTensors(const kiln_tensor *tensors, size_t n) {
  if (n > 0 && !tensors)
    fail(KILN_STATUS_INVALID_ARGUMENT, "tensors is NULL");
  std::set<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    const kiln_tensor &t = tensors[i];
    if (!t.name || !*t.name)
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensors[", i, "] has no name");
    if (std::string_view(t.name) == "__metadata__")
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensors[", i, "]: '__metadata__' is reserved");
    if (!names.insert(t.name).second)
      fail(KILN_STATUS_INVALID_ARGUMENT, "duplicate tensor name '", t.name, "'");
    if (!isValidDType(t.dtype))
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensor '", t.name, "' has invalid dtype ",
           int(t.dtype));
    if (t.rank < 0 || (t.rank > 0 && !t.shape))
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensor '", t.name, "' has a bad rank/shape");
    if (tensorBytes(t, i) > 0 && !t.data)
      fail(KILN_STATUS_INVALID_ARGUMENT, "tensor '", t.name, "' has no data");
  }
}

void writeSafetensors(const std::string &path, const kiln_tensor *tensors, size_t n) {
  checkTensors(tensors, n);
  // Widest dtypes first keeps every tensor naturally aligned in a hole-free data section.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return kiln_dtype_size(tensors[a].dtype) > kiln_dtype_size(tensors[b].dtype);
  });

  std::string header = "{";
  uint64_t offset = 0;
  for (size_t k = 0; k < n; ++k) {
    const kiln_tensor &t = tensors[order[k]];
    uint64_t bytes = tensorBytes(t, order[k]);
    std::vector<int64_t> shape(t.shape, t.shape + t.rank);
    header += cat(k ? "," : "", quoteJson(t.name), ":{\"dtype\":\"",
                  safetensorsDTypeName(t.dtype), "\",\"shape\":[",
                  join(
                      shape, [](int64_t d) { return std::to_string(d); }, ","),
                  "],\"data_offsets\":[", offset, ",", offset + bytes, "]}");
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' '); // data starts 8-byte aligned

  uint8_t len[8];
  for (int i = 0; i < 8; ++i)
    len[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  std::vector<ByteRun> runs = {{len, 8}, {header.data(), header.size()}};
  for (size_t k = 0; k < n; ++k)
    runs.push_back(
        {tensors[order[k]].data, size_t(tensorBytes(tensors[order[k]], order[k]))});
  writeFileAtomically(path, runs);
}

} // namespace
} // namespace kiln::rt

extern "C" KILN_API kiln_status *kiln_safetensors_write(const char *path,
                                                        const kiln_tensor *tensors,
                                                        size_t tensor_count) {
  return kiln::rt::guard([&] {
    if (!path || !*path)
      kiln::rt::fail(KILN_STATUS_INVALID_ARGUMENT,
                     "kiln_safetensors_write: path is empty");
    kiln::rt::writeSafetensors(path, tensors, tensor_count);
  });
}
