//===- Translate.h - kiln-run translate -------------------------*- C++ -*-===//
//
// Text in, text out through kiln_generate, so a compiled encoder-decoder can be tried
// without writing C++.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_TRANSLATE_H
#define KILN_TOOLS_KILN_RUN_TRANSLATE_H

#include "SessionFlags.h"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct TranslateOptions {
  std::string model, weights, config;
  std::string vocab;            // empty: the config's vocab_file
  std::optional<int> beamSize;  // none: greedy
  double alpha = 0.6;           // GNMT length penalty (beam search)
  std::optional<int> maxLength; // none: the config's max_target_len
  bool noCache = false;
  SessionFlags session; // --threads, --profile, --trace
  std::vector<std::string> texts;
};

/// The largest --beam. Every beam is a row of each decode step (beams x inputs rows) and
/// contributes a vocabulary's worth of candidates to rank; translation quality peaks at a
/// handful of beams and falls beyond a few dozen, so a larger value is a typo.
constexpr int kMaxBeamSize = 64;

/// Declares the `translate` subcommand on `app`, bound to `options`.
CLI::App *addTranslateCommand(CLI::App &app, TranslateOptions &options);

/// Tokenizes, searches and prints each translation and the throughput. Throws
/// kiln::Error.
void translate(const TranslateOptions &options);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_TRANSLATE_H
