//===- SchedulesCpu.cpp - CPU schedules of the Halide kernels -------------===//
//
// Every kernel is vectorised along Halide dimension 0 (contiguous) at the target's
// natural width and parallel over its outermost loops; the matmul and linear schedules
// are in SchedulesCpuMatmul*.cpp. The numbers below are medians of JIT realizations by
// test/unit/halide/KernelBench.cpp (which prints this table) on the project machine:
// 2 cores of a Zen 5 EPYC (AVX-512, Halide target avx512_sapphirerapids), whose fp32
// FMA peak measures 117 GFLOP/s per core (24 independent zmm FMAs in a loop; 234 for
// both cores) and whose memory moves 50-66 GB/s (a streaming read from DRAM: 21 GB/s
// on one core, 47 on two). "1T"/"2T" are HL_NUM_THREADS=1/2; GB/s counts input plus
// output bytes (for a gather or a slice, the bytes it moves). The machine is shared,
// so runs vary by ~10% (q.k^T by up to 30% between processes); the layer-op rows were
// taken with another build running on and off (load ~1-2), 2T as the best of 3 runs.
// (*): taken under a load average of ~14 (other builds), where 2T ran no faster than
// 1T; compare them with each other, not with the rows above.
//
//   kernel                                          1T          2T
//   add [8,128,2048] + [2048]                  46 GB/s      70 GB/s
//   add [8,128,512] + same (in L3)               80         114
//   relu [8,128,2048]                            58          72
//   gelu [8,128,2048] (compute bound)          12.6        25      (1.33 / 0.67 ms)
//   softmax last axis [8,8,128,128]              15          24
//   softmax axis 1 [64,128,128]                  15          24
//   log_softmax last axis [8,32000]              19          38
//   log_softmax last axis [8,128,512]            18          35
//   layer_norm [8,128,512]                       35-39       51
//   argmax last axis [8,32000]                   37          72
//   argmax axis 1 [8,128,512]                    39          73
//   rms_norm [8,128,512] (*)                     58          58
//   reduce_sum last axis [8,128,512] (*)       84-88       84-88
//   reduce_sum axis 1 [8,128,512] (*)          92-96       92-96
//   reduce_max last axis [8,32000] (*)         78-83       78-83
//   a pass over [8,128,512] (scale, *)         86-91       86-91
//   transpose [0,2,1,3] of [8,128,8,64]          76          59-125
//   transpose [1,0] of [1024,2048]               10          22
//   slice [8,128,512] -> [8,128,64]              84         147      (6 / 4 us)
//   concat axis 1, 2 x [8,128,512]               83-93      173
//   concat last axis, 2 x [8,128,512]            69-78      135
//   embedding [32000,512] rows for [8,128] ids   64         121      (66 / 35 us)
//   sinusoid [128] -> [128,512] (f64 math)     0.072 ms   0.037 ms
//   sinusoid [2048] -> [2048,512]               1.15 ms    0.58 ms
//   padding_mask [8,128], causal_mask [128,128],
//   concat [8,127] + [8,1] token ids             < 1 us, one task
//
// Dynamic extents need tails: loops that write the output use GuardWithIf (on x86 a
// predicated vector store, never a scalar loop), intermediate Funcs round up (their
// inputs are clamped in the algorithm), and no split relies on ShiftInwards, which
// would need an extent of at least the vector width.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpu.h"
#include "SchedulesCpuSupport.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;

int64_t cpu::elementCount(const Extents &extents, size_t from, size_t to,
                          int64_t dynamicGuess) {
  int64_t count = 1;
  for (size_t i = from; i < to && i < extents.size(); ++i)
    count *= isStatic(extents[i]) ? extents[i] : dynamicGuess;
  return count;
}

Var cpu::fuseLoops(Stage stage, const std::vector<Var> &vars, const std::string &name) {
  Var fused = vars.front();
  for (size_t i = 1; i < vars.size(); ++i) {
    Var next(name + std::to_string(i));
    stage.fuse(fused, vars[i], next);
    fused = next;
  }
  return fused;
}

