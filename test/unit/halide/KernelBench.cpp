//===- KernelBench.cpp - Times the CPU schedules of the lowered kernels ---===//
//
// The measurements recorded in SchedulesCpu.cpp come from this program: each case
// JIT-compiles one op's kernel, realizes it a few times on random inputs and reports
// the median wall time, the best wall time and the median process CPU time per run.
// On a shared machine the CPU time is the steadier measure of a 1-thread run (time
// spent descheduled does not count). Run with HL_NUM_THREADS=1 or 2; arguments select
// cases by substring.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>

using namespace kiln::halide_backend::test;

namespace {

struct BenchCase {
  std::string name;
  std::vector<std::string> argTypes;
  std::string resultType, op;
  std::vector<Shape> inputs;
  Shape output;
  /// Floating-point operations per run (0: report bandwidth instead).
  double flops;
  /// For an i32 input (by position): its values, uniform in [lo, hi].
  std::vector<std::pair<int32_t, int32_t>> intRanges = {};
  /// The bytes a run moves when it reads only part of an input (a gather, a slice);
  /// 0: every input and the output, once.
  double bytes = 0;
  /// An input (by position) that each run reads from DRAM, as a decode step reads each
  /// weight: the runs take turns over copies of it that together are 8x the L3 cache.
  /// -1: none (every run reads the same, cached inputs).
  int coldInput = -1;
  /// For an attention: q, k and v are passed as head splits of one packed projection,
  /// the result as merged heads, as in a model (not dense [B, H, T, D] tensors).
  bool headSplits = false;
  /// Lines before the op (its operands' views: a weight's kiln.unpack_panels).
  std::string prologue = "";
};

double cpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int64_t elements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

void runCase(const BenchCase &c) {
  KernelHarness harness;
  std::string error =
      harness.load(oneOpModule(c.argTypes, c.resultType, c.op, c.prologue));
  if (!error.empty()) {
    std::printf("%-34s %s\n", c.name.c_str(), error.c_str());
    return;
  }
  if (const char *dir = std::getenv("KILN_BENCH_STMT")) {
    std::vector<Halide::Argument> args(harness.kernel.inputs.begin(),
                                       harness.kernel.inputs.end());
    std::string base = std::string(dir) + "/" + c.name;
    harness.pipeline.compile_to_lowered_stmt(base + ".stmt", args, Halide::Text);
    harness.pipeline.compile_to_assembly(base + ".s", args, c.name);
  }
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (i < c.intRanges.size() && c.intRanges[i].first <= c.intRanges[i].second) {
      HostTensor t = HostTensor::ints(c.inputs[i]);
      std::mt19937 rng(17 + i);
      std::uniform_int_distribution<int32_t> dist(c.intRanges[i].first,
                                                  c.intRanges[i].second);
      for (int32_t &v : t.i32)
        v = dist(rng);
      inputs.push_back(t);
    } else {
      inputs.push_back(randomTensor(c.inputs[i], 17 + i));
    }
  }
  HostTensor out = harness.run(inputs, c.output);
  if (std::getenv("KILN_BENCH_VERIFY")) {
    // The interpreter's plain loops take seconds on the largest cases.
    std::string error;
    HostTensor expected = harness.reference(inputs, error);
    double diff = 0, scale = 0;
    for (size_t i = 0; error.empty() && i < expected.f32.size(); ++i) {
      if (!std::isfinite(expected.f32[i])) // masks: compared by the tests
        continue;
      diff = std::max<double>(diff, std::abs(out.f32[i] - expected.f32[i]));
      scale = std::max<double>(scale, std::abs(expected.f32[i]));
    }
    for (size_t i = 0; error.empty() && i < expected.i32.size(); ++i)
      diff = std::max<double>(diff, out.i32[i] != expected.i32[i]);
    scale = std::max(scale, 1e-30);
    if (error.empty())
      std::printf("%-34s max|a-b|/max|b| = %.2g\n", c.name.c_str(), diff / scale);
    else
      std::printf("%-34s reference failed: %s\n", c.name.c_str(), error.c_str());
  }
  Halide::Buffer<> result = KernelHarness::toBuffer(out);
  std::vector<Halide::Buffer<>> coldCopies;
  std::vector<HostTensor> coldData;
  if (c.coldInput >= 0) {
    const HostTensor &cold = inputs[c.coldInput];
    Halide::Type type = harness.kernel.inputs[c.coldInput].type();
    size_t copies =
        std::max<size_t>(2, (256u << 20) / (elements(cold.shape) * type.bytes() + 1));
    coldData.assign(copies, cold);
    for (const HostTensor &t : coldData)
      coldCopies.push_back(KernelHarness::toBuffer(t, type));
  }
  std::unique_ptr<PackedHeads> heads;
  if (c.headSplits) {
    heads = std::make_unique<PackedHeads>(inputs);
    for (int w = 0; w < 3; ++w)
      harness.kernel.inputs[w].set(heads->split(w));
    result = heads->mergedView();
  }
  size_t turn = 0;
  auto realize = [&] {
    if (!coldCopies.empty())
      harness.kernel.inputs[c.coldInput].set(coldCopies[turn++ % coldCopies.size()]);
    harness.realize(result);
  };
  std::vector<double> times, cpuTimes;
  int64_t bytes = elements(c.output) * 4;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    bytes += elements(c.inputs[i]) * harness.kernel.inputs[i].type().bytes();
  // Enough runs for ~0.3 s, at least 7, at most 200.
  auto start = std::chrono::steady_clock::now();
  realize();
  double once =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int runs = std::clamp(static_cast<int>(0.3 / std::max(once, 1e-6)), 7, 200);
  for (int i = 0; i < runs; ++i) {
    double cpu = cpuSeconds();
    auto s = std::chrono::steady_clock::now();
    realize();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
    cpuTimes.push_back(cpuSeconds() - cpu);
  }
  double t = median(times), best = *std::min_element(times.begin(), times.end());
  double cpu = median(cpuTimes);
  double work = c.flops > 0 ? c.flops : c.bytes > 0 ? c.bytes : bytes;
  std::printf("%-34s %8.3f ms  %6.1f %s  best %6.1f  cpu %6.1f\n", c.name.c_str(),
              t * 1e3, work / t * 1e-9, c.flops > 0 ? "GFLOP/s" : "GB/s   ",
              work / best * 1e-9, work / cpu * 1e-9);
}

