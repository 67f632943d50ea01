//===- Translate.cpp - kiln-run translate ---------------------------------===//
//
// kiln-run translate MODEL.so --weights W --config C [--vocab V] [--beam K] [--alpha A]
// [--max-len N] [--no-cache] TEXT...
//
//===----------------------------------------------------------------------===//

#include "Translate.h"

#include "OptionValidators.h"

#include "kiln/generate.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <memory>

namespace kiln::driver {

CLI::App *addTranslateCommand(CLI::App &app, TranslateOptions &o) {
  CLI::App *cmd = app.add_subcommand(
      "translate", "Translate TEXT with an encoder-decoder model (kiln_generate)");
  cmd->footer(
      "\nPrints each TEXT, its translation and its log-probability (normalized for beam\n"
      "search), then the throughput. A model without decode_step (no KV cache)\n"
      "re-decodes whole prefixes. --beam is bounded because beyond a few dozen beams\n"
      "translations only get worse, and every beam is a row of each decode step.\n"
      "Exit status: 0 on success, 1 when the translation fails, 2 for a usage error.");
  cmd->add_option("MODEL", o.model, "The compiled model (MODEL.so)")
      ->required()
      ->type_name("");
  cmd->add_option("TEXT", o.texts, "The texts to translate, in one batch")
      ->required()
      ->type_name("");
  cmd->add_option("--weights", o.weights, "The model's weights (.safetensors)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--config", o.config,
                  "The model's config.json: special ids, lengths, vocab_file")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--vocab", o.vocab,
                  "Vocabulary file (default: the config's vocab_file)")
      ->type_name("FILE");
  cmd->add_option("--beam", o.beamSize, "Beam search of size K (default: greedy)")
      ->transform(integerIn(1, kMaxBeamSize))
      ->type_name("K");
  cmd->add_option("--alpha", o.alpha, "GNMT length penalty for beam search (default 0.6)")
      ->check(finiteAtLeast(0))
      ->type_name("A");
  cmd->add_option("--max-len", o.maxLength,
                  "Most tokens to generate, <eos> included (default: max_target_len)")
      ->transform(integerIn(1, INT_MAX))
      ->type_name("N");
  cmd->add_flag("--no-cache", o.noCache,
                "Re-decode whole prefixes instead of using the KV cache");
  addSessionFlags(*cmd, o.session);
  return cmd;
}

void translate(const TranslateOptions &o) {
  Vocabulary vocab = Vocabulary::fromConfig(o.config);
  if (!o.vocab.empty())
    vocab = Vocabulary::load(o.vocab, vocab.options());
  GenerateOptions options = GenerateOptions::forVocabulary(vocab);
  if (o.beamSize) {
    options.search = GenerateOptions::Search::Beam;
    options.beamSize = *o.beamSize;
    options.alpha = o.alpha;
  }
  if (o.maxLength)
    options.maxLength = *o.maxLength;

  // Tokenize everything first, so bad input fails before any model work.
  std::vector<std::vector<int32_t>> sources;
  for (const std::string &t : o.texts)
    sources.push_back(vocab.encodeSource(t));

  Model model = Model::open(o.model);
  Weights weights = Weights::open(model, o.weights);
  std::vector<std::string> entries = model.entries();
  bool cached = !o.noCache && std::find(entries.begin(), entries.end(),
                                        KVCacheEntries().step) != entries.end();
  kiln_session_options sessionOptions = o.session.toOptions();
  std::unique_ptr<StepDecoder> decoder;
  const Session *session;
  if (cached) {
    auto kvCache = std::make_unique<KVCacheDecoder>(model, weights, vocab.options().padId,
                                                    KVCacheEntries(), &sessionOptions);
    session = &kvCache->session();
    decoder = std::move(kvCache);
  } else {
    auto prefix = std::make_unique<PrefixDecoder>(model, weights, vocab.options().padId,
                                                  "encode", "decode", &sessionOptions);
    session = &prefix->session();
    decoder = std::move(prefix);
  }
  auto begin = std::chrono::steady_clock::now();
  std::vector<GenerateResult> results = generate(*decoder, sources, options);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  size_t tokens = 0;
  for (size_t i = 0; i < o.texts.size(); ++i) {
    tokens += results[i].best.tokens.size();
    std::printf("%s\t%s\t%.6f\n", o.texts[i].c_str(),
                vocab.decodeTarget(results[i].best.tokens).c_str(),
                results[i].best.score);
  }
  std::string search = o.beamSize ? "beam " + std::to_string(*o.beamSize) : "greedy";
  std::printf("%zu inputs, %zu generated tokens in %.1f ms: %.0f tokens/s (%s, %s)\n",
              o.texts.size(), tokens, seconds * 1e3,
              seconds > 0 ? double(tokens) / seconds : 0.0, search.c_str(),
              cached ? "KV cache" : "whole-prefix re-decoding");
  reportProfile(stdout, *session, o.session);
}

} // namespace kiln::driver
