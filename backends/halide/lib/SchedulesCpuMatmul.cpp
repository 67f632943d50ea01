//===- SchedulesCpuMatmul.cpp - CPU schedules of matmul and linear --------===//
//
// Two schedules of the product out(n, m, batch...) = sum_k lhs'(k, m) rhs'(n, k): a
// panel schedule (rhs packed n-contiguous, a 4-vector x 6-row register tile updated in
// the k loop; SchedulesCpuMatmulPanel.cpp) and, for few rows of a transposed rhs
// (x . W^T: a linear in a decode step or a short encode, where a run-time row count
// picks between the two), a dot-product schedule (vector dot products along the
// contiguous k of both operands; SchedulesCpuMatmulDot.cpp). This file picks one, and
// answers the choices that lowering asks of the CPU target. The numbers in this header
// are medians of JIT realizations by test/unit/halide/KernelBench.cpp on an early project
// machine: 2 cores of a Zen 5 EPYC (AVX-512, Halide target avx512_sapphirerapids), whose
// fp32 FMA peak measured 117 GFLOP/s per core (234 for both); "1T"/"2T" are
// HL_NUM_THREADS=1/2. The machine is shared, so runs vary by ~10% (q.k^T by up to 30%
// between processes). Figures further down name their machine; the Zen 5 VM of the later
// ones (cpu family 26) runs a 2048^3 OpenBLAS sgemm at 444-460 GFLOP/s on 2 threads, so
// do not set them against these.
//
//   kernel                                          1T          2T
//   matmul [128,512] x [2048,512]^T  (dot)       97 GFLOP/s  198 GFLOP/s
//   matmul [512,512] x [2048,512]^T  (dot)       96          189
//   matmul [128,512] x [512,2048]    (panel)     90          188
//   matmul [512,512] x [512,2048]    (panel)    103          204
//   matmul [8,64,2048] x [512,2048]^T (panel)    92          185
//   matmul [16,1,512] x [2048,512]^T (dot)       97          200
//   matmul q.k^T [8,8,128,64] x .. (panel)    58-77     135-163
//   matmul p.v [8,8,128,128] x [..,128,64]      68-88     170-182
//   linear [128,512] x [2048,512]^T + b (dot)  94-99     191-197  (2.7-2.9 / 1.37 ms)
//   linear [1,512] x [512,512]^T + b (dot)     45        67-89    (12 / 6-8 us)
//   linear [8,1,512] x [512,512]^T + b (dot)   96-99     158-184
//   linear [8,128,2048] x [512,2048]^T (panel) 93-95     180-193
//   linear [8,1,512] x [32000,512]^T (dot)     35        58-72    (65 MB weight
//                                                                  from DRAM: 9 GB/s
//                                                                  a core, 18 for two)
//
// linear is the matmul with transpose_rhs plus a bias: the same schedules, the bias
// added as the output tile is stored. It costs nothing measurable (the matmul of
// [128,512] x [2048,512]^T without it: 99 / 192-194 in the same runs).
//
//
// bf16 weights (kiln-weight-precision): the algorithm widens each weight element by its
// bits (widenToF32: per 16 weights one vpmovzxwd load and one vpslld, then the same FMAs
// as f32), so the sums are the f32 kernel's over the same values, the interpreter's to
// rounding. KernelBench, f32 and bf16 cases in one run, 2T, on a 2-core Zen 4 EPYC VM
// (cpu family 25) shared with other builds (load average 6-7, so absolute figures are
// low; the ratios are the point); "GB/s" is of weight bytes, the weight from DRAM:
//
//   case                                        f32                bf16
//   gemv b1 [1536, 512] (matrix-vector)    0.149 ms  21 GB/s   0.066 ms  24 GB/s  2.3x
//   gemv b1 [512, 512]                     0.045     23        0.026     21       1.7x
//   gemv b1 [2048, 512]                    0.191     22        0.095     22       2.0x
//   gemv b1 [512, 2048]                    0.154     27        0.076     28       2.0x
//   gemv b1 [8000, 512]                    0.656     25        0.364     23       1.8x
//   gemv b8 [1536, 512] (register tile)    0.357      9        0.247      6       1.4x
//   gemv b8 [2048, 512]                    0.488      9        0.364      6       1.3x
//   gemv b8 [8000, 512]                    1.939      9        1.458      6       1.3x
//   linear [8,1,512] x [2048,512]^T, cached   99 GFLOP/s          101 GFLOP/s
//   linear [1024,512] x [2048,512]^T (dot)    90                   94
//   linear [1024,512] x [1536,512]^T (dot)    94                   96
//   linear [1024,2048] x [512,2048]^T (panel) 92                   93
//
// At batch 1 the matrix-vector order streams the bf16 weight at the f32 weight's GB/s,
// so a linear takes about half the time: the bytes are what bound it. At batch 8 the
// register tile reads 6 weight rows side by side from DRAM, which bounds f32 and bf16
// alike well below the stream rate (the table above); bf16 still gains 1.3-1.4x. The
// encoder's shapes lose nothing: the register tile converts 6 weight vectors per 24
// FMAs, the panel schedule once per panel as it packs. The panel's transpose widens a
// 16 x 16 block of the weight with dense loads first and gathers f32 from it: gathering
// the 16-bit elements makes LLVM use AVX512-FP16's vmovw (Halide 14 compiles
// avx512_sapphirerapids for LLVM's sapphirerapids CPU), which Zen 4 lacks (SIGILL).
// vdpbf16ps (bf16 pairs into f32 sums) is not used and was not measured: it rounds the
// activations to bf16, which the interpreter-exact tests and the translator's accuracy
// bar rule out as a default, and at batch 1, where bf16 weights matter most, the FMAs
// already wait for DRAM, so halving them cannot help; only the compute-bound encoder
// shapes could gain, behind an opt-in option.
//
// Dynamic extents need tails: the output's loops use GuardWithIf (a predicated vector
// store on x86, never a scalar loop), the accumulators round up (the algorithm clamps
// what they read).
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpuMatmul.h"
#include "CpuTuning.h"
#include "SchedulesCpu.h"
#include "SchedulesCpuSupport.h"

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;
using namespace kiln::halide_backend::cpu::matmul;

