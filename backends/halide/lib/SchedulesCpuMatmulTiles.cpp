//===- SchedulesCpuMatmulTiles.cpp - The CPU matmul schedules' output tiling ---===//
//
// How both CPU schedules of a product tile its output and make the tiles parallel
// tasks (SchedulesCpuMatmul.h).
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpuMatmul.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>
#include <vector>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;
using namespace kiln::halide_backend::cpu::matmul;

/// Makes `loop` of `out` parallel in tasks of consecutive iterations. Neighbouring
/// panels read neighbouring rhs and output columns, and a core that runs a run of them
/// streams better than two cores taking turns: 2T GFLOP/s, [128, 512] x [512, 2048]
/// with 32 panels: 152 with a task per panel, 157 (2 panels a task), 171 (4), 177
/// (8), 182 (16); at M = 512: 175 -> 203. 8 tasks keep both cores busy when another
/// process takes one for a while. An unknown iteration count (a dynamic N) gets tasks
/// of ~16 MFLOP. Returns the iterations a task runs.
int64_t matmul::parallelTasks(Stage out, Var loop, double flopsPerIteration,
                              int64_t iterations, bool countIsStatic) {
  int64_t group = countIsStatic
                      ? iterations / 8
                      : static_cast<int64_t>(16e6 / std::max(flopsPerIteration, 1.0));
  if (group <= 1) {
    out.parallel(loop);
    return 1;
  }
  Var task(loop.name() + "_task");
  out.split(loop, task, loop, static_cast<int>(group), kGuard).parallel(task);
  return group;
}

/// Splits `out` (the output or one of its specializations) into colTile x rowTile
/// tiles, the rows with `rowTail`. Loop nest, innermost first: the tile, the row tiles
/// and the batch dimensions the rhs does not vary along (they share one rhs panel), the
/// column panels, the batch dimensions the rhs varies along. Parallel over panels when
/// there are enough of them to feed the cores (each then packs or streams its rhs
/// panel once), otherwise over row tiles. With `rowBlockTiles`, the panels pass over
/// the rows a block of that many row tiles at a time, the blocks and the other batch
/// dimensions outermost, so that each block's lhs rows stay in L2 (lhsBlockTiles).
MatmulTiles matmul::tileOutput(const MatmulKernel &kernel, Stage out, int rowDim,
                               int colTile, int rowTile, TailStrategy rowTail,
                               int64_t rowBlockTiles) {
  MatmulTiles t;
  t.rowDim = rowDim;
  t.colTile = colTile;
  t.rowTile = rowTile;
  const Extents &ext = kernel.extents;
  int rank = static_cast<int>(ext.size());
  out.split(kernel.vars[0], t.no, t.ni, colTile, kGuard)
      .split(kernel.vars[rowDim], t.ro, t.ri, rowTile, rowTail);
  std::vector<Var> shared = {t.ro}, varying = {t.no};
  for (int d = 1; d < rank; ++d)
    if (d != rowDim)
      (kernel.rhsVaries[d] ? varying : shared).push_back(kernel.vars[d]);
  std::vector<VarOrRVar> order = {t.ni, t.ri};
  order.insert(order.end(), shared.begin(), shared.end());
  order.insert(order.end(), varying.begin(), varying.end());
  out.reorder(order);

  // Per-iteration work and iteration counts as the static types say (dynamic extents
  // guessed: 128 rows, K of 512, 8 in a batch dimension), to size the parallel tasks.
  int64_t k = isStatic(kernel.contraction) ? kernel.contraction : 512;
  int64_t rows = isStatic(ext[rowDim]) ? ext[rowDim] : 128;
  int64_t rowTiles = (rows + rowTile - 1) / rowTile;
  int64_t panels = isStatic(ext[0]) ? (ext[0] + colTile - 1) / colTile : 64;
  bool staticPanels = isStatic(ext[0]), staticRowTiles = isStatic(ext[rowDim]);
  for (int d = 1; d < rank; ++d) {
    if (d == rowDim)
      continue;
    int64_t extent = isStatic(ext[d]) ? ext[d] : 8;
    bool varies = kernel.rhsVaries[d];
    (varies ? panels : rowTiles) *= extent;
    (varies ? staticPanels : staticRowTiles) &= isStatic(ext[d]);
  }
  double tileFlops = 2.0 * colTile * rowTile * k;
  if (panels >= 4) {
    if (rowBlockTiles > 0) {
      Var rob("rob");
      out.split(t.ro, rob, t.ro, static_cast<int>(rowBlockTiles), kGuard);
      std::vector<VarOrRVar> blocked = {t.ni, t.ri, t.ro};
      blocked.insert(blocked.end(), varying.begin(), varying.end());
      blocked.push_back(rob);
      blocked.insert(blocked.end(), shared.begin() + 1, shared.end());
      out.reorder(blocked);
      rowTiles = std::min(rowTiles, rowBlockTiles);
    }
    t.panel = fuseLoops(out, varying, "panels");
    t.tile = t.ro;
    t.iterationsPerTask =
        parallelTasks(out, t.panel, tileFlops * rowTiles, panels, staticPanels);
  } else {
    t.tile = fuseLoops(out, shared, "rowtiles");
    t.panel = t.no;
    parallelTasks(out, t.tile, tileFlops, rowTiles, staticRowTiles);
  }
  return t;
}

/// The loops of `product`'s update other than the tile's columns and rows: batch
/// dimensions (and m when the rows are a batch dimension), each of extent 1 in a tile.
std::vector<VarOrRVar> matmul::otherDims(const MatmulKernel &kernel, int rowDim) {
  std::vector<VarOrRVar> dims;
  for (int d = 1; d < static_cast<int>(kernel.vars.size()); ++d)
    if (d != rowDim)
      dims.push_back(kernel.vars[d]);
  return dims;
}
