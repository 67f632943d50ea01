//===- SchedulesCpuMatmul.h - What the CPU matmul schedules share -*- C++ -*-===//
//
// The two CPU schedules of a product, the panel schedule (SchedulesCpuMatmulPanel.cpp)
// and the dot-product form (SchedulesCpuMatmulDot.cpp), tile the output alike
// (SchedulesCpuMatmulTiles.cpp), so that a run-time row count can pick between them
// at the same loops (SchedulesCpuMatmul.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULESCPUMATMUL_H
#define KILN_BACKENDS_HALIDE_SCHEDULESCPUMATMUL_H

#include "Schedules.h"
#include "SchedulesCpuSupport.h"

#include <vector>

namespace kiln::halide_backend::cpu::matmul {

/// The output tiling shared by both matmul schedules.
struct MatmulTiles {
  /// The dimension whose entries are the tile rows (matmulRowDimension).
  int rowDim = 1;
  int colTile = 0, rowTile = 0;
  Halide::Var no{"no"}, ni{"ni"}, ro{"ro"}, ri{"ri"};
  /// The loop at which one output tile's accumulators are computed, and the loop of
  /// one column panel (which may contain several row tiles).
  Halide::Var tile, panel;
  /// Consecutive iterations of the parallel loop that one task runs.
  int64_t iterationsPerTask = 1;
};

/// Makes `loop` of `out` parallel in tasks of consecutive iterations; returns the
/// iterations a task runs (SchedulesCpuMatmulTiles.cpp has the measurements).
int64_t parallelTasks(Halide::Stage out, Halide::Var loop, double flopsPerIteration,
                      int64_t iterations, bool countIsStatic);

/// Splits `out` (the output or one of its specializations) into colTile x rowTile
/// tiles and makes them parallel tasks (SchedulesCpuMatmulTiles.cpp).
MatmulTiles tileOutput(const MatmulKernel &kernel, Halide::Stage out, int rowDim,
                       int colTile, int rowTile, Halide::TailStrategy rowTail = kGuard,
                       int64_t rowBlockTiles = 0);

/// The loops of `product`'s update other than the tile's columns and rows: batch
/// dimensions (and m when the rows are a batch dimension), each of extent 1 in a tile.
std::vector<Halide::VarOrRVar> otherDims(const MatmulKernel &kernel, int rowDim);

/// The columns of the panel schedule's register tile and of one weight panel for a
/// target of `width` f32 lanes: 4 vectors with AVX-512, 2 with AVX2 (see
/// schedulePanelProduct).
inline int panelColumns(int width) { return (width >= 16 ? 4 : 2) * width; }

/// The general schedule: the rhs panel is packed with n contiguous, and a register tile
/// of 4 vectors x 6 rows is updated inside the k loop.
void schedulePanelProduct(const MatmulKernel &kernel, int width, Halide::Stage out,
                          CodegenRequests &codegen);

/// For x . W^T over few rows: dot products along k, where both operands are
/// contiguous.
void scheduleDotProduct(const MatmulKernel &kernel, int width, Halide::Stage out,
                        CodegenRequests &codegen);

} // namespace kiln::halide_backend::cpu::matmul

#endif // KILN_BACKENDS_HALIDE_SCHEDULESCPUMATMUL_H
