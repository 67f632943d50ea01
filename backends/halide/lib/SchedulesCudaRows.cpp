//===- SchedulesCudaRows.cpp - CUDA schedules of the reductions -----------===//
//
// softmax / log_softmax, layer_norm, rms_norm, argmax and reduce_* on a CUDA target.
// None of this has run on a GPU yet: it compiles to PTX (CudaRowsScheduleTest.cpp
// checks that every stage became device code), and the mappings are argued here, not
// measured.
//
// Along the contiguous dimension (softmax and argmax on the last axis, layer_norm,
// rms_norm, reduce_* of the innermost dimension) one block reduces one row: its
// `threads` threads each accumulate a strided slice of the row (thread t reads
// elements t, t + threads, ...: a warp reads 32 consecutive floats, coalesced), those
// partial results go to shared memory, 32 threads fold them to 32 values, and one
// thread folds the 32 (two rfactor levels; Halide 14's warp shuffles only serve
// reductions inside one warp's lanes). The statistic lives in shared memory for the
// block's pass over the row, which every thread reads: computed once per row. Shared
// memory per block: `threads` partial results (1 KiB at 256 threads, 1.25 KiB for
// the (max, flag) Tuple of softmax), far below the 48 KiB default, so several blocks
// fit per SM. A row of 32000 (log_softmax over the vocabulary) takes 256 threads
// (125 elements each); a row of 512, 128 threads (4 each).
//
// Along an outer axis (softmax or argmax over a non-last axis, reduce_* keeping the
// innermost dimension) each thread owns one column x and walks the axis sequentially,
// its statistic in a register: a warp reads 32 consecutive floats per step, which is
// coalesced, and there are as many threads as output columns (x times the other
// dimensions), which fills the GPU whenever the result is large enough to matter.
//
// softmax's staged exp (one exp per element on the CPU) is left inline: a row of 32000
// floats would not fit in shared memory, and the kernel is bound by memory, not exp.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpuSupport.h"
#include "SchedulesCuda.h"

#include <optional>

using namespace Halide;
using namespace kiln::halide_backend;
using cpu::isStatic;

namespace {

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;
constexpr int kWarp = 32;

/// Threads of the block that reduces one row of `length` elements: about 4 elements
/// per thread, from one warp to 256 threads (a dynamic row gets 256).
int rowThreads(int64_t length) {
  int threads = kWarp;
  while (threads < 256 && (!isStatic(length) || threads * 4 < length))
    threads *= 2;
  return threads;
}

/// The loop of `stage` over `vars` (innermost first) fused into one.
Var fused(Stage stage, const std::vector<Var> &vars, const char *name) {
  return cpu::fuseLoops(stage, vars, name);
}

/// Reduces `stats` (one update over `r`, the contiguous axis) with `threads` threads
/// of the block that `block` of `out` runs, as the file comment says: strided partial
/// results, then 32 of them, then one.
void blockReduction(Func stats, RVar r, int threads, const Func &out, Var block) {
  Var lane("lane"), warpLane("warp_lane");
  RVar ro("ro"), ri("ri"), wo("wo"), wi("wi");
  Func strided = stats.update().split(r, ro, ri, threads, kGuard).rfactor(ri, lane);
  Func perWarp = stats.update().split(ri, wo, wi, kWarp).rfactor(wi, warpLane);
  stats.compute_at(out, block);
  strided.compute_at(out, block).gpu_threads(lane);
  strided.update().gpu_threads(lane);
  perWarp.compute_at(out, block).gpu_threads(warpLane);
  perWarp.update().gpu_threads(warpLane);
}

/// The same for a reduction to a single value (no row loop to make blocks of): the
/// strided partial results in blocks of one warp, then one thread folds them, each a
/// kernel of its own.
void rootReduction(Func stats, RVar r, int threads) {
  Var lane("lane"), lo("lo"), li("li");
  RVar ro("ro"), ri("ri");
  Func strided = stats.update().split(r, ro, ri, threads, kGuard).rfactor(ri, lane);
  strided.compute_root().gpu_tile(lane, lo, li, kWarp);
  strided.update().gpu_tile(lane, lo, li, kWarp);
  stats.compute_root().gpu_single_thread();
  stats.update().gpu_single_thread();
}

/// Maps `out`'s loops `rowVars` (innermost first; empty for a single row) to blocks and
/// `x` (when defined: the output walks the row) to `threads` threads that stride over
/// it; returns the block loop, none when there are no rows.
std::optional<Var> rowBlocks(Func out, const std::vector<Var> &rowVars, Var *x,
                             int threads) {
  if (x) {
    Var xo("xo"), xi("xi");
    out.split(*x, xo, xi, threads, kGuard);
    if (rowVars.empty()) {
      out.gpu_blocks(xo).gpu_threads(xi);
      return std::nullopt;
    }
    std::vector<VarOrRVar> order = {xi, xo};
    order.insert(order.end(), rowVars.begin(), rowVars.end());
    out.reorder(order).gpu_threads(xi);
  }
  if (rowVars.empty()) {
    out.gpu_single_thread();
    return std::nullopt;
  }
  Var block = fused(out, rowVars, "rows");
  out.gpu_blocks(block);
  return block;
}

/// A row reduction along the contiguous axis: a block per row reduces `stats` (in
/// order), then `x` (if the output walks the row) strides over the row to write it.
void scheduleInnerRows(Func out, Var *x, const std::vector<Var> &rowVars,
                       std::initializer_list<Func> stats, RVar r, int64_t length) {
  int threads = rowThreads(length);
  std::optional<Var> block = rowBlocks(out, rowVars, x, threads);
  for (Func s : stats) {
    if (block)
      blockReduction(s, r, threads, out, *block);
    else
      rootReduction(s, r, threads);
  }
}

/// A reduction down an outer axis: a thread per output column `x`, its statistics in
/// registers, computed by walking the axis; `inner` (innermost first) are the loops
/// the output has inside the thread (the axis itself when the output keeps it).
void scheduleColumns(Func out, Var x, const std::vector<Var> &inner,
                     const std::vector<Var> &outer, std::initializer_list<Func> stats) {
  Var xo("xo"), xi("xi");
  out.split(x, xo, xi, 128, kGuard);
  std::vector<VarOrRVar> order(inner.begin(), inner.end());
  order.push_back(xi);
  order.push_back(xo);
  order.insert(order.end(), outer.begin(), outer.end());
  out.reorder(order);
  std::vector<Var> blocks = {xo};
  blocks.insert(blocks.end(), outer.begin(), outer.end());
  out.gpu_blocks(fused(out, blocks, "columns")).gpu_threads(xi);
  for (Func s : stats)
    s.compute_at(out, xi);
}

/// A Halide::require in `out`'s definition whose condition depends on no loop (argmax
/// along, and reduce_max over, dynamic axes of size 0): device code cannot format its
/// message (Halide 14 stops at an internal error), so the kernel is specialized on the
/// condition, where the requirement folds away, and otherwise fails on the host with
/// the requirement's message. Call it after `out` is scheduled: a specialization takes
/// the schedule it is made with.
void hoistRequirements(Func out) {
  struct Finder : Internal::IRVisitor {
    Expr condition;
    std::string message;
    void visit(const Internal::Call *call) override {
      if (call->is_intrinsic(Internal::Call::require) && !condition.defined()) {
        condition = Internal::remove_likelies(call->args[0]);
        Finder strings;
        call->args[2].accept(&strings);
        message = strings.message;
      }
      Internal::IRVisitor::visit(call);
    }
    void visit(const Internal::StringImm *text) override { message += text->value; }
  } finder;
  for (const Expr &value : out.function().definition().values())
    Internal::substitute_in_all_lets(value).accept(&finder);
  if (!finder.condition.defined())
    return;
  for (const Var &v : out.args())
    if (Internal::expr_uses_var(finder.condition, v.name()))
      return;
  out.specialize(finder.condition);
  out.specialize_fail(finder.message);
}

/// The loops of a row reduction's output other than x = vars[0] and the axis (an
/// outer one).
std::vector<Var> otherVars(const RowReductionKernel &kernel) {
  std::vector<Var> others(kernel.vars.begin() + 1, kernel.vars.end());
  others.erase(others.begin() + (kernel.axis - 1));
  return others;
}

/// softmax, layer_norm and rms_norm: the output has the input's loops.
void scheduleSameShapeRows(const RowReductionKernel &kernel,
                           std::initializer_list<Func> stats) {
  Func out = kernel.output;
  Var x = kernel.vars[0];
  if (kernel.axis != 0) {
    scheduleColumns(out, x, {kernel.vars[kernel.axis]}, otherVars(kernel), stats);
    return;
  }
  std::vector<Var> rows(kernel.vars.begin() + 1, kernel.vars.end());
  scheduleInnerRows(out, &x, rows, stats, kernel.r.x, kernel.extents[0]);
}

} // namespace

