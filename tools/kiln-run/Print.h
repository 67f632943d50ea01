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
#include <vector>

namespace kiln::driver {

void printModel(std::FILE *out, const kiln::Model &model);
void printOutput(std::FILE *out, const kiln::OutputView &output, PrintMode mode);
/// Statistics of the runs' times (ms each): median, minimum, mean, maximum and total.
void printTimes(std::FILE *out, const std::vector<double> &times);
/// The kernel time of a profiling session's runs (of any entry), by kernel and by source
/// line: calls, total, mean and share of the total.
void printProfile(std::FILE *out, const kiln::Session &session);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_PRINT_H
