// stream_read.cpp - the memory bandwidth a plain streaming read reaches: T threads each
// sum their contiguous share of one buffer (64-bit integer adds in 8 independent
// accumulators, which the compiler vectorizes), the way a batch-1 matrix-vector product
// streams its weights once. bench/model_bench.py compares Kiln's decode_step with it.
//
//   stream_read BYTES [--threads T] [--repeat R]
//
// Prints "stream read: BYTES bytes, T threads, median X GB/s over R runs" (GB = 1e9
// bytes) after one warm-up run; the buffer is written first, so no page faults are timed.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t sumWords(const uint64_t *begin, const uint64_t *end) {
  constexpr int kLanes = 8;
  uint64_t acc[kLanes] = {};
  const uint64_t *p = begin;
  for (; p + kLanes <= end; p += kLanes)
    for (int l = 0; l < kLanes; ++l)
      acc[l] += p[l];
  uint64_t total = 0;
  for (; p < end; ++p)
    total += *p;
  for (uint64_t a : acc)
    total += a;
  return total;
}

/// Seconds for `threads` threads to read their shares of `words`; the sums go to
/// `sink` so that the reads cannot be dropped.
double timedRead(const std::vector<uint64_t> &words, int threads,
                 std::vector<uint64_t> &sink) {
  auto begin = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  size_t share = (words.size() + threads - 1) / threads;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      size_t lo = std::min(words.size(), t * share);
      size_t hi = std::min(words.size(), lo + share);
      sink[t] = sumWords(words.data() + lo, words.data() + hi);
    });
  for (std::thread &th : pool)
    th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BYTES [--threads T] [--repeat R]\n", argv[0]);
    return 2;
  }
  size_t bytes = std::strtoull(argv[1], nullptr, 10);
  int threads = 2, repeat = 20;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (arg == "--repeat")
      repeat = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "stream_read: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (bytes < sizeof(uint64_t) || threads < 1 || repeat < 1) {
    std::fprintf(stderr, "stream_read: BYTES must be at least 8, T and R at least 1\n");
    return 2;
  }
  std::vector<uint64_t> words(bytes / sizeof(uint64_t));
  for (size_t i = 0; i < words.size(); ++i)
    words[i] = i;
  std::vector<uint64_t> sink(static_cast<size_t>(threads));
  timedRead(words, threads, sink);
  std::vector<double> seconds;
  for (int r = 0; r < repeat; ++r)
    seconds.push_back(timedRead(words, threads, sink));
  std::sort(seconds.begin(), seconds.end());
  double median =
      seconds.size() % 2
          ? seconds[seconds.size() / 2]
          : (seconds[seconds.size() / 2 - 1] + seconds[seconds.size() / 2]) / 2;
  uint64_t check = 0;
  for (uint64_t s : sink)
    check += s;
  double readBytes = double(words.size() * sizeof(uint64_t));
  std::printf("stream read: %.0f bytes, %d threads, median %.2f GB/s over %d runs "
              "(checksum %llu)\n",
              readBytes, threads, readBytes / median / 1e9, repeat,
              static_cast<unsigned long long>(check));
  return 0;
}
