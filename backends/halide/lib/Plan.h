//===- Plan.h - What a compiled model consists of ---------------*- C++ -*-===//
//
// The backend-neutral description of a compiled model, before any kernel is compiled:
// the parameters, the unique kernels (ops deduplicated by kernel signature), and per
// entry point the buffers and the steps that run kernels on them. The manifest
// (docs/manifest.md) is this plan written as JSON.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_PLAN_H
#define KILN_BACKENDS_HALIDE_PLAN_H

#include "kiln/abi/Manifest.h"
#include "kiln/ir/ShapeRules.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::halide_backend {

/// A named tensor: a model parameter, or an entry's input or output.
struct TensorPlan {
  std::string name;
  /// The manifest's name of the dtype: abi::dtypeName ("f32", "i32", "i64", or for a
  /// parameter at a reduced precision "bf16" or "i8").
  std::string dtype;
  SymShape shape;
  /// The entry buffer that holds it (-1 for parameters, which are listed model-wide).
  int buffer = -1;
  /// For an integer input with `kiln.bounds`: the inclusive [lo, hi] its values must lie
  /// in, as dimension expressions; empty otherwise.
  std::vector<std::string> bounds;
  /// For a rank-0 input with `kiln.value_dim`: the entry dimension its value binds.
  std::string valueDim;
  /// For a parameter computed at load time (kiln.parameter's attributes of the same
  /// names): the checkpoint tensor, the conversion ("bf16", "int8" or "int8_scale") and
  /// the source's rows [start, end) when not all of them (else empty).
  std::string source, conversion;
  std::vector<int64_t> rows;
};

/// A tensor the runtime keeps in a session between runs (a key/value cache), named
/// model-wide; entries create, read and update it through `State` buffers.
struct StatePlan {
  std::string name;
  std::string dtype = abi::dtypeName(KILN_DTYPE_F32);
  int64_t rank = 0;
};

struct BufferPlan {
  using Kind = abi::BufferKind;
  std::string dtype;
  SymShape shape;
  Kind kind = Kind::Temp;
  /// Input: the input's index; Parameter: the parameter's index; View: the viewed
  /// buffer's index; State: the state's index in ModelPlan::states; Temp: unused.
  int index = -1;
  /// State: the run (re)creates the state, zero-filled, with this buffer's shape;
  /// otherwise an earlier run must have created it.
  bool create = false;
  /// View: the element where it starts in the buffer it views (a slice of leading rows,
  /// or position P of a cache: "P*32"), static or a dimension expression.
  SymDim offset = SymDim::fixed(0);
  /// View: one element stride per dimension (static or an expression), in elements of
  /// the memory it views; empty for a view that is dense row-major in its own shape.
  /// kv_append makes strided views of a state buffer; slices, head splits and head
  /// merges make them where every reader takes one (Plan.cpp). The innermost stride of
  /// every strided view is 1.
  SymShape strides;
  /// Temp: the steps (indices into EntryPlan::steps) that first and last touch its
  /// memory, itself or through a view, inclusive; an output's runs to the last step. The
  /// runtime lets temporaries whose ranges do not overlap share bytes.
  int firstStep = -1, lastStep = -1;

  bool isStrided() const { return !strides.empty(); }
};

struct StepPlan {
  int kernel = -1;
  /// Buffer indices: the kernel's inputs in operand order, then its outputs.
  std::vector<int> args;
  /// How many of `args`, at the end, the kernel writes: 1, or one per kv_append of a
  /// step that appends to several caches (KernelPlan::appends).
  int outputs = 1;
  /// The model's source lines the step computes, each as its call chain (kiln::chainText:
  /// "model.cpp:42", or "model.cpp:42 > Attention.cpp:37" for an op of an nn module),
  /// each once, in the order of its op's location: one for a plain op, one per member
  /// for a fused one (its first op's first). Empty when the op has no file location.
  std::vector<std::string> locs;
};

struct EntryPlan {
  std::string name;
  /// The largest size of each bounded dimension name (the inputs' kiln.dim_max).
  std::map<std::string, int64_t> dimMax;
  /// kiln.trim: the dimension the runtime may cut to the longest sequence, and the
  /// name of the input with the lengths; empty when the entry runs whole.
  std::string trimDim, trimLengths;
  std::vector<TensorPlan> inputs;
  std::vector<TensorPlan> outputs;
  std::vector<BufferPlan> buffers;
  std::vector<StepPlan> steps;
};

/// One kernel to compile, shared by every op with the same kernel signature.
struct KernelPlan {
  /// The exported function name, `kiln_<model>_k<N>_<op>`.
  std::string name;
  /// The first op that uses it: it is lowered, and errors point at it.
  mlir::Operation *op = nullptr;
  /// Instead of computing `op`: copy its result, a strided view, into a dense buffer
  /// (for an entry that returns what kv_append returns). See lowerDenseCopy.
  bool denseCopy = false;
  /// For kv_append: how many appends of `op`'s signature one call makes (a decoding
  /// step's key and value caches: 2), each with its value as an input and its cache
  /// positions as an output, in that order. See lowerKvAppends.
  unsigned appends = 1;
  /// Lowered over its rows collapsed into one dimension (CollapseRows.h): its steps pass
  /// dense [rows, D] views of their row tensors.
  bool collapsedRows = false;
  /// How many steps (across all entries) call it.
  unsigned uses = 0;
};

struct ModelPlan {
  std::string model;
  /// The precision the linear weights were compiled for (the module's `kiln.weights`:
  /// "f32", "bf16" or "int8"); empty when the module does not say, which means f32.
  std::string weights;
  std::vector<TensorPlan> parameters;
  std::vector<StatePlan> states;
  std::vector<KernelPlan> kernels;
  std::vector<EntryPlan> entries;
};

/// Plans `module`, named `model`: every func is an entry point, in module order. Emits an
/// error at the offending op and fails on what no kernel or buffer can express. With
/// `layoutRemarks`, a remark at each slice and transpose that stays a kernel says why it
/// is not a view. With `collapseRows`, the kernels of products over rows of two or more
/// dimensions run over them as one (rowsCollapsible, KernelPlan::collapsedRows).
mlir::FailureOr<ModelPlan> planModel(mlir::ModuleOp module, llvm::StringRef model,
                                     bool layoutRemarks = false,
                                     bool collapseRows = false);

/// `name` with every character that cannot appear in a C identifier replaced by '_'.
std::string sanitizeIdentifier(llvm::StringRef name);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_PLAN_H
