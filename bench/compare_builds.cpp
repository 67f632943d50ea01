// compare_builds.cpp - builds of one Transformer model timed side by side: their calls
// alternate in one process, the builds' order rotated each round, so that a shared
// machine's load (which moved single calls by up to 30 % on the project's VMs, and
// whole processes by more) falls on all of them alike. Meant for a schedule change:
// two libraries of the same model and kernel plan, before and after.
//
//   compare_builds WEIGHTS.safetensors BUILD.so BUILD.so... [--batch B] [--source S]
//                  [--padded P] [--rounds R] [--threads T] [--decode-steps N]
//
// The sources are random token ids of [B, S] (fixed seed), the last P positions of each
// sentence padding. A round of a build is one encode call, or with --decode-steps N
// greedy-style decoding through the KV caches (kiln::KVCacheDecoder: decode_start, then
// N decode_step calls fed the same fixed tokens in every build), whose value is its
// median step. Prints, per build, the median and minimum of the rounds' values and the
// median time one call (an encode, a step) spends in each kernel (those of at least 1 %
// of it); then, for each build after the first, the median over rounds of its value
// divided by the first build's in the same round, for the whole call and per kernel.
// Kernels are matched by name, so the builds must share the model's name and kernel plan.
//
// List a copy of the first build among the others: its ratio is the run's noise. On the
// project's Zen 4 VM, where a call streams its weights from DRAM, the first build loaded
// ran slower than copies of it loaded after, each copy a little faster than the one
// before: bf16 decode steps by 4-8 %, f32 encodes of 16 and 32 positions by 3-9 % (page
// alignment and glibc's mmap threshold made no difference). f32 decode steps and
// encodes of 64 positions and more showed none (0.99-1.01). Listing a copy first, and
// comparing with another copy, absorbs it.
#include "kiln/generate.h"
#include "kiln/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t batch = 8, source = 128, padded = 0;
  int rounds = 20, threads = 2;
  /// 0: time encode calls; otherwise this many decode_step calls a round.
  int decodeSteps = 0;
};

/// Milliseconds of one call: the whole of it and each kernel's share.
struct CallTimes {
  double whole = 0;
  std::map<std::string, double> kernels;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

/// Session options that record each kernel call, on `threads` threads.
kiln_session_options profiledOptions(int threads) {
  kiln_session_options options = kiln::defaultSessionOptions();
  options.num_threads = threads;
  options.profile = 1;
  return options;
}

/// A build: its library and weights, and the session that records each kernel call: an
/// encode's, or for decoding, a KV-cache decoder's.
struct Build {
  std::string path;
  kiln::Model model;
  kiln::Weights weights;
  kiln_session_options options;
  std::unique_ptr<kiln::Session> session;
  std::unique_ptr<kiln::KVCacheDecoder> decoder;
  std::vector<CallTimes> calls;

  Build(const std::string &path, const std::string &weightsPath, int threads,
        bool decoding)
      : path(path), model(kiln::Model::open(path)),
        weights(kiln::Weights::open(model, weightsPath)),
        options(profiledOptions(threads)) {
    if (decoding)
      decoder = std::make_unique<kiln::KVCacheDecoder>(model, weights, /*padId=*/0,
                                                       kiln::KVCacheEntries(), &options);
    else
      session = std::make_unique<kiln::Session>(model, weights, &options);
  }

  /// The kernels' milliseconds in `s`'s profile since its last reset, by kernel name
  /// less the model's prefix (kiln_MODEL_kN_WHAT: the same in each build).
  std::map<std::string, double> kernelTimes(const kiln::Session &s) const {
    const std::string prefix = std::string("kiln_") + kiln_model_name(model.get()) + "_";
    std::map<std::string, double> kernels;
    for (const kiln_profile_call &call : s.profileCalls()) {
      std::string name = call.kernel;
      if (name.compare(0, prefix.size(), prefix) == 0)
        name.erase(0, prefix.size());
      kernels[name] += call.duration_ns * 1e-6;
    }
    return kernels;
  }

