// Safetensors.cpp - structural validation of a safetensors file; whether its tensors fit
// a model is Weights.cpp's business.
#include "Safetensors.h"

#include "DType.h"
#include "Error.h"
#include "Json.h"

namespace kiln::rt {

namespace {

// Same bound as the reference implementation: a larger header is corrupt or hostile.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

[[noreturn]] void corrupt(const std::string &path, const std::string &problem) {
  fail(KILN_STATUS_INVALID_WEIGHTS, "weights file '", path,
       "' is not a valid safetensors file: ", problem);
}

SafetensorsTensor parseTensor(const std::string &path, const std::string &name,
                              const Json &desc, uint64_t dataSize) {
  auto bad = [&](const std::string &problem) {
    corrupt(path, cat("tensor '", name, "': ", problem));
  };
  if (!desc.isObject())
    bad(cat("expected an object, got ", Json::kindName(desc.kind())));
  SafetensorsTensor t;
  t.name = name;
  const Json *dtype = desc.find("dtype");
  const Json *shape = desc.find("shape");
  const Json *offsets = desc.find("data_offsets");
  if (!dtype || !dtype->isString())
    bad("missing string \"dtype\"");
  if (!shape || !shape->isArray())
    bad("missing array \"shape\"");
  if (!offsets || !offsets->isArray() || offsets->items().size() != 2 ||
      !offsets->items()[0].isInteger() || !offsets->items()[1].isInteger())
    bad("\"data_offsets\" must be [begin, end]");
  t.dtype = dtype->asString();
  size_t elementSize = safetensorsDTypeSize(t.dtype);
  if (elementSize == 0)
    bad(cat("unknown dtype \"", t.dtype, "\""));
  uint64_t count = 1;
  for (const Json &d : shape->items()) {
    if (!d.isInteger() || d.asInt() < 0)
      bad("shape items must be non-negative integers");
    t.shape.push_back(d.asInt());
    if (__builtin_mul_overflow(count, uint64_t(d.asInt()), &count))
      bad("shape is too large");
  }
  int64_t begin = offsets->items()[0].asInt(), end = offsets->items()[1].asInt();
  if (begin < 0 || end < begin)
    bad(cat("data_offsets [", begin, ", ", end, "] are not an increasing range"));
  t.begin = uint64_t(begin);
  t.end = uint64_t(end);
  if (t.end > dataSize)
    bad(cat("data_offsets [", begin, ", ", end, "] exceed the data section (", dataSize,
            " bytes) - is the file truncated?"));
  uint64_t bytes;
  if (__builtin_mul_overflow(count, uint64_t(elementSize), &bytes) ||
      bytes != t.end - t.begin)
    bad(cat("data_offsets [", begin, ", ", end, "] hold ", t.end - t.begin, " bytes but ",
            t.dtype, " ", formatShape(t.shape), " needs ", count, " x ", elementSize,
            " bytes"));
  return t;
}

} // namespace

SafetensorsFile::SafetensorsFile(const std::string &path) : file_(path, "weights file") {
  const uint64_t size = file_.size();
  if (size < 8)
    corrupt(path, cat("the file is ", size,
                      " bytes; it must start with an 8-byte header length"));
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i) // little-endian regardless of host
    headerLen = (headerLen << 8) | file_.data()[i];
  if (headerLen > size - 8)
    corrupt(path, cat("header length ", headerLen, " exceeds the ", size - 8,
                      " bytes after the length field (truncated, or not safetensors)"));
  if (headerLen > kMaxHeaderBytes)
    corrupt(path, cat("header length ", headerLen, " is over the 100 MiB limit"));
  if (headerLen < 2 || file_.data()[8] != '{')
    corrupt(path, "the header is not a JSON object");
  std::string_view header(reinterpret_cast<const char *>(file_.data() + 8), headerLen);
  std::string error;
  auto root = parseJson(header, error);
  if (!root)
    corrupt(path, cat("the header is not valid JSON (", error, ")"));
  if (!root->isObject())
    corrupt(path, "the header is not a JSON object");

  dataStart_ = file_.data() + 8 + headerLen;
  const uint64_t dataSize = size - 8 - headerLen;
  for (const auto &[name, desc] : root->members()) {
    if (name == "__metadata__")
      continue; // free-form strings; nothing in it concerns us
    tensors_.push_back(parseTensor(path, name, desc, dataSize));
  }
}

} // namespace kiln::rt
