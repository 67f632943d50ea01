//===- Manifest.h - The parsed, validated manifest --------------*- C++ -*-===//
//
// The parsed, validated model manifest (docs/manifest.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MANIFEST_H
#define KILN_RUNTIME_MANIFEST_H

#include "kiln/abi/DimExpr.h"
#include "kiln/abi/Manifest.h"
#include "kiln/runtime.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt {

using abi::BufferKind;
using abi::Conversion;
using abi::DimExpr;

// Where a reduced-precision parameter comes from: a checkpoint tensor, converted at load
// time (manifest "source", "conversion", "rows"; docs/precision.md).
struct ParameterSource {
  std::string tensor;
  Conversion conversion = Conversion::BF16;
  // The source's rows [first, second) it covers; none: all of them.
  std::optional<std::pair<int64_t, int64_t>> rows;
};

// A named tensor signature: an entry's input or output, or a model parameter.
struct TensorDesc {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<DimExpr> dims;
  std::vector<std::string> dimTexts; // as written: "64", "B*S"
  std::vector<int64_t> staticShape;  // -1 where dynamic
  std::vector<int> bindSlot;         // per dim: dimension slot it binds, or -1
  int buffer = -1;                   // entry buffer holding it (inputs, outputs)

  // Inclusive value bounds of an integer input ("bounds": [LO, HI]), when declared.
  struct ValueBounds {
    DimExpr min, max;
  };
  std::optional<ValueBounds> bounds;
  // Inputs only: the dimension this rank-0 input's value binds ("value_dim"), and its
  // slot.
  std::string valueDim;
  int valueDimSlot = -1;

  // Parameters only: the checkpoint tensor it is converted from, if it is.
  std::optional<ParameterSource> source;

  // Backing for kiln_tensor_info::dims; filled once the manifest stops moving.
  std::vector<const char *> dimPointers;
  kiln_tensor_info info() const;
  std::string describe() const; // "[B, S, 64]"
};

// A tensor the session keeps between runs ("states"): dimension 0 is the batch.
struct StateDesc {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  size_t rank = 0;
  std::vector<int> creators; // entries with a "create" buffer of this state
};

struct BufferDesc {
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<DimExpr> dims;
  std::vector<std::string> dimTexts; // as written, for messages
  BufferKind kind = BufferKind::Temp;
  // Input: input index; Parameter: parameter index; View: view_of; State: state index.
  int index = -1;
  int root = -1;       // the non-view buffer whose memory this one uses
  bool create = false; // State: the run (re)creates the state with this buffer's shape
  // State without create: per dim, the dimension slot its bare name binds, or -1.
  std::vector<int> bindSlot;
  // View: where it starts in what it views, in elements (a constant or an expression such
  // as "P*32"), and its own element strides in the root's memory (empty: none given).
  DimExpr offset = DimExpr::constant(0);
  std::vector<DimExpr> strides;
  // The buffer whose strides this one uses: itself or a view it views (a view without
  // strides of a strided view keeps that view's strides); -1 when dense in its own shape.
  int strideSource = -1;
  // Temp: the first and last step that touch its memory, inclusive ("live").
  int firstStep = -1, lastStep = -1;

  std::string describe() const; // "[B, 4, P+1, 32]"
};

struct StepDesc {
  int kernel = -1;
  std::vector<int> args; // buffer indices: inputs first, then its `outputs` outputs
  // How many of `args`, at the end, the kernel writes (manifest "outputs", absent: 1).
  // A kernel that writes several (the key and value caches' copies of one decoding
  // step) runs once where one kernel each would run twice.
  size_t outputs = 1;
  // The model's source line it computes ("model.cpp:42"; "" when the manifest has none)
  // and, for a fused step, every line it computes (empty otherwise). For the profile.
  std::string loc;
  std::vector<std::string> locs;
};

/// The index in `step.args` of the first buffer it writes: the rest are written too.
inline size_t firstOutput(const StepDesc &step) {
  return step.args.size() - step.outputs;
}

struct EntryDesc {
  std::string name;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  std::vector<BufferDesc> buffers;
  std::vector<StepDesc> steps;
  // Slot -> name of a dynamic dimension: first those the inputs' shapes bind, then those
  // the entry's state buffers bind, then the value_dim inputs' names.
  std::vector<std::string> dimNames;
  // Slot -> the largest size the entry accepts for that dimension ("dim_max"), 0 for any.
  std::vector<int64_t> dimMax;
  // States this entry creates or writes through a step: a failed run forgets them.
  std::vector<int> writtenStates;
  // "trim": the slot of the dimension a run may cut to the longest of the lengths in
  // input trimLengths, and per input and output the axes that dimension is (empty
  // when there are none); -1 when the entry runs whole.
  int trimSlot = -1;
  int trimLengths = -1;
  std::vector<std::vector<size_t>> trimInputAxes, trimOutputAxes;
};

struct Manifest {
  int abiVersion = 0;
  std::string model;
  std::string target;
  std::string weights = "f32"; // the precision of the linear weights ("weights")
  std::vector<TensorDesc> parameters;
  std::vector<std::string> kernels;
  std::vector<StateDesc> states;
  std::vector<EntryDesc> entries;

  // Index of the entry (state), or -1.
  int findEntry(std::string_view name) const;
  int findState(std::string_view name) const;
  std::string entryNames() const; // "encode, decode"
};

// The int8 parameter of the int8_scale params[i], or the reverse: the first of the
// other conversion with the same source rows; -1 for none. A parsed manifest pairs them
// one to one.
int scalePartner(const std::vector<TensorDesc> &params, size_t i);

// Whether `rows` rows of a source make exactly the [P, K, W] panels parameter `p`'s P
// panels of W rows, the last one perhaps in part; no rows make no parameter, as
// kiln.parameter's verifier says.
bool panelsFit(const TensorDesc &p, int64_t rows);

// Parses and validates a manifest. Throws Error: INCOMPATIBLE for another abi_version,
// INVALID_MODEL (message "invalid manifest: <json path>: <problem>") otherwise.
std::unique_ptr<Manifest> parseManifest(std::string_view json);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MANIFEST_H
