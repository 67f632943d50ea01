// Inputs.cpp - validation of a run's inputs, with messages that show expected vs got.
#include "Inputs.h"

#include "DType.h"
#include "Error.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kiln::rt {

namespace {

std::vector<int64_t> shapeOf(const kiln_tensor &t) {
  return std::vector<int64_t>(t.shape, t.shape + t.rank);
}

std::string inputNames(const EntryDesc &e) {
  return join(e.inputs, [](const TensorDesc &t) { return "'" + t.name + "'"; });
}

/// Whether the caller's dtype is one of kiln_dtype's values. It is read as the integer it
/// is: loading any other value as a kiln_dtype is undefined behaviour.
bool hasValidDType(const kiln_tensor &t, int &raw) {
  static_assert(sizeof(raw) == sizeof(t.dtype));
  std::memcpy(&raw, &t.dtype, sizeof raw);
  for (kiln_dtype d : {KILN_DTYPE_F32, KILN_DTYPE_I32, KILN_DTYPE_I64})
    if (raw == int(d))
      return true;
  return false;
}

void checkInput(const EntryDesc &e, const TensorDesc &want, const kiln_tensor &got) {
  std::string who = cat("entry '", e.name, "': input '", want.name, "'");
  int rawDType;
  if (!hasValidDType(got, rawDType))
    fail(KILN_STATUS_INVALID_ARGUMENT, who, " has invalid dtype value ", rawDType);
  if (got.dtype != want.dtype)
    fail(KILN_STATUS_INVALID_ARGUMENT, who, " has dtype ", kiln_dtype_name(got.dtype),
         ", expected ", kiln_dtype_name(want.dtype));
  if (got.rank < 0 || (got.rank > 0 && !got.shape))
    fail(KILN_STATUS_INVALID_ARGUMENT, who, " has rank ", got.rank, " and ",
         got.shape ? "a shape" : "no shape array");
  if (size_t(got.rank) != want.dims.size())
    fail(KILN_STATUS_INVALID_ARGUMENT, who, " has rank ", got.rank, ", expected ",
         want.dims.size(), " ", want.describe());
  int64_t count = 1; // signed: the bounds check counts elements in int64_t
  for (int32_t d = 0; d < got.rank; ++d) {
    if (got.shape[d] < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, who, " has negative size ", got.shape[d],
           " in dim ", d);
    if (__builtin_mul_overflow(count, got.shape[d], &count))
      fail(KILN_STATUS_INVALID_ARGUMENT, who, " has an impossibly large shape ",
           formatShape(shapeOf(got)));
  }
  if (count > 0 && !got.data)
    fail(KILN_STATUS_INVALID_ARGUMENT, who, " has shape ", formatShape(shapeOf(got)),
         " but its data is NULL");
}

// Index of the first of `count` T values at `bytes` outside [lo, hi], or -1.
template <typename T>
int64_t firstOutside(const void *bytes, int64_t count, int64_t lo, int64_t hi) {
  using U = std::make_unsigned_t<T>;
  using Limits = std::numeric_limits<T>;
  if (count == 0)
    return -1;
  // An empty range, or one no T value reaches, rejects the first element.
  if (lo > hi || lo > int64_t(Limits::max()) || hi < int64_t(Limits::min()))
    return 0;
  // v is in [lo, hi] exactly when (v - lo) mod 2^bits <= hi - lo: one unsigned compare
  // per element, with no branch, so the scan vectorizes. It runs over blocks and only
  // looks for the culprit in a block that has one.
  const U low = U(T(std::max(lo, int64_t(Limits::min()))));
  const U span = U(U(T(std::min(hi, int64_t(Limits::max())))) - low);
  const auto *data = static_cast<const unsigned char *>(bytes);
  auto outside = [&](int64_t i) {
    U v;
    std::memcpy(&v, data + i * int64_t(sizeof(T)), sizeof(T)); // no alignment assumed
    return U(v - low) > span;
  };
  constexpr int64_t kBlock = 4096;
  for (int64_t start = 0; start < count; start += kBlock) {
    int64_t end = std::min(count, start + kBlock);
    unsigned any = 0;
    for (int64_t i = start; i < end; ++i)
      any |= unsigned(outside(i));
    if (any)
      for (int64_t i = start; i < end; ++i)
        if (outside(i))
          return i;
  }
  return -1;
}

int64_t valueAt(const kiln_tensor &t, int64_t i) {
  if (t.dtype == KILN_DTYPE_I32) {
    int32_t v;
    std::memcpy(&v, static_cast<const unsigned char *>(t.data) + 4 * i, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, static_cast<const unsigned char *>(t.data) + 8 * i, 8);
  return v;
}

} // namespace

std::vector<const kiln_tensor *> matchInputs(const EntryDesc &e,
                                             const kiln_tensor *inputs, size_t count) {
  if (count > 0 && !inputs)
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': inputs is NULL but ", count,
         " inputs were passed");
  std::vector<const kiln_tensor *> byInput(e.inputs.size(), nullptr);
  for (size_t i = 0; i < count; ++i) {
    const char *name = inputs[i].name;
    if (!name)
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': inputs[", i,
           "] has no name");
    size_t k = 0;
    while (k < e.inputs.size() && e.inputs[k].name != name)
      ++k;
    if (k == e.inputs.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e.name, "' has no input '", name,
           "'; its inputs are ", e.inputs.empty() ? "none" : inputNames(e));
    if (byInput[k])
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': input '", name,
           "' is given more than once");
    byInput[k] = &inputs[i];
  }
  std::vector<std::string> missing;
  for (size_t k = 0; k < e.inputs.size(); ++k)
    if (!byInput[k])
      missing.push_back("'" + e.inputs[k].name + "'");
  if (!missing.empty())
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': missing input",
         missing.size() > 1 ? "s " : " ",
         join(missing, [](const std::string &s) { return s; }), " (it takes ",
         inputNames(e), ")");
  for (size_t k = 0; k < e.inputs.size(); ++k)
    checkInput(e, e.inputs[k], *byInput[k]);
  return byInput;
}

