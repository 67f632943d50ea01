//===- Bindings.h - The pieces of the _kiln Python module -------*- C++ -*-===//
//
// Each bind* function adds one group of classes to the module; Module.cpp calls them in
// dependency order (errors first: every other binding throws through them).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PYTHON_SRC_BINDINGS_H
#define KILN_RUNTIME_PYTHON_SRC_BINDINGS_H

#include "kiln/runtime.hpp"

#include <pybind11/pybind11.h>

#include <atomic>

namespace kiln::python {

namespace py = pybind11;

/// kiln.Error and one subclass per status code, and the translation of kiln::Error.
void bindErrors(py::module_ &m);
/// kiln.Model, kiln.Entry, kiln.TensorInfo, kiln.Weights.
void bindModel(py::module_ &m);
/// kiln.Session and kiln.SessionStats.
void bindSession(py::module_ &m);
/// kiln.Vocabulary, the step decoders, kiln.GenerateOptions and kiln.generate.
void bindGenerate(py::module_ &m);

/// Marks an object in use by one Python call. The GIL is released while kernels run, so
/// a second thread could otherwise enter the same session or decoder between the run and
/// the reading of its outputs; it gets FAILED_PRECONDITION instead, as the C API
/// answers overlapping calls.
class InUse {
public:
  InUse(std::atomic<bool> &busy, const char *what);
  ~InUse() { busy_.store(false, std::memory_order_release); }
  InUse(const InUse &) = delete;
  InUse &operator=(const InUse &) = delete;

private:
  std::atomic<bool> &busy_;
};

} // namespace kiln::python

#endif // KILN_RUNTIME_PYTHON_SRC_BINDINGS_H