llvm::Error cuda::schedule(const SoftmaxKernel &kernel, const Target &) {
  scheduleSameShapeRows(kernel, {kernel.max, kernel.sum});
  return llvm::Error::success();
}

llvm::Error cuda::schedule(const LayerNormKernel &kernel, const Target &) {
  scheduleSameShapeRows(kernel, {kernel.sum, kernel.squares});
  return llvm::Error::success();
}

llvm::Error cuda::schedule(const RmsNormKernel &kernel, const Target &) {
  scheduleSameShapeRows(kernel, {kernel.squares});
  return llvm::Error::success();
}

/// The output is one index per row: along the contiguous axis a block per row whose
/// thread 0 writes it once the block has reduced the row; along an outer axis a
/// thread per column.
llvm::Error cuda::schedule(const ArgmaxKernel &kernel, const Target &) {
  Func out = kernel.output;
  if (kernel.axis != 0) {
    scheduleColumns(out, kernel.vars[0], {}, otherVars(kernel), {kernel.max, kernel.key});
    hoistRequirements(out);
    return llvm::Error::success();
  }
  std::vector<Var> rows(kernel.vars.begin() + 1, kernel.vars.end());
  scheduleInnerRows(out, nullptr, rows, {kernel.max, kernel.key}, kernel.r.x,
                    kernel.extents[0]);
  hoistRequirements(out);
  return llvm::Error::success();
}

/// With the innermost dimension reduced, a block per output element reduces r.x
/// across its threads (any other reduced dimensions are walked inside each thread);
/// with it kept, a thread per output column walks every reduced dimension.
llvm::Error cuda::schedule(const ReduceKernel &kernel, const Target &) {
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  if (kernel.reducesInner) {
    scheduleInnerRows(out, nullptr, vars, {kernel.total}, kernel.r.x,
                      isStatic(kernel.count) ? kernel.count : kDynamicExtent);
  } else {
    scheduleColumns(out, vars[0], {}, std::vector<Var>(vars.begin() + 1, vars.end()),
                    {kernel.total});
  }
  hoistRequirements(out);
  return llvm::Error::success();
}
