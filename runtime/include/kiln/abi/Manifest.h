//===- Manifest.h - The contract between compiler and runtime ---*- C++ -*-===//
//
// Everything a compiled model and the runtime that loads it must spell alike: the ABI
// version, the symbols a model exports, and the names and keys of its JSON manifest
// (docs/manifest.md). The backend's manifest writer and the runtime's parser both take
// every such name from here, so that neither can drift from the other; this is the one
// place to change the format, together with kModelAbiVersion.
//
// Plain C++17, free of LLVM, installed with the runtime's headers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ABI_MANIFEST_H
#define KILN_ABI_MANIFEST_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace kiln::abi {

/// The model ABI: what a model's kiln_model_abi_version() returns and its manifest's
/// "abi_version" holds. The C API spells the same number KILN_MODEL_ABI_VERSION. The
/// compiler writes kModelAbiVersion; the runtime loads kMinModelAbiVersion on.
inline constexpr int kModelAbiVersion = KILN_MODEL_ABI_VERSION;
inline constexpr int kMinModelAbiVersion = KILN_MODEL_ABI_VERSION_MIN;
/// The first ABI with column-panel parameters (Conversion::Panels).
inline constexpr int kPanelsAbiVersion = 5;

/// Whether a runtime of this header loads a model of ABI `version`.
constexpr bool isSupportedAbiVersion(int64_t version) {
  return version >= kMinModelAbiVersion && version <= kModelAbiVersion;
}

/// The C symbols that make a shared library a Kiln model.
inline constexpr const char kManifestSymbol[] = "kiln_model_manifest";
inline constexpr const char kAbiVersionSymbol[] = "kiln_model_abi_version";
/// An ELF section holding the model's Halide target string, NUL-terminated, as the
/// manifest's "target" gives it: the runtime reads it from the file before dlopen runs
/// any of the library's code, to refuse a model this CPU cannot run. Optional.
inline constexpr const char kTargetSection[] = ".kiln.target";
/// Appended to a kernel's name: the entry point (`int NAME_argv(void **args)`) and the
/// metadata (`const halide_filter_metadata_t *NAME_metadata(void)`) Halide generates.
inline constexpr const char kKernelEntrySuffix[] = "_argv";
inline constexpr const char kKernelMetadataSuffix[] = "_metadata";

/// An element type and its manifest name.
struct DTypeName {
  kiln_dtype dtype;
  const char *name;
};
inline constexpr DTypeName kDTypeNames[] = {
    {KILN_DTYPE_F32, "f32"},   {KILN_DTYPE_I32, "i32"}, {KILN_DTYPE_I64, "i64"},
    {KILN_DTYPE_BF16, "bf16"}, {KILN_DTYPE_F16, "f16"}, {KILN_DTYPE_I8, "i8"}};

/// The manifest name of `dtype` ("f32"), or null for a value outside kiln_dtype.
constexpr const char *dtypeName(kiln_dtype dtype) {
  for (const DTypeName &d : kDTypeNames)
    if (d.dtype == dtype)
      return d.name;
  return nullptr;
}

/// The dtype a manifest names, if it is one.
constexpr std::optional<kiln_dtype> parseDType(std::string_view name) {
  for (const DTypeName &d : kDTypeNames)
    if (name == d.name)
      return d.dtype;
  return std::nullopt;
}

/// What the memory of an entry's buffer is (manifest "kind").
enum class BufferKind { Input, Parameter, Temp, View, State };
inline constexpr const char *kBufferKindNames[] = {"input", "parameter", "temp", "view",
                                                   "state"};

/// The manifest name of `kind` ("temp").
constexpr const char *bufferKindName(BufferKind kind) {
  return kBufferKindNames[static_cast<size_t>(kind)];
}

/// How a parameter is computed at load time from its checkpoint tensor (manifest
/// "conversion", kiln.parameter's attribute): round to bf16; quantize each row
/// symmetrically to int8; those rows' scales, max|row| / 127; the f32 rows laid out as
/// the CPU matrix products read them, [P, K, W] column panels of W rows, zero-padded.
/// New ones go at the end: code built against this header and the runtime's tables
/// index by these values.
enum class Conversion { BF16, Int8, Int8Scale, Panels };
inline constexpr const char *kConversionNames[] = {"bf16", "int8", "int8_scale",
                                                   "panels"};

