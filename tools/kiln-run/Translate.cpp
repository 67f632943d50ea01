// Translate.cpp - `kiln-run translate MODEL.so --weights W --vocab V --config C [--beam
// K]
// [--alpha A] [--max-len N] [--no-cache] TEXT...`: tokenizes, searches and prints each
// translation and the throughput, so a compiled encoder-decoder can be tried without
// writing C++.
#include "Translate.hpp"

#include "kiln/generate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kiln::driver {
namespace {

const char *translateUsage() {
  return "usage: kiln-run translate MODEL.so --weights W.safetensors --config "
         "config.json\n"
         "                          [--vocab vocab.txt] [--beam K] [--alpha A] "
         "[--max-len N]\n"
         "                          TEXT...\n"
         "  --config   model config (special ids, max lengths, vocab_file)\n"
         "  --vocab    vocabulary file (default: the config's vocab_file)\n"
         "  --beam K   beam search of size K (default: greedy)\n"
         "  --alpha A  GNMT length penalty for beam search (default 0.6)\n"
         "  --max-len  most generated tokens, <eos> included (default: config "
         "max_target_len)\n"
         "  --no-cache re-decode whole prefixes instead of using the model's KV cache\n"
         "             (decode_step); the default when the model has no decode_step\n";
}

} // namespace

int translateMain(int argc, char **argv) {
  std::string modelPath, weightsPath, vocabPath, configPath;
  int beamSize = 0, maxLen = 0;
  bool noCache = false;
  double alpha = 0.6;
  std::vector<std::string> texts;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc)
          throw Error(KILN_STATUS_INVALID_ARGUMENT, arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--weights")
        weightsPath = value();
      else if (arg == "--vocab")
        vocabPath = value();
      else if (arg == "--config")
        configPath = value();
      else if (arg == "--beam")
        beamSize = std::atoi(value().c_str());
      else if (arg == "--alpha")
        alpha = std::atof(value().c_str());
      else if (arg == "--max-len")
        maxLen = std::atoi(value().c_str());
      else if (arg == "--no-cache")
        noCache = true;
      else if (arg == "--help" || arg == "-h") {
        std::fputs(translateUsage(), stdout);
        return 0;
      } else if (arg.size() > 2 && arg.rfind("--", 0) == 0)
        throw Error(KILN_STATUS_INVALID_ARGUMENT, "unknown option " + arg);
      else if (modelPath.empty())
        modelPath = arg;
      else
        texts.push_back(arg);
    }
    if (modelPath.empty() || weightsPath.empty() || configPath.empty() || texts.empty())
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  "translate needs MODEL.so, --weights, --config and at least one TEXT");

    Vocabulary vocab = Vocabulary::fromConfig(configPath);
    if (!vocabPath.empty())
      vocab = Vocabulary::load(vocabPath, vocab.options());
    GenerateOptions options = GenerateOptions::forVocabulary(vocab);
    if (beamSize > 0) {
      options.search = GenerateOptions::Search::Beam;
      options.beamSize = beamSize;
      options.alpha = alpha;
    }
    if (maxLen > 0)
      options.maxLength = maxLen;

    // Tokenize everything first, so bad input fails before any model work.
    std::vector<std::vector<int32_t>> sources;
    for (const std::string &t : texts)
      sources.push_back(vocab.encodeSource(t));

    Model model = Model::open(modelPath);
    Weights weights = Weights::open(model, weightsPath);
    std::vector<std::string> entries = model.entries();
    bool cached = !noCache && std::find(entries.begin(), entries.end(),
                                        KVCacheEntries().step) != entries.end();
    std::unique_ptr<StepDecoder> decoder;
    if (cached)
      decoder = std::make_unique<KVCacheDecoder>(model, weights, vocab.options().padId);
    else
      decoder = std::make_unique<PrefixDecoder>(model, weights, vocab.options().padId);
    auto begin = std::chrono::steady_clock::now();
    std::vector<GenerateResult> results = generate(*decoder, sources, options);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

    size_t tokens = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
      tokens += results[i].best.tokens.size();
      std::printf("%s\t%s\t%.6f\n", texts[i].c_str(),
                  vocab.decodeTarget(results[i].best.tokens).c_str(),
                  results[i].best.score);
    }
    std::string search = beamSize > 0 ? "beam " + std::to_string(beamSize) : "greedy";
    std::printf("%zu inputs, %zu generated tokens in %.1f ms: %.0f tokens/s (%s, %s)\n",
                texts.size(), tokens, seconds * 1e3,
                seconds > 0 ? double(tokens) / seconds : 0.0, search.c_str(),
                cached ? "KV cache" : "whole-prefix re-decoding");
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "kiln-run translate: error: %s\n", e.what());
    if (e.code() == KILN_STATUS_INVALID_ARGUMENT && modelPath.empty())
      std::fputs(translateUsage(), stderr);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-run translate: internal error: %s\n", e.what());
  }
  return 1;
}

} // namespace kiln::driver