namespace {

/// How many rows one parallel task takes so that it touches ~`target` elements: tasks
/// small enough to balance the cores, large enough to hide the thread pool (~2 us a
/// task).
int rowsPerTask(int64_t rowLength, int64_t target = 16384) {
  return static_cast<int>(
      std::clamp<int64_t>(target / std::max<int64_t>(rowLength, 1), 1, 1024));
}

} // namespace

/// The innermost row loop is split into chunks of about 16K elements that are fused
/// with the outer loops; fusing the row loops themselves would cost integer divisions
/// per row to recover the indices.
Var cpu::parallelRows(Stage stage, const std::vector<Var> &rowVars, int64_t rowLength,
                      int64_t innerRows) {
  int chunk = rowsPerTask(rowLength);
  if (isStatic(innerRows))
    chunk = static_cast<int>(std::min<int64_t>(chunk, innerRows));
  Var outer("chunk"), row("row");
  stage.split(rowVars[0], outer, row, chunk, kGuard);
  std::vector<Var> tasks = {outer};
  tasks.insert(tasks.end(), rowVars.begin() + 1, rowVars.end());
  stage.parallel(fuseLoops(stage, tasks, "tasks"));
  return row;
}

//===----------------------------------------------------------------------===//
// Pointwise: add, mul, scale, relu, gelu, row-preserving transposes, slice,
// embedding, range, sinusoid, padding_mask, causal_mask
//===----------------------------------------------------------------------===//

void cpu::schedule(const PointwiseKernel &kernel, const Target &target) {
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  const Extents &ext = kernel.extents;
  if (vars.empty())
    return;
  int width = target.natural_vector_size(out.output_types()[0]);
  // Memory bound (2T: 70 GB/s for a bias add, at the machine's bandwidth): vectors
  // along the row, parallel chunks of ~16K elements; a tensor of at most 16K elements
  // is not worth waking the thread pool. The same serves the compute-bound gelu (~25
  // FMAs a vector) and sinusoid (f64): vectors of 2 or 4 x the natural width, to
  // overlap more of gelu's dependent chain, were 4-8% faster 1T and no faster 2T (on
  // an earlier gelu), so they stay natural. An embedding row is one gathered row copy
  // (the id is loaded, and checked where it is not proven in range, once per row), a
  // slice a copy at an offset. where and cast take it as they are (KernelBench 1T,
  // 2-core Zen 4 VM under other builds): where [8, 128, 512] with a [128, 512] condition
  // 0.088 ms (75 GB/s; the add of two [8, 128, 512] 0.070 ms), cast f32 -> i32
  // [8, 128, 2048] 0.87 ms (relu 1.07 ms). The math functions, [8, 128, 2048] 1T
  // against relu's 0.25-0.41 ms: exp 0.59 ms, sigmoid 0.78, silu 0.80, rsqrt 0.94, tanh
  // 1.02, gelu_tanh 1.10 (compute bound, as gelu). rotary [1, 32, 512, 128] (LLaMA-7B
  // heads, 512 positions): 1.12 ms half, 1.44 ms interleaved, its cos/sin stage
  // [64, 512] included (the partner reads are a gather within the row vector).
  bool small = llvm::all_of(ext, isStatic) && elementCount(ext, 0, ext.size()) <= 16384;
  if (vars.size() == 1) {
    Var chunk("chunk"), inner("inner");
    out.split(vars[0], chunk, inner, 16384, kGuard).vectorize(inner, width, kGuard);
    if (!small)
      out.parallel(chunk);
    return;
  }
  out.vectorize(vars[0], width, kGuard);
  if (!small)
    parallelRows(out, std::vector<Var>(vars.begin() + 1, vars.end()),
                 elementCount(ext, 0, 1), ext[1]);
}

//===----------------------------------------------------------------------===//
// Transpose of the innermost dimension
//===----------------------------------------------------------------------===//

