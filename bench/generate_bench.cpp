// generate_bench.cpp - tokens/s of greedy generation with a compiled Transformer, with
// the KV-cache decoder or whole-prefix re-decoding (bench/generate_torch.py runs it and
// adds PyTorch). Every source generates exactly --tokens tokens: <eos> is not a stop
// here.
//
//   generate_bench MODEL.so WEIGHTS.safetensors SOURCES.txt [--batch B] [--tokens N]
//                  [--repeat R] [--decoder kv|prefix] [--profile 1]
//
// SOURCES.txt has one source per line, token ids separated by spaces; the first B are
// used. Prints the median tokens/s over R timed runs (after one warm-up run), the median
// time of one step() over those runs' steps (for the KV-cache decoder: one decode_step
// plus the log-softmax of its logits), and the tokens each row generated ("row I:
// ids..."). --profile 1 also prints every run's kernel calls (the warm-up's too) by
// kernel (calls, mean, fastest and total time), to see where a step's time goes.
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

namespace {

/// Times every step() of the decoder it wraps.
class TimedSteps : public kiln::StepDecoder {
public:
  explicit TimedSteps(kiln::StepDecoder &inner) : inner_(inner) {}
  void start(const std::vector<std::vector<int32_t>> &sources) override {
    inner_.start(sources);
  }
  void step(const std::vector<int32_t> &sourceOf,
            const std::vector<std::vector<int32_t>> &prefixes,
            std::vector<double> &logProbs) override {
    auto begin = std::chrono::steady_clock::now();
    inner_.step(sourceOf, prefixes, logProbs);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  void reorder(const std::vector<int32_t> &parents) override { inner_.reorder(parents); }
  int64_t vocabSize() const override { return inner_.vocabSize(); }

  std::vector<double> seconds;

private:
  kiln::StepDecoder &inner_;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// The recorded kernel calls by kernel, the costliest first. The fastest call is what
/// the kernel takes when no other process holds a core, which a shared machine's mean
/// hides.
void printProfile(const kiln::Session &session) {
  std::printf("%-44s %8s %10s %10s %10s\n", "kernel", "calls", "mean us", "min us",
              "total ms");
  for (const kiln_profile_row &row : session.profileSummary(KILN_PROFILE_BY_KERNEL))
    std::printf("%-44s %8llu %10.2f %10.2f %10.3f\n", row.name,
                static_cast<unsigned long long>(row.calls),
                double(row.total_ns) / 1e3 / double(row.calls), double(row.min_ns) / 1e3,
                double(row.total_ns) / 1e6);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s MODEL.so WEIGHTS SOURCES.txt [--batch B] [--tokens N] "
                 "[--repeat R] [--decoder kv|prefix] [--profile 1]\n",
                 argv[0]);
    return 2;
  }
  size_t batch = 1;
  int tokens = 64, repeat = 5;
  std::string decoderKind = "kv";
  bool profile = false;
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
    else if (arg == "--profile")
      profile = value != "0";
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
    kiln_session_options sessionOptions = kiln::defaultSessionOptions();
    sessionOptions.profile = profile;
    std::unique_ptr<kiln::StepDecoder> decoder;
    const kiln::Session *session = nullptr;
    if (decoderKind == "kv") {
      auto kv = std::make_unique<kiln::KVCacheDecoder>(
          model, weights, 0, kiln::KVCacheEntries(), &sessionOptions);
      session = &kv->session();
      decoder = std::move(kv);
    } else if (decoderKind == "prefix") {
      auto prefix = std::make_unique<kiln::PrefixDecoder>(model, weights, 0, "encode",
                                                          "decode", &sessionOptions);
      session = &prefix->session();
      decoder = std::move(prefix);
    } else
      throw kiln::Error(KILN_STATUS_INVALID_ARGUMENT, "--decoder is kv or prefix");

    kiln::GenerateOptions options;
    options.maxLength = tokens;
    options.eosId = -1; // never stop early: every run does the same work
    std::vector<kiln::GenerateResult> results =
        kiln::generate(*decoder, sources, options);
    TimedSteps timed(*decoder);
    std::vector<double> seconds;
    for (int r = 0; r < repeat; ++r) {
      auto begin = std::chrono::steady_clock::now();
      kiln::generate(timed, sources, options);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
              .count());
    }
    double runSeconds = median(seconds);
    std::printf(
        "decoder %s batch %zu: %d tokens per row, median %.1f ms, tokens/s %.1f\n",
        decoderKind.c_str(), batch, tokens, runSeconds * 1e3,
        double(batch) * tokens / runSeconds);
    std::printf("step: median %.3f ms over %zu steps\n", median(timed.seconds) * 1e3,
                timed.seconds.size());
    if (profile)
      printProfile(*session);
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
