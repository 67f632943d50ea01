//===- Commands.h - What kiln-run does with a model -------------*- C++ -*-===//
//
// The modes of `kiln-run MODEL.so ...` once its options are parsed (Options.h);
// `translate` is Translate.h. Each throws kiln::Error or DriverError on failure.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_COMMANDS_H
#define KILN_TOOLS_KILN_RUN_COMMANDS_H

namespace kiln::driver {

struct Options;

/// Lists the model (--list), or runs one entry on the inputs the options describe and
/// prints (or saves) its outputs and its time (RunModel.cpp).
void runModel(const Options &options);

/// --init-weights OUT: writes a safetensors file holding every parameter of the model
/// with its shape and random values, for trying a model out (InitWeights.cpp).
void initWeights(const Options &options);

/// --convert-weights OUT: writes every parameter of the model as the weights handle of
/// --weights holds it (converted to the model's precision), atomically, so that loading
/// OUT maps it with no conversion (ConvertWeights.cpp).
void convertWeights(const Options &options);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_COMMANDS_H
