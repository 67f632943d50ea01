// session_overhead.cpp - what the runtime itself costs a Transformer: the bytes of
// temporaries an encode and a decoding step hold, and the time per decode_step. Run on a
// model whose kernels return at once (bench/make_noop_model.py), the time is the
// runtime's own per-step overhead: argument binding, dimension binding and input checks,
// shape evaluation and memory planning (bench/run_session_overhead.sh runs both).
//
//   session_overhead MODEL.so WEIGHTS.safetensors [--batch B] [--source S] [--steps N]
//                    [--repeat R]
//
// Prints the temp bytes after an encode of [B, S] (a fresh session), the temp bytes a
// decode_step adds to those of decode_start, and the median and minimum time per
// decode_step over R sequences of N steps from position 0.
#include "kiln/runtime.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t batch = 8, source = 128;
  int steps = 64, repeat = 5;
};

void run(kiln_session *session, const char *entry, const std::vector<kiln_tensor> &in) {
  kiln::check(kiln_session_run(session, entry, in.data(), in.size()));
}

uint64_t tempBytes(const kiln::Session &session) { return session.stats().temp_bytes; }

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: %s MODEL.so WEIGHTS [--batch B] [--source S] [--steps N] "
                 "[--repeat R]\n",
                 argv[0]);
    return 2;
  }
  Options o;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    long long value = std::atoll(argv[i + 1]);
    if (arg == "--batch")
      o.batch = value;
    else if (arg == "--source")
      o.source = value;
    else if (arg == "--steps")
      o.steps = int(value);
    else if (arg == "--repeat")
      o.repeat = int(value);
    else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  try {
    kiln::Model model = kiln::Model::open(argv[1]);
    kiln::Weights weights = kiln::Weights::open(model, argv[2]);
    std::mt19937 rng(0);
    const int64_t b = o.batch, s = o.source, dModel = 512;
    std::vector<int32_t> ids(size_t(b * s));
    std::vector<int32_t> lengths(static_cast<size_t>(b), static_cast<int32_t>(s));
    for (int32_t &id : ids)
      id = int32_t(rng() % 8000);
    std::vector<float> memory(size_t(b * s * dModel));
    std::normal_distribution<float> normal;
    for (float &x : memory)
      x = normal(rng);
    int64_t idsShape[] = {b, s}, lengthsShape[] = {b}, memoryShape[] = {b, s, dModel},
            tokenShape[] = {b, 1};

    kiln::Session encoder(model, weights);
    run(encoder.get(), "encode",
        {{"src_ids", KILN_DTYPE_I32, 2, idsShape, ids.data()},
         {"src_lengths", KILN_DTYPE_I32, 1, lengthsShape, lengths.data()}});
    std::printf("encode B=%lld S=%lld: temp bytes %llu\n", (long long)b, (long long)s,
                (unsigned long long)tempBytes(encoder));

    kiln::Session decoder(model, weights);
    std::vector<kiln_tensor> start{
        {"memory", KILN_DTYPE_F32, 3, memoryShape, memory.data()},
        {"src_lengths", KILN_DTYPE_I32, 1, lengthsShape, lengths.data()}};
    std::vector<int32_t> tokens(size_t(b), 1);
    int32_t position = 0;
    std::vector<kiln_tensor> step{
        {"tgt_ids", KILN_DTYPE_I32, 2, tokenShape, tokens.data()},
        {"step", KILN_DTYPE_I32, 0, nullptr, &position},
        {"src_lengths", KILN_DTYPE_I32, 1, lengthsShape, lengths.data()}};
    std::vector<double> micros;
    uint64_t startBytes = 0;
    for (int r = 0; r < o.repeat + 1; ++r) { // the first sequence warms up
      run(decoder.get(), "decode_start", start);
      startBytes = r == 0 ? tempBytes(decoder) : startBytes;
      for (position = 0; position < o.steps; ++position) {
        auto begin = std::chrono::steady_clock::now();
        run(decoder.get(), "decode_step", step);
        auto end = std::chrono::steady_clock::now();
        if (r > 0)
          micros.push_back(
              std::chrono::duration<double, std::micro>(end - begin).count());
      }
    }
    std::sort(micros.begin(), micros.end());
    std::printf("decode_step B=%lld S=%lld, %d steps: temp bytes %llu\n", (long long)b,
                (long long)s, o.steps,
                (unsigned long long)(tempBytes(decoder) - startBytes));
    std::printf("decode_step time: median %.1f us, min %.1f us over %zu steps\n",
                micros[micros.size() / 2], micros.front(), micros.size());
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
