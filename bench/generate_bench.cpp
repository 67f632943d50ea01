// generate_bench.cpp - tokens/s of greedy generation with a compiled Transformer, with
// the KV-cache decoder or whole-prefix re-decoding (bench/generate_torch.py runs it and
// adds PyTorch). Every source generates exactly --tokens tokens: <eos> is not a stop
// here.
//
//   generate_bench MODEL.so WEIGHTS.safetensors SOURCES.txt [--batch B] [--tokens N]
//                  [--repeat R] [--decoder kv|prefix]
//
// SOURCES.txt has one source per line, token ids separated by spaces; the first B are
// used. Prints the median tokens/s over R timed runs (after one warm-up run) and the
// tokens each row generated ("row I: ids...").
#include "kiln/generate.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s MODEL.so WEIGHTS SOURCES.txt [--batch B] [--tokens N] "
                 "[--repeat R] [--decoder kv|prefix]\n",
                 argv[0]);
    return 2;
  }
  size_t batch = 1;
  int tokens = 64, repeat = 5;
  std::string decoderKind = "kv";
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--batch")
      batch = size_t(std::atoi(value.c_str()));
    else if (arg == "--tokens")
      tokens = std::atoi(value.c_str());
    else if (arg == "--repeat")
      repeat = std::atoi(value.c_str());
    else if (arg == "--decoder")
      decoderKind = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  try {
    std::vector<std::vector<int32_t>> sources;
    std::ifstream in(argv[3]);
    for (std::string line; std::getline(in, line) && sources.size() < batch;) {
      std::istringstream ids(line);
      std::vector<int32_t> row;
      for (int32_t id; ids >> id;)
        row.push_back(id);
      if (!row.empty())
        sources.push_back(std::move(row));
    }
    if (sources.size() != batch)
      throw kiln::Error(KILN_STATUS_INVALID_ARGUMENT,
                        std::string(argv[3]) + " has fewer than " +
                            std::to_string(batch) + " sources");
    kiln::Model model = kiln::Model::open(argv[1]);
    kiln::Weights weights = kiln::Weights::open(model, argv[2]);
    std::unique_ptr<kiln::StepDecoder> decoder;
    if (decoderKind == "kv")
      decoder = std::make_unique<kiln::KVCacheDecoder>(model, weights);
    else if (decoderKind == "prefix")
      decoder = std::make_unique<kiln::PrefixDecoder>(model, weights);
    else
      throw kiln::Error(KILN_STATUS_INVALID_ARGUMENT, "--decoder is kv or prefix");

    kiln::GenerateOptions options;
    options.maxLength = tokens;
    options.eosId = -1; // never stop early: every run does the same work
    std::vector<kiln::GenerateResult> results =
        kiln::generate(*decoder, sources, options);
    std::vector<double> seconds;
    for (int r = 0; r < repeat; ++r) {
      auto begin = std::chrono::steady_clock::now();
      kiln::generate(*decoder, sources, options);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
              .count());
    }
    std::sort(seconds.begin(), seconds.end());
    double median = seconds[seconds.size() / 2];
    if (seconds.size() % 2 == 0)
      median = (median + seconds[seconds.size() / 2 - 1]) / 2;
    std::printf(
        "decoder %s batch %zu: %d tokens per row, median %.1f ms, tokens/s %.1f\n",
        decoderKind.c_str(), batch, tokens, median * 1e3,
        double(batch) * tokens / median);
    for (size_t i = 0; i < results.size(); ++i) {
      std::printf("row %zu:", i);
      for (int32_t id : results[i].best.tokens)
        std::printf(" %d", id);
      std::printf("\n");
    }
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "generate_bench: error: %s\n", e.what());
    return 1;
  }
}
