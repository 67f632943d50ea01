//===- Print.h - Showing models and outputs ---------------------*- C++ -*-===//
//
// How kiln-run shows a model (--list) and its outputs (--print).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_PRINT_H
#define KILN_TOOLS_KILN_RUN_PRINT_H

#include "Options.h"

#include "kiln/runtime.hpp"

#include <cstdio>

namespace kiln::driver {

void printModel(std::FILE *out, const kiln::Model &model);
void printOutput(std::FILE *out, const kiln::OutputView &output, PrintMode mode);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_PRINT_H