namespace {

/// Which schedule a transposed rhs gets: the dot form for few rows, the panel for the
/// rest. Measured 1T on an earlier VM, GFLOP/s, dot vs panel:
///   M = 16 (decode), N = 2048, K = 512:  101 vs  44 (the panel transposes the weight
///                                                    for 16 rows)
///   M = 512, N = 512, K = 2048:           75 vs  92 (each 6-column panel streams
///                                                    4 MB of lhs)
///   M = 512, N = 512, K = 64 (q.k^T):     60 vs  97 (4 k steps per horizontal sum)
/// A contraction of 256 to 1024 took the dot form at any row count until the panel's
/// last row tile stopped being computed whole and its transpose began walking 16
/// weight rows at a time. transformer_base encode, 2-core Zen 5 EPYC VM (cpu family 26),
/// 2T, old / new alternated 3 times, ms: b1 s128 14.6-15.0 / 13.2-13.6, b8 s128
/// 101-104 / 93 (one run 103).
///
/// Few is at most fewRowsLimit rows, counted at run time for a weight
/// (MatmulKernel::fewRowsForm): an encode's rows are batch x length, and a short
/// sentence's few rows spent more time having the panel transpose the weight than
/// multiplying by it. transformer_base encode on the same VM, 2T, median ms of 21
/// runs, two rounds alternated, the panel at every row count against the dot form up
/// to 64 rows:
///   B x S   1x8      1x16     1x32     1x48     1x64       1x80       8x8
///   panel   4.5-9.4  5.1-5.5  6.5-7.2  7.2-7.4  10.9-11.1  10.5-10.8  16.6-16.8
///   dot     3.1-3.3  4.1-4.2  5.7      7.3-7.4  9.2        (panel)    12.0-13.2
/// and past 64 rows the dot form lost (a build with it at every row count: 1x96
/// 13.2-13.4 ms against the panel's 11.8, 1x128 16.1-16.3 against 14.4-14.5). Static
/// row counts take the same limit; 49 to 64 of them were not measured apart.
///
/// On a 2-core Intel Cascade Lake VM (Xeon, family 6 model 85, Halide target
/// avx512_skylake), with the model kernels' prefetcht0 (EmitObject.cpp), the two forms
/// are level at 32 rows and the panel wins past them: transformer_base encode, kiln-run
/// --repeat 15, median ms, limit 64 / 16 alternated twice, every position valid:
/// 1x24 11.0-11.1 / 11.5-11.9, 1x32 13.8-13.9 / 13.7-13.8, 1x48 19.4-19.7 / 15.7-15.8,
/// 1x64 24.5-25.1 / 21.8. Zen 4 and Zen 5, where the figures above come from, are the
/// machines of this kind for which Halide's host target has AVX512_SapphireRapids, so
/// that feature is what tells them apart here; other targets, measured or not, take the
/// Intel limit.
int64_t fewRowsLimit(const Target &target) {
  return target.has_feature(Target::AVX512_SapphireRapids) ? 64 : 32;
}

bool useDotProduct(const MatmulKernel &kernel, const Target &target) {
  if (!kernel.transposeRhs || kernel.panelWidth)
    return false;
  int rowDim = matmulRowDimension(kernel);
  int64_t rows = kernel.extents[rowDim];
  bool fewRows = rowDim == 2 || (isStatic(rows) && rows <= fewRowsLimit(target));
  return fewRows;
}

} // namespace

