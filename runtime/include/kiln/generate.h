//===- kiln/generate.h - Text generation over the runtime -------*- C++ -*-===//
//
// A vocabulary/tokenizer, a step-decoder interface, and greedy and beam search over a
// batch of sources, on top of the runtime (libkiln_generate).
//
// Errors are kiln::Error (see runtime.hpp), code KILN_STATUS_INVALID_ARGUMENT for bad
// text, options or config values, KILN_STATUS_NOT_FOUND / IO_ERROR for files.
//
//   auto vocab = kiln::Vocabulary::fromConfig("models/translator/config.json");
//   kiln::Model model = kiln::Model::open("translator.so");
//   kiln::Weights weights = kiln::Weights::open(model, "translator.safetensors");
//   kiln::KVCacheDecoder decoder(model, weights);
//   kiln::GenerateOptions opt = kiln::GenerateOptions::forVocabulary(vocab);
//   opt.search = kiln::GenerateOptions::Search::Beam;
//   opt.beamSize = 4;
//   opt.alpha = 0.6;
//   auto results = kiln::generate(decoder, {vocab.encodeSource("4096")}, opt);
//   std::string words = vocab.decodeTarget(results[0].best.tokens);
//
//===----------------------------------------------------------------------===//

#ifndef KILN_GENERATE_H
#define KILN_GENERATE_H

#include "kiln/runtime.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln {

// The special ids and length limits that accompany a vocabulary. The defaults are the
// translator's; fromConfig reads them from config.json.
struct VocabularyOptions {
  int32_t padId = 0, bosId = 1, eosId = 2, unkId = 3;
  int64_t maxSourceLen = 0; // characters; 0 = no limit
  int64_t maxTargetLen = 0; // generated tokens, <eos> included; 0 = unknown
};

// One shared vocabulary: token id = 0-based line of vocab.txt. The source side is split
// into characters (one token per byte: the vocabularies in use are ASCII), the target
// side on whitespace.
class Vocabulary {
public:
  Vocabulary(std::vector<std::string> tokens, VocabularyOptions options = {});
  static Vocabulary load(const std::string &vocabPath, VocabularyOptions options = {});
  // Reads config.json and loads the vocabulary it names. Required: the integers
  // pad_id, bos_id, eos_id, unk_id (ids in the vocabulary). Optional: max_source_len
  // (default 0, no limit), max_target_len (default 0, unknown), vocab_file (default
  // "vocab.txt", relative to the config's directory) and vocab_size (checked against
  // the file when present). A missing required key, a value of the wrong type or out of
  // range is an error naming the file and the key.
  static Vocabulary fromConfig(const std::string &configPath);

  // Text -> source ids. Leading/trailing whitespace is dropped (as tokenizer.py does).
  // Throws kiln::Error (INVALID_ARGUMENT) for empty text, for a character outside the
  // vocabulary (naming it and its 0-based position) and, unless allowOverLength, for text
  // longer than maxSourceLen. allowOverLength exists for out-of-domain experiments.
  std::vector<int32_t> encodeSource(const std::string &text,
                                    bool allowOverLength = false) const;
  // Words -> ids; an unknown word throws like an unknown character.
  std::vector<int32_t> encodeTarget(const std::string &text) const;
  // Ids -> words joined by single spaces: stops at <eos>, skips <pad> and <bos>.
  std::string decodeTarget(const std::vector<int32_t> &ids) const;

  size_t size() const { return tokens_.size(); }
  const std::string &token(int32_t id) const;
  // -1 when absent.
  int32_t id(const std::string &token) const;
  const VocabularyOptions &options() const { return options_; }

private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
  VocabularyOptions options_;
};

// Next-token distributions for the live hypotheses of a search. The search calls start()
// once per batch, then step() once per generated position, then reorder() after choosing
// which hypotheses survive. A stateless decoder (PrefixDecoder) recomputes everything
// from the prefixes; a KV-cache decoder keeps per-row state that step() extends by one
// token and reorder() gathers.
class StepDecoder {
public:
  virtual ~StepDecoder() = default;
  // Encodes the batch (unpadded ids, one vector per source) and forgets earlier state.
  virtual void start(const std::vector<std::vector<int32_t>> &sources) = 0;
  // Row r continues source sourceOf[r] with prefix prefixes[r] (starting with <bos>; in
  // one call all prefixes have the same length). Writes rows × vocabSize() next-token
  // log-probabilities (row-major) into logProbs.
  virtual void step(const std::vector<int32_t> &sourceOf,
                    const std::vector<std::vector<int32_t>> &prefixes,
                    std::vector<double> &logProbs) = 0;
  // Row r of the next step() extends row parents[r] of the last one. A cache gathers its
  // rows here; a stateless decoder ignores it.
  virtual void reorder(const std::vector<int32_t> &parents) { (void)parents; }
  virtual int64_t vocabSize() const = 0;
};

