//===- DecoderSupport.h - What every decoder of libkiln_generate needs -*- C++ -*-===//
//
// The pieces that the encoder-decoder decoders (StepDecoders.cpp) and the decoder-only
// one (DecoderOnly.cpp) share: reading the vocabulary and the cache capacity off a
// model's entries, and turning logits into log-probabilities.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DECODERSUPPORT_H
#define KILN_RUNTIME_DECODERSUPPORT_H

#include "kiln/runtime.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// log_softmax in double of `rows` rows of `v` logits, `stride` floats apart.
void logSoftmaxRows(const float *logits, int64_t rows, int64_t v, int64_t stride,
                    std::vector<double> &out);

/// The static last dimension of output `name` of `entry` (the vocabulary); throws
/// INVALID_MODEL when there is none.
int64_t vocabularyOf(const Model &model, const std::string &entry,
                     const std::string &name);

/// The positions a cache holds, read off the bounds [lo, capacity - 1] that the model
/// declares on input `input` of `entry` (a decoding step's position); 0 when the input
/// has no integer bounds.
int64_t capacityOf(const Model &model, const std::string &entry,
                   const std::string &input);

} // namespace kiln

#endif // KILN_RUNTIME_DECODERSUPPORT_H