void cpu::schedule(const TransposeKernel &kernel, const Target &target) {
  Func out = kernel.output;
  int width = target.natural_vector_size(out.output_types()[0]);
  Var x = kernel.vars[0], y = kernel.vars[kernel.readsInputInner];
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
  // A width x width tile: the input tile is staged with dense vector loads along its
  // rows, then read down its columns from L1. Staging is what pays: 1024x2048 f32
  // 1T: 13.4 GB/s staged vs 9.8 GB/s gathering straight from memory (8x8 tiles),
  // 7.5 GB/s (16x16); vectorizing both tile dimensions (Halide's shuffle transpose)
  // gave 5-7 GB/s.
  out.tile(x, y, xo, yo, xi, yi, width, width, kGuard).vectorize(xi).unroll(yi);
  // A task is a row of tiles (width output rows), not a tile: 2T with a task per tile
  // ran at 2.7 GB/s, below 1T.
  std::vector<Var> rows = {yo};
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.readsInputInner)
      rows.push_back(kernel.vars[d]);
  std::vector<VarOrRVar> order = {xi, yi, xo};
  order.insert(order.end(), rows.begin(), rows.end());
  out.reorder(order);
  Var tiles = xo;
  out.parallel(fuseLoops(out, rows, "tilerows"));
  ImageParam input = kernel.input;
  Func staged = input.in();
  staged.compute_at(out, tiles).vectorize(staged.args()[0], width, kGuard);
  // A constant row stride for the staged tile, so that reading down its columns is a
  // gather with constant offsets even in the clamped tiles at the edges.
  std::vector<Var> stagedArgs = staged.args();
  for (size_t d = 0; d < stagedArgs.size(); ++d) {
    bool tileDim = d == 0 || static_cast<int>(d) == kernel.inputOfOutputInner;
    staged.bound_storage(stagedArgs[d], tileDim ? width : 1);
  }
}

//===----------------------------------------------------------------------===//
// Row reductions: softmax, log_softmax, layer_norm, argmax
//===----------------------------------------------------------------------===//

/// (Vectorising the reduction directly with atomic() makes a horizontal step per vector
/// of input: 1T softmax D = 512, 15.6 vs 16.7 GB/s.)
void cpu::vectorizeRowReduction(Func stats, RDom r, int width, LoopLevel at) {
  Var lane("lane");
  RVar outer("ro"), inner("ri");
  Func partial =
      stats.update().split(r.x, outer, inner, width, kGuard).rfactor(inner, lane);
  stats.compute_at(at);
  stats.update().atomic().vectorize(inner);
  // The lanes innermost in storage: rfactor puts them outermost, which costs nothing
  // for one row's partials but makes every access a gather when `at` holds many rows.
  std::vector<Var> storage = partial.args();
  std::rotate(storage.begin(), storage.end() - 1, storage.end());
  partial.compute_at(at).vectorize(lane);
  if (storage.size() > 1)
    partial.reorder_storage(storage);
  partial.update().vectorize(lane);
}

namespace {

/// The loops of `kernel.output` over the slabs of a reduction along an outer axis (one
/// index of every dimension but x = vars[0] and the axis), innermost first.
std::vector<Var> slabVars(const RowReductionKernel &kernel) {
  std::vector<Var> slabs;
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.axis)
      slabs.push_back(kernel.vars[d]);
  return slabs;
}

/// Schedules the per-row statistics `stats` (each one update over `kernel.r`) and makes
/// parallel tasks of the output's rows; returns the loop at which the statistics of a
/// row are computed (Var::outermost() when there is one row). Along the contiguous
/// dimension each statistic is reduced in `width` lanes (vectorizeRowReduction), and
/// `dynamicRowLength` sizes the tasks when the row length is dynamic. Along an outer
/// axis each slab reduces down the axis with vectors along x.
Var scheduleRowStatistics(const RowReductionKernel &kernel,
                          std::initializer_list<Func> stats, int width,
                          int64_t dynamicRowLength) {
  Func out = kernel.output;
  const Extents &ext = kernel.extents;
  if (kernel.axis == 0) {
    Var row = kernel.vars.size() < 2
                  ? Var::outermost()
                  : parallelRows(
                        out, std::vector<Var>(kernel.vars.begin() + 1, kernel.vars.end()),
                        isStatic(ext[0]) ? ext[0] : dynamicRowLength, ext[1]);
    for (Func s : stats)
      vectorizeRowReduction(s, kernel.r, width, LoopLevel(out, row));
    return row;
  }
  int axis = kernel.axis;
  std::vector<Var> slabs = slabVars(kernel);
  Var slab =
      slabs.empty()
          ? Var::outermost()
          : parallelRows(out, slabs,
                         elementCount(ext, 0, 1) * elementCount(ext, axis, axis + 1),
                         ext[axis == 1 ? 2 : 1]);
  Var x = kernel.vars[0];
  for (Func s : stats) {
    s.compute_at(out, slab).vectorize(x, width, kGuard);
    s.update().reorder(x, kernel.r.x).vectorize(x, width, kGuard);
  }
  return slab;
}

} // namespace

