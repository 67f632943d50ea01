//===- PrefetchSupport.h - What the prefetch passes share -------*- C++ -*-===//
//
// The lowering passes that add prefetches (PanelPrefetch.h, TaskPrefetch.h) find where
// a loop body first reads a buffer and name that element from outside the body, so
// that the same element at another iteration of an outer loop can be prefetched.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_PREFETCHSUPPORT_H
#define KILN_BACKENDS_HALIDE_PREFETCHSUPPORT_H

#include "Halide.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::halide_backend {

/// The index of the first element `load` reads (a ramp's base); undefined for a gather.
Halide::Expr firstIndex(const Halide::Internal::Load *load);

/// A visitor that tracks, where `binding()` holds, the lets and loops around the node
/// it visits, so that an index found there can be named at the first iteration of
/// every loop inside the visited statement (atFirstIteration).
class FirstIterationVisitor : public Halide::Internal::IRVisitor {
protected:
  using Halide::Internal::IRVisitor::visit;
  void visit(const Halide::Internal::LetStmt *op) override;
  void visit(const Halide::Internal::For *op) override;
  /// `index` with the lets substituted and each loop at its minimum, simplified.
  Halide::Expr atFirstIteration(Halide::Expr index) const;
  /// Whether the lets and loops met now are bound (all of them, unless overridden).
  virtual bool binding() const { return true; }

private:
  std::vector<std::pair<std::string, Halide::Expr>> bindings;
};

/// The first element of `buffer` that a statement loads (a ramp's base; a gather is
/// passed over): its index as the load has it, or with `atFirstIteration`, named at
/// the first iteration of every loop inside the statement.
class FirstLoad : public FirstIterationVisitor {
public:
  FirstLoad(const std::string &buffer, bool atFirstIteration)
      : buffer(buffer), atFirst(atFirstIteration) {}
  Halide::Expr index;

private:
  using FirstIterationVisitor::visit;
  bool binding() const override { return atFirst; }
  void visit(const Halide::Internal::Load *op) override;
  const std::string &buffer;
  bool atFirst;
};

/// A prefetch of the cache line that holds `buffer[offset]`.
Halide::Internal::Stmt prefetchLine(const std::string &buffer,
                                    const Halide::Expr &offset);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_PREFETCHSUPPORT_H
