// Options.hpp - kiln-run's command line.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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
  PrintMode print = PrintMode::Summary;
  std::string saveOutputs; // directory, or empty
  bool list = false;
  bool help = false;
  // --init-weights OUT MODEL
  std::string initWeights;
  bool haveScale = false;
  double scale = 0;
};

// Throws UsageError on a malformed command line.
Options parseOptions(int argc, char **argv);
const char *usage();

struct UsageError {
  std::string message;
};

} // namespace kiln::driver
