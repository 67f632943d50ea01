//===- Generate.h - kiln-run generate ---------------------------*- C++ -*-===//
//
// Prompt ids in, generated ids out through kiln_generate's decoder-only search, so a
// compiled GPT-style model (prefill and step entries) can be tried without writing C++.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_GENERATE_H
#define KILN_TOOLS_KILN_RUN_GENERATE_H

#include "SessionFlags.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct GenerateCommandOptions {
  std::string model, weights;
  std::vector<std::string> promptIds; // "5,7,9", one per prompt
  int maxNewTokens = 16;
  bool greedy = false, sample = false;
  std::optional<int> beamSize;
  double temperature = 1.0, topP = 1.0;
  int topK = 0;
  uint64_t seed = 0;
  int32_t eos = -1;     // none
  SessionFlags session; // --threads, --profile, --trace
};

/// Declares the `generate` subcommand on `app`, bound to `options`.
CLI::App *addGenerateCommand(CLI::App &app, GenerateCommandOptions &options);

/// Parses the prompts, searches, and prints one line of generated ids per prompt
/// (stdout) and the throughput (stderr). Throws kiln::Error or DriverError.
void generateText(const GenerateCommandOptions &options);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_GENERATE_H
