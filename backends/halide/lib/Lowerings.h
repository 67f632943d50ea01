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

/// An operand as a lowering reads it.
struct Operand {
  /// Its elements, Halide dimension order.
  Func values;
  /// A kernel input with the operand's extents, whose dimensions the lowering reads and
  /// ties to its output's: the operand's own buffer, or, inside a fusion group, a group
  /// input whose shape the producer's result has.
  ImageParam shape;
};

/// Where a lowering's operands come from and what its output stores: what lets one
/// lowering serve both an op's own kernel (OwnKernel) and the anchor of a fusion group
/// (LowerFusion.cpp), which hands it its prologue as a Func and wraps its value in the
/// group's epilogue. A lowering takes every operand through `input` or `operand`, in
/// operand order, and defines its output as `store` of its value.
class KernelBoundary {
public:
  virtual ~KernelBoundary() = default;
  /// The kernel input that holds `operand`, named `name` when it is the lowering's own.
  virtual ImageParam input(mlir::Value operand, const std::string &name) = 0;
  /// `operand`'s values: its kernel input, or the Func of its producer in the group.
  virtual Operand operand(mlir::Value operand, const std::string &name) = 0;
  /// What the kernel stores at `vars` (the output's Vars) given the op's `value` there.
  virtual Expr store(Expr value, const std::vector<Var> &vars) = 0;
  /// The kernel's inputs, in call order.
  virtual std::vector<ImageParam> inputs() const = 0;
};

/// An op's own kernel: one input per operand, pinned to its type, and the op's value
/// stored as it is.
class OwnKernel : public KernelBoundary {
public:
  explicit OwnKernel(mlir::Operation *op) : op_(op) {}
  ImageParam input(mlir::Value operand, const std::string &name) override;
  Operand operand(mlir::Value operand, const std::string &name) override;
  Expr store(Expr value, const std::vector<Var> &) override { return value; }
  std::vector<ImageParam> inputs() const override { return inputs_; }

private:
  mlir::Operation *op_;
  std::vector<ImageParam> inputs_;
};

/// How one op becomes a kernel.
struct OpLowering {
  /// Builds the op's algorithm for `target`, which an algorithm reads only for what the
  /// target's schedules choose before it is written (attention's tiles), through
  /// `boundary` when `anchorsGroups`; emits an error at the op and fails when it cannot.
  std::function<mlir::FailureOr<KernelAlgorithm>(
      mlir::Operation *, const Halide::Target &, KernelBoundary &)>
      lower;
  /// Prints the attributes that decide what the kernel computes, read through the
  /// accessors so that a defaulted attribute and an explicit default print alike, and so
  /// that discardable attributes (locations, annotations) do not split kernels. Empty
  /// when the operand and result types say everything.
  std::function<void(mlir::Operation *, llvm::raw_ostream &)> printAttributes;
  /// Whether the lowering reads its operands and stores its value through the boundary,
  /// so that a fusion group can take its schedule.
  bool anchorsGroups = false;
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
           {[lower](mlir::Operation *op, const Halide::Target &, KernelBoundary &)
                -> mlir::FailureOr<KernelAlgorithm> { return lower(llvm::cast<Op>(op)); },
            erase(std::move(printAttributes))});
  }
  /// Lowers every `Op` with `lower`, which reads and stores through its boundary: `Op`
  /// can anchor a fusion group.
  template <typename Op>
  void addAnchor(std::function<KernelAlgorithm(Op, KernelBoundary &)> lower,
                 AttributePrinter<Op> printAttributes = nullptr) {
    addAnchor<Op>([lower](Op op, const Halide::Target &,
                          KernelBoundary &boundary) { return lower(op, boundary); },
                  std::move(printAttributes));
  }
  /// The same for a lowering that also reads the target (see OpLowering::lower).
  template <typename Op>
  void addAnchor(
      std::function<KernelAlgorithm(Op, const Halide::Target &, KernelBoundary &)> lower,
      AttributePrinter<Op> printAttributes = nullptr) {
    insert(mlir::TypeID::get<Op>(),
           {[lower](mlir::Operation *op, const Halide::Target &target,
                    KernelBoundary &boundary) -> mlir::FailureOr<KernelAlgorithm> {
              return lower(llvm::cast<Op>(op), target, boundary);
            },
            erase(std::move(printAttributes)), /*anchorsGroups=*/true});
  }
  /// Lowers every `Op` with `lower`, which reads the target (see OpLowering::lower).
  template <typename Op>
  void
  add(std::function<mlir::FailureOr<KernelAlgorithm>(Op, const Halide::Target &)> lower,
      AttributePrinter<Op> printAttributes = nullptr) {
    insert(mlir::TypeID::get<Op>(),
           {[lower](mlir::Operation *op, const Halide::Target &target, KernelBoundary &) {
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
void populateReductionLowerings(LoweringTable &table);
void populateDataMovementLowerings(LoweringTable &table);
void populateEmbeddingLowerings(LoweringTable &table);
void populateAttentionLowerings(LoweringTable &table);
void populateStateLowerings(LoweringTable &table);
void populateFusionLowerings(LoweringTable &table);
void populateQuantizedLinearLowerings(LoweringTable &table);

/// The lowering of `op` in the table; null when it has none (Lower.cpp).
const OpLowering *lookupLowering(mlir::Operation *op);

/// The values of an elementwise op: add, sub, mul, div, masked_fill, scale, relu and
/// gelu, given its operands' values in operand order.
using PointwiseFormula = std::function<Expr(const std::vector<Expr> &)>;
/// The formula of elementwise `op`; null for any other op (LowerElementwise.cpp).
PointwiseFormula pointwiseFormula(mlir::Operation *op);
/// A pointwise kernel of `resultType` that stores `value` at its Vars, reading `inputs`
/// broadcast (NumPy style) to its shape; its dynamic extents are the inputs' (which it
/// ties together).
KernelAlgorithm
lowerPointwiseKernel(mlir::RankedTensorType resultType, const KernelInputs &inputs,
                     const std::function<Expr(const std::vector<Var> &)> &value);

/// The value of embedding `op` at `index` (its result's, Halide order), reading `table`
/// and `ids`; a host stage that checks the ids, where a GPU target needs one, is
/// appended to `stages` (LowerEmbedding.cpp). Its own kernel and an elementwise group
/// that gathers its rows (LowerFusion.cpp) share it.
Expr embeddingAt(EmbeddingOp op, const ImageParam &table, const ImageParam &ids,
                 const std::vector<Expr> &index, const Halide::Target &target,
                 llvm::SmallVectorImpl<KernelDescription> &stages);
/// The value of sinusoid `op` at feature `d` of `position` (LowerEmbedding.cpp).
Expr sinusoidAt(SinusoidOp op, const Expr &position, const Expr &d);

/// result = `source`, into a dense buffer, or with `stridedOutputAxis` into a strided
/// view across that tensor axis (LowerState.cpp); for several sources of one shape, one
/// output of each, in order, written by one loop nest.
KernelAlgorithm lowerCopy(llvm::ArrayRef<mlir::Value> sources,
                          llvm::Optional<int64_t> stridedOutputAxis);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWERINGS_H
