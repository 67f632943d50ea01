//===- Arrays.cpp - numpy arrays in and out of a session ------------------===//

#include "Arrays.h"

#include <cstring>
#include <vector>

namespace kiln::python {

py::dtype numpyDType(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return py::dtype::of<float>();
  case KILN_DTYPE_I32:
    return py::dtype::of<int32_t>();
  case KILN_DTYPE_I64:
    return py::dtype::of<int64_t>();
  case KILN_DTYPE_F16:
    return py::dtype("float16");
  case KILN_DTYPE_I8:
    return py::dtype::of<int8_t>();
  case KILN_DTYPE_BF16:
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "numpy has no bfloat16 dtype");
  }
  throw Error(KILN_STATUS_INTERNAL,
              "no numpy dtype for kiln dtype " + std::to_string(int(dtype)));
}

py::array inputArray(const std::string &entry, const TensorInfo &want, py::handle value) {
  py::module_ np = py::module_::import("numpy");
  py::array array = np.attr("asarray")(value);
  py::dtype target = numpyDType(want.dtype);
  std::string who = "entry '" + entry + "': input '" + want.name + "'";
  std::string got = py::str(array.dtype());
  if (!np.attr("can_cast")(array.dtype(), target, "same_kind").cast<bool>())
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                who + " has dtype " + got + ", expected " + kiln_dtype_name(want.dtype) +
                    ": " + got + " does not convert to " + std::string(py::str(target)) +
                    " without changing kind (numpy's 'same_kind' rule)");
  // Narrowing integers (int64 token ids, numpy's default, into an i32 input) must not
  // wrap around: a wrapped id could pass the runtime's bounds check.
  if (want.dtype != KILN_DTYPE_F32 && array.size() > 0 &&
      !np.attr("can_cast")(array.dtype(), target, "safe").cast<bool>()) {
    py::object limits = np.attr("iinfo")(target);
    py::object lo = limits.attr("min"), hi = limits.attr("max");
    for (const char *end : {"min", "max"}) {
      py::object v = array.attr(end)();
      if (v < lo || v > hi)
        throw Error(KILN_STATUS_INVALID_ARGUMENT,
                    who + " holds " + std::string(py::str(v)) + ", which does not fit " +
                        kiln_dtype_name(want.dtype));
    }
  }
  return np.attr("require")(array, target, py::make_tuple("C", "A"));
}

py::array copyOf(const OutputView &view) {
  py::array out(numpyDType(view.dtype),
                std::vector<py::ssize_t>(view.shape.begin(), view.shape.end()));
  if (out.nbytes() > 0)
    std::memcpy(out.mutable_data(), view.data, size_t(out.nbytes()));
  return out;
}

py::array arrayOwning(Buffer buffer) {
  OutputView view = buffer.view();
  py::capsule owner(buffer.get(),
                    [](void *b) { kiln_buffer_release(static_cast<kiln_buffer *>(b)); });
  void *data = buffer.data();
  buffer.release(); // the capsule's now
  return py::array(numpyDType(view.dtype),
                   std::vector<py::ssize_t>(view.shape.begin(), view.shape.end()), data,
                   owner);
}

} // namespace kiln::python
