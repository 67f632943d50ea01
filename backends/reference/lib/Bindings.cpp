//===- Bindings.cpp - An entry's inputs and the dimensions they bind -------===//
//
// Every named dynamic dimension has one size per run, whichever input (its shape or,
// for a `kiln.value_dim`, its value) or state gives it; inputs' bounds are evaluated
// over those sizes, as the runtime does.
//
//===----------------------------------------------------------------------===//

#include "Evaluation.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/SymbolicShapes.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::reference;

llvm::Error Evaluation::bindDim(llvm::StringRef name, int64_t size,
                                const std::string &source) {
  auto [bound, inserted] = dimSizes.try_emplace(name.str(), size, source);
  if (!inserted && bound->second.first != size)
    return makeError(entryName() + ": dimension '" + name + "' is " +
                     std::to_string(bound->second.first) + " in " + bound->second.second +
                     " but " + std::to_string(size) + " in " + source);
  return llvm::Error::success();
}

llvm::Error Evaluation::bindInputs(const TensorMap &inputs) {
  std::map<std::string, unsigned> byName;
  // A dynamic dim named in `kiln.dims` has one size per run, whichever input gives it.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = inputName(func, i);
    byName[name] = i;
    auto it = inputs.find(name);
    if (it == inputs.end())
      return makeError(entryName() + " is missing input '" + name + "'");
    const HostTensor &t = it->second;
    if (llvm::Error e = checkAgainstType(t, func.getArgument(i).getType(),
                                         entryName() + " input '" + name + "'"))
      return e;
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttr);
    for (size_t d = 0; dims && d < dims.size() && d < t.shape.size(); ++d) {
      auto dimName = dims[d].dyn_cast<StringAttr>();
      if (!dimName || dimName.getValue().empty())
        continue;
      if (llvm::Error e = bindDim(dimName.getValue(), t.shape[d], "input '" + name + "'"))
        return e;
    }
    values[func.getArgument(i)] = t;
  }
  for (const auto &input : inputs)
    if (!byName.count(input.first))
      return makeError(entryName() + " has no input named '" + input.first + "'");
  if (llvm::Error e = bindValueDims())
    return e;
  bindStateReadDims();
  // Bounds may name a dimension of a later input, so they are checked once all are bound
  // (those of value_dim inputs already were).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, kValueDimAttr))
      if (llvm::Error e = checkBounds(i))
        return e;
  return llvm::Error::success();
}

llvm::Error Evaluation::bindValueDims() {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto dim = func.getArgAttrOfType<StringAttr>(i, kValueDimAttr);
    if (!dim)
      continue;
    // As the runtime does: the value's bounds first (the verifier keeps them from
    // using the dimension itself), then the binding. The verifier made the input a
    // rank-0 i32, and checkAgainstType its data one i32.
    if (llvm::Error e = checkBounds(i))
      return e;
    int64_t value = values[func.getArgument(i)].i32.at(0);
    std::string name = inputName(func, i);
    if (value < 0)
      return makeError(entryName() + " input '" + name + "' is " + std::to_string(value) +
                       ", but its value is the size of dimension '" + dim.getValue() +
                       "', which cannot be negative");
    if (llvm::Error e =
            bindDim(dim.getValue(), value, "the value of input '" + name + "'"))
      return e;
  }
  return llvm::Error::success();
}

void Evaluation::bindStateReadDims() {
  func.walk([&](StateReadOp read) {
    std::string name = read.name().str();
    auto state = states.find(name);
    if (state == states.end() || state->second.shape.size() != read.dims().size())
      return; // the state_read itself says what is wrong
    for (auto it : llvm::enumerate(read.dims())) {
      StringRef dim = it.value().cast<StringAttr>().getValue();
      // Only names no input binds: a disagreement is the state_read's to report.
      if (!dim.empty())
        dimSizes.try_emplace(dim.str(), state->second.shape[it.index()],
                             "state '" + name + "'");
    }
  });
}

llvm::Error Evaluation::checkBounds(unsigned index) {
  auto bounds = func.getArgAttrOfType<ArrayAttr>(index, kBoundsAttr);
  if (!bounds)
    return llvm::Error::success();
  std::string name = inputName(func, index);
  // The verifier checked the form: two expressions over names of kiln.dims.
  auto lookup = [&](StringRef dim) -> Optional<int64_t> {
    auto it = dimSizes.find(dim.str());
    return it == dimSizes.end() ? None : Optional<int64_t>(it->second.first);
  };
  StringRef loText = bounds[0].cast<StringAttr>().getValue();
  StringRef hiText = bounds[1].cast<StringAttr>().getValue();
  llvm::Expected<int64_t> lo = evaluateDimExpr(loText, lookup);
  if (!lo)
    return makeError(entryName() + " input '" + name +
                     "' bounds: " + llvm::toString(lo.takeError()));
  llvm::Expected<int64_t> hi = evaluateDimExpr(hiText, lookup);
  if (!hi)
    return makeError(entryName() + " input '" + name +
                     "' bounds: " + llvm::toString(hi.takeError()));
  const HostTensor &t = values[func.getArgument(index)];
  for (int64_t k = 0; k < t.numElements(); ++k) {
    int64_t v = t.i32[k];
    if (v >= *lo && v <= *hi)
      continue;
    std::string range = "[" + loText.str() + ", " + hiText.str() + "]";
    std::string evaluated = "[" + std::to_string(*lo) + ", " + std::to_string(*hi) + "]";
    return makeError(entryName() + " input '" + name + "' element " +
                     shapeToString(unravelIndex(k, t.shape)) + " is " +
                     std::to_string(v) + ", outside its bounds " + range +
                     (range == evaluated ? "" : " = " + evaluated));
  }
  return llvm::Error::success();
}
