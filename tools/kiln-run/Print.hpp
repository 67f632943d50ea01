// Print.hpp - how kiln-run shows a model and its outputs.
#pragma once

#include "Options.hpp"

#include "kiln/runtime.hpp"

#include <cstdio>

namespace kiln::driver {

void printModel(std::FILE *out, const kiln::Model &model);
void printOutput(std::FILE *out, const kiln::OutputView &output, PrintMode mode);

} // namespace kiln::driver
