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

using namespace kiln::halide_backend::test;

namespace {

struct BenchCase {
  const char *name;
  std::vector<std::string> argTypes;
  std::string resultType, op;
  std::vector<Shape> inputs;
  Shape output;
  /// Floating-point operations per run (0: report bandwidth instead).
  double flops;
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
  std::string error = harness.load(oneOpModule(c.argTypes, c.resultType, c.op));
  if (!error.empty()) {
    std::printf("%-34s %s\n", c.name, error.c_str());
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
  for (size_t i = 0; i < c.inputs.size(); ++i)
    inputs.push_back(randomTensor(c.inputs[i], 17 + i));
  HostTensor out = harness.run(inputs, c.output);
  if (std::getenv("KILN_BENCH_VERIFY")) {
    // The interpreter's plain loops take seconds on the largest cases.
    std::string error;
    HostTensor expected = harness.reference(inputs, error);
    double diff = 0, scale = 0;
    for (size_t i = 0; error.empty() && i < expected.f32.size(); ++i) {
      diff = std::max<double>(diff, std::abs(out.f32[i] - expected.f32[i]));
      scale = std::max<double>(scale, std::abs(expected.f32[i]));
    }
    if (error.empty())
      std::printf("%-34s max|a-b|/max|b| = %.2g\n", c.name, diff / scale);
    else
      std::printf("%-34s reference failed: %s\n", c.name, error.c_str());
  }
  Halide::Buffer<> result = KernelHarness::toBuffer(out);
  std::vector<double> times, cpuTimes;
  int64_t bytes = elements(c.output) * 4;
  for (const Shape &s : c.inputs)
    bytes += elements(s) * 4;
  // Enough runs for ~0.3 s, at least 7, at most 200.
  auto start = std::chrono::steady_clock::now();
  harness.realize(result);
  double once =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int runs = std::clamp(static_cast<int>(0.3 / std::max(once, 1e-6)), 7, 200);
  for (int i = 0; i < runs; ++i) {
    double cpu = cpuSeconds();
    auto s = std::chrono::steady_clock::now();
    harness.realize(result);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
    cpuTimes.push_back(cpuSeconds() - cpu);
  }
  double t = median(times), best = *std::min_element(times.begin(), times.end());
  double cpu = median(cpuTimes);
  double work = c.flops > 0 ? c.flops : bytes;
  std::printf("%-34s %8.3f ms  %6.1f %s  best %6.1f  cpu %6.1f\n", c.name, t * 1e3,
              work / t * 1e-9, c.flops > 0 ? "GFLOP/s" : "GB/s   ", work / best * 1e-9,
              work / cpu * 1e-9);
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
  return all;
}

} // namespace

int main(int argc, char **argv) {
  for (const BenchCase &c : cases()) {
    bool selected = argc < 2;
    for (int i = 1; i < argc; ++i)
      selected |= std::string(c.name).find(argv[i]) != std::string::npos;
    if (selected)
      runCase(c);
  }
}