/// The suffix of a case over a reduced-precision weight of element type `weight`.
std::string suffixOf(const std::string &weight) {
  return weight == "f32" ? "" : weight == "i8" ? "_int8" : "_" + weight;
}

double matmulFlops(double m, double n, double k, double batch = 1) {
  return 2 * m * n * k * batch;
}

std::vector<BenchCase> cases() {
  std::vector<BenchCase> all;
  for (int m : {128, 512}) {
    std::string lhs = "tensor<1x?x512xf32>", out = "tensor<1x?x2048xf32>";
    all.push_back({m == 128 ? "matmul_xWt_128x512x2048" : "matmul_xWt_512x512x2048",
                   {lhs, "tensor<2048x512xf32>"},
                   out,
                   "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (" + lhs +
                       ", tensor<2048x512xf32>) -> " + out,
                   {{1, m, 512}, {2048, 512}},
                   {1, m, 2048},
                   matmulFlops(m, 2048, 512)});
    all.push_back(
        {m == 128 ? "matmul_xW_128x512x2048" : "matmul_xW_512x512x2048",
         {lhs, "tensor<512x2048xf32>"},
         out,
         "kiln.matmul %arg0, %arg1 : (" + lhs + ", tensor<512x2048xf32>) -> " + out,
         {{1, m, 512}, {512, 2048}},
         {1, m, 2048},
         matmulFlops(m, 2048, 512)});
  }
  all.push_back(
      {"matmul_xWt_8x64x512_2048_to_512",
       {"tensor<?x?x2048xf32>", "tensor<512x2048xf32>"},
       "tensor<?x?x512xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x?x2048xf32>, "
       "tensor<512x2048xf32>) -> tensor<?x?x512xf32>",
       {{8, 64, 2048}, {512, 2048}},
       {8, 64, 512},
       matmulFlops(512, 512, 2048)});
  all.push_back(
      {"matmul_decode_16x1x512x2048",
       {"tensor<?x1x512xf32>", "tensor<2048x512xf32>"},
       "tensor<?x1x2048xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x1x512xf32>, "
       "tensor<2048x512xf32>) -> tensor<?x1x2048xf32>",
       {{16, 1, 512}, {2048, 512}},
       {16, 1, 2048},
       matmulFlops(16, 2048, 512)});
  all.push_back(
      {"matmul_scores_8x8x128x128x64",
       {"tensor<?x8x?x64xf32>", "tensor<?x8x?x64xf32>"},
       "tensor<?x8x?x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x8x?x64xf32>, "
       "tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>",
       {{8, 8, 128, 64}, {8, 8, 128, 64}},
       {8, 8, 128, 128},
       matmulFlops(128, 128, 64, 64)});
  all.push_back(
      {"matmul_context_8x8x128x128x64",
       {"tensor<?x8x?x?xf32>", "tensor<?x8x?x64xf32>"},
       "tensor<?x8x?x64xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<?x8x?x?xf32>, tensor<?x8x?x64xf32>) -> "
       "tensor<?x8x?x64xf32>",
       {{8, 8, 128, 128}, {8, 8, 128, 64}},
       {8, 8, 128, 64},
       matmulFlops(128, 64, 128, 64)});
  // The encoder's self-attention (transformer_base: 8 heads of 64, a padding mask
  // broadcast over heads and queries), reading the packed q/k/v projection in place:
  // q.k^T and P.v counted.
  // S = 112: the benchmark's batch-1 sentence once its 16 padded positions are trimmed.
  for (auto [batch, s] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 128}, {8, 128}, {1, 112}, {1, 96}, {1, 64}, {1, 80}}) {
    std::string qkv = "tensor<?x8x?x64xf32>", mask = "tensor<?x1x1x?xf32>";
    all.push_back(
        {"attention_encoder_" + std::to_string(batch) + "x8x" + std::to_string(s) + "x64",
         {qkv, qkv, qkv, mask},
         qkv,
         "kiln.attention %arg0, %arg1, %arg2, %arg3 {scale = 1.25e-01 : f32} : (" + qkv +
             ", " + qkv + ", " + qkv + ", " + mask + ") -> " + qkv,
         {{batch, 8, s, 64}, {batch, 8, s, 64}, {batch, 8, s, 64}, {batch, 1, 1, s}},
         {batch, 8, s, 64},
         2 * matmulFlops(s, s, 64, 8.0 * batch)});
    all.back().headSplits = true;
  }
  all.push_back({"add_bias_8x128x2048",
                 {"tensor<?x?x2048xf32>", "tensor<2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.add %arg0, %arg1 : (tensor<?x?x2048xf32>, tensor<2048xf32>) -> "
                 "tensor<?x?x2048xf32>",
                 {{8, 128, 2048}, {2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"add_residual_8x128x512",
                 {"tensor<?x?x512xf32>", "tensor<?x?x512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.add %arg0, %arg1 : (tensor<?x?x512xf32>, tensor<?x?x512xf32>) -> "
                 "tensor<?x?x512xf32>",
                 {{8, 128, 512}, {8, 128, 512}},
                 {8, 128, 512},
                 0});
  all.push_back({"relu_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.relu %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  // where and cast against add_residual: the same bytes, memory bound alike.
  all.push_back({"where_causal_8x128x512",
                 {"tensor<?x512xi1>", "tensor<?x?x512xf32>", "tensor<?x?x512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.where %arg0, %arg1, %arg2 : (tensor<?x512xi1>, "
                 "tensor<?x?x512xf32>, tensor<?x?x512xf32>) -> tensor<?x?x512xf32>",
                 {{128, 512}, {8, 128, 512}, {8, 128, 512}},
                 {8, 128, 512},
                 0,
                 {{0, 1}}});
  all.push_back({"cast_f32_i32_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xi32>",
                 "kiln.cast %arg0 : (tensor<?x?x2048xf32>) -> tensor<?x?x2048xi32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"softmax_last_8x8x128x128",
                 {"tensor<?x8x?x?xf32>"},
                 "tensor<?x8x?x?xf32>",
                 "kiln.softmax %arg0 {axis = 3 : i64} : tensor<?x8x?x?xf32>",
                 {{8, 8, 128, 128}},
                 {8, 8, 128, 128},
                 0});
  all.push_back({"softmax_axis1_64x128x128",
                 {"tensor<?x?x?xf32>"},
                 "tensor<?x?x?xf32>",
                 "kiln.softmax %arg0 {axis = 1 : i64} : tensor<?x?x?xf32>",
                 {{64, 128, 128}},
                 {64, 128, 128},
                 0});
  all.push_back({"layer_norm_8x128x512",
                 {"tensor<?x?x512xf32>", "tensor<512xf32>", "tensor<512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.layer_norm %arg0, %arg1, %arg2 {epsilon = 1.0e-05 : f32} : "
                 "(tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> "
                 "tensor<?x?x512xf32>",
                 {{8, 128, 512}, {512}, {512}},
                 {8, 128, 512},
                 0});
  all.push_back({"transpose_heads_8x128x8x64",
                 {"tensor<?x?x8x64xf32>"},
                 "tensor<?x8x?x64xf32>",
                 "kiln.transpose %arg0 {permutation = [0, 2, 1, 3]} : "
                 "(tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>",
                 {{8, 128, 8, 64}},
                 {8, 8, 128, 64},
                 0});
  all.push_back({"transpose_2d_1024x2048",
                 {"tensor<?x?xf32>"},
                 "tensor<?x?xf32>",
                 "kiln.transpose %arg0 {permutation = [1, 0]} : (tensor<?x?xf32>) -> "
                 "tensor<?x?xf32>",
                 {{1024, 2048}},
                 {2048, 1024},
                 0});
  // The layer ops. linear's bias add is part of the output tile: compare with the
  // matmul cases above.
  // A weight of element type `weight`: f32, or bf16 (a reduced-precision weight; the
  // cases named *_bf16 are the f32 case before them with a bf16 weight), or i8: the same
  // layer as kiln.quantized_linear (the i8 weight, its scales and the bias; *_int8, whose
  // "GFLOP/s" are int8 GOP/s).
  auto linear = [&](const std::string &name, const std::string &in,
                    const std::string &out, int64_t n, int64_t k, Shape inShape,
                    Shape outShape, double rows, const std::string &weight = "f32") {
    bool int8 = weight == "i8";
    std::string w =
        "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "x" + weight + ">";
    std::string b = "tensor<" + std::to_string(n) + "xf32>";
    std::string op = int8 ? "kiln.quantized_linear %arg0, %arg1, %arg2, %arg3 : (" + in +
                                ", " + w + ", " + b + ", " + b + ") -> " + out
                          : "kiln.linear %arg0, %arg1, %arg2 : (" + in + ", " + w + ", " +
                                b + ") -> " + out;
    std::vector<std::string> args = {in, w, b};
    std::vector<Shape> shapes = {inShape, {n, k}, {n}};
    if (int8) {
      args.push_back(b);
      shapes.push_back({n});
    }
    all.push_back({name, args, out, op, shapes, outShape, matmulFlops(rows, n, k)});
    if (int8)
      all.back().intRanges = {{1, 0}, {-127, 127}};
  };
  linear("linear_128x512_to_2048", "tensor<?x?x512xf32>", "tensor<?x?x2048xf32>", 2048,
         512, {1, 128, 512}, {1, 128, 2048}, 128);
  linear("linear_static_128x512_to_2048", "tensor<128x512xf32>", "tensor<128x2048xf32>",
         2048, 512, {128, 512}, {128, 2048}, 128);
  linear("linear_1x512_to_512", "tensor<1x512xf32>", "tensor<1x512xf32>", 512, 512,
         {1, 512}, {1, 512}, 1);
  linear("linear_decode_8x1x512_to_512", "tensor<?x1x512xf32>", "tensor<?x1x512xf32>",
         512, 512, {8, 1, 512}, {8, 1, 512}, 8);
  linear("linear_8x128x2048_to_512", "tensor<?x?x2048xf32>", "tensor<?x?x512xf32>", 512,
         2048, {8, 128, 2048}, {8, 128, 512}, 1024);
  linear("linear_logits_8x1x512_to_32000", "tensor<?x1x512xf32>", "tensor<?x1x32000xf32>",
         32000, 512, {8, 1, 512}, {8, 1, 32000}, 8);
  // The encoder's projections at batch 1, 128 positions (q/k/v packed, the
  // feed-forward's second linear).
  linear("linear_128x512_to_1536", "tensor<?x?x512xf32>", "tensor<?x?x1536xf32>", 1536,
         512, {1, 128, 512}, {1, 128, 1536}, 128);
  linear("linear_128x2048_to_512", "tensor<?x?x2048xf32>", "tensor<?x?x512xf32>", 512,
         2048, {1, 128, 2048}, {1, 128, 512}, 128);
  // bf16 and int8 weights beside f32 at the encoder's shapes (batch 8, 128 positions: the
  // register tile or the panel) and at a decode step's batch of 8 (the weight cached).
  for (const char *weight : {"f32", "bf16", "i8"}) {
    std::string suffix = weight == std::string("f32") ? "_f32" : suffixOf(weight);
    linear("linear_1024x512_to_2048" + suffix, "tensor<?x?x512xf32>",
           "tensor<?x?x2048xf32>", 2048, 512, {8, 128, 512}, {8, 128, 2048}, 1024,
           weight);
    linear("linear_1024x512_to_1536" + suffix, "tensor<?x?x512xf32>",
           "tensor<?x?x1536xf32>", 1536, 512, {8, 128, 512}, {8, 128, 1536}, 1024,
           weight);
    linear("linear_1024x2048_to_512" + suffix, "tensor<?x?x2048xf32>",
           "tensor<?x?x512xf32>", 512, 2048, {8, 128, 2048}, {8, 128, 512}, 1024, weight);
    linear("linear_decode_8x1x512_to_2048" + suffix, "tensor<?x1x512xf32>",
           "tensor<?x1x2048xf32>", 2048, 512, {8, 1, 512}, {8, 1, 2048}, 8, weight);
  }
  // The matrix-vector products of transformer_base's decode_step (d_model 512, d_ff
  // 2048, vocabulary 8000) at batch B, the weight read from DRAM as in a step: GB/s of
  // weight, to compare with bench/stream_read.
  // A bf16 weight is half the bytes: *_bf16 beside each; an int8 one a quarter: *_int8
  // (SchedulesCpuQuantized.cpp).
  for (int64_t b : {1, 2, 8})
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {1536, 512}, {512, 512}, {2048, 512}, {512, 2048}, {8000, 512}})
      for (auto [weight, bytes] :
           {std::pair("f32", 4.0), std::pair("bf16", 2.0), std::pair("i8", 1.0)}) {
        std::string in = "tensor<?x1x" + std::to_string(k) + "xf32>";
        std::string out = "tensor<?x1x" + std::to_string(n) + "xf32>";
        std::string name = "gemv_b" + std::to_string(b) + "_" + std::to_string(k) +
                           "_to_" + std::to_string(n) + suffixOf(weight);
        linear(name, in, out, n, k, {b, 1, k}, {b, 1, n}, b, weight);
        all.back().flops = 0;
        all.back().bytes = bytes * n * k;
        all.back().coldInput = 1;
      }
  // The encoder's linears over weights as stored ("_rows") and in 64-column panels
  // ("_panels", kiln.unpack_panels), as a CPU model stores the weights that many rows
  // multiply (WeightPanels.cpp), side by side: an encode of 112 positions, the weight
  // from DRAM as in a model's encode; 8 x 128, cached. Also a decode step's batches
  // over panels, which models do not use (multipliesFewRows), against gemv_b*. The
  // panel cases' prefetches (PanelPrefetch.cpp) are Halide's prefetchnta here, which
  // made the K = 512 ones 6-10 % slower on a Cascade Lake VM, where a model's kernels
  // get prefetcht0 (EmitObject.cpp) and gain: time such changes through a model
  // (kiln-run --trace).
  for (auto [b, rows] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {8, 1}, {1, 112}, {8, 128}})
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {1536, 512}, {512, 512}, {2048, 512}, {512, 2048}})
      for (bool inPanels : {false, true}) {
        if (rows == 1 && !inPanels)
          continue; // gemv_b* above
        std::string panels = "tensor<" + std::to_string((n + 63) / 64) + "x" +
                             std::to_string(k) + "x64xf32>";
        std::string w = "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "xf32>";
        std::string bias = "tensor<" + std::to_string(n) + "xf32>";
        std::string in = "tensor<?x?x" + std::to_string(k) + "xf32>";
        std::string out = "tensor<?x?x" + std::to_string(n) + "xf32>";
        std::string name = (rows == 1 ? "gemv_b" + std::to_string(b)
                                      : "encode_" + std::to_string(b * rows)) +
                           "_" + std::to_string(k) + "_to_" + std::to_string(n) +
                           (inPanels ? "_panels" : "_rows");
        Shape weightShape = inPanels ? Shape{(n + 63) / 64, k, 64} : Shape{n, k};
        all.push_back({name,
                       {in, inPanels ? panels : w, bias},
                       out,
                       "kiln.linear %arg0, " + std::string(inPanels ? "%w" : "%arg1") +
                           ", %arg2 : (" + in + ", " + w + ", " + bias + ") -> " + out,
                       {{b, rows, k}, weightShape, {n}},
                       {b, rows, n},
                       rows == 1 ? 0.0 : matmulFlops(b * rows, n, k)});
        if (inPanels)
          all.back().prologue =
              "  %w = kiln.unpack_panels %arg1 : (" + panels + ") -> " + w + "\n";
        if (rows == 1)
          all.back().bytes = 4.0 * n * k;
        if (b * rows < 1024)
          all.back().coldInput = 1;
      }
  // A short encode's linears (a few rows known only at run time: the few-rows form),
  // the weight from DRAM as in a model's encode, which reads each layer's weights once.
  for (int64_t rows : {16, 64})
    for (auto [n, k] :
         std::vector<std::pair<int64_t, int64_t>>{{2048, 512}, {512, 2048}}) {
      std::string name = "encode_short_1x" + std::to_string(rows) + "x" +
                         std::to_string(k) + "_to_" + std::to_string(n);
      linear(name, "tensor<?x?x" + std::to_string(k) + "xf32>",
             "tensor<?x?x" + std::to_string(n) + "xf32>", n, k, {1, rows, k},
             {1, rows, n}, rows, "f32");
      all.back().coldInput = 1;
    }
  // Kernel groups (kiln.fusion): compare with linear_128x512_to_2048 plus a relu pass,
  // and with layer_norm_8x128x512 plus add_residual_8x128x512.
  all.push_back(
      {"fused_linear_relu_128x512_to_2048",
       {"tensor<?x?x512xf32>", "tensor<2048x512xf32>", "tensor<2048xf32>"},
       "tensor<?x?x2048xf32>",
       "kiln.fusion %arg0, %arg1, %arg2 : (tensor<?x?x512xf32>, tensor<2048x512xf32>, "
       "tensor<2048xf32>) -> tensor<?x?x2048xf32> {\n"
       "^bb0(%x: tensor<?x?x512xf32>, %w: tensor<2048x512xf32>, %b: tensor<2048xf32>):\n"
       "  %l = kiln.linear %x, %w, %b : (tensor<?x?x512xf32>, tensor<2048x512xf32>, "
       "tensor<2048xf32>) -> tensor<?x?x2048xf32>\n"
       "  %r = kiln.relu %l : tensor<?x?x2048xf32>\n"
       "  kiln.yield %r : tensor<?x?x2048xf32>\n}",
       {{1, 128, 512}, {2048, 512}, {2048}},
       {1, 128, 2048},
       matmulFlops(128, 2048, 512)});
  all.push_back(
      {"fused_add_layer_norm_8x128x512",
       {"tensor<?x?x512xf32>", "tensor<?x?x512xf32>", "tensor<512xf32>",
        "tensor<512xf32>"},
       "tensor<?x?x512xf32>",
       "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (tensor<?x?x512xf32>, "
       "tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32> {\n"
       "^bb0(%x: tensor<?x?x512xf32>, %y: tensor<?x?x512xf32>, %g: tensor<512xf32>, "
       "%b: tensor<512xf32>):\n"
       "  %s = kiln.add %x, %y : (tensor<?x?x512xf32>, tensor<?x?x512xf32>) -> "
       "tensor<?x?x512xf32>\n"
       "  %n = kiln.layer_norm %s, %g, %b {epsilon = 1.0e-05 : f32} : "
       "(tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>\n"
       "  kiln.yield %n : tensor<?x?x512xf32>\n}",
       {{8, 128, 512}, {8, 128, 512}, {512}, {512}},
       {8, 128, 512},
       0});
  // A linear as the first stage of its residual add + LayerNorm (a sublayer's output
  // projection, the FFN's second linear): compare with the linear case of the same
  // shape plus fused_add_layer_norm.
  auto linearAddNorm = [&](const char *name, int64_t k, Shape inShape, Shape outShape,
                           double rows) {
    std::string mid = inShape[1] == 1 ? "1" : "?";
    std::string x = "tensor<?x" + mid + "x" + std::to_string(k) + "xf32>";
    std::string w = "tensor<512x" + std::to_string(k) + "xf32>";
    const std::string y = "tensor<?x" + mid + "x512xf32>", v = "tensor<512xf32>";
    all.push_back(
        {name,
         {x, w, v, y, v, v},
         y,
         "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 : (" + x + ", " + w +
             ", " + v + ", " + y + ", " + v + ", " + v + ") -> " + y +
             " {\n^bb0(%x: " + x + ", %w: " + w + ", %b: " + v + ", %r: " + y +
             ", %g: " + v + ", %be: " + v + "):\n  %l = kiln.linear %x, %w, %b : (" + x +
             ", " + w + ", " + v + ") -> " + y + "\n  %s = kiln.add %r, %l : (" + y +
             ", " + y + ") -> " + y +
             "\n  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-05 : f32} : (" + y +
             ", " + v + ", " + v + ") -> " + y + "\n  kiln.yield %n : " + y + "\n}",
         {inShape, {512, k}, {512}, outShape, {512}, {512}},
         outShape,
         matmulFlops(rows, 512, k)});
  };
  linearAddNorm("fused_linear_add_layer_norm_decode_8x1x512", 512, {8, 1, 512},
                {8, 1, 512}, 8);
  linearAddNorm("fused_linear_add_layer_norm_8x128x2048_to_512", 2048, {8, 128, 2048},
                {8, 128, 512}, 1024);
  // A whole feed-forward block as the encoder's group is (linear + ReLU, linear, the
  // residual add and LayerNorm in one kernel): compare with linear_1024x512_to_2048,
  // linear_1024x2048_to_512 and fused_add_layer_norm.
  {
    const std::string x = "tensor<?x?x512xf32>", h = "tensor<?x?x2048xf32>",
                      w1 = "tensor<2048x512xf32>", b1 = "tensor<2048xf32>",
                      w2 = "tensor<512x2048xf32>", v = "tensor<512xf32>";
    all.push_back(
        {"fused_ffn_add_layer_norm_8x128x512",
         {x, w1, b1, w2, v, v, v},
         x,
         "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 : (" + x + ", " +
             w1 + ", " + b1 + ", " + w2 + ", " + v + ", " + v + ", " + v + ") -> " + x +
             " {\n^bb0(%x: " + x + ", %w1: " + w1 + ", %b1: " + b1 + ", %w2: " + w2 +
             ", %b2: " + v + ", %g: " + v + ", %be: " + v +
             "):\n  %l = kiln.linear %x, %w1, %b1 : (" + x + ", " + w1 + ", " + b1 +
             ") -> " + h + "\n  %r = kiln.relu %l : " + h +
             "\n  %o = kiln.linear %r, %w2, %b2 : (" + h + ", " + w2 + ", " + v +
             ") -> " + x + "\n  %s = kiln.add %x, %o : (" + x + ", " + x + ") -> " + x +
             "\n  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-05 : f32} : (" + x +
             ", " + v + ", " + v + ") -> " + x + "\n  kiln.yield %n : " + x + "\n}",
         {{8, 128, 512}, {2048, 512}, {2048}, {512, 2048}, {512}, {512}, {512}},
         {8, 128, 512},
         2 * matmulFlops(1024, 2048, 512)});
  }
  all.push_back({"gelu_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.gelu %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"tanh_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.tanh %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"sigmoid_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.sigmoid %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"silu_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.silu %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"gelu_tanh_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.gelu_tanh %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"exp_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.exp %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"rsqrt_8x128x2048",
                 {"tensor<?x?x2048xf32>"},
                 "tensor<?x?x2048xf32>",
                 "kiln.rsqrt %arg0 : tensor<?x?x2048xf32>",
                 {{8, 128, 2048}},
                 {8, 128, 2048},
                 0});
  all.push_back({"log_softmax_8x32000",
                 {"tensor<?x32000xf32>"},
                 "tensor<?x32000xf32>",
                 "kiln.log_softmax %arg0 {axis = 1 : i64} : tensor<?x32000xf32>",
                 {{8, 32000}},
                 {8, 32000},
                 0});
  all.push_back({"log_softmax_8x128x512",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.log_softmax %arg0 {axis = 2 : i64} : tensor<?x?x512xf32>",
                 {{8, 128, 512}},
                 {8, 128, 512},
                 0});
  all.push_back({"argmax_8x32000",
                 {"tensor<?x32000xf32>"},
                 "tensor<?xi32>",
                 "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x32000xf32>) -> "
                 "tensor<?xi32>",
                 {{8, 32000}},
                 {8},
                 0});
  all.push_back({"argmax_axis1_8x128x512",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x512xi32>",
                 "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x?x512xf32>) -> "
                 "tensor<?x512xi32>",
                 {{8, 128, 512}},
                 {8, 512},
                 0});
  // rms_norm and the reductions over axes, each against the plain pass over the same
  // bytes (copy_: a scale by 2, a read and a write of every element).
  all.push_back({"copy_8x128x512",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.scale %arg0 {factor = 2.0 : f32} : tensor<?x?x512xf32>",
                 {{8, 128, 512}},
                 {8, 128, 512},
                 0});
  all.push_back({"rms_norm_8x128x512",
                 {"tensor<?x?x512xf32>", "tensor<512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.rms_norm %arg0, %arg1 {epsilon = 1.0e-06 : f32} : "
                 "(tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>",
                 {{8, 128, 512}, {512}},
                 {8, 128, 512},
                 0});
  all.push_back({"reduce_sum_last_8x128x512",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x?xf32>",
                 "kiln.reduce_sum %arg0 {axes = [2]} : (tensor<?x?x512xf32>) -> "
                 "tensor<?x?xf32>",
                 {{8, 128, 512}},
                 {8, 128},
                 0});
  all.push_back({"reduce_sum_axis1_8x128x512",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x512xf32>",
                 "kiln.reduce_sum %arg0 {axes = [1]} : (tensor<?x?x512xf32>) -> "
                 "tensor<?x512xf32>",
                 {{8, 128, 512}},
                 {8, 512},
                 0});
  all.push_back({"reduce_max_last_8x32000",
                 {"tensor<?x32000xf32>"},
                 "tensor<?xf32>",
                 "kiln.reduce_max %arg0 {axes = [1]} : (tensor<?x32000xf32>) -> "
                 "tensor<?xf32>",
                 {{8, 32000}},
                 {8},
                 0});
  all.push_back({"embedding_32000x512_8x128",
                 {"tensor<32000x512xf32>", "tensor<?x?xi32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.embedding %arg0, %arg1 : (tensor<32000x512xf32>, tensor<?x?xi32>) "
                 "-> tensor<?x?x512xf32>",
                 {{32000, 512}, {8, 128}},
                 {8, 128, 512},
                 0,
                 {{1, 0}, {0, 31999}},
                 /*bytes=*/8 * 128 * (4 + 2 * 512 * 4)});
  all.push_back({"sinusoid_128x512",
                 {"tensor<?xi32>"},
                 "tensor<?x512xf32>",
                 "kiln.sinusoid %arg0 : (tensor<?xi32>) -> tensor<?x512xf32>",
                 {{128}},
                 {128, 512},
                 0,
                 {{0, 127}}});
  all.push_back({"sinusoid_2048x512",
                 {"tensor<?xi32>"},
                 "tensor<?x512xf32>",
                 "kiln.sinusoid %arg0 : (tensor<?xi32>) -> tensor<?x512xf32>",
                 {{2048}},
                 {2048, 512},
                 0,
                 {{0, 2047}}});
  // LLaMA-7B's heads at a 512-token prefill, batch 1: [1, 32, 512, 128].
  all.push_back({"rotary_half_1x32x512x128",
                 {"tensor<?x32x?x128xf32>", "tensor<?xi32>"},
                 "tensor<?x32x?x128xf32>",
                 "kiln.rotary %arg0, %arg1 {base = 1.0e4 : f32, style = \"half\"} : "
                 "(tensor<?x32x?x128xf32>, tensor<?xi32>) -> tensor<?x32x?x128xf32>",
                 {{1, 32, 512, 128}, {512}},
                 {1, 32, 512, 128},
                 0,
                 {{1, 0}, {0, 511}}});
  all.push_back(
      {"rotary_interleaved_1x32x512x128",
       {"tensor<?x32x?x128xf32>", "tensor<?xi32>"},
       "tensor<?x32x?x128xf32>",
       "kiln.rotary %arg0, %arg1 {base = 1.0e4 : f32, style = \"interleaved\"} : "
       "(tensor<?x32x?x128xf32>, tensor<?xi32>) -> tensor<?x32x?x128xf32>",
       {{1, 32, 512, 128}, {512}},
       {1, 32, 512, 128},
       0,
       {{1, 0}, {0, 511}}});
  all.push_back({"padding_mask_8x128",
                 {"tensor<?xi32>", "tensor<?x?xi32>"},
                 "tensor<?x?xf32>",
                 "kiln.padding_mask %arg0, %arg1 {axis = 1 : i64} : (tensor<?xi32>, "
                 "tensor<?x?xi32>) -> tensor<?x?xf32>",
                 {{8}, {8, 128}},
                 {8, 128},
                 0,
                 {{0, 128}, {0, 9}}});
  all.push_back({"causal_mask_128",
                 {"tensor<?x?xi32>"},
                 "tensor<?x?xf32>",
                 "kiln.causal_mask %arg0 {axis = 1 : i64} : (tensor<?x?xi32>) -> "
                 "tensor<?x?xf32>",
                 {{8, 128}},
                 {128, 128},
                 0,
                 {{0, 9}}});
  all.push_back({"slice_heads_8x128x512_to_64",
                 {"tensor<?x?x512xf32>"},
                 "tensor<?x?x64xf32>",
                 "kiln.slice %arg0 {axis = 2 : i64, start = 64 : i64, end = 128 : i64} : "
                 "(tensor<?x?x512xf32>) -> tensor<?x?x64xf32>",
                 {{8, 128, 512}},
                 {8, 128, 64},
                 0,
                 {},
                 /*bytes=*/2 * 8 * 128 * 64 * 4});
  all.push_back({"concat_tokens_8x127_8x1",
                 {"tensor<?x?xi32>", "tensor<?x1xi32>"},
                 "tensor<?x?xi32>",
                 "kiln.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<?x?xi32>, "
                 "tensor<?x1xi32>) -> tensor<?x?xi32>",
                 {{8, 127}, {8, 1}},
                 {8, 128},
                 0,
                 {{0, 31999}, {0, 31999}}});
  all.push_back({"concat_axis1_8x128x512_twice",
                 {"tensor<?x?x512xf32>", "tensor<?x?x512xf32>"},
                 "tensor<?x?x512xf32>",
                 "kiln.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<?x?x512xf32>, "
                 "tensor<?x?x512xf32>) -> tensor<?x?x512xf32>",
                 {{8, 128, 512}, {8, 128, 512}},
                 {8, 256, 512},
                 0});
  all.push_back({"concat_last_8x128x512_twice",
                 {"tensor<?x?x512xf32>", "tensor<?x?x512xf32>"},
                 "tensor<?x?x1024xf32>",
                 "kiln.concat %arg0, %arg1 {axis = 2 : i64} : (tensor<?x?x512xf32>, "
                 "tensor<?x?x512xf32>) -> tensor<?x?x1024xf32>",
                 {{8, 128, 512}, {8, 128, 512}},
                 {8, 128, 1024},
                 0});
  return all;
}

} // namespace

int main(int argc, char **argv) {
  for (const BenchCase &c : cases()) {
    bool selected = argc < 2;
    for (int i = 1; i < argc; ++i)
      selected |= c.name.find(argv[i]) != std::string::npos;
    if (selected)
      runCase(c);
  }
}
