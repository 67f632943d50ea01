//===- SchedulesCuda.cpp - CUDA schedules of the data-movement kernels ----===//
//
// Pointwise kernels (elementwise ops and chains, kiln.fusion groups without an anchor,
// row-preserving transposes, slices, embedding gathers, masks, range, sinusoid,
// state_write and kv_append copies), transposes of the innermost dimension and
// concats. All are memory bound: what matters is that a warp reads and writes
// consecutive elements (coalesced) and that a kernel is one launch whatever its rank.
// So Halide dimension 0 (contiguous) is mapped to the threads of a block and every
// outer dimension, fused, to the blocks; tails are GuardWithIf, since most extents are
// dynamic. A transpose that moves the innermost dimension goes through a tile in shared
// memory, so that both its reads and its writes are coalesced. The one stage left on
// the host is a checked embedding's id check (PointwiseKernel::onHost).
//
// None of these schedules has run on a GPU yet (no device this session): they are
// checked by compiling to PTX (test/unit/halide/CudaScheduleTest.cpp), and the thread
// and tile sizes below are the usual starting points, not measured choices.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCuda.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using cpu::isStatic;
using cpu::kGuard;

llvm::Error cuda::noSchedule(const char *kind, const Target &target) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the Halide backend has no CUDA schedule for %s kernels yet (target %s)", kind,
      target.to_string().c_str());
}

namespace {

/// Threads per block of a memory-bound kernel: 256 (8 warps; 8 such blocks fill an
/// SM's 2048 threads), fewer when the contiguous dimension is statically shorter, down
/// to one warp: a [.., 64] head-dimension copy gets blocks of 64 threads rather than
/// 256 of which 192 are idle.
int threadsFor(int64_t innerExtent) {
  if (!isStatic(innerExtent))
    return 256;
  int64_t warps = (innerExtent + 31) / 32;
  return static_cast<int>(std::clamp<int64_t>(warps, 1, 8) * 32);
}

} // namespace

void cuda::mapToGrid(Stage stage, std::vector<VarOrRVar> loops, int64_t innerExtent) {
  if (loops.empty()) {
    stage.gpu_single_thread();
    return;
  }
  VarOrRVar outer = loops[0].is_rvar ? VarOrRVar(RVar("outer")) : Var("outer");
  VarOrRVar lane = loops[0].is_rvar ? VarOrRVar(RVar("lane")) : Var("lane");
  stage.split(loops[0], outer, lane, threadsFor(innerExtent), kGuard);
  for (size_t d = 1; d < loops.size(); ++d) {
    bool rvar = outer.is_rvar || loops[d].is_rvar;
    std::string name = "blocks" + std::to_string(d);
    VarOrRVar fused = rvar ? VarOrRVar(RVar(name)) : Var(name);
    stage.fuse(outer, loops[d], fused);
    outer = fused;
  }
  stage.gpu_blocks(outer).gpu_threads(lane);
}

llvm::Error cuda::schedule(const PointwiseKernel &kernel, const Target &target) {
  Func output = kernel.output;
  if (kernel.onHost)
    return llvm::Error::success();
  if (output.has_update_definition())
    return noSchedule("pointwise (with an update)", target);
  mapToGrid(output, {kernel.vars.begin(), kernel.vars.end()},
            kernel.extents.empty() ? 1 : kernel.extents[0]);
  return llvm::Error::success();
}

llvm::Error cuda::schedule(const TransposeKernel &kernel, const Target &) {
  // A 32 x 32 tile per block: 32 x 8 threads (one warp along the output's contiguous
  // dimension), each storing 4 rows. The input tile is staged in shared memory by the
  // same threads with a warp along the input's contiguous dimension, so both global
  // accesses are 128-byte rows; the staged rows are padded to 33 elements so that
  // reading a column of the tile hits 32 different banks. 33 x 32 x 4 bytes = 4.2 KiB
  // of shared memory per block (of the 48 KiB default).
  constexpr int kTile = 32, kRows = 8;
  Func out = kernel.output;
  Var x = kernel.vars[0], y = kernel.vars[kernel.readsInputInner];
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi"), ys("ys"), yt("yt");
  out.tile(x, y, xo, yo, xi, yi, kTile, kTile, kGuard).split(yi, ys, yt, kRows);
  std::vector<VarOrRVar> order = {ys, xi, yt, xo, yo};
  std::vector<Var> blocks = {xo, yo};
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.readsInputInner) {
      order.push_back(kernel.vars[d]);
      blocks.push_back(kernel.vars[d]);
    }
  out.reorder(order).gpu_threads(xi, yt);
  Var block = cpu::fuseLoops(out, blocks, "tiles");
  out.gpu_blocks(block);

  ImageParam input = kernel.input;
  Func staged = input.in();
  std::vector<Var> args = staged.args();
  Var a = args[0], b = args[kernel.inputOfOutputInner], bs("bs"), bt("bt");
  staged.compute_at(out, block)
      .split(b, bs, bt, kRows, kGuard)
      .reorder(bs, a, bt)
      .gpu_threads(a, bt);
  for (size_t d = 0; d < args.size(); ++d) {
    bool tileDim = d == 0 || static_cast<int>(d) == kernel.inputOfOutputInner;
    staged.bound_storage(args[d], d == 0 ? kTile + 1 : tileDim ? kTile : 1);
  }
  return llvm::Error::success();
}

llvm::Error cuda::schedule(const ConcatKernel &kernel, const Target &) {
  // One launch per operand (each update copies one operand into its range): along the
  // contiguous dimension when the operands are joined along it (each fills a stretch of
  // every row, its stretch on the threads), otherwise each operand's rows are whole
  // output rows (x on the threads, the operand's rows and the other dimensions on the
  // blocks).
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  for (size_t i = 0; i < kernel.parts.size(); ++i) {
    RVar r = kernel.parts[i].x;
    std::vector<VarOrRVar> loops(vars.begin(), vars.end());
    loops[kernel.axis] = r;
    Stage copy = out.update(static_cast<int>(i));
    copy.reorder(loops);
    mapToGrid(copy, loops, kernel.axis == 0 ? kDynamicExtent : kernel.extents[0]);
  }
  return llvm::Error::success();
}
