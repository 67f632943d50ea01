// Safetensors.cpp - structural validation of a safetensors file; whether its tensors fit
// a model is Weights.cpp's business.
#include "Safetensors.h"

#include "DType.h"
#include "Error.h"
#include "Json.h"

#include <algorithm>
#include <optional>

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

/// Where `text` first breaks UTF-8 as Rust's from_utf8 (which Hugging Face's loader
/// applies to the header) reads it: no overlong forms, no surrogates, nothing past
/// U+10FFFF. Nothing when it is valid.
std::optional<size_t> firstInvalidUtf8(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  for (size_t i = 0; i < text.size();) {
    unsigned char c = byte(i);
    size_t length = c < 0x80                 ? 1
                    : c >= 0xC2 && c <= 0xDF ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    if (length == 0 || i + length > text.size())
      return i;
    // The second byte's range excludes overlong forms, surrogates and > U+10FFFF.
    unsigned char low = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char high = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (length > 1 && (byte(i + 1) < low || byte(i + 1) > high))
      return i;
    for (size_t k = 2; k < length; ++k)
      if ((byte(i + k) & 0xC0) != 0x80)
        return i;
    i += length;
  }
  return std::nullopt;
}

/// `text` with bytes outside printable ASCII written as \xNN, for messages.
std::string printable(std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xF];
    }
  }
  return out;
}

std::string range(const SafetensorsTensor &t) {
  return cat("'", t.name, "' (data_offsets [", t.begin, ", ", t.end, "])");
}

/// Hugging Face's rule: the tensors tile the data section exactly, so no byte belongs to
/// two tensors, to none, or trails the last one.
void checkTiling(const std::string &path, std::vector<const SafetensorsTensor *> tensors,
                 uint64_t dataSize) {
  std::sort(tensors.begin(), tensors.end(), [](const auto *a, const auto *b) {
    return std::make_pair(a->begin, a->end) < std::make_pair(b->begin, b->end);
  });
  uint64_t covered = 0;
  const SafetensorsTensor *previous = nullptr;
  for (const SafetensorsTensor *t : tensors) {
    if (t->begin < covered)
      corrupt(path, cat("tensor ", range(*t), " overlaps tensor ", range(*previous)));
    if (t->begin > covered)
      corrupt(path, cat("bytes [", covered, ", ", t->begin,
                        ") of the data section belong to no tensor (a hole ",
                        previous ? cat("between ", range(*previous), " and ")
                                 : std::string("before "),
                        range(*t), ")"));
    covered = t->end;
    previous = t;
  }
  if (covered != dataSize)
    corrupt(path, cat(dataSize - covered, " trailing bytes after the last tensor",
                      previous ? cat(" ", range(*previous)) : std::string(),
                      ": the data section has ", dataSize, " bytes, the tensors cover ",
                      covered));
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
    if (auto bad = firstInvalidUtf8(name))
      corrupt(path, cat("tensor name \"", printable(name), "\" is not valid UTF-8 (byte ",
                        *bad, " of the name)"));
    if (name == "__metadata__")
      continue; // free-form strings; nothing in it concerns us
    tensors_.push_back(parseTensor(path, name, desc, dataSize));
  }
  // Names passed above; this catches the rest, such as __metadata__'s strings.
  if (auto bad = firstInvalidUtf8(header))
    corrupt(path, cat("the header is not valid UTF-8 (byte ", 8 + *bad, " of the file)"));
  std::vector<const SafetensorsTensor *> byOffset;
  for (const SafetensorsTensor &t : tensors_)
    byOffset.push_back(&t);
  checkTiling(path, std::move(byOffset), dataSize);
}

} // namespace kiln::rt
