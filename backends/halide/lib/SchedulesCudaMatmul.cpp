//===- SchedulesCudaMatmul.cpp - CUDA schedules of matmul and linear ------===//
//
// Two schedules of out(n, m, batch...) = sum_k lhs'(k, m) rhs'(n, k), SIMT fp32 (Halide
// 14 has no tensor-core codegen), and the epilogue of a fusion group (bias, ReLU, GELU,
// residual) applied as each thread stores its outputs:
//
// - A tiled product for many rows (Halide's apps/cuda_mat_mul is the reference point;
//   unlike it, the operand tiles go through shared memory). A block computes a 64 x 64
//   output tile with 16 x 16 threads, each holding a 4 x 4 register tile. K is walked
//   in chunks of 32: the block stages the lhs tile (64 rows x 32) and the rhs tile (64
//   columns x 32) in shared memory with the same 16 x 16 threads, 16 consecutive ones
//   (a half warp) along the operand's contiguous dimension (k for a `transpose_rhs`
//   weight, [out, in], and for the lhs; n for a plain rhs), so that every global load
//   is whole 64-byte rows (two 32-byte sectors); a staging with 32 threads along a row
//   would make Halide launch 32 x 16 threads for every stage. Then every thread
//   accumulates its 4 x 4 tile over the chunk in registers (rfactor over the chunks)
//   and adds it to the block's accumulator tile in shared memory, one read and write
//   per output per 32 k. Staged rows are padded by one element so that a warp reading
//   a column of a staged tile hits 32 banks. Shared memory per block: accumulator
//   64 x 64 x 4 = 16 KiB, rhs tile 32 x 65 x 4 = 8.3 KiB, lhs tile 64 x 65 x 4 = 16.6
//   KiB (its rows are padded for the longer of k and m, as the description does not
//   say whether the lhs is transposed), 41 KiB in all, under the 48 KiB default.
//   Halide 14 cannot keep a per-thread register tile alive across a loop at
//   the block level (an allocation there is per block), which is why the accumulator
//   lives in shared memory between chunks. Static extents below the tile shrink it.
// - A matrix-vector product for a `transpose_rhs` weight read by few rows (a decode
//   step multiplies 1..8 rows by every weight): a 64 x 64 tile would leave most of the
//   block idle and read each weight once per 64 rows that are not there. Instead a
//   block takes 8 (or 4) output columns for up to 8 rows; per column a warp splits k
//   over its 32 lanes (consecutive lanes read consecutive k of the weight row: each
//   load a 128-byte row), each lane reusing its weight value for every row (its sums
//   stay in registers across the k loop: LLVM promotes them, as the PTX shows), and
//   one thread per output adds the 32 lane sums from shared memory at the end. It is
//   chosen for a static row count of at most 8, and for rows taken from a dynamic batch
//   dimension over a static m of 1 (the decode step's [B, 1, K] x W^T), where the batch
//   is the beam or the batch of requests; a plain rhs with few rows keeps the tiled
//   schedule, shrunk to its rows.
//
// Batch dimensions and tiles are fused onto the blocks (one launch per kernel), tails
// are GuardWithIf (dynamic extents), the accumulators have the full tile's size and
// the algorithm clamps the rows and columns it reads. An empty product (a dynamic K or
// output extent of 0) is a specialization that stores the epilogue of 0 with a
// pointwise mapping.
//
// Not run on a GPU yet (no device this session): compiled to PTX for sm_70
// (test/unit/halide/CudaScheduleTest.cpp); the sizes are the common starting points of
// SIMT sgemm and GEMV kernels, to be measured against torch.matmul on a device.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpuSupport.h"
#include "SchedulesCuda.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using cpu::isStatic;
using cpu::kGuard;

