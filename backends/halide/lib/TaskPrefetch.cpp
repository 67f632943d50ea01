//===- TaskPrefetch.cpp - A run of parallel tasks prefetching the next ----===//

#include "TaskPrefetch.h"
#include "PrefetchSupport.h"

#include "llvm/ADT/StringRef.h"

using namespace Halide;
using namespace Halide::Internal;
using namespace kiln::halide_backend;

namespace {

class PrefetchNextTask : public IRMutator {
public:
  explicit PrefetchNextTask(TaskPrefetchLoops loops) : loops(std::move(loops)) {}

private:
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    if (!llvm::StringRef(op->name).endswith("." + loops.taskLoop))
      return IRMutator::visit(op);
    constexpr int kLineElements = 16;
    Expr task = Variable::make(Int(32), op->name);
    std::vector<Stmt> fetches;
    for (const TaskRows &read : loops.reads) {
      FirstLoad first(read.buffer, /*atFirstIteration=*/true);
      op->body.accept(&first);
      if (!first.index.defined())
        continue;
      Expr next = simplify(substitute(op->name, task + 1, first.index));
      std::string row = op->name + "." + read.buffer + "_prefetch_row";
      Expr rowStart = next + Variable::make(Int(32), row) *
                                 Variable::make(Int(32), read.buffer + ".stride.1");
      // A row's lines one after another (4 at 64 channels), the rows in a loop.
      std::vector<Stmt> lines;
      for (int64_t e = 0; e < read.rowElements; e += kLineElements)
        lines.push_back(prefetchLine(read.buffer, rowStart + static_cast<int>(e)));
      Expr rows = read.rows > 0 ? Expr(static_cast<int>(read.rows))
                                : Variable::make(Int(32), read.buffer + ".extent.1");
      fetches.push_back(
          For::make(row, 0, rows, ForType::Serial, DeviceAPI::None, Block::make(lines)));
    }
    if (fetches.empty())
      return op;
    Stmt prefetch =
        IfThenElse::make(task + 1 < op->min + op->extent, Block::make(fetches));
    return For::make(op->name, op->min, op->extent, op->for_type, op->device_api,
                     Block::make(prefetch, op->body));
  }

  TaskPrefetchLoops loops;
};

} // namespace

std::shared_ptr<IRMutator>
kiln::halide_backend::makeNextTaskPrefetchPass(const TaskPrefetchLoops &loops) {
  return std::make_shared<PrefetchNextTask>(loops);
}
