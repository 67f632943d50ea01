//===- Arrays.h - numpy arrays in and out of a session ----------*- C++ -*-===//
//
// Inputs are passed to the runtime in place when numpy already holds them as the entry
// declares them, and converted otherwise; outputs are handed over by the session or
// copied out of it, states are copied (why: SessionBindings.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PYTHON_SRC_ARRAYS_H
#define KILN_RUNTIME_PYTHON_SRC_ARRAYS_H

#include "kiln/runtime.hpp"

#include <pybind11/numpy.h>

#include <string>

namespace kiln::python {

namespace py = pybind11;

/// numpy's dtype for a Kiln dtype (f32 -> float32, i32 -> int32, i64 -> int64).
py::dtype numpyDType(kiln_dtype dtype);

/// `value` (an array, or anything numpy.asarray takes: a list, a scalar) as a
/// C-contiguous, aligned array of `want`'s dtype: the array itself when it already is
/// one, else a converted copy. Throws INVALID_ARGUMENT naming the entry and the input
/// when the values would change kind (float to integer, a string to anything: numpy's
/// 'same_kind' rule) or an integer does not fit the declared type.
py::array inputArray(const std::string &entry, const TensorInfo &want, py::handle value);

/// A numpy array that owns a copy of `view` (an output or a state of a session).
py::array copyOf(const OutputView &view);

/// A numpy array over the memory of a detached output, without a copy: writable, and its
/// base (a capsule) releases the buffer when the last array over it goes.
py::array arrayOwning(Buffer buffer);

} // namespace kiln::python

#endif // KILN_RUNTIME_PYTHON_SRC_ARRAYS_H