void cpu::schedule(const SoftmaxKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output;
  Var x = kernel.vars[0];
  out.vectorize(x, width, kGuard);
  // Along the contiguous dimension, one row at a time: max, exp (staged, so exp runs
  // once per element), sum, scale; the row stays in L1 between the passes. exp is half
  // the time (1T: 15 GB/s, 25 GB/s with exp taken out). Fusing the row loops into one
  // parallel loop cost a division per row to recover the indices: 8.4 GB/s before
  // parallelRows; horizontal steps vectorised (atomic) rather than a scalar loop over
  // the lanes. log_softmax has no staged exp (it is only summed) and one more flag in
  // its max (a Tuple reduction, still one pass): 1T 19 GB/s, 2T 38 on [8, 32000] rows
  // (128 KB, from L2), one row per task.
  // Along an outer dimension: each slab reduces down the axis with vectors along x,
  // the slab's loops outside the axis.
  if (kernel.axis != 0) {
    std::vector<VarOrRVar> order = {x, kernel.vars[kernel.axis]};
    for (const Var &v : slabVars(kernel))
      order.push_back(v);
    out.reorder(order);
  }
  Var row = scheduleRowStatistics(kernel, {kernel.max, kernel.sum}, width, 256);
  if (Func exp = kernel.exp; exp.defined())
    exp.compute_at(out, row).vectorize(x, width, kGuard);
}

void cpu::schedule(const LayerNormKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output;
  // Two vectorised reductions over a row in L1, then the normalising pass: 1T 35-39
  // GB/s, 2T 51 GB/s on [8, 128, 512] (a 6 MB working set, from L3).
  out.vectorize(kernel.vars[0], width, kGuard);
  scheduleRowStatistics(kernel, {kernel.sum, kernel.squares}, width, 512);
}

void cpu::schedule(const RmsNormKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output;
  // As layer_norm with one statistic: the sum of squares in `width` lanes and one
  // horizontal step per row, then the scaling pass over the row in L1. [8, 128, 512]:
  // 0.072 ms, 58 GB/s, against 0.11 ms for layer_norm and 0.047 ms (86-91 GB/s) for a
  // plain pass over the same bytes (kiln-kernel-bench copy_ rms_norm, 1T, machine
  // loaded: load average ~14, where 2T measured the same).
  out.vectorize(kernel.vars[0], width, kGuard);
  scheduleRowStatistics(kernel, {kernel.squares}, width, 512);
}

void cpu::schedule(const ArgmaxKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  // Along the contiguous dimension (the vocabulary of a logits row): per row, the max
  // and the key as `width` lane-wise partial results and one horizontal step each, as
  // for softmax; one index per row is stored, as a scalar. [8, 32000]: 1T 37 GB/s, 2T
  // 72 (27 / 14 us), rows from L2 read twice; a serial {index, value} scan would be
  // bound by its compare-select chain.
  // Along an outer dimension: each output row (one index of every dimension but x and
  // the axis) reduces down the axis with vectors along x, reading input rows densely:
  // [8, 128, 512] along 128, 1T 39 GB/s, 2T 73.
  if (kernel.axis != 0) {
    Func out = kernel.output;
    out.vectorize(kernel.vars[0], width, kGuard);
  }
  scheduleRowStatistics(kernel, {kernel.max, kernel.key}, width, 4096);
}

//===----------------------------------------------------------------------===//
// Reductions over axes: reduce_sum, reduce_mean, reduce_max
//===----------------------------------------------------------------------===//