void cpu::schedule(const MatmulKernel &kernel, const Target &target,
                   CodegenRequests &codegen) {
  const int width = target.natural_vector_size(Float(32));
  if (kernel.emptyProduct.defined()) {
    // An empty contraction writes zeros, an empty output nothing; every schedule below
    // is for a non-empty product.
    Func out = kernel.output;
    out.specialize(kernel.emptyProduct);
  }
  if (kernel.fewRows.defined()) {
    // Each form's Funcs are computed at loops of the output that both forms' tilings
    // have (the row tiles "ro", the column panels "no"): Halide places a Func computed
    // at the output in every specialization, and skips it where nothing reads it.
    MatmulKernel few = kernel;
    few.product = kernel.fewRowsForm.product;
    few.lhsRows = kernel.fewRowsForm.lhsRows;
    few.packedRhs = kernel.fewRowsForm.packedRhs;
    few.widenedRhs = kernel.fewRowsForm.widenedRhs;
    Func out = kernel.output;
    scheduleDotProduct(few, width, out.specialize(kernel.fewRows), codegen);
    schedulePanelProduct(kernel, width, out, codegen);
    return;
  }
  if (useDotProduct(kernel, target))
    scheduleDotProduct(kernel, width, kernel.output, codegen);
  else
    schedulePanelProduct(kernel, width, kernel.output, codegen);
}

int64_t cpu::chooseFewRowsLimit(const Target &target, int64_t columns) {
  // Both forms must tile the columns into at least 4 panels, so that their loops
  // match (see cpu::schedule above): 64 columns a panel with AVX-512, 16 with AVX2.
  const int width = target.natural_vector_size(Float(32));
  if (!isStatic(columns) || columns < 4 * panelColumns(width))
    return 0;
  return fewRowsLimit(target);
}

/// Staging costs a copy of the lhs for every column panel, 6 rows of K loads and
/// stores before each register tile's k loop. A standalone C loop of the register tile
/// (its panel in L2) ran at 116 GFLOP/s on one core of a 2-core Zen 4 EPYC VM (cpu
/// family 25 model 17; 114-116 is that core's FMA peak), 109 with 114 lhs rows staged
/// from L2 and 105 with 1020 rows from L3. With the clamp peeled off, the rows read in
/// place were faster on that VM: transformer_base encode, bench/compare_builds, median
/// of the per-call ratios to the staged build (the outputs bit for bit the same): B=1
/// S=128 with 16 padded 0.949 (80 rounds; q/k/v linear 0.952, feed-forward group
/// 0.942), 48 padded 0.925, B=1 S=64 0.923, B=1 S=16 0.915 (150 rounds), B=8 S=128
/// 0.977 (12 rounds). Tuned for Zen 4 only: the staged copy was measured against the
/// clamped reads on Intel Cascade Lake (stageRegisterTileRows), the rows in place
/// against neither Intel nor Zen 5.
bool cpu::chooseLhsRowsInPlace(const Target &) {
  return coreTuning() == CoreTuning::Zen4;
}

int64_t cpu::chooseWeightPanelWidth(const Target &target) {
  // The panel schedule's column tile (schedulePanelProduct), so that one tile's columns
  // are one panel.
  return panelColumns(target.natural_vector_size(Float(32)));
}

/// Per sequence, the panel schedule's 6-row register tiles leave a partial tile (S = 128
/// is 21 tiles and 2 rows), which computes 6 rows for the 2 and reads them through the
/// row clamp; over B*S rows there is one per call. KernelBench, 2T, 2-core Zen 4 EPYC VM
/// (cpu family 25 model 17), linears over 64-column panels, GFLOP/s, [8, 128, K] /
/// [1, 1024, K] in one run: 512 -> 1536 210.3 / 218.9, 512 -> 512 216.4 / 222.2, 512 ->
/// 2048 214.8 / 219.1, 2048 -> 512 218.4 / 224.7. transformer_base encode on that VM,
/// bench/compare_builds, median of the per-call ratios to the build without: B=8 S=128
/// 0.978 (16 rounds; q/k/v linear 0.985, output projection group 0.972, feed-forward
/// group 0.979), B=8 S=16 0.912 (60 rounds: 22 register tiles instead of 8 x 3, a
/// partial one in each), B=1 S=128 with 16 padded 1.002 and B=1 S=16 1.007 (one
/// sequence either way). The outputs differ in the last bits (at most 4e-6 after six
/// layers at B=2 S=126), though each sum runs along k in the same order: LLVM contracts
/// more of the layer norm's multiply-adds into FMAs in the new loop nest (6 against 4
/// in the output projection group's). Not measured on Intel or Zen 5, whose tiles are
/// the same.
bool cpu::chooseCollapsedRows(const Halide::Target &) { return true; }
