//===- GenerateBindings.cpp - kiln.Vocabulary, decoders, kiln.generate ----===//
//
// libkiln_generate as Python sees it, option for option as in kiln/generate.h; the
// search runs with the GIL released.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"
#include "Handles.h"

#include "kiln/generate.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <memory>

namespace kiln::python {
namespace {

/// A StepDecoder with the flag that keeps two threads from searching with it at once
/// (its session would refuse the second, but the decoder's own bookkeeping would race).
struct DecoderHandle {
  virtual ~DecoderHandle() = default;
  virtual StepDecoder &decoder() = 0;
  std::atomic<bool> busy{false};
};

struct KVCacheDecoderHandle : DecoderHandle {
  KVCacheDecoderHandle(const Model &model, const Weights &weights, int32_t padId,
                       KVCacheEntries entries)
      : d(model, weights, padId, std::move(entries)) {}
  StepDecoder &decoder() override { return d; }
  KVCacheDecoder d;
};

struct PrefixDecoderHandle : DecoderHandle {
  PrefixDecoderHandle(const Model &model, const Weights &weights, int32_t padId,
                      std::string encode, std::string decode)
      : d(model, weights, padId, std::move(encode), std::move(decode)) {}
  StepDecoder &decoder() override { return d; }
  PrefixDecoder d;
};

/// A PrefillDecoder (decoder-only model) with the same guard.
struct PrefillDecoderHandle {
  PrefillDecoderHandle(const Model &model, const Weights &weights, PrefillEntries entries)
      : d(model, weights, std::move(entries)) {}
  PrefillDecoder d;
  std::atomic<bool> busy{false};
};

VocabularyOptions vocabularyOptions(int32_t padId, int32_t bosId, int32_t eosId,
                                    int32_t unkId, int64_t maxSourceLen,
                                    int64_t maxTargetLen) {
  return {padId, bosId, eosId, unkId, maxSourceLen, maxTargetLen};
}

/// The keyword arguments that spell VocabularyOptions, defaults included.
template <typename... Extra> auto vocabularyArgs(Extra... extra) {
  VocabularyOptions d;
  return std::make_tuple(extra..., py::kw_only(), py::arg("pad_id") = d.padId,
                         py::arg("bos_id") = d.bosId, py::arg("eos_id") = d.eosId,
                         py::arg("unk_id") = d.unkId,
                         py::arg("max_source_len") = d.maxSourceLen,
                         py::arg("max_target_len") = d.maxTargetLen);
}

std::string searchName(GenerateOptions::Search s) {
  switch (s) {
  case GenerateOptions::Search::Beam:
    return "beam";
  case GenerateOptions::Search::Sample:
    return "sample";
  case GenerateOptions::Search::Greedy:
    break;
  }
  return "greedy";
}

GenerateOptions::Search searchOf(const std::string &name) {
  for (auto s : {GenerateOptions::Search::Greedy, GenerateOptions::Search::Beam,
                 GenerateOptions::Search::Sample})
    if (name == searchName(s))
      return s;
  throw Error(KILN_STATUS_INVALID_ARGUMENT,
              "search must be 'greedy', 'beam' or 'sample', got '" + name + "'");
}

void bindVocabulary(py::module_ &m) {
  auto make = [](std::vector<std::string> tokens, int32_t pad, int32_t bos, int32_t eos,
                 int32_t unk, int64_t maxSource, int64_t maxTarget) {
    return Vocabulary(std::move(tokens),
                      vocabularyOptions(pad, bos, eos, unk, maxSource, maxTarget));
  };
  auto load = [](const std::filesystem::path &path, int32_t pad, int32_t bos, int32_t eos,
                 int32_t unk, int64_t maxSource, int64_t maxTarget) {
    return Vocabulary::load(path,
                            vocabularyOptions(pad, bos, eos, unk, maxSource, maxTarget));
  };
  py::class_<Vocabulary> vocab(
      m, "Vocabulary",
      "Token id = 0-based line of vocab.txt. Sources are split into characters, targets "
      "on whitespace. The special ids and length limits come with it.");
  std::apply([&](auto... args) { vocab.def(py::init(make), args...); },
             vocabularyArgs(py::arg("tokens")));
  std::apply(
      [&](auto... args) {
        vocab.def_static("load", load, args..., "Reads vocab.txt (one token a line).");
      },
      vocabularyArgs(py::arg("path")));
  vocab
      .def_static(
          "from_config",
          [](const std::filesystem::path &path) { return Vocabulary::fromConfig(path); },
          py::arg("path"),
          "Reads config.json (pad_id, bos_id, eos_id, unk_id; optional max_source_len, "
          "max_target_len, vocab_file, vocab_size) and the vocabulary it names. A "
          "missing key or a bad value is an InvalidArgumentError naming the file and "
          "the key.")
      .def("encode_source", &Vocabulary::encodeSource, py::arg("text"),
           py::arg("allow_over_length") = false,
           "Text -> source ids, one per character (surrounding whitespace dropped). "
           "InvalidArgumentError for empty text, a character outside the vocabulary, or "
           "text over max_source_len unless allow_over_length.")
      .def("encode_target", &Vocabulary::encodeTarget, py::arg("text"),
           "Words -> ids; an unknown word is an InvalidArgumentError.")
      .def("decode_target", &Vocabulary::decodeTarget, py::arg("ids"),
           "Ids -> words joined by single spaces: stops at <eos>, skips <pad> and <bos>.")
      .def("token", &Vocabulary::token, py::arg("id"))
      .def("id", &Vocabulary::id, py::arg("token"), "-1 when absent")
      .def("__len__", &Vocabulary::size);
  auto option = [&](const char *name, auto member) {
    vocab.def_property_readonly(
        name, [member](const Vocabulary &v) { return v.options().*member; });
  };
  option("pad_id", &VocabularyOptions::padId);
  option("bos_id", &VocabularyOptions::bosId);
  option("eos_id", &VocabularyOptions::eosId);
  option("unk_id", &VocabularyOptions::unkId);
  option("max_source_len", &VocabularyOptions::maxSourceLen);
  option("max_target_len", &VocabularyOptions::maxTargetLen);
}

void bindDecoders(py::module_ &m) {
  py::class_<DecoderHandle>(m, "StepDecoder",
                            "Next-token distributions for a search: KVCacheDecoder or "
                            "PrefixDecoder.")
      .def_property_readonly("vocab_size",
                             [](DecoderHandle &h) { return h.decoder().vocabSize(); });

  KVCacheEntries entries;
  py::class_<KVCacheDecoderHandle, DecoderHandle> kvCache(
      m, "KVCacheDecoder",
      "Decodes with a compiled Transformer's key/value caches: encode once per batch, "
      "decode_start once, then decode_step once per generated token.");
  kvCache
      .def(py::init([](const ModelHandle &model, const WeightsHandle &weights,
                       int32_t padId, std::string encode, std::string start,
                       std::string step) {
             return std::make_unique<KVCacheDecoderHandle>(
                 model.model, weights.weights, padId,
                 KVCacheEntries{std::move(encode), std::move(start), std::move(step)});
           }),
           py::arg("model"), py::arg("weights"), py::arg("pad_id") = 0, py::kw_only(),
           py::arg("encode") = entries.encode, py::arg("start") = entries.start,
           py::arg("step") = entries.step)
      .def_property_readonly(
          "capacity", [](KVCacheDecoderHandle &h) { return h.d.capacity(); },
          "Positions the caches hold; 0 if unknown")
      .def_property_readonly("step_calls",
                             [](KVCacheDecoderHandle &h) { return h.d.stepCalls(); })
      .def_property_readonly(
          "stats", [](KVCacheDecoderHandle &h) { return h.d.session().stats(); },
          "SessionStats of its session");
  // The entry whose presence tells a model with KV caches (kiln.Translator looks).
  kvCache.attr("DEFAULT_STEP") = entries.step;

  py::class_<PrefixDecoderHandle, DecoderHandle>(
      m, "PrefixDecoder",
      "Re-decodes whole prefixes with the model's encode and decode entries (no cache).")
      .def(py::init([](const ModelHandle &model, const WeightsHandle &weights,
                       int32_t padId, std::string encode, std::string decode) {
             return std::make_unique<PrefixDecoderHandle>(model.model, weights.weights,
                                                          padId, std::move(encode),
                                                          std::move(decode));
           }),
           py::arg("model"), py::arg("weights"), py::arg("pad_id") = 0, py::kw_only(),
           py::arg("encode") = "encode", py::arg("decode") = "decode")
      .def_property_readonly("decode_calls",
                             [](PrefixDecoderHandle &h) { return h.d.decodeCalls(); });

  PrefillEntries prefill;
  py::class_<PrefillDecoderHandle>(
      m, "PrefillDecoder",
      "Decodes with a decoder-only model: prefill(ids [B, N]) once per batch, then "
      "step(ids [B, 1], position) once per position (README, 'Generating text with a "
      "decoder-only model').")
      .def(py::init([](const ModelHandle &model, const WeightsHandle &weights,
                       std::string prefill, std::string step, std::string ids,
                       std::string position, std::string logits) {
             return std::make_unique<PrefillDecoderHandle>(
                 model.model, weights.weights,
                 PrefillEntries{std::move(prefill), std::move(step), std::move(ids),
                                std::move(position), std::move(logits)});
           }),
           py::arg("model"), py::arg("weights"), py::kw_only(),
           py::arg("prefill") = prefill.prefill, py::arg("step") = prefill.step,
           py::arg("ids") = prefill.ids, py::arg("position") = prefill.position,
           py::arg("logits") = prefill.logits)
      .def_property_readonly("vocab_size",
                             [](PrefillDecoderHandle &h) { return h.d.vocabSize(); })
      .def_property_readonly(
          "capacity", [](PrefillDecoderHandle &h) { return h.d.capacity(); },
          "Positions the caches hold; 0 if unknown")
      .def_property_readonly("step_calls",
                             [](PrefillDecoderHandle &h) { return h.d.stepCalls(); })
      .def_property_readonly(
          "stats", [](PrefillDecoderHandle &h) { return h.d.session().stats(); },
          "SessionStats of its session");
}

void bindSearch(py::module_ &m) {
  GenerateOptions d;
  py::class_<GenerateOptions>(m, "GenerateOptions",
                              "Options of generate(), as kiln::GenerateOptions.")
      .def(py::init([](const std::string &search, int beamSize, double alpha,
                       int maxLength, bool nBest, int32_t bosId, int32_t eosId,
                       double temperature, int topK, double topP, uint64_t seed) {
             GenerateOptions o;
             o.search = searchOf(search);
             o.beamSize = beamSize;
             o.alpha = alpha;
             o.maxLength = maxLength;
             o.nBest = nBest;
             o.bosId = bosId;
             o.eosId = eosId;
             o.temperature = temperature;
             o.topK = topK;
             o.topP = topP;
             o.seed = seed;
             return o;
           }),
           py::kw_only(), py::arg("search") = searchName(d.search),
           py::arg("beam_size") = d.beamSize, py::arg("alpha") = d.alpha,
           py::arg("max_length") = d.maxLength, py::arg("n_best") = d.nBest,
           py::arg("bos_id") = d.bosId, py::arg("eos_id") = d.eosId,
           py::arg("temperature") = d.temperature, py::arg("top_k") = d.topK,
           py::arg("top_p") = d.topP, py::arg("seed") = d.seed)
      .def_static("for_vocabulary", &GenerateOptions::forVocabulary, py::arg("vocab"),
                  "Greedy, with the vocabulary's bos/eos ids and max_length = its "
                  "max_target_len.")
      .def_property(
          "search", [](const GenerateOptions &o) { return searchName(o.search); },
          [](GenerateOptions &o, const std::string &s) { o.search = searchOf(s); },
          "'greedy' (arg-max, lowest id on a tie), 'beam' or 'sample'")
      .def_readwrite("beam_size", &GenerateOptions::beamSize)
      .def_readwrite("alpha", &GenerateOptions::alpha,
                     "GNMT length penalty: score = raw / ((5 + len) / 6) ** alpha")
      .def_readwrite("max_length", &GenerateOptions::maxLength,
                     "Most generated tokens, <eos> included; required (> 0)")
      .def_readwrite("n_best", &GenerateOptions::nBest,
                     "Also return every finished hypothesis, best first")
      .def_readwrite("bos_id", &GenerateOptions::bosId)
      .def_readwrite("eos_id", &GenerateOptions::eosId, "-1: none")
      .def_readwrite("temperature", &GenerateOptions::temperature,
                     "sampling: logits / temperature (0: greedy)")
      .def_readwrite("top_k", &GenerateOptions::topK,
                     "sampling: the k most likely tokens (0: all)")
      .def_readwrite("top_p", &GenerateOptions::topP,
                     "sampling: the most likely tokens holding probability top_p")
      .def_readwrite("seed", &GenerateOptions::seed,
                     "sampling: source s draws from mt19937_64(seed + s * "
                     "0x9E3779B97F4A7C15)");

  py::class_<Hypothesis>(m, "Hypothesis")
      .def_readonly("tokens", &Hypothesis::tokens,
                    "generated after <bos>; ends with <eos> unless cut off")
      .def_readonly("score", &Hypothesis::score, "normalized (greedy: the raw score)")
      .def_readonly("raw_score", &Hypothesis::rawScore,
                    "sum of the tokens' log-probabilities")
      .def_readonly("finished", &Hypothesis::finished, "ended with <eos>")
      .def("__repr__", [](const Hypothesis &h) {
        return "Hypothesis(tokens=" + std::string(py::repr(py::cast(h.tokens))) +
               ", score=" + std::string(py::repr(py::float_(h.score))) + ")";
      });
  py::class_<GenerateResult>(m, "GenerateResult")
      .def_readonly("best", &GenerateResult::best)
      .def_readonly("n_best", &GenerateResult::nBest, "filled when options.n_best");

  m.def(
      "generate",
      // options by value: the Python object could change under the released GIL.
      [](DecoderHandle &h, const std::vector<std::vector<int32_t>> &sources,
         GenerateOptions options) {
        InUse inUse(h.busy, "decoder");
        py::gil_scoped_release release;
        return generate(h.decoder(), sources, options);
      },
      py::arg("decoder"), py::arg("sources"), py::arg("options"),
      "Greedy or beam search, or sampling, over a batch of sources (lists of token ids, "
      "any lengths): one GenerateResult per source, in order. The GIL is released while "
      "it runs.");
  m.def(
      "generate",
      [](PrefillDecoderHandle &h, const std::vector<std::vector<int32_t>> &prompts,
         GenerateOptions options) {
        InUse inUse(h.busy, "decoder");
        py::gil_scoped_release release;
        return generate(h.d, prompts, options);
      },
      py::arg("decoder"), py::arg("prompts"), py::arg("options"),
      "Continues each prompt (token ids) of a decoder-only model with at most "
      "options.max_length new tokens (only those are returned).");
}

} // namespace

void bindGenerate(py::module_ &m) {
  bindVocabulary(m);
  bindDecoders(m);
  bindSearch(m);
}

} // namespace kiln::python