// Runs the model's whole-prefix entries: `encode(src_ids [B,S], src_lengths [B]) ->
// memory` once per batch, and `decode(tgt_ids [N,T], memory [N,S,D], src_lengths [N]) ->
// logits [N,T,V]` once per step on every live prefix; log_softmax of the last position in
// double. Cost per step grows with the prefix length (no cache).
class PrefixDecoder : public StepDecoder {
public:
  // sessionOptions: the options of the decoder's session (threads, profile; NULL for
  // the defaults).
  PrefixDecoder(const Model &model, const Weights &weights, int32_t padId = 0,
                std::string encodeEntry = "encode", std::string decodeEntry = "decode",
                const kiln_session_options *sessionOptions = nullptr);
  void start(const std::vector<std::vector<int32_t>> &sources) override;
  void step(const std::vector<int32_t> &sourceOf,
            const std::vector<std::vector<int32_t>> &prefixes,
            std::vector<double> &logProbs) override;
  int64_t vocabSize() const override { return vocabSize_; }
  // decode() calls so far (for tests and throughput numbers), and the session (for its
  // stats and profile).
  int64_t decodeCalls() const { return decodeCalls_; }
  const Session &session() const { return session_; }

private:
  Session session_;
  int32_t padId_;
  std::string encodeEntry_, decodeEntry_;
  int64_t vocabSize_ = 0;
  int64_t dModel_ = 0, srcLen_ = 0;
  std::vector<float> memory_;       // [B, S, D] of the current batch
  std::vector<int32_t> srcLengths_; // [B]
  int64_t decodeCalls_ = 0;
};

// Decodes with the key/value caches of a compiled Transformer (nn::Transformer's
// entries): `encode` once per batch, `decode_start(memory)` once per batch
// (cross-attention keys and values of every layer, and empty self-attention caches, kept
// in the session), then `decode_step(tgt_ids [N,1], step, src_lengths [N]) -> logits
// [N,V]` once per generated token: each step appends one position to the caches in place,
// so its cost grows linearly with the position. reorder() gathers cache rows (only those
// that move).
struct KVCacheEntries {
  std::string encode = "encode", start = "decode_start", step = "decode_step";
};

class KVCacheDecoder : public StepDecoder {
public:
  using Entries = KVCacheEntries;
  // sessionOptions as PrefixDecoder's.
  KVCacheDecoder(const Model &model, const Weights &weights, int32_t padId = 0,
                 Entries entries = Entries(),
                 const kiln_session_options *sessionOptions = nullptr);
  void start(const std::vector<std::vector<int32_t>> &sources) override;
  // The prefixes must be one token longer than at the last step (their last token is the
  // one fed in); rows must be the last step's rows as reorder() left them.
  void step(const std::vector<int32_t> &sourceOf,
            const std::vector<std::vector<int32_t>> &prefixes,
            std::vector<double> &logProbs) override;
  void reorder(const std::vector<int32_t> &parents) override;
  int64_t vocabSize() const override { return vocabSize_; }
  // Positions the model's caches hold (decode_step's `step` bound + 1); 0 if unknown.
  int64_t capacity() const { return capacity_; }
  // decode_step() calls so far, and the session (for its stats and profile).
  int64_t stepCalls() const { return stepCalls_; }
  const Session &session() const { return session_; }

private:
  Session session_;
  int32_t padId_;
  Entries entries_;
  int64_t vocabSize_ = 0, capacity_ = 0;
  std::vector<int32_t> srcLengths_; // per source
  std::vector<int32_t> rowSource_;  // per cache row: its source
  int64_t position_ = 0;            // positions in the caches
  int64_t stepCalls_ = 0;
};

struct GenerateOptions {
  // Greedy: the arg-max token each step (lowest id on a tie). Beam: a shrinking beam of
  // beamSize; beamSize 1 yields the greedy tokens (its score is then normalized).
  enum class Search { Greedy, Beam };
  Search search = Search::Greedy;
  int beamSize = 4;
  // GNMT length penalty: normalized = raw / ((5 + |Y|) / 6)^alpha, |Y| counting <eos>.
  double alpha = 0.0;
  // Most generated tokens, <eos> included. Required (> 0).
  int maxLength = 0;
  // Also return every finished hypothesis, best first (beam search; greedy has one).
  bool nBest = false;
  int32_t bosId = 1, eosId = 2;

  static GenerateOptions forVocabulary(const Vocabulary &vocab);
};

struct Hypothesis {
  std::vector<int32_t> tokens; // generated after <bos>; ends with <eos> unless cut off
  double score = 0;            // normalized (greedy: the raw log-probability)
  double rawScore = 0;         // sum of the tokens' log-probabilities
  bool finished = false;       // ended with <eos>
};

struct GenerateResult {
  Hypothesis best;
  std::vector<Hypothesis> nBest; // filled when options.nBest
};

// One result per source, in order. Sources may have different lengths. A decode step
// whose log-probabilities hold a NaN (NaN weights, an overflow) throws KERNEL_ERROR
// rather than return a hypothesis ranked on NaN.
std::vector<GenerateResult> generate(StepDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &sources,
                                     const GenerateOptions &options);

} // namespace kiln

#endif // KILN_GENERATE_H
