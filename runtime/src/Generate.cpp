//===- Generate.cpp - Greedy and beam search over a StepDecoder -----------===//
//
// kiln::generate: greedy search and the beam search of
// models/translator/reference_beam.py, over any StepDecoder. Tokenizing is
// Vocabulary.cpp; running the model is StepDecoders.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/generate.h"

#include <algorithm>
#include <cmath>

namespace kiln {
namespace {

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

} // namespace

GenerateOptions GenerateOptions::forVocabulary(const Vocabulary &vocab) {
  GenerateOptions o;
  o.bosId = vocab.options().bosId;
  o.eosId = vocab.options().eosId;
  o.maxLength = int(vocab.options().maxTargetLen);
  return o;
}

namespace {

struct Live {
  std::vector<int32_t> prefix; // <bos> first
  double raw = 0;
};

// Greedy: the arg-max token (lowest id on a tie) until <eos> or maxLength.
std::vector<GenerateResult> greedy(StepDecoder &decoder, size_t batch,
                                   const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
  std::vector<Live> live(batch, Live{{o.bosId}, 0.0});
  std::vector<bool> done(batch, false);
  std::vector<double> logp;
  for (int t = 0; t < o.maxLength; ++t) {
    std::vector<int32_t> sourceOf, parents;
    std::vector<std::vector<int32_t>> prefixes;
    for (size_t s = 0; s < batch; ++s)
      if (!done[s]) {
        sourceOf.push_back(int32_t(s));
        prefixes.push_back(live[s].prefix);
      }
    if (sourceOf.empty())
      break;
    decoder.step(sourceOf, prefixes, logp);
    checkNoNaN(logp, sourceOf, v, t);
    for (size_t r = 0; r < sourceOf.size(); ++r) {
      const double *row = logp.data() + r * size_t(v);
      int32_t best = 0;
      for (int32_t i = 1; i < v; ++i)
        if (row[i] > row[best])
          best = i;
      Live &h = live[size_t(sourceOf[r])];
      h.prefix.push_back(best);
      h.raw += row[best];
      if (best == o.eosId)
        done[size_t(sourceOf[r])] = true;
      else
        parents.push_back(int32_t(r));
    }
    if (!parents.empty())
      decoder.reorder(parents);
  }
  std::vector<GenerateResult> results(batch);
  for (size_t s = 0; s < batch; ++s) {
    Hypothesis &h = results[s].best;
    h.tokens.assign(live[s].prefix.begin() + 1, live[s].prefix.end());
    h.rawScore = h.score = live[s].raw;
    h.finished = done[s];
    if (o.nBest)
      results[s].nBest = {h};
  }
  return results;
}

struct Candidate {
  double raw;
  int32_t live; // index in the source's live list
  int32_t token;
};

// Beam search exactly as reference_beam.py: a shrinking beam (width = K - finished),
// every live hypothesis extended by every token, the best `width` by raw score kept
// (ties: lower live index, then lower token id), GNMT normalization only when ranking the
// finished.
std::vector<GenerateResult> beam(StepDecoder &decoder, size_t batch,
                                 const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
  int k = o.beamSize;
  std::vector<std::vector<Live>> live(batch, {Live{{o.bosId}, 0.0}});
  std::vector<std::vector<Hypothesis>> finished(batch);
  std::vector<double> logp;
  for (int t = 0; t < o.maxLength; ++t) {
    // Rows of every live hypothesis of every source, in source then live order; all have
    // length t + 1, so one decode call serves the whole batch.
    std::vector<int32_t> sourceOf;
    std::vector<std::vector<int32_t>> prefixes;
    std::vector<size_t> firstRow(batch);
    for (size_t s = 0; s < batch; ++s) {
      firstRow[s] = sourceOf.size();
      for (const Live &h : live[s]) {
        sourceOf.push_back(int32_t(s));
        prefixes.push_back(h.prefix);
      }
    }
    if (sourceOf.empty())
      break;
    decoder.step(sourceOf, prefixes, logp);
    checkNoNaN(logp, sourceOf, v, t);

    std::vector<int32_t> parents;
    for (size_t s = 0; s < batch; ++s) {
      if (live[s].empty())
        continue;
      size_t width = size_t(k) - finished[s].size();
      std::vector<Candidate> cands;
      cands.reserve(live[s].size() * size_t(v));
      for (size_t i = 0; i < live[s].size(); ++i) {
        const double *row = logp.data() + (firstRow[s] + i) * size_t(v);
        for (int32_t tok = 0; tok < v; ++tok)
          cands.push_back({live[s][i].raw + row[tok], int32_t(i), tok});
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
        const Live &parent = live[s][size_t(cand.live)];
        if (cand.token == o.eosId) {
          Hypothesis h;
          h.tokens.assign(parent.prefix.begin() + 1, parent.prefix.end());
          h.tokens.push_back(cand.token);
          h.rawScore = cand.raw;
          h.finished = true;
          finished[s].push_back(std::move(h));
        } else {
          Live h{parent.prefix, cand.raw};
          h.prefix.push_back(cand.token);
          next.push_back(std::move(h));
          parents.push_back(int32_t(firstRow[s] + size_t(cand.live)));
        }
      }
      live[s] = std::move(next);
    }
    if (!parents.empty())
      decoder.reorder(parents);
  }

  std::vector<GenerateResult> results(batch);
  for (size_t s = 0; s < batch; ++s) {
    // Cut off at maxLength: finished as they are, without <eos>.
    for (const Live &l : live[s]) {
      Hypothesis h;
      h.tokens.assign(l.prefix.begin() + 1, l.prefix.end());
      h.rawScore = l.raw;
      finished[s].push_back(std::move(h));
    }
    for (Hypothesis &h : finished[s])
      h.score = h.rawScore / lengthPenalty(h.tokens.size(), o.alpha);
    // Stable: on equal normalized scores the earlier finished stays first.
    std::stable_sort(
        finished[s].begin(), finished[s].end(),
        [](const Hypothesis &a, const Hypothesis &b) { return a.score > b.score; });
    results[s].best = finished[s].front();
    if (o.nBest)
      results[s].nBest = std::move(finished[s]);
  }
  return results;
}

} // namespace

std::vector<GenerateResult> generate(StepDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &sources,
                                     const GenerateOptions &options) {
  bool beamSearch = options.search == GenerateOptions::Search::Beam;
  if (beamSearch && options.beamSize < 1)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "beam size must be at least 1, got " + std::to_string(options.beamSize));
  if (options.maxLength < 1)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "maxLength must be at least 1, got " + std::to_string(options.maxLength));
  if (sources.empty())
    return {};
  decoder.start(sources);
  return beamSearch ? beam(decoder, sources.size(), options)
                    : greedy(decoder, sources.size(), options);
}

} // namespace kiln
