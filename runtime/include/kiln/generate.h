//===- kiln/generate.h - Text generation over the runtime -------*- C++ -*-===//
//
// A vocabulary/tokenizer, a step-decoder interface, and greedy search, beam search and
// sampling over a batch of sources (encoder-decoder models) or prompts (decoder-only
// models), on top of the runtime (libkiln_generate).
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
#include <random>
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
// entries): `encode` once per batch, `decode_start(memory, src_lengths)` once per batch
// (cross-attention keys and values of every layer, the memory's padding mask, and empty
// self-attention caches, kept in the session), then `decode_step(tgt_ids [N,1], step,
// src_lengths [N]) -> logits [N,V]` once per generated token: each step appends one
// position to the caches in place, so its cost grows linearly with the position.
// reorder() gathers cache rows (only those that move).
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
  // Sample: a token drawn by sampleToken() with the options below.
  enum class Search { Greedy, Beam, Sample };
  Search search = Search::Greedy;
  int beamSize = 4;
  // Sampling: logits divided by temperature (0: greedy; > 0), the topK most likely
  // tokens (0: all), then the smallest set of those, most likely first, whose
  // probability reaches topP (in (0, 1]; at least one token). Source s of a batch draws
  // from its own std::mt19937_64 seeded with seed + s * 0x9E3779B97F4A7C15 (mod 2^64):
  // the same seed gives the same tokens on every platform.
  double temperature = 1.0;
  int topK = 0;
  double topP = 1.0;
  uint64_t seed = 0;
  // GNMT length penalty: normalized = raw / ((5 + |Y|) / 6)^alpha, |Y| counting <eos>.
  double alpha = 0.0;
  // Most generated tokens, <eos> included. Required (> 0). For a decoder-only model,
  // the most new tokens after the prompt.
  int maxLength = 0;
  // Also return every finished hypothesis, best first (beam search; greedy has one).
  bool nBest = false;
  // eosId ends a hypothesis; -1: none (a decoder-only model stops at maxLength).
  int32_t bosId = 1, eosId = 2;

  static GenerateOptions forVocabulary(const Vocabulary &vocab);
};

// The token that Search::Sample draws from one row of `vocab` log-probabilities (or
// logits: the rule is shift-invariant), as a documented, portable rule:
//   1. rank the tokens by log-probability, highest first (ties: lower id first);
//   2. keep the first topK (0: all) of them;
//   3. weigh each kept token i by w_i = exp((l_i - l_max) / temperature);
//   4. keep the shortest prefix of the ranking whose weights add up to at least
//      topP * (the sum over step 2's tokens), at least one token;
//   5. draw u = (rng() >> 11) * 2^-53 in [0, 1) and return the first token of that
//      prefix whose running sum of weights exceeds u * (the prefix's sum).
// Temperature 0 returns the arg-max (lowest id on a tie) without drawing. Throws
// INVALID_ARGUMENT for a negative or NaN temperature, a negative topK or a topP outside
// (0, 1].
int32_t sampleToken(const double *logProbs, int64_t vocab, const GenerateOptions &options,
                    std::mt19937_64 &rng);

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

// A decoder-only model (the README's "Generating text with a decoder-only model"):
// `prefill(ids [B, N]) -> logits [B, V]` creates the key/value caches (B rows, the
// model's capacity) and writes the prompt's N positions in one run; `step(ids [B, 1],
// position P) -> logits [B, V]` appends position P to every cache row. Both return the
// next token's logits.
struct PrefillEntries {
  std::string prefill = "prefill", step = "step";
  std::string ids = "ids", position = "position", logits = "logits";
};

class PrefillDecoder {
public:
  using Entries = PrefillEntries;
  // Throws INVALID_ARGUMENT when the model lacks an entry (naming it and the entries it
  // has) and INVALID_MODEL when `logits` has no static vocabulary size.
  PrefillDecoder(const Model &model, const Weights &weights, Entries entries = Entries(),
                 const kiln_session_options *sessionOptions = nullptr);
  // Forgets the caches and writes `rows` prompts of one length n (ids row-major,
  // rows * n of them) into new ones; rows x vocabSize() log-probabilities of the next
  // token into logProbs.
  void prefill(const std::vector<int32_t> &ids, int64_t rows,
               std::vector<double> &logProbs);
  // Feeds token tokens[r] to cache row r at position(); then position() grows by one.
  void step(const std::vector<int32_t> &tokens, std::vector<double> &logProbs);
  // Cache row r becomes old row parents[r] (the session's state gather; rows that keep
  // their place are not copied, and rows may be dropped or repeated).
  void reorder(const std::vector<int32_t> &parents);
  int64_t vocabSize() const { return vocabSize_; }
  // Positions the caches hold (the bound of step's position + 1); 0 if unknown.
  int64_t capacity() const { return capacity_; }
  // Positions written so far, and the rows of the caches.
  int64_t position() const { return position_; }
  int64_t rows() const { return rows_; }
  int64_t stepCalls() const { return stepCalls_; }
  const Session &session() const { return session_; }

private:
  Session session_;
  Entries entries_;
  int64_t vocabSize_ = 0, capacity_ = 0, position_ = 0, rows_ = 0, stepCalls_ = 0;
};

// One result per source, in order. Sources may have different lengths. A decode step
// whose log-probabilities hold a NaN (NaN weights, an overflow) throws KERNEL_ERROR
// rather than return a hypothesis ranked on NaN.
std::vector<GenerateResult> generate(StepDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &sources,
                                     const GenerateOptions &options);

// Continues each prompt (ids in [0, vocabSize()), at least one) with at most
// options.maxLength new tokens (Hypothesis::tokens holds only those). Prompts of
// different lengths share the caches: one prefill of the shortest prompt's length, then
// steps for every row at one position, each row fed its own prompt token while it has
// one and its generated token after, so no padding enters a cache. Throws
// INVALID_ARGUMENT for an id outside the vocabulary (naming the prompt and position) or
// when the longest prompt plus maxLength - 1 exceeds the caches' capacity.
std::vector<GenerateResult> generate(PrefillDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &prompts,
                                     const GenerateOptions &options);

} // namespace kiln

#endif // KILN_GENERATE_H
