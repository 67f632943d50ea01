//===- Module.cpp - The _kiln extension module ----------------------------===//
//
// Python bindings of the Kiln runtime and of libkiln_generate; `import kiln` re-exports
// them (runtime/python/kiln/__init__.py).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

PYBIND11_MODULE(_kiln, m) {
  m.doc() = "Kiln runtime: load compiled models and run them on numpy arrays.";
  kiln::python::bindErrors(m);
  kiln::python::bindModel(m);
  kiln::python::bindSession(m);
  kiln::python::bindGenerate(m);
}
