//===- Options.h - kiln-run's options for running a model -------*- C++ -*-===//
//
// What `kiln-run MODEL.so ...` is asked to do (every mode but `translate`), and the
// command line that fills it in.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_OPTIONS_H
#define KILN_TOOLS_KILN_RUN_OPTIONS_H

#include "SessionFlags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

enum class PrintMode { Summary, Full, None };

struct Options {
  std::string model;
  std::string weights;
  std::string entry;
  std::vector<std::pair<std::string, std::string>> inputs; // NAME, SPEC
  std::vector<std::pair<std::string, int64_t>> dims;       // NAME, N
  bool random = false;
  uint64_t seed = 0;
  int repeat = 1;
  SessionFlags session; // --threads, --profile, --trace
  PrintMode print = PrintMode::Summary;
  std::string saveOutputs; // directory, or empty
  bool list = false;
  std::string initWeights;     // --init-weights OUT, or empty
  std::string convertWeights;  // --convert-weights OUT, or empty
  std::optional<double> scale; // of --init-weights' uniform distribution
};

/// Declares every option on `app`, bound to `options`, with its type, range and help.
void addRunOptions(CLI::App &app, Options &options);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_OPTIONS_H
