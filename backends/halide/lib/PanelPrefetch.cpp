//===- PanelPrefetch.cpp - The panel schedule prefetching its next tile ---===//

#include "PanelPrefetch.h"
#include "PrefetchSupport.h"

using namespace Halide;
using namespace Halide::Internal;
using namespace kiln::halide_backend;

namespace {

/// `loop` with a prefetch of the cache line at `buffer[offset]` at the top of its body,
/// only where `condition` holds (when defined). Halide's `prefetch` directive cannot say
/// it: it prefetches the footprint of its own loop at a fixed offset.
Stmt prependPrefetch(const For *loop, const std::string &buffer, const Expr &offset,
                     const Expr &condition = Expr()) {
  Stmt fetch = prefetchLine(buffer, offset);
  if (condition.defined())
    fetch = IfThenElse::make(condition, fetch);
  return For::make(loop->name, loop->min, loop->extent, loop->for_type, loop->device_api,
                   Block::make(fetch, loop->body));
}

class PrefetchNextPanel : public IRMutator {
public:
  explicit PrefetchNextPanel(PanelPrefetchLoops loops) : loops(std::move(loops)) {}

private:
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    bool outputTile = op->name == loops.outputTileLoop;
    bool registerTile =
        !loops.registerTileLoop.empty() && op->name == loops.registerTileLoop;
    bool panels = !loops.panelLoop.empty() && op->name == loops.panelLoop;
    bool blocks = !loops.blockLoop.empty() && op->name == loops.blockLoop;
    if (blocks) {
      blockStep = Variable::make(Int(32), op->name) - op->min;
      blockCount = op->extent;
    }
    if (outputTile)
      outputTileVar = Variable::make(Int(32), op->name);
    if (registerTile)
      registerTileVar = Variable::make(Int(32), op->name);
    if (panels)
      panelCount = op->extent;
    Stmt result = op->name == loops.kLoop ? prefetchIn(op) : IRMutator::visit(op);
    if (outputTile)
      outputTileVar = Expr();
    if (registerTile)
      registerTileVar = Expr();
    if (panels)
      panelCount = Expr();
    if (blocks)
      blockStep = blockCount = Expr();
    return result;
  }

  /// The k loop with a prefetch at the top of its body. The next panel is cut into 16
  /// chunks, one for each of the panel's first register tiles, and each tile's k loop
  /// walks its chunk evenly: 2048 lines of a 512 x 64 panel over 16 tiles of 256
  /// iterations is a line every other iteration. The next block of k is cut into one
  /// chunk for each register tile of the first output tile, each block of it: 2048
  /// lines over 4 tiles of 256 iterations, two lines an iteration. The counts are
  /// constants: with the chunk's size taken from the run-time tile count, the loop's
  /// one division (divl, ~26 cycles) took the q/k/v linear of transformer_base's encode
  /// b1 from 851-873 us to 1113 (Cascade Lake). So an output of fewer than 16 register
  /// tiles (96 rows) prefetches part of each panel. The last output tile of a panel with
  /// a partial one is lowered outside the output-tile loop and prefetches nothing.
  Stmt prefetchIn(const For *op) {
    if (!outputTileVar.defined() ||
        (!loops.registerTileLoop.empty() && !registerTileVar.defined()) ||
        (!loops.blockLoop.empty() && !blockStep.defined()))
      return op;
    FirstLoad load(loops.weight, /*atFirstIteration=*/false);
    op->body.accept(&load);
    if (!load.index.defined())
      return op;
    constexpr int kLineElements = 16;
    const bool blocked = !loops.blockLoop.empty();
    const int chunks = blocked ? static_cast<int>(loops.registerTilesPerOutputTile) : 16;
    const int64_t iterations = loops.panelElements / loops.elementsPerIteration;
    const int64_t lines = loops.panelElements / kLineElements;
    const int chunkLines = static_cast<int>((lines + chunks - 1) / chunks);
    Expr tile = outputTileVar;
    if (registerTileVar.defined())
      tile = tile * static_cast<int>(loops.registerTilesPerOutputTile) + registerTileVar;
    Expr step = Variable::make(Int(32), op->name) - op->min;
    // A line every few iterations, or a few lines every iteration.
    const int perIteration = static_cast<int>((chunkLines + iterations - 1) / iterations);
    // The loop's first load of the weight, at the first step: the panel's (or the
    // block's) first element (the register tile's first column at its first k).
    Expr panelStart = substitute(op->name, op->min, load.index);
    Expr next = panelStart + static_cast<int>(loops.panelElements);
    Expr condition = tile < chunks;
    if (panelCount.defined()) {
      if (is_const(panelCount) && !is_const_one(panelCount))
        return op;
      condition = condition && panelCount == 1;
    }
    if (blocked && !loops.nextPanelInTask)
      condition = condition && blockStep < blockCount - 1;
    Stmt result = op;
    for (int j = perIteration - 1; j >= 0; --j) {
      Expr line =
          tile * chunkLines + step * chunkLines / static_cast<int>(iterations) + j;
      result = prependPrefetch(result.as<For>(), loops.weight,
                               next + line * kLineElements, condition);
    }
    return result;
  }

