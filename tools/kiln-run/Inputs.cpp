//===- Inputs.cpp - Building the tensors a run takes ----------------------===//

#include "Inputs.h"

#include "DriverError.h"
#include "Npy.h"
#include "Random.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kiln::driver {

namespace {

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(uint8_t(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(uint8_t(c)) || c == '_'))
      return false;
  return true;
}

void appendValue(HostTensor &t, const std::string &text, size_t index) {
  auto fail = [&](const char *why) {
    throw DriverError("value " + std::to_string(index) + " '" + text + "' " + why);
  };
  char *end = nullptr;
  errno = 0;
  if (t.dtype == KILN_DTYPE_F32) {
    float v = std::strtof(text.c_str(), &end);
    if (text.empty() || *end)
      fail("is not a number");
    t.bytes.insert(t.bytes.end(), reinterpret_cast<uint8_t *>(&v),
                   reinterpret_cast<uint8_t *>(&v) + 4);
    return;
  }
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end)
    fail(
        ("is not an integer (the input is " + std::string(kiln_dtype_name(t.dtype)) + ")")
            .c_str());
  if (errno || (t.dtype == KILN_DTYPE_I32 && (v < INT32_MIN || v > INT32_MAX)))
    fail("is out of range");
  if (t.dtype == KILN_DTYPE_I32) {
    int32_t w = int32_t(v);
    t.bytes.insert(t.bytes.end(), reinterpret_cast<uint8_t *>(&w),
                   reinterpret_cast<uint8_t *>(&w) + 4);
  } else {
    int64_t w = v;
    t.bytes.insert(t.bytes.end(), reinterpret_cast<uint8_t *>(&w),
                   reinterpret_cast<uint8_t *>(&w) + 8);
  }
}

std::string dimsText(const kiln::TensorInfo &info) {
  std::string s = "[";
  for (size_t d = 0; d < info.dims.size(); ++d)
    s += (d ? ", " : "") + info.dims[d];
  return s + "]";
}

// Floats uniform in [-1, 1); integers uniform in [lo, hi] (inclusive, within the dtype).
HostTensor randomTensor(const kiln::TensorInfo &info, const std::vector<int64_t> &shape,
                        int64_t lo, int64_t hi, Random &rng) {
  HostTensor t;
  kiln_dtype dtype = t.dtype = info.dtype;
  t.shape = shape;
  // The runtime takes at most 2^31 - 1 elements a buffer; this also bounds the bytes.
  if (t.count() > INT32_MAX)
    throw DriverError("--random: input '" + info.name + "' " + dimsText(info) +
                      " has shape " + formatShape(shape) +
                      ", more than the 2^31 - 1 elements a Halide buffer holds");
  t.bytes.resize(size_t(t.count()) * kiln_dtype_size(dtype));
  for (int64_t i = 0; i < t.count(); ++i) {
    if (dtype == KILN_DTYPE_F32)
      reinterpret_cast<float *>(t.bytes.data())[i] = rng.uniform(-1.0f, 1.0f);
    else if (dtype == KILN_DTYPE_I32)
      reinterpret_cast<int32_t *>(t.bytes.data())[i] = int32_t(rng.inclusive(lo, hi));
    else
      reinterpret_cast<int64_t *>(t.bytes.data())[i] = rng.inclusive(lo, hi);
  }
  return t;
}

} // namespace

bool parseLiteral(const std::string &spec, kiln_dtype dtype, HostTensor &out) {
  size_t colon = spec.find(':');
  if (colon == std::string::npos)
    return false;
  std::string shapeText = spec.substr(0, colon);
  for (char c : shapeText)
    if (!(std::isdigit(uint8_t(c)) || c == 'x'))
      return false;
  out = HostTensor();
  out.dtype = dtype;
  size_t start = 0;
  while (start < shapeText.size()) {
    size_t x = shapeText.find('x', start);
    std::string d = shapeText.substr(start, x == std::string::npos ? x : x - start);
    if (d.empty())
      throw DriverError("bad shape '" + shapeText + "' (write it like 2x3)");
    errno = 0;
    long long size = std::strtoll(d.c_str(), nullptr, 10);
    if (errno)
      throw DriverError("bad shape '" + shapeText + "' (size out of range)");
    out.shape.push_back(size);
    if (x == std::string::npos)
      break;
    start = x + 1;
    if (start == shapeText.size())
      throw DriverError("bad shape '" + shapeText + "' (write it like 2x3)");
  }
  std::string values = spec.substr(colon + 1);
  size_t index = 0;
  if (!values.empty()) {
    size_t pos = 0;
    while (true) {
      size_t comma = values.find(',', pos);
      appendValue(out,
                  values.substr(pos, comma == std::string::npos ? comma : comma - pos),
                  index++);
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
    }
  }
  if (int64_t(index) != out.count())
    throw DriverError("shape " + formatShape(out.shape) + " needs " +
                      std::to_string(out.count()) + " values, got " +
                      std::to_string(index));
  return true;
}

