//===- Manifest.cpp - The model manifest as JSON --------------------------===//
//
// Written with llvm::json, every name and key from kiln/abi/Manifest.h, in the layout
// of docs/manifest.md: one line per tensor, buffer, step and kernel, so that a manifest
// reads well in a diff or when printed with --emit=manifest.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "kiln/abi/Manifest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace kiln::halide_backend {

namespace key = abi::key;
using llvm::json::OStream;

namespace {

/// A static size as a number, a dimension expression as a string.
llvm::json::Value dimValue(const SymDim &dim) {
  if (dim.isStatic())
    return dim.size;
  return dim.expr;
}

void writeShape(OStream &json, const char *name, llvm::ArrayRef<SymDim> shape) {
  json.attributeArray(name, [&] {
    for (const SymDim &dim : shape)
      json.value(dimValue(dim));
  });
}

/// A bound as the manifest prefers it: a plain integer as a number, anything else (an
/// expression such as "S" or "0-5") as a string.
llvm::json::Value boundValue(llvm::StringRef bound) {
  uint64_t value;
  if (!bound.empty() && llvm::all_of(bound, llvm::isDigit) &&
      !bound.getAsInteger(10, value) && value <= static_cast<uint64_t>(INT64_MAX))
    return static_cast<int64_t>(value);
  return bound;
}

void writeTensor(OStream &json, const TensorPlan &tensor) {
  json.attribute(key::kName, tensor.name);
  json.attribute(key::kDType, tensor.dtype);
  writeShape(json, key::kShape, tensor.shape);
  if (tensor.bounds.size() == 2)
    json.attributeArray(key::kBounds, [&] {
      json.value(boundValue(tensor.bounds[0]));
      json.value(boundValue(tensor.bounds[1]));
    });
  if (!tensor.valueDim.empty())
    json.attribute(key::kValueDim, tensor.valueDim);
  if (!tensor.conversion.empty()) {
    json.attribute(key::kSource, tensor.source);
    json.attribute(key::kConversion, tensor.conversion);
  }
  if (tensor.rows.size() == 2)
    json.attributeArray(key::kRows, [&] {
      json.value(tensor.rows[0]);
      json.value(tensor.rows[1]);
    });
  if (tensor.buffer >= 0)
    json.attribute(key::kBuffer, tensor.buffer);
}

void writeBuffer(OStream &json, const BufferPlan &buffer) {
  json.attribute(key::kDType, buffer.dtype);
  writeShape(json, key::kShape, buffer.shape);
  json.attribute(key::kKind, abi::bufferKindName(buffer.kind));
  if (const char *indexKey = abi::bufferIndexKey(buffer.kind))
    json.attribute(indexKey, buffer.index);
  if (buffer.kind == BufferPlan::Kind::View) {
    if (!(buffer.offset.isStatic() && buffer.offset.size == 0))
      json.attribute(key::kOffset, dimValue(buffer.offset));
    if (buffer.isStrided())
      writeShape(json, key::kStrides, buffer.strides);
  }
  if (buffer.kind == BufferPlan::Kind::State && buffer.create)
    json.attribute(key::kCreate, true);
  if (buffer.kind == BufferPlan::Kind::Temp)
    json.attributeArray(key::kLive, [&] {
      json.value(buffer.firstStep);
      json.value(buffer.lastStep);
    });
}

void writeStep(OStream &json, const StepPlan &step) {
  json.attribute(key::kKernel, step.kernel);
  json.attributeArray(key::kArgs, [&] {
    for (int arg : step.args)
      json.value(arg);
  });
  if (step.outputs != 1)
    json.attribute(key::kOutputs, step.outputs);
  if (!step.locs.empty())
    json.attribute(key::kLoc, step.locs.front());
  if (step.locs.size() > 1)
    json.attributeArray(key::kLocs, [&] {
      for (const std::string &loc : step.locs)
        json.value(loc);
    });
}

/// Writes `items` as array `name` of `json`, each item on a line of its own as one
/// compact JSON object whose members `writeItem` writes.
template <typename T, typename Fn>
void writeObjectLines(OStream &json, const char *name, const std::vector<T> &items,
                      Fn writeItem) {
  json.attributeArray(name, [&] {
    for (const T &item : items)
      json.rawValue([&](llvm::raw_ostream &os) {
        OStream line(os);
        line.object([&] { writeItem(line, item); });
      });
  });
}

void writeEntry(OStream &json, const EntryPlan &entry) {
  json.attribute(key::kName, entry.name);
  writeObjectLines(json, key::kInputs, entry.inputs, writeTensor);
  writeObjectLines(json, key::kOutputs, entry.outputs, writeTensor);
  writeObjectLines(json, key::kBuffers, entry.buffers, writeBuffer);
  writeObjectLines(json, key::kSteps, entry.steps, writeStep);
  if (!entry.dimMax.empty())
    json.attributeObject(key::kDimMax, [&] {
      for (const auto &[name, max] : entry.dimMax)
        json.attribute(name, max);
    });
  if (!entry.trimDim.empty())
    json.attributeObject(key::kTrim, [&] {
      json.attribute(key::kTrimDim, entry.trimDim);
      json.attribute(key::kTrimLengths, entry.trimLengths);
    });
}

} // namespace

std::string writeManifest(const ModelPlan &plan, llvm::StringRef target) {
  std::string out;
  llvm::raw_string_ostream os(out);
  OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute(key::kAbiVersion, abi::kModelAbiVersion);
    json.attribute(key::kModel, plan.model);
    json.attribute(key::kTarget, target);
    // Absent unless the module says (kiln-weight-precision sets it): absent means f32.
    if (!plan.weights.empty())
      json.attribute(key::kWeights, plan.weights);
    writeObjectLines(json, key::kParameters, plan.parameters, writeTensor);
    // Optional in the manifest: written only by models that keep states.
    if (!plan.states.empty())
      writeObjectLines(json, key::kStates, plan.states,
                       [](OStream &line, const StatePlan &state) {
                         line.attribute(key::kName, state.name);
                         line.attribute(key::kDType, state.dtype);
                         line.attribute(key::kRank, state.rank);
                       });
    json.attributeArray(key::kKernels, [&] {
      for (const KernelPlan &kernel : plan.kernels)
        json.value(kernel.name);
    });
    json.attributeArray(key::kEntries, [&] {
      for (const EntryPlan &entry : plan.entries)
        json.object([&] { writeEntry(json, entry); });
    });
  });
  os << '\n';
  return out;
}

} // namespace kiln::halide_backend