  CallTimes encode(const std::vector<kiln::TensorArg> &inputs) {
    kiln::check(kiln_session_profile_reset(session->get()));
    auto begin = std::chrono::steady_clock::now();
    session->run("encode", inputs);
    auto end = std::chrono::steady_clock::now();
    return {std::chrono::duration<double, std::milli>(end - begin).count(),
            kernelTimes(*session)};
  }

  /// decode_start over `sources`, then `steps` decode_step calls, each row fed
  /// `tokens[step]`: the median step, and each kernel's median time in a step.
  CallTimes decode(const std::vector<std::vector<int32_t>> &sources,
                   const std::vector<int32_t> &tokens) {
    decoder->start(sources);
    std::vector<int32_t> sourceOf(sources.size());
    for (size_t i = 0; i < sourceOf.size(); ++i)
      sourceOf[i] = static_cast<int32_t>(i);
    std::vector<std::vector<int32_t>> prefixes(sources.size());
    std::vector<double> logProbs, steps;
    std::map<std::string, std::vector<double>> perKernel;
    const kiln::Session &stepSession = decoder->session();
    for (int32_t token : tokens) {
      for (std::vector<int32_t> &prefix : prefixes)
        prefix.push_back(token);
      kiln::check(kiln_session_profile_reset(stepSession.get()));
      auto begin = std::chrono::steady_clock::now();
      decoder->step(sourceOf, prefixes, logProbs);
      auto end = std::chrono::steady_clock::now();
      steps.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
      for (const auto &[name, ms] : kernelTimes(stepSession))
        perKernel[name].push_back(ms);
    }
    CallTimes times;
    times.whole = median(steps);
    for (const auto &[name, ms] : perKernel)
      times.kernels[name] = median(ms);
    return times;
  }
};

int usage(const char *program) {
  std::fprintf(stderr,
               "usage: %s WEIGHTS BUILD.so BUILD.so... [--batch B] [--source S] "
               "[--padded P] [--rounds R] [--threads T] [--decode-steps N]\n",
               program);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string weightsPath;
  std::vector<std::string> builds;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      (weightsPath.empty() ? weightsPath : builds.emplace_back()) = arg;
      continue;
    }
    if (i + 1 >= argc)
      return usage(argv[0]);
    long long value = std::atoll(argv[++i]);
    if (arg == "--batch")
      o.batch = value;
    else if (arg == "--source")
      o.source = value;
    else if (arg == "--padded")
      o.padded = value;
    else if (arg == "--rounds")
      o.rounds = static_cast<int>(value);
    else if (arg == "--threads")
      o.threads = static_cast<int>(value);
    else if (arg == "--decode-steps")
      o.decodeSteps = static_cast<int>(value);
    else
      return usage(argv[0]);
  }
  if (builds.size() < 2 || o.batch < 1 || o.source < 1 || o.padded < 0 ||
      o.padded >= o.source || o.rounds < 1 || o.threads < 1 || o.decodeSteps < 0)
    return usage(argv[0]);
  const bool decoding = o.decodeSteps > 0;

  try {
    std::vector<Build> loaded;
    loaded.reserve(builds.size());
    for (const std::string &path : builds)
      loaded.emplace_back(path, weightsPath, o.threads, decoding);
    if (decoding && loaded.front().decoder->capacity() > 0 &&
        o.decodeSteps > loaded.front().decoder->capacity()) {
      std::fprintf(
          stderr, "error: --decode-steps %d is past the caches' %lld positions\n",
          o.decodeSteps, static_cast<long long>(loaded.front().decoder->capacity()));
      return 1;
    }

    std::mt19937 rng(0);
    std::vector<int32_t> ids(static_cast<size_t>(o.batch * o.source));
    for (int32_t &id : ids)
      id = static_cast<int32_t>(4 + rng() % 996);
    std::vector<int32_t> lengths(static_cast<size_t>(o.batch),
                                 static_cast<int32_t>(o.source - o.padded));
    std::vector<kiln::TensorArg> inputs = {
        kiln::TensorArg::of("src_ids", {o.batch, o.source}, ids.data()),
        kiln::TensorArg::of("src_lengths", {o.batch}, lengths.data())};
    std::vector<std::vector<int32_t>> sources;
    for (int64_t b = 0; b < o.batch; ++b)
      sources.emplace_back(ids.begin() + b * o.source,
                           ids.begin() + b * o.source + (o.source - o.padded));
    // Tokens fed to the steps: the same in every build, so that they do the same work.
    std::vector<int32_t> tokens(static_cast<size_t>(o.decodeSteps));
    for (int32_t &token : tokens)
      token = static_cast<int32_t>(4 + rng() % 996);
    auto round = [&](Build &b) {
      return decoding ? b.decode(sources, tokens) : b.encode(inputs);
    };

    for (Build &b : loaded) // warm-up: pages, caches, thread pools
      round(b);
    for (int r = 0; r < o.rounds; ++r)
      for (size_t j = 0; j < loaded.size(); ++j) {
        Build &b = loaded[(j + static_cast<size_t>(r)) % loaded.size()];
        b.calls.push_back(round(b));
      }

    if (decoding)
      std::printf("decode_step B=%lld, %d steps a round (median step) after a source of "
                  "S=%lld (%lld padded), %d threads, %d rounds\n",
                  static_cast<long long>(o.batch), o.decodeSteps,
                  static_cast<long long>(o.source), static_cast<long long>(o.padded),
                  o.threads, o.rounds);
    else
      std::printf("encode B=%lld S=%lld (%lld padded), %d threads, %d rounds\n",
                  static_cast<long long>(o.batch), static_cast<long long>(o.source),
                  static_cast<long long>(o.padded), o.threads, o.rounds);
    const Build &first = loaded.front();
    std::vector<std::string> kernels;
    double firstMedian = 0;
    {
      std::vector<double> whole;
      for (const CallTimes &c : first.calls)
        whole.push_back(c.whole);
      firstMedian = median(whole);
    }
    for (const auto &[name, unused] : first.calls.front().kernels) {
      std::vector<double> t;
      for (const CallTimes &c : first.calls)
        t.push_back(c.kernels.at(name));
      if (median(t) >= 0.01 * firstMedian)
        kernels.push_back(name);
    }
    for (const Build &b : loaded) {
      std::vector<double> whole;
      for (const CallTimes &c : b.calls)
        whole.push_back(c.whole);
      std::printf("%s: median %.2f ms, min %.2f ms;", b.path.c_str(), median(whole),
                  *std::min_element(whole.begin(), whole.end()));
      for (const std::string &k : kernels) {
        std::vector<double> t;
        for (const CallTimes &c : b.calls)
          t.push_back(c.kernels.count(k) ? c.kernels.at(k) : 0);
        std::printf(" %s %.2f", k.c_str(), median(t));
      }
      std::printf("\n");
    }
    for (size_t i = 1; i < loaded.size(); ++i) {
      std::vector<double> whole;
      std::map<std::string, std::vector<double>> perKernel;
      for (int r = 0; r < o.rounds; ++r) {
        const CallTimes &a = first.calls[r], &b = loaded[i].calls[r];
        whole.push_back(b.whole / a.whole);
        for (const std::string &k : kernels)
          if (b.kernels.count(k))
            perKernel[k].push_back(b.kernels.at(k) / a.kernels.at(k));
      }
      std::printf("%s / %s: %.3f;", loaded[i].path.c_str(), first.path.c_str(),
                  median(whole));
      for (const std::string &k : kernels)
        std::printf(" %s %.3f", k.c_str(), median(perKernel[k]));
      std::printf("\n");
    }
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
