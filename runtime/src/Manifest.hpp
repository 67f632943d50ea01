// Manifest.hpp - the parsed, validated model manifest (docs/manifest.md).
#pragma once

#include "DimExpr.hpp"
#include "kiln/runtime.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// A named tensor signature: an entry's input or output, or a model parameter.
struct TensorDesc {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<DimExpr> dims;
  std::vector<std::string> dimTexts;   // as written: "64", "B*S"
  std::vector<int64_t> staticShape;    // -1 where dynamic
  std::vector<int> bindSlot;           // per dim: dimension slot it binds, or -1
  int buffer = -1;                     // entry buffer holding it (inputs, outputs)

  // Inclusive value bounds of an integer input ("bounds": [LO, HI]), when declared.
  struct ValueBounds {
    DimExpr min, max;
  };
  std::optional<ValueBounds> bounds;

  // Backing for kiln_tensor_info::dims; filled once the manifest stops moving.
  std::vector<const char*> dimPointers;
  kiln_tensor_info info() const;
  std::string describe() const; // "[B, S, 64]"
};

enum class BufferKind { Input, Parameter, Temp, View };

struct BufferDesc {
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<DimExpr> dims;
  BufferKind kind = BufferKind::Temp;
  int index = -1; // Input: input index; Parameter: parameter index; View: view_of
  int root = -1;  // the non-view buffer whose memory this one uses
  // View: where it starts in what it views, in elements (a slice of a weight's leading
  // rows is a view, so it costs no copy).
  int64_t offset = 0;
  int64_t rootOffset = 0; // the same, in the root's elements, along the view_of chain
};

struct StepDesc {
  int kernel = -1;
  std::vector<int> args; // buffer indices, inputs first, output last
};

struct EntryDesc {
  std::string name;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  std::vector<BufferDesc> buffers;
  std::vector<StepDesc> steps;
  std::vector<std::string> dimNames; // slot -> name of a dynamic dimension
};

struct Manifest {
  int abiVersion = 0;
  std::string model;
  std::string target;
  std::vector<TensorDesc> parameters;
  std::vector<std::string> kernels;
  std::vector<EntryDesc> entries;

  // Index of the entry, or -1.
  int findEntry(std::string_view name) const;
  std::string entryNames() const; // "encode, decode"
};

// Parses and validates a manifest. Throws Error: INCOMPATIBLE for another abi_version,
// INVALID_MODEL (message "invalid manifest: <json path>: <problem>") otherwise.
std::unique_ptr<Manifest> parseManifest(std::string_view json);

} // namespace kiln::rt
