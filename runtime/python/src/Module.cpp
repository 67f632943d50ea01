//===- Module.cpp - The _kiln extension module ----------------------------===//
//
// Python bindings of the Kiln runtime and of libkiln_generate; `import kiln` re-exports
// them (runtime/python/kiln/__init__.py). Also what every binding shares (InUse).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

namespace kiln::python {

InUse::InUse(std::atomic<bool> &busy, const char *what) : busy_(busy) {
  if (busy_.exchange(true, std::memory_order_acquire))
    throw Error(KILN_STATUS_FAILED_PRECONDITION,
                std::string(what) + " is running on another thread");
}

} // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "Kiln runtime: load compiled models and run them on numpy arrays.";
  kiln::python::bindErrors(m);
  kiln::python::bindModel(m);
  kiln::python::bindSession(m);
  kiln::python::bindGenerate(m);
  // Users meet these classes as kiln.X (kiln/__init__.py re-exports them): name them so
  // in reprs, help() and error messages, as the exception classes already are.
  for (auto item : m.attr("__dict__").cast<pybind11::dict>())
    if (pybind11::isinstance<pybind11::type>(item.second))
      item.second.attr("__module__") = "kiln";
}
