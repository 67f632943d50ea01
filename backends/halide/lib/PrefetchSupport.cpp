//===- PrefetchSupport.cpp - What the prefetch passes share ---------------===//

#include "PrefetchSupport.h"

using namespace Halide;
using namespace Halide::Internal;
using namespace kiln::halide_backend;

Expr kiln::halide_backend::firstIndex(const Load *load) {
  if (const Ramp *ramp = load->index.as<Ramp>())
    return ramp->base;
  return load->index.type().is_scalar() ? load->index : Expr();
}

void FirstIterationVisitor::visit(const LetStmt *op) {
  op->value.accept(this);
  if (!binding()) {
    op->body.accept(this);
    return;
  }
  bindings.emplace_back(op->name, op->value);
  op->body.accept(this);
  bindings.pop_back();
}

void FirstIterationVisitor::visit(const For *op) {
  if (!binding()) {
    IRVisitor::visit(op);
    return;
  }
  bindings.emplace_back(op->name, op->min);
  op->body.accept(this);
  bindings.pop_back();
}

Expr FirstIterationVisitor::atFirstIteration(Expr index) const {
  for (auto it = bindings.rbegin(); it != bindings.rend(); ++it)
    index = substitute(it->first, it->second, index);
  return simplify(index);
}

void FirstLoad::visit(const Load *op) {
  if (index.defined() || op->name != buffer) {
    IRVisitor::visit(op);
    return;
  }
  if (Expr first = firstIndex(op); first.defined())
    index = atFirst ? atFirstIteration(first) : first;
}

Stmt kiln::halide_backend::prefetchLine(const std::string &buffer, const Expr &offset) {
  return Evaluate::make(Call::make(
      Float(32), Call::prefetch,
      {Variable::make(Handle(), buffer), simplify(offset), 1, 1}, Call::Intrinsic));
}