void bindInputDims(const EntryDesc &e, const std::vector<const kiln_tensor *> &inputs,
                   std::vector<int64_t> &values) {
  values.assign(e.dimNames.size(), -1);
  std::vector<std::pair<size_t, size_t>> boundBy(e.dimNames.size()); // (input, dim)
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorDesc &want = e.inputs[i];
    for (size_t d = 0; d < want.dims.size(); ++d) {
      int slot = want.bindSlot[d];
      if (slot < 0)
        continue;
      int64_t size = inputs[i]->shape[d];
      if (values[slot] < 0) {
        values[slot] = size;
        boundBy[slot] = {i, d};
      } else if (values[slot] != size) {
        auto [j, jd] = boundBy[slot];
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': dimension '",
             e.dimNames[slot], "' is ", values[slot], " in input '", e.inputs[j].name,
             "' (dim ", jd, " of ", formatShape(shapeOf(*inputs[j])), ") but ", size,
             " in input '", want.name, "' (dim ", d, " of ",
             formatShape(shapeOf(*inputs[i])), ")");
      }
    }
  }
}

void bindValueDims(const EntryDesc &e, const std::vector<const kiln_tensor *> &inputs,
                   std::vector<int64_t> &values) {
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorDesc &want = e.inputs[i];
    if (want.valueDimSlot < 0)
      continue;
    int64_t value = valueAt(*inputs[i], 0);
    if (value < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': input '", want.name,
           "' is ", value, ", but its value is dimension '", want.valueDim,
           "', which cannot be negative");
    values[want.valueDimSlot] = value;
  }
}

int inputBinding(const EntryDesc &e, int slot) {
  for (size_t i = 0; i < e.inputs.size(); ++i)
    for (int s : e.inputs[i].bindSlot)
      if (s == slot)
        return int(i);
  return -1;
}

void checkInputDims(const EntryDesc &e, const std::vector<const kiln_tensor *> &inputs,
                    const std::vector<int64_t> &values) {
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    const TensorDesc &want = e.inputs[i];
    for (size_t d = 0; d < want.dims.size(); ++d) {
      if (want.bindSlot[d] >= 0)
        continue;
      int64_t expected;
      std::string error;
      if (!want.dims[d].evaluate(values.data(), expected, error))
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': input '", want.name,
             "' dim ", d, ": ", error, " (with ", formatBindings(e, values), ")");
      if (inputs[i]->shape[d] != expected) {
        std::string expectation = want.dims[d].isConstant()
                                      ? std::to_string(expected)
                                      : cat(want.dimTexts[d], " = ", expected, " with ",
                                            formatBindings(e, values));
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': input '", want.name,
             "' has shape ", formatShape(shapeOf(*inputs[i])), ", expected ",
             want.describe(), ": dim ", d, " is ", inputs[i]->shape[d], ", expected ",
             expectation);
      }
    }
  }
}

void checkBounds(const EntryDesc &e, const std::vector<const kiln_tensor *> &inputs,
                 const std::vector<int64_t> &values, BoundsOf which) {
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const TensorDesc &want = e.inputs[k];
    if (!want.bounds)
      continue;
    bool isValueDim = want.valueDimSlot >= 0;
    if ((which == BoundsOf::ValueDimInputs && !isValueDim) ||
        (which == BoundsOf::OtherInputs && isValueDim))
      continue;
    const kiln_tensor &got = *inputs[k];
    int64_t lo, hi;
    std::string error;
    if (!want.bounds->min.evaluate(values.data(), lo, error) ||
        !want.bounds->max.evaluate(values.data(), hi, error))
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': bounds of input '",
           want.name, "': ", error, " (with ", formatBindings(e, values), ")");
    int64_t count = 1;
    for (int32_t d = 0; d < got.rank; ++d)
      count *= got.shape[d]; // cannot overflow: checkInput bounded the product
    int64_t bad = got.dtype == KILN_DTYPE_I32
                      ? firstOutside<int32_t>(got.data, count, lo, hi)
                      : firstOutside<int64_t>(got.data, count, lo, hi);
    if (bad < 0)
      continue;
    // The offending element's index, row-major.
    std::vector<int64_t> index(size_t(got.rank));
    for (int64_t d = got.rank - 1, rest = bad; d >= 0; --d) {
      index[size_t(d)] = rest % got.shape[d];
      rest /= got.shape[d];
    }
    const std::string &loText = want.bounds->min.text();
    const std::string &hiText = want.bounds->max.text();
    std::string range = cat("[", loText, ", ", hiText, "]");
    if (loText != std::to_string(lo) || hiText != std::to_string(hi))
      range += cat(" = [", lo, ", ", hi, "]");
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': input '", want.name, "' ",
         got.rank > 0 ? "element " + formatShape(index) + " " : std::string(), "is ",
         valueAt(got, bad), ", outside its bounds ", range);
  }
}

std::string formatBindings(const EntryDesc &e, const std::vector<int64_t> &values) {
  std::string out;
  for (size_t s = 0; s < e.dimNames.size() && s < values.size(); ++s)
    if (values[s] >= 0) // not yet bound otherwise
      out += cat(out.empty() ? "" : ", ", e.dimNames[s], "=", values[s]);
  return out;
}

} // namespace kiln::rt
