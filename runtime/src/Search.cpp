//===- Search.cpp - The steps of libkiln_generate's searches --------------===//

#include "Search.h"

#include <algorithm>
#include <cmath>

namespace kiln::search {
namespace {

struct Candidate {
  double raw;
  int32_t live; // index in the source's live list
  int32_t token;
};

} // namespace

double lengthPenalty(size_t length, double alpha) {
  return std::pow((5.0 + double(length)) / 6.0, alpha);
}

// A NaN log-probability ranks nowhere (every comparison with it is false), so a search
// over one silently keeps token 0 or the empty hypothesis; it is an error instead.
void checkNoNaN(const std::vector<double> &logp, const std::vector<int32_t> &sourceOf,
                int64_t vocab, int step) {
  for (size_t r = 0; r < sourceOf.size(); ++r)
    for (int64_t i = 0; i < vocab; ++i)
      if (std::isnan(logp[r * size_t(vocab) + size_t(i)]))
        throw Error(KILN_STATUS_KERNEL_ERROR,
                    "decode step " + std::to_string(step) + ": the model computed NaN " +
                        "log-probabilities for source " + std::to_string(sourceOf[r]) +
                        " (token id " + std::to_string(i) +
                        " first); its weights or activations hold NaN or overflow");
}

int32_t chooseToken(const double *row, int64_t v, const GenerateOptions &o,
                    std::mt19937_64 &rng) {
  if (o.search == GenerateOptions::Search::Sample)
    return sampleToken(row, v, o, rng);
  int32_t best = 0;
  for (int32_t i = 1; i < v; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

std::mt19937_64 sourceRng(const GenerateOptions &o, size_t s) {
  return std::mt19937_64(o.seed + uint64_t(s) * 0x9E3779B97F4A7C15ULL);
}

Hypothesis single(const Live &live, size_t skip, bool finished) {
  Hypothesis h;
  h.tokens.assign(live.prefix.begin() + long(skip), live.prefix.end());
  h.rawScore = h.score = live.raw;
  h.finished = finished;
  return h;
}

std::vector<Live> expandBeam(const std::vector<Live> &live,
                             std::vector<Hypothesis> &finished, const double *logp,
                             size_t firstRow, int64_t v, const GenerateOptions &o,
                             size_t skip, std::vector<int32_t> &parents) {
  size_t width = size_t(o.beamSize) - finished.size();
  std::vector<Candidate> cands;
  cands.reserve(live.size() * size_t(v));
  for (size_t i = 0; i < live.size(); ++i) {
    const double *row = logp + (firstRow + i) * size_t(v);
    for (int32_t tok = 0; tok < v; ++tok)
      cands.push_back({live[i].raw + row[tok], int32_t(i), tok});
  }
  width = std::min(width, cands.size());
  std::partial_sort(cands.begin(), cands.begin() + long(width), cands.end(),
                    [](const Candidate &a, const Candidate &b) {
                      if (a.raw != b.raw)
                        return a.raw > b.raw;
                      if (a.live != b.live)
                        return a.live < b.live;
                      return a.token < b.token;
                    });
  std::vector<Live> next;
  for (size_t c = 0; c < width; ++c) {
    const Candidate &cand = cands[c];
    const Live &parent = live[size_t(cand.live)];
    if (cand.token == o.eosId) {
      Hypothesis h;
      h.tokens.assign(parent.prefix.begin() + long(skip), parent.prefix.end());
      h.tokens.push_back(cand.token);
      h.rawScore = cand.raw;
      h.finished = true;
      finished.push_back(std::move(h));
    } else {
      Live h{parent.prefix, cand.raw};
      h.prefix.push_back(cand.token);
      next.push_back(std::move(h));
      parents.push_back(int32_t(firstRow + size_t(cand.live)));
    }
  }
  return next;
}

GenerateResult rankBeam(const std::vector<Live> &live, std::vector<Hypothesis> finished,
                        const GenerateOptions &o, size_t skip) {
  for (const Live &l : live) {
    Hypothesis h;
    h.tokens.assign(l.prefix.begin() + long(skip), l.prefix.end());
    h.rawScore = l.raw;
    finished.push_back(std::move(h));
  }
  for (Hypothesis &h : finished)
    h.score = h.rawScore / lengthPenalty(h.tokens.size(), o.alpha);
  // Stable: on equal normalized scores the earlier finished stays first.
  std::stable_sort(
      finished.begin(), finished.end(),
      [](const Hypothesis &a, const Hypothesis &b) { return a.score > b.score; });
  GenerateResult result;
  result.best = finished.front();
  if (o.nBest)
    result.nBest = std::move(finished);
  return result;
}

void checkOptions(const GenerateOptions &options) {
  if (options.search == GenerateOptions::Search::Beam && options.beamSize < 1)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "beam size must be at least 1, got " + std::to_string(options.beamSize));
  if (options.maxLength < 1)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "maxLength must be at least 1, got " + std::to_string(options.maxLength));
  if (options.search == GenerateOptions::Search::Sample) {
    // sampleToken checks its options on every draw; a bad one fails before any run.
    double row[1] = {0};
    std::mt19937_64 rng;
    sampleToken(row, 1, options, rng);
  }
}

} // namespace kiln::search