std::vector<HostTensor> buildInputs(const kiln::Model &model, const std::string &entry,
                                    const Options &options) {
  std::vector<kiln::TensorInfo> infos = model.inputs(entry);
  std::vector<HostTensor> tensors(infos.size());
  std::vector<bool> given(infos.size(), false);

  for (const auto &[name, spec] : options.inputs) {
    size_t k = 0;
    while (k < infos.size() && infos[k].name != name)
      ++k;
    if (k == infos.size()) {
      std::string names;
      for (const auto &info : infos)
        names += (names.empty() ? "'" : ", '") + info.name + "'";
      throw DriverError("--input " + name + ": entry '" + entry + "' has no input '" +
                        name + "'; its inputs are " + (names.empty() ? "none" : names));
    }
    if (given[k])
      throw DriverError("--input " + name + " is given twice");
    try {
      if (!parseLiteral(spec, infos[k].dtype, tensors[k]))
        tensors[k] = readNpy(spec, infos[k].dtype);
    } catch (const DriverError &e) {
      throw DriverError("--input " + name + ": " + e.what());
    }
    given[k] = true;
  }

  // Dimension values: --dim first, then whatever the given inputs bind.
  std::map<std::string, int64_t> dims(options.dims.begin(), options.dims.end());
  for (size_t k = 0; k < infos.size(); ++k)
    if (given[k] && tensors[k].shape.size() == infos[k].dims.size())
      for (size_t d = 0; d < infos[k].dims.size(); ++d)
        if (isIdentifier(infos[k].dims[d]))
          dims.emplace(infos[k].dims[d], tensors[k].shape[d]);

  std::vector<const char *> names;
  std::vector<int64_t> values;
  for (const auto &[name, value] : dims) {
    names.push_back(name.c_str());
    values.push_back(value);
  }
  size_t entryIndex = 0;
  kiln::check(kiln_model_find_entry(model.get(), entry.c_str(), &entryIndex));
  Random rng(options.seed);
  for (size_t k = 0; k < infos.size(); ++k) {
    if (given[k])
      continue;
    const kiln::TensorInfo &info = infos[k];
    if (!options.random)
      throw DriverError("no value for input '" + info.name + "' " + dimsText(info) +
                        " (pass --input " + info.name + "=SPEC, or --random)");
    std::vector<int64_t> shape(info.dims.size());
    kiln_status *status =
        kiln_model_input_shape(model.get(), entryIndex, k, names.data(), values.data(),
                               names.size(), shape.data());
    if (kiln_status_get_code(status) == KILN_STATUS_NOT_FOUND) {
      kiln_status_free(status);
      std::string missing;
      for (const std::string &d : info.dims)
        if (isIdentifier(d) && !dims.count(d))
          missing += (missing.empty() ? "--dim " : ", --dim ") + d + "=N";
      throw DriverError("--random: input '" + info.name + "' has shape " +
                        dimsText(info) + "; give " +
                        (missing.empty() ? "its dimensions with --dim" : missing));
    }
    kiln::check(status);
    // Integers within the input's declared bounds, else in [0, 10).
    int64_t lo = 0, hi = 9;
    if (info.hasBounds && info.dtype != KILN_DTYPE_F32) {
      std::string bounds = "[" + info.boundsMin + ", " + info.boundsMax + "]";
      status = kiln_model_input_bounds(model.get(), entryIndex, k, names.data(),
                                       values.data(), names.size(), &lo, &hi);
      if (kiln_status_get_code(status) == KILN_STATUS_NOT_FOUND) {
        std::string message = kiln_status_get_message(status);
        kiln_status_free(status);
        throw DriverError("--random: " + message + " (give it with --dim NAME=N)");
      }
      kiln::check(status);
      std::string evaluated = "[";
      evaluated += std::to_string(lo) + ", " + std::to_string(hi) + "]";
      if (info.dtype == KILN_DTYPE_I32) {
        lo = std::max<int64_t>(lo, INT32_MIN);
        hi = std::min<int64_t>(hi, INT32_MAX);
      }
      if (lo > hi && kiln::elementCount(shape) > 0)
        throw DriverError("--random: input '" + info.name + "' has bounds " + bounds +
                          " = " + evaluated + ", which no " +
                          kiln_dtype_name(info.dtype) + " value satisfies");
    }
    tensors[k] = randomTensor(info, shape, lo, hi, rng);
  }
  return tensors;
}

} // namespace kiln::driver
