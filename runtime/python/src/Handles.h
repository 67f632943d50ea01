//===- Handles.h - What kiln.Model and kiln.Weights hold --------*- C++ -*-===//
//
// The runtime's handles with the paths they were opened from, shared by the session and
// generation bindings.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PYTHON_SRC_HANDLES_H
#define KILN_RUNTIME_PYTHON_SRC_HANDLES_H

#include "kiln/runtime.hpp"

#include <string>

namespace kiln::python {

struct ModelHandle {
  Model model;
  std::string path;
};

struct WeightsHandle {
  Weights weights;
  std::string path;
};

} // namespace kiln::python

#endif // KILN_RUNTIME_PYTHON_SRC_HANDLES_H
