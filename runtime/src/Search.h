//===- Search.h - The steps of libkiln_generate's searches ------*- C++ -*-===//
//
// What greedy search, sampling and beam search do at each step, shared by the loops
// over an encoder-decoder StepDecoder (Generate.cpp) and over a decoder-only
// PrefillDecoder (GenerateDecoderOnly.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SEARCH_H
#define KILN_RUNTIME_SEARCH_H

#include "kiln/generate.h"

#include <random>
#include <vector>

namespace kiln::search {

/// A hypothesis being extended: its tokens (with `skip` leading ones that are not
/// generated: <bos> for an encoder-decoder) and the sum of their log-probabilities.
struct Live {
  std::vector<int32_t> prefix;
  double raw = 0;
};

/// GNMT's length penalty ((5 + length) / 6)^alpha.
double lengthPenalty(size_t length, double alpha);

/// Throws KERNEL_ERROR when a row of `logp` (rows of `vocab`, source sourceOf[r]) holds
/// a NaN: a search over one would silently keep token 0 or the empty hypothesis.
void checkNoNaN(const std::vector<double> &logp, const std::vector<int32_t> &sourceOf,
                int64_t vocab, int step);

/// Throws INVALID_ARGUMENT for options no search can run with.
void checkOptions(const GenerateOptions &options);

/// Source s's generator (GenerateOptions::seed).
std::mt19937_64 sourceRng(const GenerateOptions &o, size_t s);

/// The token greedy search (arg-max, lowest id on a tie) or sampling picks from a row.
int32_t chooseToken(const double *row, int64_t v, const GenerateOptions &o,
                    std::mt19937_64 &rng);

/// The one hypothesis of a greedy or sampled search.
Hypothesis single(const Live &live, size_t skip, bool finished);

/// One step of reference_beam.py's beam search for one source: its live hypotheses
/// (rows firstRow, firstRow + 1, ... of logp) each extended by every token, the best
/// `beamSize - finished` by raw score kept (ties: lower live index, then lower token
/// id); those ending in <eos> join `finished`, the others are returned and their rows
/// appended to `parents`.
std::vector<Live> expandBeam(const std::vector<Live> &live,
                             std::vector<Hypothesis> &finished, const double *logp,
                             size_t firstRow, int64_t v, const GenerateOptions &o,
                             size_t skip, std::vector<int32_t> &parents);

/// A source's result once its beam search ends: the live hypotheses, cut off, join the
/// finished (without <eos>), all ranked by GNMT-normalized score.
GenerateResult rankBeam(const std::vector<Live> &live, std::vector<Hypothesis> finished,
                        const GenerateOptions &o, size_t skip);

} // namespace kiln::search

#endif // KILN_RUNTIME_SEARCH_H