void cpu::schedule(const ReduceKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output, total = kernel.total;
  const std::vector<Var> &vars = kernel.vars;
  const Extents &ext = kernel.extents;
  int64_t count = isStatic(kernel.count) ? kernel.count : 512;
  if (kernel.reducesInner) {
    // The contiguous dimension reduced (a row sum): per output element, `width` lanes
    // of partial results along r.x and one horizontal step, as softmax's row max: the
    // sum is a tree of `width` sequential sums. Tasks of ~16K input elements.
    // [8, 128, 512] -> [8, 128]: 0.024 ms, 84-88 GB/s; max over [8, 32000]: 0.012 ms,
    // 78-83 GB/s; a plain pass over [8, 128, 512] (read and write): 86-91 GB/s, so the
    // reduction reads at the speed a copy moves bytes (1T, loaded machine as above).
    Var at = vars.empty() ? Var::outermost() : parallelRows(out, vars, count, ext[0]);
    vectorizeRowReduction(total, kernel.r, width, LoopLevel(out, at));
    return;
  }
  // The contiguous dimension kept: vectors along x accumulate down the reduced
  // dimensions (loops outside x), each output row computed into L1 and stored once.
  // Along a reduced outer axis each element is a sequential f32 sum of that axis.
  // [8, 128, 512] over axis 1 -> [8, 512]: 0.022 ms, 92-96 GB/s (1T, as above).
  Var x = vars[0];
  out.vectorize(x, width, kGuard);
  Var row = vars.size() < 2
                ? Var::outermost()
                : parallelRows(out, std::vector<Var>(vars.begin() + 1, vars.end()),
                               elementCount(ext, 0, 1) * count, ext[1]);
  total.compute_at(out, row).vectorize(x, width, kGuard);
  std::vector<VarOrRVar> order = {x};
  for (int i = 0; i < kernel.r.dimensions(); ++i)
    order.push_back(kernel.r[i]);
  total.update().reorder(order).vectorize(x, width, kGuard);
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

void cpu::schedule(const ConcatKernel &kernel, const Target &target) {
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  const Extents &ext = kernel.extents;
  int width = target.natural_vector_size(out.output_types()[0]);
  int axis = kernel.axis;
  // A copy, memory bound like the pointwise kernels, and parallel like them: tasks
  // of ~16K elements unless the whole result is that small. 2 x [8, 128, 512] joined
  // along axis 1: 1T 83-93 GB/s, 2T 173 (from L3); along the last axis, each operand
  // filling half of every row: 69-78 and 135.
  bool small = llvm::all_of(ext, isStatic) && elementCount(ext, 0, ext.size()) <= 16384;
  for (size_t i = 0; i < kernel.parts.size(); ++i) {
    Stage copy = out.update(static_cast<int>(i));
    RVar r = kernel.parts[i].x;
    if (axis == 0) {
      // Each operand fills a stretch of every output row.
      copy.vectorize(r, width, kGuard);
      if (!small && vars.size() > 1)
        parallelRows(copy, std::vector<Var>(vars.begin() + 1, vars.end()),
                     isStatic(ext[0]) ? ext[0] : 512, ext[1]);
      continue;
    }
    // Each operand fills whole rows: vectors along x, the operand's rows (r) and the
    // dimensions between outside them, and tasks from the dimensions above the axis
    // or, when the axis is the outermost, from chunks of r.
    std::vector<VarOrRVar> order(vars.begin(), vars.begin() + axis);
    order.push_back(r);
    order.insert(order.end(), vars.begin() + axis + 1, vars.end());
    copy.reorder(order).vectorize(vars[0], width, kGuard);
    if (small)
      continue;
    int64_t rowLength = elementCount(ext, 0, axis, 512);
    if (axis + 1 < static_cast<int>(vars.size())) {
      parallelRows(copy, std::vector<Var>(vars.begin() + axis + 1, vars.end()),
                   rowLength * elementCount(ext, axis, axis + 1), ext[axis + 1]);
    } else {
      RVar chunk("chunk"), rows("rows");
      int perTask = static_cast<int>(
          std::clamp<int64_t>(16384 / std::max<int64_t>(rowLength, 1), 1, 1024));
      copy.split(r, chunk, rows, perTask, kGuard).parallel(chunk);
    }
  }
}
