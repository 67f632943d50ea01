//===- attention_bench.cpp - Fused vs unfused attention, Halide CPU -------===//
//
// Causal self-attention, B = 1, 8 heads, head dim 64, S = 512, 1024, 2048, two ways,
// side by side:
//
//   unfused  the graph a model writes, each op its production kernel: causal_mask,
//            matmul(q, k^T), scale, add mask, softmax, matmul(p, v) — six kernels, the
//            [8, S, S] intermediates in memory between them;
//   fused    the same graph after the default pass pipeline (kiln-fuse-attention turns
//            it into one kiln.attention {causal}), its flash-style kernel.
//
// Both come from the same MLIR text through the production pass pipeline and lowerOp
// (the schedules the model compiler uses), JIT-compiled for the host: JIT and AOT run
// the same generated code. Times are wall clock per run (Google Benchmark; the
// aggregates include the median). Memory: `intermediate_bytes` counts, from buffer
// sizes, every intermediate each path allocates (unfused: the mask and the four [8, S,
// S] tensors between the kernels, none reused; fused: the kernel's per-thread scratch,
// i.e. Halide's heap allocations observed through a custom allocator (peak bytes
// live), plus its stack scratch from the tile sizes); `peak_live_bytes` counts what is
// live at once with ideal reuse (unfused: the two [8, S, S] operands of the widest
// step and the mask). Inputs and outputs (q, k, v, result) are not intermediates.
//
// Run it with bench/run_attention_bench.sh (which also runs bench/attention_torch.py
// and prints one table), or directly; HL_NUM_THREADS sets the threads (2 here).
// KILN_BENCH_STMT=DIR writes each kernel's Halide statement there.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace kiln;
using namespace kiln::halide_backend;

namespace {

constexpr int kHeads = 8, kHeadDim = 64;
const int kLengths[] = {512, 1024, 2048};

/// The unfused graph, as nn::MultiHeadAttention writes it after the projections.
const char *kGraph = R"mlir(
func @main(%q: tensor<1x8x?x64xf32> {kiln.name = "q", kiln.dims = ["", "", "S", ""]},
           %k: tensor<1x8x?x64xf32> {kiln.name = "k", kiln.dims = ["", "", "S", ""]},
           %v: tensor<1x8x?x64xf32> {kiln.name = "v", kiln.dims = ["", "", "S", ""]})
    -> (tensor<1x8x?x64xf32> {kiln.name = "o"}) {
  %mask = kiln.causal_mask %q {axis = 2 : i64} : (tensor<1x8x?x64xf32>) -> tensor<?x?xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true}
      : (tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>) -> tensor<1x8x?x?xf32>
  %t = kiln.scale %s {factor = 0.125 : f32} : tensor<1x8x?x?xf32>
  %u = kiln.add %t, %mask : (tensor<1x8x?x?xf32>, tensor<?x?xf32>) -> tensor<1x8x?x?xf32>
  %p = kiln.softmax %u {axis = 3 : i64} : tensor<1x8x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<1x8x?x?xf32>, tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32>
  kiln.return %o : tensor<1x8x?x64xf32>
}
)mlir";

/// Halide's heap allocations of the kernels while a counter is installed.
std::atomic<int64_t> liveHeapBytes{0}, peakHeapBytes{0};

void *countingMalloc(Halide::JITUserContext *, size_t size) {
  // 64-byte aligned, with the size stored in front for the free.
  void *raw = std::malloc(size + 128);
  if (!raw)
    return nullptr;
  auto base = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (base + 64 + 63) & ~uintptr_t(63);
  reinterpret_cast<void **>(aligned)[-1] = raw;
  reinterpret_cast<size_t *>(aligned)[-2] = size;
  int64_t live = liveHeapBytes += static_cast<int64_t>(size);
  int64_t peak = peakHeapBytes.load();
  while (live > peak && !peakHeapBytes.compare_exchange_weak(peak, live)) {
  }
  return reinterpret_cast<void *>(aligned);
}

void countingFree(Halide::JITUserContext *, void *p) {
  if (!p)
    return;
  liveHeapBytes -= static_cast<int64_t>(reinterpret_cast<size_t *>(p)[-2]);
  std::free(reinterpret_cast<void **>(p)[-1]);
}

/// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), or -1.
int64_t procStatusBytes(const char *field) {
  std::FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  int64_t kib = -1;
  size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, n) == 0 && line[n] == ':')
      kib = std::atoll(line + n + 1);
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

