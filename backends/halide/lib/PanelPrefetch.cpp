//===- PanelPrefetch.cpp - Prefetch the next weight panel during this one -===//

#include "PanelPrefetch.h"

using namespace Halide;
using namespace Halide::Internal;
using namespace kiln::halide_backend;

namespace {

/// The index of the first load of `weight` in a statement (a ramp's base).
class FirstWeightLoad : public IRVisitor {
public:
  explicit FirstWeightLoad(const std::string &weight) : weight(weight) {}
  Expr index;

private:
  using IRVisitor::visit;
  void visit(const Load *op) override {
    if (index.defined() || op->name != weight) {
      IRVisitor::visit(op);
      return;
    }
    if (const Ramp *ramp = op->index.as<Ramp>())
      index = ramp->base;
    else if (op->index.type().is_scalar())
      index = op->index;
  }
  const std::string &weight;
};

class PrefetchNextPanel : public IRMutator {
public:
  explicit PrefetchNextPanel(PanelPrefetchLoops loops) : loops(std::move(loops)) {}

private:
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    bool outputTile = op->name == loops.outputTileLoop;
    bool registerTile = op->name == loops.registerTileLoop;
    if (outputTile)
      outputTileVar = Variable::make(Int(32), op->name);
    if (registerTile)
      registerTileVar = Variable::make(Int(32), op->name);
    Stmt result = op->name == loops.kLoop ? prefetchIn(op) : IRMutator::visit(op);
    if (outputTile)
      outputTileVar = Expr();
    if (registerTile)
      registerTileVar = Expr();
    return result;
  }

  /// The k loop with a prefetch at the top of its body. The next panel is cut into
  /// kChunks chunks, one for each of the panel's first register tiles, and each tile's
  /// k loop walks its chunk evenly: 2048 lines of a 512 x 64 panel over 16 tiles of 256
  /// iterations is a line every other iteration. The counts are constants: with the
  /// chunk's size taken from the run-time tile count, the loop's one division (divl,
  /// ~26 cycles) took the q/k/v linear of transformer_base's encode b1 from 851-873 us
  /// to 1113 (Cascade Lake). So an output of fewer than 16 register tiles (96 rows)
  /// prefetches part of each panel. The last output tile of a panel with a partial one
  /// is lowered outside the output-tile loop and prefetches nothing.
  Stmt prefetchIn(const For *op) {
    if (!outputTileVar.defined() || !registerTileVar.defined())
      return op;
    FirstWeightLoad load(loops.weight);
    op->body.accept(&load);
    if (!load.index.defined())
      return op;
    constexpr int kLineElements = 16, kChunks = 16;
    const int64_t iterations = loops.panelElements / loops.elementsPerIteration;
    const int64_t lines = loops.panelElements / kLineElements;
    const int chunkLines = static_cast<int>((lines + kChunks - 1) / kChunks);
    Expr tile = outputTileVar * static_cast<int>(loops.registerTilesPerOutputTile) +
                registerTileVar;
    Expr step = Variable::make(Int(32), op->name) - op->min;
    Expr line = tile * chunkLines + step * chunkLines / static_cast<int>(iterations);
    // The loop's first load of the weight, at the first step: the panel's first element
    // (the register tile's first column at k = 0).
    Expr panelStart = substitute(op->name, op->min, load.index);
    Expr offset =
        panelStart + static_cast<int>(loops.panelElements) + line * kLineElements;
    Expr prefetch =
        Call::make(Float(32), Call::prefetch,
                   {Variable::make(Handle(), loops.weight), simplify(offset), 1, 1},
                   Call::Intrinsic);
    Stmt fetch = IfThenElse::make(tile < kChunks, Evaluate::make(prefetch));
    return For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                     Block::make(fetch, op->body));
  }

  PanelPrefetchLoops loops;
  Expr outputTileVar, registerTileVar;
};

} // namespace

std::shared_ptr<IRMutator>
kiln::halide_backend::makePanelPrefetchPass(const PanelPrefetchLoops &loops) {
  return std::make_shared<PrefetchNextPanel>(loops);
}
