//===- StepDecoders.cpp - Running a Transformer one step at a time --------===//
//
// The two StepDecoders of kiln/generate.h over a compiled Transformer: PrefixDecoder
// re-decodes every prefix whole; KVCacheDecoder runs one decode_step per token against
// the key/value caches the session keeps.
//
//===----------------------------------------------------------------------===//

#include "DecoderSupport.h"
#include "kiln/generate.h"

#include <algorithm>

namespace kiln {
namespace {

// Right-padded source ids [B, S] and their lengths, as `encode` takes them.
struct SourceBatch {
  int64_t batch = 0, length = 0;
  std::vector<int32_t> ids, lengths;
};

SourceBatch padSources(const std::vector<std::vector<int32_t>> &sources, int32_t padId) {
  if (sources.empty())
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "no sources to encode");
  SourceBatch b;
  b.batch = int64_t(sources.size());
  for (const auto &s : sources) {
    if (s.empty())
      throw Error(KILN_STATUS_INVALID_ARGUMENT, "an empty source cannot be encoded");
    b.length = std::max<int64_t>(b.length, int64_t(s.size()));
  }
  // src_lengths masks the padding out of attention, so each row computes what it would
  // alone.
  b.ids.assign(size_t(b.batch * b.length), padId);
  b.lengths.assign(size_t(b.batch), 0);
  for (int64_t r = 0; r < b.batch; ++r) {
    std::copy(sources[r].begin(), sources[r].end(), b.ids.begin() + r * b.length);
    b.lengths[r] = int32_t(sources[r].size());
  }
  return b;
}

// Runs `encode` and returns its memory [B, S, D] (copied: the next run may reuse it).
std::vector<float> encodeSources(Session &session, const std::string &entry,
                                 SourceBatch &b, int64_t &dModel) {
  session.run(entry, {TensorArg::of("src_ids", {b.batch, b.length}, b.ids.data()),
                      TensorArg::of("src_lengths", {b.batch}, b.lengths.data())});
  OutputView mem = session.output("memory");
  if (mem.shape.size() != 3 || mem.shape[0] != b.batch || mem.shape[1] != b.length)
    throw Error(KILN_STATUS_INVALID_MODEL,
                "entry '" + entry + "' returned a memory of an unexpected shape");
  dModel = mem.shape[2];
  const float *data = mem.as<float>();
  return std::vector<float>(data, data + b.batch * b.length * dModel);
}

void checkRows(const std::vector<int32_t> &sourceOf,
               const std::vector<std::vector<int32_t>> &prefixes, size_t sources) {
  if (sourceOf.empty() || sourceOf.size() != prefixes.size())
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "step(): sourceOf and prefixes must be non-empty and "
                "of equal size");
  for (size_t r = 0; r < prefixes.size(); ++r) {
    if (prefixes[r].size() != prefixes[0].size() || prefixes[r].empty())
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  "step(): prefixes must be non-empty and of one length");
    if (sourceOf[r] < 0 || size_t(sourceOf[r]) >= sources)
      throw Error(KILN_STATUS_INVALID_ARGUMENT, "step(): source index " +
                                                    std::to_string(sourceOf[r]) +
                                                    " out of range");
  }
}

} // namespace

//===-- PrefixDecoder ------------------------------------------------------===//

PrefixDecoder::PrefixDecoder(const Model &model, const Weights &weights, int32_t padId,
                             std::string encodeEntry, std::string decodeEntry,
                             const kiln_session_options *sessionOptions)
    : session_(model, weights, sessionOptions), padId_(padId),
      encodeEntry_(std::move(encodeEntry)), decodeEntry_(std::move(decodeEntry)) {
  vocabSize_ = vocabularyOf(model, decodeEntry_, "logits");
}

void PrefixDecoder::start(const std::vector<std::vector<int32_t>> &sources) {
  SourceBatch b = padSources(sources, padId_);
  memory_ = encodeSources(session_, encodeEntry_, b, dModel_);
  srcLen_ = b.length;
  srcLengths_ = std::move(b.lengths);
}

void PrefixDecoder::step(const std::vector<int32_t> &sourceOf,
                         const std::vector<std::vector<int32_t>> &prefixes,
                         std::vector<double> &logProbs) {
  checkRows(sourceOf, prefixes, srcLengths_.size());
  int64_t rows = int64_t(prefixes.size());
  int64_t t = int64_t(prefixes[0].size());
  int64_t rowMem = srcLen_ * dModel_;
  std::vector<int32_t> tgt(size_t(rows * t));
  std::vector<float> memory(size_t(rows * rowMem));
  std::vector<int32_t> lengths(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int32_t s = sourceOf[r];
    std::copy(prefixes[r].begin(), prefixes[r].end(), tgt.begin() + r * t);
    std::copy(memory_.begin() + s * rowMem, memory_.begin() + (s + 1) * rowMem,
              memory.begin() + r * rowMem);
    lengths[r] = srcLengths_[s];
  }
  session_.run(decodeEntry_,
               {TensorArg::of("tgt_ids", {rows, t}, tgt.data()),
                TensorArg::of("memory", {rows, srcLen_, dModel_}, memory.data()),
                TensorArg::of("src_lengths", {rows}, lengths.data())});
  ++decodeCalls_;
  // Only the last position predicts the next token; the earlier ones are recomputed
  // context (the price of having no cache).
  const float *logits = session_.output("logits").as<float>();
  logSoftmaxRows(logits + (t - 1) * vocabSize_, rows, vocabSize_, t * vocabSize_,
                 logProbs);
}

