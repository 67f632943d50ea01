//===- GenerateDecoderOnly.cpp - Searches over a decoder-only model -------===//
//
// kiln::generate over a PrefillDecoder: one prefill of the shortest prompt, then one
// step per position for every cache row, as the README's decoder-only contract says. A
// row is forced through its own prompt while it has prompt tokens left, then searched
// (greedy, sampled or beam, with Search.cpp's steps); a finished source's rows leave
// the caches at the next reorder.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include <algorithm>

namespace kiln {

using namespace search;

namespace {

// Throws for an empty prompt, an id outside the vocabulary, or prompts and new tokens
// that the caches cannot hold.
void checkPrompts(const std::vector<std::vector<int32_t>> &prompts, int64_t vocab,
                  int64_t capacity, int maxNew) {
  size_t longest = 0;
  for (size_t s = 0; s < prompts.size(); ++s) {
    if (prompts[s].empty())
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  "prompt " + std::to_string(s) + " is empty (a prefill needs a token)");
    for (size_t i = 0; i < prompts[s].size(); ++i)
      if (prompts[s][i] < 0 || prompts[s][i] >= vocab)
        throw Error(KILN_STATUS_INVALID_ARGUMENT,
                    "prompt " + std::to_string(s) + " token " + std::to_string(i) +
                        ": id " + std::to_string(prompts[s][i]) +
                        " is not in the vocabulary [0, " + std::to_string(vocab - 1) +
                        "]");
    longest = std::max(longest, prompts[s].size());
  }
  // The last new token is returned, never fed: longest + maxNew - 1 positions.
  if (capacity > 0 && int64_t(longest) + maxNew - 1 > capacity)
    throw Error(
        KILN_STATUS_INVALID_ARGUMENT,
        "a prompt of " + std::to_string(longest) + " tokens and up to " +
            std::to_string(maxNew) + " new tokens need " +
            std::to_string(int64_t(longest) + maxNew - 1) +
            " positions, but the model's caches hold " + std::to_string(capacity) +
            (int64_t(longest) > capacity
                 ? " (the prompt is too long)"
                 : "; generate at most " +
                       std::to_string(capacity - int64_t(longest) + 1) + " new tokens"));
}

} // namespace

std::vector<GenerateResult> generate(PrefillDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &prompts,
                                     const GenerateOptions &o) {
  checkOptions(o);
  if (prompts.empty())
    return {};
  int64_t v = decoder.vocabSize();
  checkPrompts(prompts, v, decoder.capacity(), o.maxLength);
  size_t batch = prompts.size(), shortest = prompts[0].size();
  for (const auto &p : prompts)
    shortest = std::min(shortest, p.size());
  std::vector<int32_t> head;
  for (const auto &p : prompts)
    head.insert(head.end(), p.begin(), p.begin() + long(shortest));
  std::vector<double> logp;
  decoder.prefill(head, int64_t(batch), logp);

  bool beam = o.search == GenerateOptions::Search::Beam;
  std::vector<std::vector<Live>> live(batch, {Live{}});
  std::vector<std::vector<Hypothesis>> finished(batch);
  std::vector<bool> done(batch, false), endedAtEos(batch, false);
  std::vector<std::mt19937_64> rngs;
  for (size_t s = 0; s < batch; ++s)
    rngs.push_back(sourceRng(o, s));
  // The index, in its sequence, of the token the next step feeds every row.
  size_t position = shortest;
  for (int step = 0;; ++step) {
    // Cache rows: each unfinished source's live hypotheses, in source order.
    std::vector<int32_t> sourceOf;
    std::vector<size_t> firstRow(batch);
    for (size_t s = 0; s < batch; ++s) {
      firstRow[s] = sourceOf.size();
      if (!done[s])
        sourceOf.insert(sourceOf.end(), live[s].size(), int32_t(s));
    }
    checkNoNaN(logp, sourceOf, v, step);
    std::vector<int32_t> parents, tokens;
    for (size_t s = 0; s < batch; ++s) {
      if (done[s])
        continue;
      if (position < prompts[s].size()) { // still reading its prompt
        parents.push_back(int32_t(firstRow[s]));
        tokens.push_back(prompts[s][position]);
        continue;
      }
      if (beam) {
        size_t first = parents.size();
        live[s] =
            expandBeam(live[s], finished[s], logp.data(), firstRow[s], v, o, 0, parents);
        for (const Live &h : live[s])
          tokens.push_back(h.prefix.back());
        if (live[s].empty() || live[s].front().prefix.size() == size_t(o.maxLength)) {
          done[s] = true;
          parents.resize(first);
          tokens.resize(first);
        }
        continue;
      }
      const double *row = logp.data() + firstRow[s] * size_t(v);
      int32_t token = chooseToken(row, v, o, rngs[s]);
      Live &h = live[s].front();
      h.prefix.push_back(token);
      h.raw += row[token];
      endedAtEos[s] = token == o.eosId;
      done[s] = endedAtEos[s] || h.prefix.size() == size_t(o.maxLength);
      if (!done[s]) {
        parents.push_back(int32_t(firstRow[s]));
        tokens.push_back(token);
      }
    }
    if (parents.empty())
      break;
    decoder.reorder(parents);
    decoder.step(tokens, logp);
    ++position;
  }

  std::vector<GenerateResult> results;
  for (size_t s = 0; s < batch; ++s) {
    if (beam) {
      results.push_back(rankBeam(live[s], std::move(finished[s]), o, 0));
      continue;
    }
    GenerateResult r;
    r.best = single(live[s].front(), 0, endedAtEos[s]);
    if (o.nBest)
      r.nBest = {r.best};
    results.push_back(std::move(r));
  }
  return results;
}

} // namespace kiln