/// Resets the process's peak RSS (VmHWM) to its current RSS (Linux >= 4.0).
void resetPeakRss() {
  if (std::FILE *f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

/// One entry point's kernels, JIT-compiled once (the sequence length stays dynamic),
/// run in order on buffers allocated once per sequence length.
class Path {
public:
  Path(mlir::MLIRContext &context, bool fuse) {
    module = mlir::parseSourceString<mlir::ModuleOp>(kGraph, &context);
    mlir::PassManager pm(&context);
    PipelineOptions options;
    options.fuseAttention = fuse;
    buildDefaultPipeline(pm, options);
    if (!module || mlir::failed(pm.run(*module)))
      fail("the pass pipeline failed");
    Halide::Target target = Halide::get_jit_target_from_environment();
    const char *stmtDir = std::getenv("KILN_BENCH_STMT");
    for (mlir::Operation &op : module->lookupSymbol<mlir::FuncOp>("main").front()) {
      if (!needsKernel(&op))
        continue;
      mlir::FailureOr<LoweredKernel> lowered = lowerOp(&op, target);
      if (mlir::failed(lowered))
        fail("lowering failed");
      Kernel kernel{&op, *lowered, Halide::Pipeline(lowered->output)};
      kernel.pipeline.jit_handlers().custom_malloc = countingMalloc;
      kernel.pipeline.jit_handlers().custom_free = countingFree;
      kernel.pipeline.compile_jit(target);
      if (stmtDir) {
        std::vector<Halide::Argument> args(lowered->inputs.begin(),
                                           lowered->inputs.end());
        std::string name = std::string(fuse ? "fused_" : "unfused_") +
                           std::to_string(kernels.size()) + "_" +
                           op.getName().stripDialect().str();
        kernel.pipeline.compile_to_lowered_stmt(
            std::string(stmtDir) + "/" + name + ".stmt", args, Halide::Text, target);
      }
      kernels.push_back(std::move(kernel));
    }
  }

  /// Allocates every buffer for sequence length `s` and fills the inputs.
  void prepare(int s) {
    buffers.clear();
    intermediateBytes = 0;
    auto func = module->lookupSymbol<mlir::FuncOp>("main");
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (mlir::Value arg : func.getArguments()) {
      Halide::Buffer<float> b = allocate(arg, s);
      b.for_each_value([&](float &x) { x = dist(rng); });
      buffers[arg.getAsOpaquePointer()] = b;
    }
    std::vector<int64_t> sizes;
    for (Kernel &kernel : kernels) {
      mlir::Value result = kernel.op->getResult(0);
      buffers[result.getAsOpaquePointer()] = allocate(result, s);
      bool isOutput = llvm::any_of(result.getUsers(), [](mlir::Operation *user) {
        return llvm::isa<ReturnOp>(user);
      });
      if (!isOutput)
        sizes.push_back(
            static_cast<int64_t>(buffers[result.getAsOpaquePointer()].size_in_bytes()));
    }
    for (int64_t bytes : sizes)
      intermediateBytes += bytes;
    // With ideal reuse, the widest step's operands and result, plus the mask (alive
    // until the add): the two largest intermediates and the smallest.
    std::sort(sizes.begin(), sizes.end());
    peakLiveBytes = 0;
    if (sizes.size() >= 3)
      peakLiveBytes = sizes.back() + sizes[sizes.size() - 2] + sizes.front();
    else
      for (int64_t bytes : sizes)
        peakLiveBytes = std::max(peakLiveBytes, bytes);
  }

  void run() {
    for (Kernel &kernel : kernels) {
      for (size_t i = 0; i < kernel.lowered.inputs.size(); ++i)
        kernel.lowered.inputs[i].set(
            buffers.at(kernel.op->getOperand(i).getAsOpaquePointer()));
      Halide::Buffer<float> &out =
          buffers.at(kernel.op->getResult(0).getAsOpaquePointer());
      kernel.pipeline.realize(out);
    }
  }

  size_t kernelCount() const { return kernels.size(); }

  int64_t intermediateBytes = 0, peakLiveBytes = 0;

private:
  struct Kernel {
    mlir::Operation *op;
    LoweredKernel lowered;
    Halide::Pipeline pipeline;
  };

  [[noreturn]] static void fail(const char *what) {
    std::fprintf(stderr, "attention_bench: %s\n", what);
    std::exit(1);
  }

  /// A buffer for `value` with every dynamic dimension (all of them are S) set to `s`.
  static Halide::Buffer<float> allocate(mlir::Value value, int s) {
    auto type = value.getType().cast<mlir::RankedTensorType>();
    std::vector<int> sizes;
    for (int64_t d : llvm::reverse(type.getShape()))
      sizes.push_back(mlir::ShapedType::isDynamic(d) ? s : static_cast<int>(d));
    return Halide::Buffer<float>(sizes);
  }

  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<Kernel> kernels;
  std::map<const void *, Halide::Buffer<float>> buffers;
};

/// The fused kernel's stack scratch per thread, from its tiles (64 queries x 64 keys,
/// head dims 64): the score and weight tiles (2 x 16 KiB) and one P.v register block
/// (1 KiB); its heap scratch (state 20 KiB, query tile 16 KiB, per-row statistics) is
/// what countingMalloc sees.
constexpr int64_t kFusedStackBytesPerThread = 2 * 64 * 64 * 4 + 4 * 64 * 4;

void runPath(benchmark::State &state, Path *path, bool fused, int s) {
  path->prepare(s);
  // The first run, measured: how far the peak RSS rises above the RSS before it (the
  // buffers are allocated but untouched, so this is the memory the run touches: its
  // intermediates, output and scratch). Meaningful in a fresh process that runs one
  // benchmark (run_attention_bench.sh does so for this column): freed memory that a
  // later allocation reuses is resident already. Google Benchmark calls this function
  // more than once per benchmark; the first call's measurement is the one kept.
  static std::map<std::pair<Path *, int>, int64_t> firstRssGrowth;
  resetPeakRss();
  int64_t before = procStatusBytes("VmRSS");
  path->run();
  int64_t rssGrowth =
      firstRssGrowth.try_emplace({path, s}, procStatusBytes("VmHWM") - before)
          .first->second;
  peakHeapBytes = 0;
  for (auto _ : state)
    path->run();
  int threads = 2;
  if (const char *env = std::getenv("HL_NUM_THREADS"))
    threads = std::atoi(env);
  double inter = fused
                     ? double(peakHeapBytes.load() + kFusedStackBytesPerThread * threads)
                     : double(path->intermediateBytes);
  double live = fused ? inter : double(path->peakLiveBytes);
  state.counters["intermediate_bytes"] = inter;
  state.counters["peak_live_bytes"] = live;
  state.counters["kernels"] = double(path->kernelCount());
  state.counters["rss_growth_bytes"] = double(rssGrowth);
  // Useful causal work: 2 (d + dv) per visible (query, key) pair, S (S + 1) / 2 pairs.
  double flops = 2.0 * kHeads * (double(s) * (s + 1) / 2) * (2 * kHeadDim);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

int main(int argc, char **argv) {
  mlir::MLIRContext context;
  context.loadDialect<KilnDialect>();
  Path fused(context, /*fuse=*/true), unfused(context, /*fuse=*/false);
  if (fused.kernelCount() != 1) {
    std::fprintf(stderr,
                 "attention_bench: the pipeline left %zu kernels, not one "
                 "kiln.attention\n",
                 fused.kernelCount());
    return 1;
  }
  for (int s : kLengths) {
    for (bool isFused : {true, false}) {
      Path *path = isFused ? &fused : &unfused;
      std::string name =
          std::string(isFused ? "fused" : "unfused") + "/S=" + std::to_string(s);
      benchmark::RegisterBenchmark(name.c_str(), runPath, path, isFused, s)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  // Five repetitions of at least 0.5 s, aggregates only (the median among them),
  // unless the command line says otherwise.
  std::vector<char *> args(argv, argv + argc);
  std::string repetitions = "--benchmark_repetitions=5",
              aggregates = "--benchmark_report_aggregates_only=true",
              minTime = "--benchmark_min_time=0.5";
  auto given = [&](const char *flag) {
    return llvm::any_of(
        args, [&](char *a) { return std::strncmp(a, flag, std::strlen(flag)) == 0; });
  };
  if (!given("--benchmark_repetitions"))
    args.push_back(repetitions.data());
  if (!given("--benchmark_report_aggregates_only"))
    args.push_back(aggregates.data());
  if (!given("--benchmark_min_time"))
    args.push_back(minTime.data());
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