//===-- KVCacheDecoder -----------------------------------------------------===//

KVCacheDecoder::KVCacheDecoder(const Model &model, const Weights &weights, int32_t padId,
                               Entries entries,
                               const kiln_session_options *sessionOptions)
    : session_(model, weights, sessionOptions), padId_(padId),
      entries_(std::move(entries)) {
  vocabSize_ = vocabularyOf(model, entries_.step, "logits");
  // The cache's capacity is the bound the model declares on `step` ([0, capacity - 1]).
  capacity_ = capacityOf(model, entries_.step, "step");
}

void KVCacheDecoder::start(const std::vector<std::vector<int32_t>> &sources) {
  SourceBatch b = padSources(sources, padId_);
  int64_t dModel = 0;
  std::vector<float> memory = encodeSources(session_, entries_.encode, b, dModel);
  // Cross-attention keys and values of every layer and the memory's padding mask, once
  // per source; and empty caches.
  session_.run(entries_.start,
               {TensorArg::of("memory", {b.batch, b.length, dModel}, memory.data()),
                TensorArg::of("src_lengths", {b.batch}, b.lengths.data())});
  srcLengths_ = std::move(b.lengths);
  rowSource_.resize(srcLengths_.size());
  for (size_t r = 0; r < rowSource_.size(); ++r)
    rowSource_[r] = int32_t(r);
  position_ = 0;
}

void KVCacheDecoder::step(const std::vector<int32_t> &sourceOf,
                          const std::vector<std::vector<int32_t>> &prefixes,
                          std::vector<double> &logProbs) {
  checkRows(sourceOf, prefixes, srcLengths_.size());
  int64_t position = int64_t(prefixes[0].size()) - 1;
  if (position != position_)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "step(): the cache holds " + std::to_string(position_) +
                    " positions, so the prefixes must have " +
                    std::to_string(position_ + 1) + " tokens, not " +
                    std::to_string(position + 1) +
                    " (a KV-cache decoder extends its rows by one token per step)");
  if (capacity_ > 0 && position >= capacity_)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "step(): position " + std::to_string(position) +
                    " is past the model's KV cache of " + std::to_string(capacity_) +
                    " positions (TransformerConfig::maxDecodeLength); "
                    "generate at most " +
                    std::to_string(capacity_) + " tokens");
  // Before the first token the rows are the sources; a search may start from any
  // arrangement of them (several beams of one source).
  if (sourceOf != rowSource_) {
    if (position != 0)
      throw Error(
          KILN_STATUS_INVALID_ARGUMENT,
          "step(): rows do not continue the last step's rows; call reorder() first");
    session_.gatherStates(sourceOf);
    rowSource_ = sourceOf;
  }
  int64_t rows = int64_t(prefixes.size());
  std::vector<int32_t> last(static_cast<size_t>(rows)),
      lengths(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    last[r] = prefixes[r].back();
    lengths[r] = srcLengths_[sourceOf[r]];
  }
  int32_t step = int32_t(position);
  session_.run(entries_.step, {TensorArg::of("tgt_ids", {rows, 1}, last.data()),
                               TensorArg::of("step", {}, &step),
                               TensorArg::of("src_lengths", {rows}, lengths.data())});
  ++stepCalls_;
  ++position_;
  logSoftmaxRows(session_.output("logits").as<float>(), rows, vocabSize_, vocabSize_,
                 logProbs);
}

void KVCacheDecoder::reorder(const std::vector<int32_t> &parents) {
  bool identity = parents.size() == rowSource_.size();
  for (size_t r = 0; identity && r < parents.size(); ++r)
    identity = parents[r] == int32_t(r);
  if (identity)
    return;
  std::vector<int32_t> next(parents.size());
  for (size_t r = 0; r < parents.size(); ++r) {
    if (parents[r] < 0 || size_t(parents[r]) >= rowSource_.size())
      throw Error(KILN_STATUS_INVALID_ARGUMENT, "reorder(): parent " +
                                                    std::to_string(parents[r]) +
                                                    " is not a row of the last step");
    next[r] = rowSource_[size_t(parents[r])];
  }
  // Rows that keep their place are not copied (kiln_session_gather_states).
  session_.gatherStates(parents);
  rowSource_ = std::move(next);
}

} // namespace kiln
