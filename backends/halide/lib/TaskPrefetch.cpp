//===- TaskPrefetch.cpp - A run of parallel tasks prefetching the next ----===//

#include "TaskPrefetch.h"

using namespace Halide;
using namespace Halide::Internal;
using namespace kiln::halide_backend;

namespace {

/// The index of the first element of `buffer` that a statement loads, at the first
/// iteration of every loop inside the statement, with the lets inside it substituted:
/// it names only the loop variables and lets outside the statement.
class FirstLoad : public IRVisitor {
public:
  explicit FirstLoad(const std::string &buffer) : buffer(buffer) {}
  Expr index;

private:
  using IRVisitor::visit;
  /// Visits `body` with `name` standing for `value`: a let's value, a loop's minimum.
  void visitBound(const std::string &name, const Expr &value, const Stmt &body) {
    bindings.emplace_back(name, value);
    body.accept(this);
    bindings.pop_back();
  }
  void visit(const LetStmt *op) override {
    op->value.accept(this);
    visitBound(op->name, op->value, op->body);
  }
  void visit(const For *op) override { visitBound(op->name, op->min, op->body); }
  void visit(const Load *op) override {
    if (index.defined() || op->name != buffer) {
      IRVisitor::visit(op);
      return;
    }
    Expr first = op->index;
    if (const Ramp *ramp = first.as<Ramp>())
      first = ramp->base;
    if (!first.type().is_scalar())
      return;
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it)
      first = substitute(it->first, it->second, first);
    index = simplify(first);
  }
  const std::string &buffer;
  std::vector<std::pair<std::string, Expr>> bindings;
};

bool endsWith(const std::string &name, const std::string &suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class PrefetchNextTask : public IRMutator {
public:
  explicit PrefetchNextTask(TaskPrefetchLoops loops) : loops(std::move(loops)) {}

private:
  using IRMutator::visit;

  Stmt visit(const For *op) override {
    if (!endsWith(op->name, "." + loops.taskLoop))
      return IRMutator::visit(op);
    constexpr int kLineElements = 16;
    Expr task = Variable::make(Int(32), op->name);
    std::vector<Stmt> fetches;
    for (const TaskRows &read : loops.reads) {
      FirstLoad first(read.buffer);
      op->body.accept(&first);
      if (!first.index.defined())
        continue;
      Expr next = simplify(substitute(op->name, task + 1, first.index));
      std::string row = op->name + "." + read.buffer + "_prefetch_row";
      Expr rowStart = next + Variable::make(Int(32), row) *
                                 Variable::make(Int(32), read.buffer + ".stride.1");
      // A row's lines one after another (4 at 64 channels), the rows in a loop.
      std::vector<Stmt> lines;
      for (int64_t e = 0; e < read.rowElements; e += kLineElements) {
        Expr call = Call::make(
            Float(32), Call::prefetch,
            {Variable::make(Handle(), read.buffer), rowStart + static_cast<int>(e), 1, 1},
            Call::Intrinsic);
        lines.push_back(Evaluate::make(call));
      }
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
