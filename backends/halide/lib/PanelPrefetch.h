//===- PanelPrefetch.h - The panel schedule prefetching its next tile -*- C++ -*-===//
//
// The panel schedule (SchedulesCpuMatmulPanel.cpp) waits for memory twice where its FMAs
// could run: a product over a weight stored in column panels (kiln.unpack_panels) reads
// each panel from DRAM in the panel's first register tile, and each register tile
// copies its lhs rows to the stack in a loop of their own before its k loop. Two
// lowering passes prefetch, inside the k loop and spread evenly over it, what comes
// next: a chunk of the next panel in each of a panel's first register tiles (of the
// next block of k, where K runs in blocks), and the rows that the next register tile
// stages. Halide's `prefetch` directive cannot say either (its footprint is that of the
// loop it is placed in, at an offset along one loop), so the passes add them to the
// lowered statement, finding the loops by name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_PANELPREFETCH_H
#define KILN_BACKENDS_HALIDE_PANELPREFETCH_H

#include "Halide.h"

#include <memory>
#include <string>

namespace kiln::halide_backend {

/// Where the pass finds the panel product in the lowered statement.
struct PanelPrefetchLoops {
  /// The loop over k (two k steps an iteration), the register tiles of one output tile,
  /// and the output tiles of one panel: full lowered loop names. Without a register
  /// tile loop (empty), each output tile is one register tile.
  std::string kLoop, registerTileLoop, outputTileLoop;
  /// The weight's buffer name, as the product's loads name it.
  std::string weight;
  int64_t registerTilesPerOutputTile = 0;
  /// Elements of one panel (K x W) and of one k-loop iteration's weight rows.
  int64_t panelElements = 0, elementsPerIteration = 0;
  /// The loop over the panels of one output tile, where output tiles may span several
  /// (empty: none). The pass prefetches only where it runs once: tiles of several
  /// panels are those of a product with many rows, which read each panel from DRAM
  /// once for many row tiles.
  std::string panelLoop;
  /// The loop over the blocks of k, between the output tiles and the register tiles,
  /// where the k loop runs a block at a time (empty: none). Each block of a panel
  /// (panelElements then counts one block) is read first by the panel's first output
  /// tile, so that tile's register tiles prefetch all of the next block, block by
  /// block; the last block prefetches the next panel's first only if
  /// `nextPanelInTask`.
  std::string blockLoop;
  bool nextPanelInTask = true;
};

/// The pass that prefetches the next panel of one product.
std::shared_ptr<Halide::Internal::IRMutator>
makePanelPrefetchPass(const PanelPrefetchLoops &loops);

/// Where the pass that prefetches the next register tile's lhs rows finds them.
struct RowsPrefetchLoops {
  /// The k loop and the register-tile loop (full lowered loop names), and the Func
  /// that stages a register tile's lhs rows before its k loop (computed at the
  /// register-tile loop).
  std::string kLoop, registerTileLoop, stagedRows;
  /// The rows a register tile stages, the elements of each that one pass of the k loop
  /// reads (K, or a block of K), and the k loop's iterations.
  int64_t rows = 0, rowElements = 0, iterations = 0;
  /// Elements from one lhs row to the next: K (0 means rowElements).
  int64_t rowStride = 0;
};

/// The pass that has each register tile's k loop prefetch the lhs rows that the next
/// register tile stages: the rows after its own, in the dense lhs.
std::shared_ptr<Halide::Internal::IRMutator>
makeRowsPrefetchPass(const RowsPrefetchLoops &loops);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_PANELPREFETCH_H
