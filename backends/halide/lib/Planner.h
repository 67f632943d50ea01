//===- Planner.h - The builder of a ModelPlan -------------------*- C++ -*-===//
//
// Internal to planModel: the state of planning one model, shared by Plan.cpp (values,
// views and kernels) and PlanStates.cpp (session states and value dimensions).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_PLANNER_H
#define KILN_BACKENDS_HALIDE_PLANNER_H

#include "Lower.h"
#include "Plan.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace kiln::halide_backend {

/// The manifest's name of an element type, or "" when the runtime has none.
std::string dtypeName(mlir::Type type);

/// Row-major strides of `shape`, each static or a product expression ("H*32").
SymShape denseStrides(llvm::ArrayRef<SymDim> shape);

/// `a * b`, folded where both are static.
SymDim multiplyDims(const SymDim &a, const SymDim &b);

/// The buffer whose memory `buffer` uses: itself, or what its chain of views views.
int rootOf(const EntryPlan &entry, int buffer);

/// Sets each temporary's live range (BufferPlan::firstStep, lastStep) from the entry's
/// steps and outputs, once they are all planned (PlanLifetimes.cpp).
void planLifetimes(EntryPlan &entry);

/// Builds the plan of one model; one instance per planModel call.
class Planner {
public:
  /// With `layoutRemarks`, a remark at each slice and transpose left a kernel; with
  /// `collapseRows`, row-wise kernels run over their rows as one dimension.
  Planner(llvm::StringRef model, bool layoutRemarks, bool collapseRows);

  /// Takes the precision of the weights from `module` (ModelPlan::weights).
  void setWeights(mlir::ModuleOp module);
  mlir::LogicalResult planEntry(mlir::FuncOp func);
  ModelPlan takePlan() { return std::move(plan_); }

private:
  // Plan.cpp

  /// Appends `buffer`; fails (with an error at `op`) when its shape cannot be described
  /// to the runtime.
  mlir::FailureOr<int> pushBuffer(EntryPlan &entry, mlir::Operation *op,
                                  BufferPlan buffer);
  /// Adds a buffer holding `value`; fails (with an error at `op`) when its shape or
  /// dtype cannot be described to the runtime.
  mlir::FailureOr<int> addBuffer(EntryPlan &entry, mlir::Operation *op, mlir::Value value,
                                 BufferPlan::Kind kind, int index);
  mlir::FailureOr<int> parameterIndex(ParameterOp op);
  /// Appends the step that runs `kernel` on `args` (inputs, then the output) for `op`,
  /// which gives it its source lines, after any kv_appends still queued.
  void pushStep(EntryPlan &entry, mlir::Operation *op, int kernel, std::vector<int> args);
  /// Appends a step for `ops` (their source lines, in order) whose last `outputs` args
  /// the kernel writes.
  void appendStep(EntryPlan &entry, llvm::ArrayRef<mlir::Operation *> ops, int kernel,
                  std::vector<int> args, int outputs);
  /// The kernel of `signature`, added (for `op`) when new.
  int kernelIndex(mlir::Operation *op, const std::string &signature,
                  bool denseCopy = false);
  int kernelIndex(mlir::Operation *op) { return kernelIndex(op, kernelSignature(op)); }
  /// The first op that reads `value`, directly or through the views that planOp makes
  /// strided, and needs a dense operand; null when every reader takes a strided one
  /// with a dense innermost dimension.
  mlir::Operation *denseReader(mlir::Value value);
  /// Adds `op`'s result as a view of buffer `source` with `strides` from `offset`.
  mlir::FailureOr<int> addStridedView(EntryPlan &entry, mlir::Operation *op, int source,
                                      SymShape strides, SymDim offset);
  /// The buffer a kernel writes `op`'s result to: a temporary, or a permuted view of
  /// the temporary of the head merge that reads it.
  mlir::FailureOr<int> resultBuffer(EntryPlan &entry, mlir::Operation &op);
  /// Whether `op`'s kernel runs over its rows collapsed (CollapseRows.h): a row-wise op
  /// whose row operands have its result's leading dims and dense buffers.
  bool collapsesRows(const EntryPlan &entry, mlir::Operation &op);
  /// A dense view of `buffer` with its leading dims collapsed into one, for `op`.
  mlir::FailureOr<int> collapsedView(EntryPlan &entry, mlir::Operation *op, int buffer);
  /// Gives `op`'s result its buffer and, for a kernel, its step.
  mlir::LogicalResult planOp(EntryPlan &entry, mlir::FuncOp func, mlir::Operation &op);
  mlir::LogicalResult planReturn(EntryPlan &entry, mlir::FuncOp func, ReturnOp ret);
  mlir::LogicalResult planInputs(EntryPlan &entry, mlir::FuncOp func);

  // PlanStates.cpp

  /// Plans state_alloc, state_write, state_read and kv_append.
  mlir::LogicalResult planStateOp(EntryPlan &entry, mlir::Operation &op);
  /// The index of state `name` in the model, added when new; `rank` must agree with
  /// every other use.
  mlir::FailureOr<int> stateIndex(mlir::Operation *op, llvm::StringRef name,
                                  int64_t rank);
  /// The entry's one buffer of state `name`: added at the first op that touches the
  /// state in this entry (creating it when `create`), reused afterwards.
  mlir::FailureOr<int> stateBuffer(EntryPlan &entry, mlir::Operation *op,
                                   llvm::StringRef name, const SymShape &shape,
                                   bool create);
  mlir::LogicalResult planKvAppend(EntryPlan &entry, KvAppendOp op);
  /// Queues the copy of kv_append `op` from buffer `value` into buffer `target`: it
  /// joins the queued ones when one kernel can make them all, else they go first.
  void queueAppend(EntryPlan &entry, KvAppendOp op, int value, int target);
  /// The step of the queued kv_appends, if any: one kernel for all of them.
  void flushAppends(EntryPlan &entry);
  /// The dimension an input binds with its value (`kiln.value_dim`); "" when none.
  std::string valueDimOf(mlir::FuncOp func, unsigned input);

  ModelPlan plan_;
  bool layoutRemarks_, collapseRows_;
  std::string symbolPrefix_;
  llvm::StringMap<int> parameterIndices_;
  llvm::StringMap<int> stateIndices_;
  std::map<std::string, int> kernelIndices_;
  // Per entry.
  SymbolicShapeMap shapes_;
  llvm::DenseMap<mlir::Value, int> buffers_;
  llvm::StringMap<int> stateBuffers_;
  /// kv_appends planned but not yet a step (queueAppend): their ops, and the buffers
  /// each copies from and to.
  struct QueuedAppends {
    llvm::SmallVector<mlir::Operation *, 2> ops;
    std::vector<int> values, targets;
  };
  QueuedAppends queuedAppends_;
};

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_PLANNER_H
