//===- Generate.cpp - kiln-run generate -----------------------------------===//
//
// kiln-run generate MODEL.so --weights W --prompt-ids 5,7,9 [--prompt-ids ...]
// [--max-new-tokens N] [--greedy | --beam K | --sample [--temperature T] [--top-k K]
// [--top-p P] [--seed S]] [--eos ID]
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "DriverError.h"
#include "OptionValidators.h"

#include "kiln/generate.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <sstream>

namespace kiln::driver {
namespace {

/// "5,7,9" -> {5, 7, 9}.
std::vector<int32_t> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::string copy = item;
    if (!integerIn(0, INT32_MAX)(copy).empty())
      throw DriverError("--prompt-ids '" + text + "': '" + item +
                        "' is not a token id (a comma-separated list of integers >= 0)");
    ids.push_back(int32_t(std::stol(copy)));
  }
  if (ids.empty() || text.back() == ',')
    throw DriverError("--prompt-ids '" + text +
                      "': expected a comma-separated list of token ids");
  return ids;
}

} // namespace

CLI::App *addGenerateCommand(CLI::App &app, GenerateCommandOptions &o) {
  CLI::App *cmd = app.add_subcommand(
      "generate",
      "Continue prompts with a decoder-only model (prefill and step entries)");
  cmd->footer(
      "\nPrints one line per prompt: its generated ids, comma-separated (the prompt not\n"
      "included), and the throughput on stderr. The model needs the entries\n"
      "prefill(ids [B, N]) and step(ids [B, 1], position) returning logits [B, V].\n"
      "Text prompts are not supported: kiln_generate's Vocabulary splits characters\n"
      "and words (the translator's), not the subwords of a GPT-style vocabulary.\n"
      "Exit status: 0 on success, 1 when generation fails, 2 for a usage error.");
  cmd->add_option("MODEL", o.model, "The compiled model (MODEL.so)")
      ->required()
      ->type_name("");
  cmd->add_option("--weights", o.weights, "The model's weights (.safetensors)")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--prompt-ids", o.promptIds,
                  "A prompt as comma-separated token ids (repeatable: one batch)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false) // one prompt per --prompt-ids; MODEL may follow
      ->type_name("IDS");
  cmd->add_option("--max-new-tokens", o.maxNewTokens,
                  "Most tokens to generate per prompt (default 16)")
      ->transform(integerIn(1, INT_MAX))
      ->type_name("N");
  CLI::Option *greedy =
      cmd->add_flag("--greedy", o.greedy, "The most likely token each step (default)");
  CLI::Option *beam = cmd->add_option("--beam", o.beamSize, "Beam search of size K")
                          ->transform(integerIn(1, 64))
                          ->type_name("K");
  CLI::Option *sample = cmd->add_flag(
      "--sample", o.sample, "Draw each token (--temperature, --top-k, --top-p)");
  greedy->excludes(beam)->excludes(sample);
  beam->excludes(sample);
  cmd->add_option("--temperature", o.temperature, "--sample: logits / T (default 1)")
      ->check(finiteAtLeast(0))
      ->needs(sample)
      ->type_name("T");
  cmd->add_option("--top-k", o.topK, "--sample: the K most likely tokens (default: all)")
      ->transform(integerIn(0, INT_MAX))
      ->needs(sample)
      ->type_name("K");
  cmd->add_option("--top-p", o.topP,
                  "--sample: the most likely tokens holding probability P (default 1)")
      ->check(finiteAtLeast(0))
      ->needs(sample)
      ->type_name("P");
  cmd->add_option("--seed", o.seed, "--sample: the generators' seed (default 0)")
      ->transform(integerIn(0, INT64_MAX))
      ->needs(sample)
      ->type_name("S");
  cmd->add_option("--eos", o.eos, "Token id that ends a continuation (default: none)")
      ->transform(integerIn(0, INT32_MAX))
      ->type_name("ID");
  addSessionFlags(*cmd, o.session);
  return cmd;
}

void generateText(const GenerateCommandOptions &o) {
  GenerateOptions options;
  options.maxLength = o.maxNewTokens;
  options.eosId = o.eos;
  if (o.beamSize) {
    options.search = GenerateOptions::Search::Beam;
    options.beamSize = *o.beamSize;
  } else if (o.sample) {
    options.search = GenerateOptions::Search::Sample;
    options.temperature = o.temperature;
    options.topK = o.topK;
    options.topP = o.topP;
    options.seed = o.seed;
  }
  // Parse everything first, so bad input fails before any model work.
  std::vector<std::vector<int32_t>> prompts;
  for (const std::string &text : o.promptIds)
    prompts.push_back(parseIds(text));

  Model model = Model::open(o.model);
  Weights weights = Weights::open(model, o.weights);
  kiln_session_options sessionOptions = o.session.toOptions();
  PrefillDecoder decoder(model, weights, PrefillEntries(), &sessionOptions);
  auto begin = std::chrono::steady_clock::now();
  std::vector<GenerateResult> results = generate(decoder, prompts, options);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();

  size_t tokens = 0;
  for (const GenerateResult &r : results) {
    std::string line;
    for (int32_t id : r.best.tokens) {
      if (!line.empty())
        line += ',';
      line += std::to_string(id);
    }
    std::printf("%s\n", line.c_str());
    tokens += r.best.tokens.size();
  }
  std::fflush(stdout); // the ids before the summary, also when both go to one pipe
  std::string search = o.beamSize ? "beam " + std::to_string(*o.beamSize)
                       : o.sample ? "sampling"
                                  : "greedy";
  std::fprintf(stderr,
               "%zu prompts, %zu generated tokens in %.1f ms: %.0f tokens/s (%s)\n",
               prompts.size(), tokens, seconds * 1e3,
               seconds > 0 ? double(tokens) / seconds : 0.0, search.c_str());
  reportProfile(stdout, decoder.session(), o.session);
}

} // namespace kiln::driver