namespace {

/// The output dimensions other than the columns and the rows.
std::vector<Var> batchVars(const MatmulKernel &kernel, int rowDim) {
  std::vector<Var> batch;
  for (int d = 1; d < static_cast<int>(kernel.vars.size()); ++d)
    if (d != rowDim)
      batch.push_back(kernel.vars[d]);
  return batch;
}

/// Fuses `loops` (innermost first) of `out` into its blocks; returns the block loop.
Var mapBlocks(Func out, const std::vector<Var> &loops) {
  Var block = cpu::fuseLoops(out, loops, "blocks");
  out.gpu_blocks(block);
  return block;
}

/// Stages `tile` (computed at `level`) in shared memory with the block's threads,
/// `threads[0]` consecutive ones along `contiguous` (a warp or a half warp: rows of 64
/// or 128 bytes) and `threads[1]` along `other` (when defined), each thread loading
/// several elements; rows along `contiguous` padded by one element (see the banner).
void stageTile(Func tile, LoopLevel level, Var contiguous, const Var *other,
               int contiguousExtent, const int threads[2]) {
  tile.compute_at(level).bound_storage(contiguous, contiguousExtent + 1);
  Var cs("cs"), ct("ct"), os("os"), ot("ot");
  tile.split(contiguous, cs, ct, threads[0], kGuard);
  if (!other) {
    tile.reorder(cs, ct).gpu_threads(ct);
    return;
  }
  tile.split(*other, os, ot, threads[1], kGuard)
      .reorder(cs, os, ct, ot)
      .gpu_threads(ct, ot);
}

void scheduleTiled(const MatmulKernel &kernel, int rowDim) {
  Func out = kernel.output, product = kernel.product, packed = kernel.packedRhs;
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
  constexpr int kChunk = 32;
  // 16 x 16 threads of 4 x 4 outputs; a static extent under 64 gets fewer threads (and
  // registers, under 4) along it.
  auto shape = [](int64_t extent, int &threads, int &registers) {
    threads = 16;
    registers = 4;
    if (isStatic(extent) && extent < 64) {
      registers = static_cast<int>(std::min<int64_t>(extent, 4));
      threads = static_cast<int>((extent + registers - 1) / registers);
    }
  };
  int colThreads, colRegs, rowThreads, rowRegs;
  shape(kernel.extents[0], colThreads, colRegs);
  shape(kernel.extents[rowDim], rowThreads, rowRegs);
  int colTile = colThreads * colRegs, rowTile = rowThreads * rowRegs;
  // The staging uses the same threads as the product, so that no stage launches more
  // threads than the others use (Halide launches the largest count of any stage).
  const int threads[2] = {colThreads, rowThreads};
  std::vector<Var> batch = batchVars(kernel, rowDim);

  Var no("no"), ni("ni"), nt("nt"), nr("nr"), mo("mo"), mi("mi"), mt("mt"), mr("mr");
  out.split(n, no, ni, colTile, kGuard)
      .split(ni, nt, nr, colRegs)
      .split(row, mo, mi, rowTile, kGuard)
      .split(mi, mt, mr, rowRegs);
  std::vector<VarOrRVar> order = {nr, mr, nt, mt, no, mo};
  order.insert(order.end(), batch.begin(), batch.end());
  out.reorder(order).unroll(nr).unroll(mr).gpu_threads(nt, mt);
  std::vector<Var> blocks = {no, mo};
  blocks.insert(blocks.end(), batch.begin(), batch.end());
  Var block = mapBlocks(out, blocks);

  // The block's accumulator tile, in shared memory; each thread owns a register-tile
  // sized part of it, in the pure step and in the sum over chunks alike.
  product.compute_at(out, block).bound_extent(n, colTile).bound_extent(row, rowTile);
  auto threadTile = [&](Stage stage, std::vector<VarOrRVar> outer) {
    stage.split(n, nt, nr, colRegs).split(row, mt, mr, rowRegs);
    std::vector<VarOrRVar> loops = {nr, mr};
    loops.insert(loops.end(), batch.begin(), batch.end());
    loops.push_back(nt);
    loops.push_back(mt);
    loops.insert(loops.end(), outer.begin(), outer.end());
    stage.reorder(loops).unroll(nr).unroll(mr).gpu_threads(nt, mt);
  };
  threadTile(product, {});
  RVar ko("ko"), ki("ki");
  Var chunk("chunk");
  Func partial =
      product.update().split(kernel.k.x, ko, ki, kChunk, kGuard).rfactor(ko, chunk);
  threadTile(product.update(), {ko});

  // One chunk of one thread's register tile (nt is the innermost thread loop).
  partial.compute_at(product, nt).unroll(n).unroll(row);
  partial.update().reorder(n, row, ki).unroll(n).unroll(row);

  // The lhs tile's contiguous dimension is k (of the chunk), or m (of the row tile)
  // for a transposed lhs: padded for the longer of the two.
  LoopLevel perChunk(product, ko);
  // Staged for the partial sums alone: in a fusion group the lhs's input may also be
  // read by a later stage (a feed-forward block's residual).
  Func lhsRows = kernel.lhsRows;
  Func lhsTile = lhsRows.in(partial);
  std::vector<Var> lhsArgs = lhsTile.args();
  stageTile(lhsTile, perChunk, lhsArgs[0], lhsArgs.size() > 1 ? &lhsArgs[1] : nullptr,
            std::max(kChunk, rowTile), threads);
  Var pn = kernel.packN, pk = kernel.packK;
  if (kernel.transposeRhs)
    stageTile(packed, perChunk, pk, &pn, kChunk, threads);
  else
    stageTile(packed, perChunk, pn, &pk, colTile, threads);
}

void scheduleMatrixVector(const MatmulKernel &kernel, int rowDim) {
  Func out = kernel.output, product = kernel.product;
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
  int64_t rows = kernel.extents[rowDim], cols = kernel.extents[0];
  constexpr int kLanes = 32;
  // 8 columns a block (8 warps), 4 when there are at most 1024 columns so that a
  // d_model of 512 still makes 128 blocks for an H100's 132 SMs.
  int colTile = isStatic(cols) && cols <= 1024 ? 4 : 8;
  int rowTile = isStatic(rows) ? static_cast<int>(rows) : 8;
  std::vector<Var> batch = batchVars(kernel, rowDim);

  Var no("no"), nt("nt"), mo("mo"), mt("mt");
  out.split(n, no, nt, colTile, kGuard).split(row, mo, mt, rowTile, kGuard);
  std::vector<VarOrRVar> order = {nt, mt, no, mo};
  order.insert(order.end(), batch.begin(), batch.end());
  out.reorder(order).gpu_threads(nt, mt);
  std::vector<Var> blocks = {no, mo};
  blocks.insert(blocks.end(), batch.begin(), batch.end());
  Var block = mapBlocks(out, blocks);

  product.compute_at(out, block)
      .bound_extent(n, colTile)
      .bound_extent(row, rowTile)
      .gpu_threads(n, row);
  RVar ko("ko"), ki("ki");
  Var lane("lane");
  Func partial =
      product.update().split(kernel.k.x, ko, ki, kLanes, kGuard).rfactor(ki, lane);
  product.update().reorder(ki, n, row).gpu_threads(n, row);

  // Per lane: every kLanes-th k of its column, for all the block's rows. The lanes
  // are the innermost thread loop (Halide numbers thread dimensions by nesting, x
  // innermost), so that a warp's lanes read consecutive k.
  std::vector<VarOrRVar> perLane = {row};
  perLane.insert(perLane.end(), batch.begin(), batch.end());
  std::vector<VarOrRVar> initLoops = perLane, loops = perLane;
  loops.push_back(ko);
  for (VarOrRVar v : {VarOrRVar(lane), VarOrRVar(n)}) {
    initLoops.push_back(v);
    loops.push_back(v);
  }
  partial.compute_at(out, block).reorder(initLoops).gpu_threads(lane, n);
  partial.update().reorder(loops).gpu_threads(lane, n);
  if (isStatic(rows))
    partial.update().unroll(row);
}

} // namespace

llvm::Error cuda::schedule(const MatmulKernel &kernel, const Target &) {
  if (kernel.emptyProduct.defined()) {
    Func out = kernel.output;
    mapToGrid(out.specialize(kernel.emptyProduct),
              {kernel.vars.begin(), kernel.vars.end()}, kernel.extents[0]);
  }
  int rowDim = matmulRowDimension(kernel);
  int64_t rows = kernel.extents[rowDim];
  bool fewRows = rowDim == 2 || (isStatic(rows) && rows <= 8);
  if (kernel.transposeRhs && fewRows)
    scheduleMatrixVector(kernel, rowDim);
  else
    scheduleTiled(kernel, rowDim);
  return llvm::Error::success();
}