  PanelPrefetchLoops loops;
  Expr outputTileVar, registerTileVar, panelCount, blockStep, blockCount;
};

/// The first element that the producer of `staged` copies: the source buffer and the
/// copy's index at the first iteration of each of the producer's loops, with its lets
/// substituted, so that it names only what is in scope beside the producer.
class FindStagedSource : public FirstIterationVisitor {
public:
  explicit FindStagedSource(const std::string &staged) : staged(staged) {}
  std::string buffer;
  Expr start;

private:
  using FirstIterationVisitor::visit;
  bool binding() const override { return inProducer; }
  void visit(const ProducerConsumer *op) override {
    if (!op->is_producer || op->name != staged) {
      IRVisitor::visit(op);
      return;
    }
    inProducer = true;
    op->body.accept(this);
    inProducer = false;
  }
  void visit(const Store *op) override {
    const Load *load = op->value.as<Load>();
    if (!inProducer || start.defined() || op->name != staged || !load)
      return;
    Expr index = firstIndex(load);
    if (!index.defined())
      return;
    buffer = load->name;
    start = atFirstIteration(index);
  }
  const std::string &staged;
  bool inProducer = false;
};

class PrefetchNextRows : public IRMutator {
public:
  explicit PrefetchNextRows(RowsPrefetchLoops loops) : loops(std::move(loops)) {}

private:
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    if (op->name == loops.registerTileLoop) {
      FindStagedSource source(loops.stagedRows);
      op->body.accept(&source);
      buffer = source.buffer;
      start = source.start;
      Stmt result = IRMutator::visit(op);
      start = Expr();
      return result;
    }
    if (op->name != loops.kLoop || !start.defined())
      return IRMutator::visit(op);
    // The next register tile's rows follow this one's in the dense lhs (across a batch
    // entry too, the next entry's first rows); past the last row the prefetch reads
    // past the buffer, which x86 does not fault on. Spread over the k loop as the
    // panels are: 6 rows of K = 512 are 192 lines over 256 iterations. Where the k loop
    // covers a block of each row, the block's lines of the next rows, row by row.
    constexpr int kLineElements = 16;
    const int64_t stride = loops.rowStride ? loops.rowStride : loops.rowElements;
    const int rowLines =
        static_cast<int>((loops.rowElements + kLineElements - 1) / kLineElements);
    const int lines = static_cast<int>(loops.rows) * rowLines;
    Expr step = Variable::make(Int(32), op->name) - op->min;
    Expr line = step * lines / static_cast<int>(loops.iterations);
    Expr next = start + static_cast<int>(loops.rows * stride);
    Expr offset = stride == loops.rowElements
                      ? next + line * kLineElements
                      : next + line / rowLines * static_cast<int>(stride) +
                            line % rowLines * kLineElements;
    return prependPrefetch(op, buffer, offset);
  }

  RowsPrefetchLoops loops;
  std::string buffer;
  Expr start;
};

} // namespace

std::shared_ptr<IRMutator>
kiln::halide_backend::makeRowsPrefetchPass(const RowsPrefetchLoops &loops) {
  return std::make_shared<PrefetchNextRows>(loops);
}

std::shared_ptr<IRMutator>
kiln::halide_backend::makePanelPrefetchPass(const PanelPrefetchLoops &loops) {
  return std::make_shared<PrefetchNextPanel>(loops);
}
