//===- DecoderOnly.cpp - Running a decoder-only model: prefill, then steps ===//
//
// PrefillDecoder of kiln/generate.h: the decoder-only entry contract (README,
// "Generating text with a decoder-only model") over one session, whose key/value caches
// `prefill` creates and `step` extends by one position per call.
//
//===----------------------------------------------------------------------===//

#include "DecoderSupport.h"
#include "kiln/generate.h"

#include <algorithm>

namespace kiln {
namespace {

// Throws naming the entry `model` lacks and what it has.
void requireEntry(const Model &model, const std::string &entry, const char *contract) {
  std::vector<std::string> names = model.entries();
  if (std::find(names.begin(), names.end(), entry) != names.end())
    return;
  std::string have;
  for (const std::string &name : names)
    have += (have.empty() ? "" : ", ") + name;
  throw Error(KILN_STATUS_INVALID_ARGUMENT,
              "model has no entry '" + entry + "': a decoder-only model needs " +
                  contract + " (its entries: " + (have.empty() ? "none" : have) + ")");
}

} // namespace

PrefillDecoder::PrefillDecoder(const Model &model, const Weights &weights,
                               Entries entries,
                               const kiln_session_options *sessionOptions)
    : session_(model, weights, sessionOptions), entries_(std::move(entries)) {
  std::string contract = "'" + entries_.prefill + "(" + entries_.ids + " [B, N]) -> " +
                         entries_.logits + " [B, V]' and '" + entries_.step + "(" +
                         entries_.ids + " [B, 1], " + entries_.position + ") -> " +
                         entries_.logits + " [B, V]'";
  requireEntry(model, entries_.prefill, contract.c_str());
  requireEntry(model, entries_.step, contract.c_str());
  vocabSize_ = vocabularyOf(model, entries_.step, entries_.logits);
  if (vocabularyOf(model, entries_.prefill, entries_.logits) != vocabSize_)
    throw Error(KILN_STATUS_INVALID_MODEL,
                "entries '" + entries_.prefill + "' and '" + entries_.step +
                    "' return logits of different vocabularies");
  capacity_ = capacityOf(model, entries_.step, entries_.position);
}

void PrefillDecoder::prefill(const std::vector<int32_t> &ids, int64_t rows,
                             std::vector<double> &logProbs) {
  if (rows < 1 || ids.empty() || int64_t(ids.size()) % rows)
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "prefill(): " + std::to_string(ids.size()) +
                                                  " ids are not " + std::to_string(rows) +
                                                  " rows of one length >= 1");
  int64_t length = int64_t(ids.size()) / rows;
  session_.run(entries_.prefill,
               {TensorArg::of(entries_.ids.c_str(), {rows, length}, ids.data())});
  rows_ = rows;
  position_ = length;
  logSoftmaxRows(session_.output(entries_.logits).as<float>(), rows, vocabSize_,
                 vocabSize_, logProbs);
}

void PrefillDecoder::step(const std::vector<int32_t> &tokens,
                          std::vector<double> &logProbs) {
  if (rows_ == 0)
    throw Error(KILN_STATUS_FAILED_PRECONDITION, "step(): no prefill() yet");
  if (int64_t(tokens.size()) != rows_)
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "step(): " + std::to_string(tokens.size()) +
                                                  " tokens for " + std::to_string(rows_) +
                                                  " cache rows");
  if (capacity_ > 0 && position_ >= capacity_)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "step(): position " + std::to_string(position_) +
                    " is past the model's caches of " + std::to_string(capacity_) +
                    " positions");
  int32_t position = int32_t(position_);
  session_.run(entries_.step,
               {TensorArg::of(entries_.ids.c_str(), {rows_, 1}, tokens.data()),
                TensorArg::of(entries_.position.c_str(), {}, &position)});
  ++stepCalls_;
  ++position_;
  logSoftmaxRows(session_.output(entries_.logits).as<float>(), rows_, vocabSize_,
                 vocabSize_, logProbs);
}

void PrefillDecoder::reorder(const std::vector<int32_t> &parents) {
  bool identity = int64_t(parents.size()) == rows_;
  for (size_t r = 0; identity && r < parents.size(); ++r)
    identity = parents[r] == int32_t(r);
  if (identity)
    return;
  session_.gatherStates(parents);
  rows_ = int64_t(parents.size());
}

} // namespace kiln
