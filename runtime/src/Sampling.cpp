//===- Sampling.cpp - The sampling rule of GenerateOptions::Search::Sample ===//
//
// Temperature, top-k and top-p over one row of log-probabilities, drawn from a
// std::mt19937_64 by an explicit rule (generate.h) rather than a standard distribution,
// whose draws differ between standard libraries: the same seed gives the same tokens
// everywhere.
//
//===----------------------------------------------------------------------===//

#include "kiln/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln {
namespace {

void checkSampling(const GenerateOptions &o) {
  if (!(o.temperature >= 0))
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "sampling temperature must be >= 0, got " +
                                                  std::to_string(o.temperature));
  if (o.topK < 0)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "sampling top-k must be >= 0 (0: every token), got " +
                    std::to_string(o.topK));
  if (!(o.topP > 0 && o.topP <= 1))
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "sampling top-p must be in (0, 1], got " + std::to_string(o.topP));
}

} // namespace

int32_t sampleToken(const double *logProbs, int64_t vocab, const GenerateOptions &options,
                    std::mt19937_64 &rng) {
  checkSampling(options);
  // 1. Highest first, lower id first on a tie.
  std::vector<int32_t> ranked(static_cast<size_t>(vocab));
  std::iota(ranked.begin(), ranked.end(), 0);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](int32_t a, int32_t b) { return logProbs[a] > logProbs[b]; });
  if (options.temperature == 0)
    return ranked.front();
  // 2. and 3.
  size_t kept =
      options.topK == 0 ? ranked.size() : std::min(ranked.size(), size_t(options.topK));
  double best = logProbs[ranked.front()];
  std::vector<double> weights(kept);
  double total = 0;
  for (size_t i = 0; i < kept; ++i) {
    weights[i] = std::exp((logProbs[ranked[i]] - best) / options.temperature);
    total += weights[i];
  }
  // 4. The nucleus: the shortest prefix reaching topP of the kept mass.
  size_t nucleus = 0;
  double mass = 0;
  while (nucleus < kept && (nucleus == 0 || mass < options.topP * total))
    mass += weights[nucleus++];
  // 5.
  double u = double(rng() >> 11) * 0x1.0p-53;
  double target = u * mass, running = 0;
  for (size_t i = 0; i < nucleus; ++i) {
    running += weights[i];
    if (target < running)
      return ranked[i];
  }
  return ranked[nucleus - 1]; // rounding left target at the very end
}

} // namespace kiln
