//===- Generate.cpp - Greedy, sampled and beam search over a StepDecoder --===//
//
// kiln::generate for encoder-decoder models: greedy search, sampling and the beam
// search of models/translator/reference_beam.py, over any StepDecoder. Their steps are
// Search.cpp's; decoder-only models are GenerateDecoderOnly.cpp's; tokenizing is
// Vocabulary.cpp; running the model is StepDecoders.cpp.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include <algorithm>
#include <cmath>

namespace kiln {

GenerateOptions GenerateOptions::forVocabulary(const Vocabulary &vocab) {
  GenerateOptions o;
  o.bosId = vocab.options().bosId;
  o.eosId = vocab.options().eosId;
  o.maxLength = int(vocab.options().maxTargetLen);
  return o;
}

using namespace search;

namespace {

// Greedy or sampled: one token per source each step until <eos> or maxLength.
std::vector<GenerateResult> greedy(StepDecoder &decoder, size_t batch,
                                   const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
  std::vector<Live> live(batch, Live{{o.bosId}, 0.0});
  std::vector<bool> done(batch, false);
  std::vector<std::mt19937_64> rngs;
  for (size_t s = 0; s < batch; ++s)
    rngs.push_back(sourceRng(o, s));
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
      size_t s = size_t(sourceOf[r]);
      int32_t token = chooseToken(row, v, o, rngs[s]);
      live[s].prefix.push_back(token);
      live[s].raw += row[token];
      if (token == o.eosId)
        done[s] = true;
      else
        parents.push_back(int32_t(r));
    }
    if (!parents.empty())
      decoder.reorder(parents);
  }
  std::vector<GenerateResult> results(batch);
  for (size_t s = 0; s < batch; ++s) {
    results[s].best = single(live[s], 1, done[s]);
    if (o.nBest)
      results[s].nBest = {results[s].best};
  }
  return results;
}

// Beam search exactly as reference_beam.py: a shrinking beam (width = K - finished),
// GNMT normalization only when ranking the finished.
std::vector<GenerateResult> beam(StepDecoder &decoder, size_t batch,
                                 const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
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
    for (size_t s = 0; s < batch; ++s)
      if (!live[s].empty())
        live[s] =
            expandBeam(live[s], finished[s], logp.data(), firstRow[s], v, o, 1, parents);
    if (!parents.empty())
      decoder.reorder(parents);
  }
  std::vector<GenerateResult> results;
  for (size_t s = 0; s < batch; ++s)
    results.push_back(rankBeam(live[s], std::move(finished[s]), o, 1));
  return results;
}

} // namespace

std::vector<GenerateResult> generate(StepDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &sources,
                                     const GenerateOptions &options) {
  checkOptions(options);
  if (sources.empty())
    return {};
  decoder.start(sources);
  return options.search == GenerateOptions::Search::Beam
             ? beam(decoder, sources.size(), options)
             : greedy(decoder, sources.size(), options);
}

} // namespace kiln
