// fma_peak.cpp - the fp32 multiply-add rate the cores reach with nothing to wait for:
// T threads each run independent chains of fused multiply-adds on the widest vectors
// the CPU has (512-bit with AVX-512F, else 256-bit with FMA3). No matrix product can
// beat it, so bench/model_bench.py shows each engine's encoder GFLOP/s as a share of
// it beside the sgemm's; a goal that needs more than this rate cannot be met.
//
//   fma_peak [--threads T] [--repeat R]
//
// Prints "fma peak: T threads, ISA, median X GFLOP/s over R runs (checksum C)" after
// one warm-up run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <immintrin.h>
#include <string>
#include <thread>
#include <vector>

namespace {

// Enough chains to cover an FMA's latency times the FMAs a core issues a cycle on
// every x86 core of this project's machine kinds (4 cycles x 2 pipes), with margin.
constexpr int kChains = 12;
// Steps per run: long enough (hundreds of ms of work) for one run to dwarf thread
// start-up.
constexpr long kSteps = 1L << 24;

__attribute__((target("avx512f"))) float chains512(float seed) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm512_set1_ps(seed + static_cast<float>(c));
  // Multiplying by a number just under 1 and adding a small one keeps every chain
  // finite and away from denormals for any number of steps.
  const __m512 mul = _mm512_set1_ps(0.999999f), add = _mm512_set1_ps(1e-6f);
  for (long s = 0; s < kSteps; ++s)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm512_fmadd_ps(acc[c], mul, add);
  __m512 total = acc[0];
  for (int c = 1; c < kChains; ++c)
    total = _mm512_add_ps(total, acc[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, total);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

__attribute__((target("avx2,fma"))) float chains256(float seed) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-6f);
  for (long s = 0; s < kSteps; ++s)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c)
      acc[c] = _mm256_fmadd_ps(acc[c], mul, add);
  __m256 total = acc[0];
  for (int c = 1; c < kChains; ++c)
    total = _mm256_add_ps(total, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, total);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

/// Seconds for `threads` threads to run their chains; the sums go to `sink` so that
/// the work cannot be dropped.
double timedRun(bool wide, int threads, std::vector<float> &sink) {
  auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      float seed = static_cast<float>(t + 1);
      sink[t] = wide ? chains512(seed) : chains256(seed);
    });
  for (std::thread &th : pool)
    th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

} // namespace

int main(int argc, char **argv) {
  int threads = 2, repeat = 5;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    if ((arg != "--threads" && arg != "--repeat") || i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s [--threads T] [--repeat R]\n", argv[0]);
      return 2;
    }
    (arg == "--threads" ? threads : repeat) = std::atoi(argv[i + 1]);
  }
  if (threads < 1 || repeat < 1) {
    std::fprintf(stderr, "fma_peak: T and R must be at least 1\n");
    return 2;
  }
  __builtin_cpu_init();
  const bool wide = __builtin_cpu_supports("avx512f");
  if (!wide && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "fma_peak: the CPU has neither AVX-512F nor AVX2 with FMA\n");
    return 1;
  }
  std::vector<float> sink(static_cast<size_t>(threads));
  timedRun(wide, threads, sink);
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r)
    seconds.push_back(timedRun(wide, threads, sink));
  std::sort(seconds.begin(), seconds.end());
  double median =
      seconds.size() % 2
          ? seconds[seconds.size() / 2]
          : (seconds[seconds.size() / 2 - 1] + seconds[seconds.size() / 2]) / 2;
  const int lanes = wide ? 16 : 8;
  double flops = 2.0 * lanes * kChains * static_cast<double>(kSteps) * threads;
  double check = 0;
  for (float s : sink)
    check += s;
  std::printf("fma peak: %d threads, %s, median %.1f GFLOP/s over %d runs "
              "(checksum %.6g)\n",
              threads, wide ? "avx512f" : "avx2+fma", flops / median / 1e9, repeat,
              check);
  return 0;
}
