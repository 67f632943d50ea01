//===- Interpreter.h - The reference interpreter of kiln modules -*- C++ -*-===//
//
// Plain loops over the kiln dialect, written to be obviously correct rather than fast:
// the oracle every numerical test of the Halide backend compares against.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_REFERENCE_INTERPRETER_H
#define KILN_BACKENDS_REFERENCE_INTERPRETER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::reference {

/// A dense row-major tensor on the host. Exactly one of `f32` / `i32` / `i64` holds the
/// data: `i32` when `isInt`, `i64` when `isI64`, `f32` otherwise. The reduced-precision
/// weights are held widened: bf16 as the f32 values they equal, i8 in `i32`. The
/// factories zero-fill when given no data.
struct HostTensor {
  std::vector<int64_t> shape;
  bool isInt = false;
  bool isI64 = false;
  std::vector<float> f32;
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;

  static HostTensor floats(std::vector<int64_t> shape, std::vector<float> data = {});
  static HostTensor ints(std::vector<int64_t> shape, std::vector<int32_t> data = {});
  static HostTensor longs(std::vector<int64_t> shape, std::vector<int64_t> data = {});
  int64_t numElements() const;
};

using TensorMap = std::map<std::string, HostTensor>;

/// The session states of a sequence of runs (key/value caches), by name: what the
/// runtime keeps in a session between runs.
using StateMap = std::map<std::string, HostTensor>;

/// Runs entry point `entry` of `module`. Inputs are matched by the entry's `kiln.name`
/// argument attributes ("arg<i>" where an argument has none) and parameters by name;
/// the result maps output names (`kiln.name` result attributes, else "result<i>") to
/// values. Missing, unexpected or mis-shaped inputs, missing or mis-shaped parameters,
/// dynamic dimensions named alike but sized differently, input values outside their
/// `kiln.bounds`, out-of-range token ids, and ops the interpreter does not know are
/// errors, never crashes. Extra parameters are ignored (a weights file
/// holds those of every entry).
///
/// A converted parameter (kiln.parameter with a `conversion`) takes, as the runtime
/// does, the tensor under its own name as it is (checked: bf16 values, i8 values in
/// [-127, 127]), or else converts its `source`'s f32 tensor (its `rows`), so that a
/// converted module runs on the same f32 parameters as the original; a source stored
/// under the parameter's own name is converted.
///
/// An input with `kiln.value_dim` binds that dimension to its value. The state ops work
/// on `states`, which persists across runs as a session's states do: state_alloc and
/// state_write (re)create a state, state_read reads one that an earlier run created (its
/// shape binds its `dims`), kv_append writes positions [P, P + N) of a cache in place
/// (the cache must exist with the value's shape and `capacity` along the axis, and P + N
/// may not exceed the capacity). Failures change the states as the runtime's do: a run
/// rejected by its inputs or by a state check (a missing state, a shape, a position)
/// changes no state; one that fails later forgets (erases) every state the entry creates
/// or writes, so that no later run reads a half-written cache. Without `states`, the run
/// has a fresh map of its own.
llvm::Expected<TensorMap> run(mlir::ModuleOp module, llvm::StringRef entry,
                              const TensorMap &inputs, const TensorMap &parameters,
                              StateMap *states = nullptr);

} // namespace kiln::reference

#endif // KILN_BACKENDS_REFERENCE_INTERPRETER_H
