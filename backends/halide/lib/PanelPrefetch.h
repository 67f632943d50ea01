//===- PanelPrefetch.h - Prefetch the next weight panel during this one -*- C++ -*-===//
//
// A product over a weight stored in column panels (kiln.unpack_panels) reads each panel
// from DRAM in its first register tile, which then waits for memory while the rest of
// the panel's tiles find it in L2. This lowering pass spreads a prefetch of the next
// panel over the current panel's first register tiles, one cache line per step of the
// k loop, so that each panel is in L2 before its turn. Halide's `prefetch` directive
// cannot say this (its footprint is the loop's own, at an offset of one loop), so the
// pass adds the prefetches to the lowered statement by loop name.
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
  /// and the output tiles of one panel: full lowered loop names.
  std::string kLoop, registerTileLoop, outputTileLoop;
  /// The weight's buffer name, as the product's loads name it.
  std::string weight;
  int64_t registerTilesPerOutputTile = 0;
  /// Elements of one panel (K x W) and of one k-loop iteration's weight rows.
  int64_t panelElements = 0, elementsPerIteration = 0;
};

/// The pass for one panel product; see the file comment.
std::shared_ptr<Halide::Internal::IRMutator>
makePanelPrefetchPass(const PanelPrefetchLoops &loops);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_PANELPREFETCH_H
