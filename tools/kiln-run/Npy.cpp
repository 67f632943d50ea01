//===- Npy.cpp - A small .npy codec ---------------------------------------===//
//
// Enough of the NumPy format for model inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "DriverError.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <type_traits>

namespace kiln::driver {

double HostTensor::at(int64_t i) const {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return reinterpret_cast<const float *>(bytes.data())[i];
  case KILN_DTYPE_I32:
    return reinterpret_cast<const int32_t *>(bytes.data())[i];
  case KILN_DTYPE_I64:
    return double(reinterpret_cast<const int64_t *>(bytes.data())[i]);
  case KILN_DTYPE_BF16: // weights only: never an input or an output
  case KILN_DTYPE_F16:
  case KILN_DTYPE_I8:
    break;
  }
  return 0;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &problem) {
  throw DriverError("'" + path + "': " + problem);
}

// The value of key 'name' in the header's Python dict literal, up to the next ',' or '}'
// outside parentheses.
std::string dictValue(const std::string &header, const std::string &key,
                      const std::string &path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    bad(path, "npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos)
    bad(path, "malformed npy header");
  size_t i = colon + 1, depth = 0;
  std::string value;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(')
      ++depth;
    if (c == ')' && depth)
      --depth;
    if (!depth && (c == ',' || c == '}'))
      break;
    value += c;
  }
  size_t b = value.find_first_not_of(" "), e = value.find_last_not_of(" ");
  return b == std::string::npos ? "" : value.substr(b, e - b + 1);
}

template <typename From, typename To>
void convert(const uint8_t *src, int64_t n, std::vector<uint8_t> &out,
             [[maybe_unused]] const std::string &path) {
  out.resize(size_t(n) * sizeof(To));
  To *dst = reinterpret_cast<To *>(out.data());
  for (int64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, src + i * sizeof(From), sizeof(From));
    if constexpr (std::is_integral_v<To> && std::is_integral_v<From> &&
                  sizeof(To) < sizeof(From)) {
      if (v < From(std::numeric_limits<To>::min()) ||
          v > From(std::numeric_limits<To>::max()))
        bad(path, "value " + std::to_string(v) + " at index " + std::to_string(i) +
                      " does not fit the input's dtype");
    }
    dst[i] = To(v);
  }
}

} // namespace

HostTensor readNpy(const std::string &path, kiln_dtype want) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    bad(path, std::string("cannot open: ") + std::strerror(errno));
  std::string file((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (file.size() < 10 || file.compare(0, 6, "\x93NUMPY") != 0)
    bad(path, "not a .npy file (no \\x93NUMPY magic)");
  int major = uint8_t(file[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(file[8]) | size_t(uint8_t(file[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12)
      bad(path, "truncated npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | uint8_t(file[8 + i]);
    headerStart = 12;
  } else {
    bad(path, "unsupported npy version " + std::to_string(major));
  }
  if (headerStart + headerLen > file.size())
    bad(path, "truncated npy header");
  std::string header = file.substr(headerStart, headerLen);
  std::string descr = dictValue(header, "descr", path);
  std::string fortran = dictValue(header, "fortran_order", path);
  std::string shapeText = dictValue(header, "shape", path);
  if (fortran != "False")
    bad(path, "Fortran-order arrays are not supported (save np.ascontiguousarray(a))");
  if (descr.size() != 5 || descr[0] != '\'' ||
      (descr[1] != '<' && descr[1] != '|' && descr[1] != '='))
    bad(path, "unsupported dtype " + descr + " (need little-endian f4, f8, i4 or i8)");
  std::string kind = descr.substr(2, 2);

  HostTensor t;
  t.dtype = want;
  std::string digits;
  for (char c : shapeText + ",") {
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' || c == ')') {
      if (!digits.empty()) {
        errno = 0;
        t.shape.push_back(std::strtoll(digits.c_str(), nullptr, 10));
        if (errno)
          bad(path, "shape " + shapeText + " is out of range");
      }
      digits.clear();
    }
  }
  size_t elementSize = kind[1] - '0';
  uint64_t bytes;
  if (!t.byteCount(elementSize, bytes))
    bad(path, "shape " + formatShape(t.shape) + " of " + kind +
                  " has more bytes than 2^64; the header is corrupt");
  size_t dataStart = headerStart + headerLen;
  if (file.size() - dataStart != bytes)
    bad(path, "holds " + std::to_string(file.size() - dataStart) + " data bytes, shape " +
                  formatShape(t.shape) + " of " + kind + " needs " +
                  std::to_string(bytes));
  const uint8_t *src = reinterpret_cast<const uint8_t *>(file.data() + dataStart);
  int64_t n = t.count();
  bool fileIsFloat = kind[0] == 'f';
  if (fileIsFloat && want != KILN_DTYPE_F32)
    bad(path, "holds floating-point " + kind + " values but the input is " +
                  kiln_dtype_name(want));
  // Floats only ever become f32 (checked above); integers become any input dtype.
  auto convertFrom = [&](auto sample) {
    using From = decltype(sample);
    if (std::is_floating_point_v<From> || want == KILN_DTYPE_F32)
      convert<From, float>(src, n, t.bytes, path);
    else if (want == KILN_DTYPE_I32)
      convert<From, int32_t>(src, n, t.bytes, path);
    else
      convert<From, int64_t>(src, n, t.bytes, path);
  };
  if (kind == "f4")
    convertFrom(float());
  else if (kind == "f8")
    convertFrom(double());
  else if (kind == "i4")
    convertFrom(int32_t());
  else if (kind == "i8")
    convertFrom(int64_t());
  else
    bad(path, "unsupported dtype " + descr + " (need f4, f8, i4 or i8)");
  return t;
}

void writeNpy(const std::string &path, const kiln_tensor &tensor) {
  const char *descr = tensor.dtype == KILN_DTYPE_F32   ? "<f4"
                      : tensor.dtype == KILN_DTYPE_I32 ? "<i4"
                                                       : "<i8";
  std::ostringstream shape;
  shape << "(";
  int64_t count = 1;
  for (int32_t d = 0; d < tensor.rank; ++d) {
    shape << tensor.shape[d]
          << (tensor.rank == 1      ? ","
              : d + 1 < tensor.rank ? ", "
                                    : "");
    count *= tensor.shape[d];
  }
  shape << ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape.str() + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw DriverError("cannot create '" + path + "': " + std::strerror(errno));
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {char(header.size() & 0xFF), char(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(static_cast<const char *>(tensor.data),
            std::streamsize(count * int64_t(kiln_dtype_size(tensor.dtype))));
  if (!out)
    throw DriverError("cannot write '" + path + "'");
}

} // namespace kiln::driver
