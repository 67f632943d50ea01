//===- Lowerings.h - The table of op lowerings ------------------*- C++ -*-===//
//
// Which ops become kernels, and how: one table from op to lowering, filled by each op
// family's file (LowerElementwise.cpp, LowerMatmul.cpp, ...), as MLIR's pattern sets
// are filled by populate*Patterns. Lower.cpp derives everything from it: whether an op
// needs a kernel, its kernel signature and its lowering. An op missing from the table
// has no kernel, and lowering it is an error at the op.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LOWERINGS_H
#define KILN_BACKENDS_HALIDE_LOWERINGS_H

#include "LowerSupport.h"
#include "Scheduler.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace kiln::halide_backend {

/// An op's algorithm, not yet scheduled: the kernel's inputs in call order, and the
/// descriptions of its pipeline's stages, producers first, that `schedule` schedules.
/// The last stage's output is the kernel's output.
struct KernelAlgorithm {
  std::vector<ImageParam> inputs;
  llvm::SmallVector<KernelDescription, 1> stages;
};

/// How one op becomes a kernel.
struct OpLowering {
  /// Builds the op's algorithm for `target`, which an algorithm reads only for what the
  /// target's schedules choose before it is written (attention's tiles); emits an error
  /// at the op and fails when it cannot.
  std::function<mlir::FailureOr<KernelAlgorithm>(mlir::Operation *,
                                                 const Halide::Target &)>
      lower;
  /// Prints the attributes that decide what the kernel computes, read through the
  /// accessors so that a defaulted attribute and an explicit default print alike, and so
  /// that discardable attributes (locations, annotations) do not split kernels. Empty
  /// when the operand and result types say everything.
  std::function<void(mlir::Operation *, llvm::raw_ostream &)> printAttributes;
};

class LoweringTable {
public:
  template <typename Op>
  using AttributePrinter = std::function<void(Op, llvm::raw_ostream &)>;

  /// Lowers every `Op` with `lower`.
  template <typename Op>
  void add(std::function<KernelAlgorithm(Op)> lower,
           AttributePrinter<Op> printAttributes = nullptr) {
    insert(mlir::TypeID::get<Op>(),
           {[lower](mlir::Operation *op, const Halide::Target &)
                -> mlir::FailureOr<KernelAlgorithm> { return lower(llvm::cast<Op>(op)); },
            erase(std::move(printAttributes))});
  }
  /// Lowers every `Op` with `lower`, which reads the target (see OpLowering::lower).
  template <typename Op>
  void
  add(std::function<mlir::FailureOr<KernelAlgorithm>(Op, const Halide::Target &)> lower,
      AttributePrinter<Op> printAttributes = nullptr) {
    insert(mlir::TypeID::get<Op>(),
           {[lower](mlir::Operation *op, const Halide::Target &target) {
              return lower(llvm::cast<Op>(op), target);
            },
            erase(std::move(printAttributes))});
  }

  /// The lowering of `op`; null when it has none.
  const OpLowering *lookup(mlir::Operation *op) const;

private:
  template <typename Op>
  static decltype(OpLowering::printAttributes) erase(AttributePrinter<Op> print) {
    if (!print)
      return nullptr;
    return [print](mlir::Operation *op, llvm::raw_ostream &os) {
      print(llvm::cast<Op>(op), os);
    };
  }
  /// Adds the lowering of the op whose TypeID is `op`; an op has one at most.
  void insert(mlir::TypeID op, OpLowering lowering);

  llvm::DenseMap<mlir::TypeID, OpLowering> lowerings_;
};

/// The attribute printer of an op whose kernel depends on its `axis` alone.
inline constexpr auto printAxis = [](auto op, llvm::raw_ostream &os) {
  os << "{axis=" << op.axis() << "}";
};

/// The op families' entries of the table, one per Lower*.cpp.
void populateElementwiseLowerings(LoweringTable &table);
void populateMatmulLowerings(LoweringTable &table);
void populateNormalizationLowerings(LoweringTable &table);
void populateDataMovementLowerings(LoweringTable &table);
void populateEmbeddingLowerings(LoweringTable &table);
void populateAttentionLowerings(LoweringTable &table);
void populateStateLowerings(LoweringTable &table);

/// result = `source`, into a dense buffer, or with `stridedOutputAxis` into a strided
/// view across that tensor axis (LowerState.cpp).
KernelAlgorithm lowerCopy(mlir::Value source, llvm::Optional<int64_t> stridedOutputAxis);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWERINGS_H