/// The manifest name of `conversion` ("int8").
constexpr const char *conversionName(Conversion conversion) {
  return kConversionNames[static_cast<size_t>(conversion)];
}

/// The precisions a model's linear weights may be compiled for (manifest "weights";
/// absent means the first).
inline constexpr const char *kWeightPrecisions[] = {"f32", "bf16", "int8"};

/// The manifest's JSON keys, by the object that holds them.
namespace key {
// The root object.
inline constexpr const char kAbiVersion[] = "abi_version";
inline constexpr const char kModel[] = "model";
inline constexpr const char kTarget[] = "target";
inline constexpr const char kParameters[] = "parameters";
inline constexpr const char kStates[] = "states";
inline constexpr const char kKernels[] = "kernels";
inline constexpr const char kEntries[] = "entries";
// The precision the model's linear weights were compiled for: "f32", "bf16" or "int8".
inline constexpr const char kWeights[] = "weights";
// Tensors (parameters, inputs, outputs), states and entries.
inline constexpr const char kName[] = "name";
inline constexpr const char kDType[] = "dtype";
inline constexpr const char kShape[] = "shape";
inline constexpr const char kBounds[] = "bounds";
inline constexpr const char kValueDim[] = "value_dim";
inline constexpr const char kBuffer[] = "buffer";
inline constexpr const char kRank[] = "rank";
// A parameter computed at load time from a checkpoint tensor (kiln.parameter's
// attributes of the same names): the tensor, "bf16" | "int8" | "int8_scale" | "panels",
// and the source's rows [start, end) when not all of them.
inline constexpr const char kSource[] = "source";
inline constexpr const char kConversion[] = "conversion";
inline constexpr const char kRows[] = "rows";
inline constexpr const char kInputs[] = "inputs";
inline constexpr const char kOutputs[] = "outputs";
inline constexpr const char kBuffers[] = "buffers";
inline constexpr const char kSteps[] = "steps";
inline constexpr const char kDimMax[] = "dim_max"; // an entry's {"T": 32}
// An entry that may run over the longest sequence's positions only:
// {"dim": "S", "lengths": "src_lengths"}.
inline constexpr const char kTrim[] = "trim";
inline constexpr const char kTrimDim[] = "dim";
inline constexpr const char kTrimLengths[] = "lengths";
// Buffers: the index that goes with each kind, a view's layout, a temp's live range.
inline constexpr const char kKind[] = "kind";
inline constexpr const char kInput[] = "input";
inline constexpr const char kParameter[] = "parameter";
inline constexpr const char kViewOf[] = "view_of";
inline constexpr const char kState[] = "state";
inline constexpr const char kCreate[] = "create";
inline constexpr const char kOffset[] = "offset";
inline constexpr const char kLive[] = "live";
inline constexpr const char kStrides[] = "strides";
// Steps.
inline constexpr const char kKernel[] = "kernel";
inline constexpr const char kArgs[] = "args";
inline constexpr const char kLoc[] = "loc";   // the model's source line of the step
inline constexpr const char kLocs[] = "locs"; // every line of a fused step
} // namespace key

/// Starts the part of a kernel's failed-requirement message (a checked gather's
/// "embedding of 'wpe.weight' (32 rows): index 39 out of range") that the runtime passes
/// on to the user as it is: Halide puts the condition's text before it.
inline constexpr std::string_view kRequirementMarker = "[kiln] ";

/// The key of the index that a buffer of `kind` carries ("input": the input it holds,
/// "view_of": the buffer it views), or null for a temp, which has none.
constexpr const char *bufferIndexKey(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input:
    return key::kInput;
  case BufferKind::Parameter:
    return key::kParameter;
  case BufferKind::View:
    return key::kViewOf;
  case BufferKind::State:
    return key::kState;
  case BufferKind::Temp:
    break;
  }
  return nullptr;
}

} // namespace kiln::abi

#endif // KILN_ABI_MANIFEST_H
