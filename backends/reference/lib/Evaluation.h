//===- Evaluation.h - One run of one entry point ----------------*- C++ -*-===//
//
// What the interpreter's files share: the state of a run (values, bound dimensions,
// the session states it changes) and the checks of a value against its type. The run
// itself is in Interpreter.cpp, the binding of dimensions in Bindings.cpp, the state
// ops in States.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_REFERENCE_EVALUATION_H
#define KILN_BACKENDS_REFERENCE_EVALUATION_H

#include "Kernels.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Optional.h"

#include <map>
#include <string>

namespace kiln::reference {

template <typename T> std::string print(const T &printable) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printable.print(os);
  return os.str();
}

/// Whether `type` is a tensor of i1, held as 0/1 in an i32 host tensor.
bool isBoolean(mlir::Type type);

/// Checks that `t` can be a value of `type`: element type, rank, static sizes and the
/// amount of data. `what` names the value for the message ("input 'x'"). i1 (boolean
/// masks, held as i32 0/1) is accepted only for values inside an entry, never for
/// what a caller hands in.
llvm::Error checkAgainstType(const HostTensor &t, mlir::Type type,
                             const std::string &what, bool allowBoolean = false);

/// The name the caller uses for input `i` (results: output `i`) of `func`.
std::string inputName(mlir::FuncOp func, unsigned i);
std::string outputName(mlir::FuncOp func, unsigned i);

/// The values of one run of one entry point.
class Evaluation {
public:
  Evaluation(mlir::FuncOp func, const TensorMap &parameters, StateMap &states)
      : func(func), parameters(parameters), states(states) {}

  llvm::Error bindInputs(const TensorMap &inputs);
  llvm::Expected<TensorMap> run();
  /// After a failed run, what the runtime does: a run rejected by a state check (a
  /// missing state, a shape, a position outside the cache) changes no state, as the
  /// runtime checks all of them before it changes any; a run that fails later forgets
  /// every state the entry creates or writes.
  void rollBack();

private:
  /// Binds dimension `name` to `size`, or checks it against an earlier binding; `source`
  /// says what binds it ("input 'x'", "state 'c'") for the message.
  llvm::Error bindDim(llvm::StringRef name, int64_t size, const std::string &source);
  /// Binds the dimensions named by inputs' `kiln.value_dim` to their values, each after
  /// checking the input's bounds.
  llvm::Error bindValueDims();
  /// Binds the dimensions that the entry's state_reads name and no input binds to the
  /// shapes of the states an earlier run left, before the bounds are checked: as the
  /// runtime, which knows them from its states (a decoding step's source lengths are
  /// bounded by S, the length of the memory it reads from a state).
  void bindStateReadDims();
  /// Checks input `index` against its `kiln.bounds`, if any.
  llvm::Error checkBounds(unsigned index);
  llvm::Error evaluate(mlir::Operation *op);
  /// state_alloc, state_write, state_read and kv_append, on `states`; each checks
  /// before it changes anything, and sets `stateRejected` when the check fails.
  llvm::Error evaluateStateOp(mlir::Operation *op, const std::string &where);
  llvm::Error checkAndApplyStateOp(mlir::Operation *op, const std::string &where);
  /// A kiln.fusion: its body's ops in order.
  llvm::Error evaluateFusion(FusionOp fusion, const std::string &where);
  /// Keeps state `name` as it was before this run, once, for rollBack().
  void saveForUndo(const std::string &name);
  llvm::Error bindParameter(ParameterOp op);
  std::string entryName() { return "entry '" + func.getName().str() + "'"; }

  mlir::FuncOp func;
  const TensorMap &parameters;
  StateMap &states;
  /// The states this run changed, as they were before it (None: not set).
  std::map<std::string, llvm::Optional<HostTensor>> undo;
  bool stateRejected = false;
  llvm::DenseMap<mlir::Value, HostTensor> values;
  /// Each named dynamic dimension's size, with what bound it ("input 'x'").
  std::map<std::string, std::pair<int64_t, std::string>> dimSizes;
};

} // namespace kiln::reference

#endif // KILN_BACKENDS_REFERENCE_EVALUATION_H
