//===- DimensionBindings.cpp - What binds each dimension, and state checks -===//
//
// An entry's dynamic dims are bound when it runs by an input's shape, a state's shape or
// an input's value; bounds, new states' shapes and cache positions may use only bound
// names. States are named model-wide, so their uses are checked against each other.
//
//===----------------------------------------------------------------------===//

#include "BuilderInternals.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SourceLocation.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::dsl;

bool ModelBuilder::useState(const std::string &name, const SymShape &shape, StateUse use,
                            std::source_location loc) {
  if (name.empty()) {
    error(loc, "a state needs a non-empty name");
    return false;
  }
  if (shape.empty()) {
    error(loc, "state '" + name + "' has rank 0; a state's dimension 0 is its batch");
    return false;
  }
  auto [it, inserted] = states_.try_emplace(name, StateInfo{shape, location(loc)});
  StateInfo &info = it->second;
  // Named dims are an entry's own (B here and B there may differ per run); ranks and
  // static sizes are the state's.
  bool fits = info.shape.size() == shape.size();
  for (size_t i = 0; fits && i < shape.size(); ++i)
    fits = !(shape[i].isStatic() && info.shape[i].isStatic()) ||
           shape[i].size == info.shape[i].size;
  if (!fits) {
    error(loc, "state '" + name + "' is used here as " + toString(shape) + " but as " +
                   toString(info.shape) + " at " +
                   chainText(sourceFrames(info.firstUse)));
    return false;
  }
  if (use == StateUse::Create)
    info.created = true;
  else if (!info.firstNeed)
    info.firstNeed = location(loc);
  return true;
}

void ModelBuilder::markStateWrite() {
  for (auto &entry : entries_)
    if (opBuilder_->getBlock() == &entry->func.front())
      entry->writesState = true;
}

BuildError kiln::dsl::buildErrorAt(Location loc, std::string message) {
  std::vector<SourceFrame> frames = sourceFrames(loc);
  if (frames.empty())
    return {"", 0, 0, std::move(message), {}};
  auto at = [](const SourceFrame &frame, std::string text) {
    return BuildError{frame.file, frame.line, frame.column, std::move(text), {}};
  };
  BuildError e = at(frames.front(), std::move(message));
  // Frame i is a line of module i, which frame i - 1 called.
  for (size_t i = 1; i < frames.size(); ++i)
    e.notes.push_back(at(frames[i - 1], "in " + frames[i].module));
  if (frames.size() > 1)
    e.notes.push_back(at(frames.back(), "raised here"));
  return e;
}

void ModelBuilder::bindDimensions(EntryState &state) {
  FuncOp func = state.func;
  MLIRContext &ctx = context();
  for (size_t i = 0; i < state.inputNames.size(); ++i) {
    func.setArgAttr(i, kNameAttr, StringAttr::get(&ctx, state.inputNames[i]));
    func.setArgAttr(i, kDimsAttr, state.inputDims[i]);
  }
  // What binds each name when the entry runs: an input's shape or the shape of a state
  // it reads (as the IR sees them, before the value dims are set), or an input's value.
  std::map<std::string, std::string> binders;
  for (const DimBinding &b : entryDimBindings(func))
    binders.try_emplace(b.name.str(),
                        b.kind == DimBinding::State
                            ? "the shape of state '" +
                                  cast<StateReadOp>(b.read).name().str() + "'"
                            : "the shape of input '" + state.inputNames[b.input] + "'");
  for (size_t i = 0; i < state.inputNames.size(); ++i) {
    const std::string &dim = state.inputValueDims[i];
    if (dim.empty())
      continue;
    auto [it, inserted] =
        binders.try_emplace(dim, "the value of input '" + state.inputNames[i] + "'");
    if (!inserted)
      error(state.inputLocs[i], "value input '" + state.inputNames[i] + "' binds '" +
                                    dim + "', which " + it->second +
                                    " binds too; a dimension has one binding");
    else
      func.setArgAttr(i, kValueDimAttr, StringAttr::get(&ctx, dim));
  }

  for (size_t i = 0; i < state.inputNames.size(); ++i) {
    const EntryState::DeclaredBounds &bounds = state.inputBounds[i];
    if (!bounds.attr)
      continue;
    const std::string &own = state.inputValueDims[i];
    auto bad = llvm::find_if(bounds.names, [&](const std::string &n) {
      return n == own || !binders.count(n);
    });
    if (bad == bounds.names.end())
      func.setArgAttr(i, kBoundsAttr, bounds.attr);
    else if (*bad == own)
      error(bounds.loc, "bounds of input '" + state.inputNames[i] + "' use dimension '" +
                            *bad +
                            "', which its own value binds (after the bounds are "
                            "checked)");
    else
      error(bounds.loc, "bounds of input '" + state.inputNames[i] + "' use dimension '" +
                            *bad + "', which entry '" + state.name +
                            "' does not bind (no input or state it reads has it)");
  }

  // The runtime evaluates a new state's shape and a cache's position from bound names.
  auto errorAt = [&](Location loc, std::string message) {
    errors_.push_back(buildErrorAt(loc, std::move(message)));
  };
  func.walk([&](StateAllocOp alloc) {
    for (Attribute d : alloc.dims())
      if (StringRef n = d.cast<StringAttr>().getValue();
          !n.empty() && !binders.count(n.str()))
        errorAt(alloc.getLoc(),
                "state '" + alloc.name().str() + "' has dimension '" + n.str() +
                    "', which entry '" + state.name +
                    "' does not bind (no input or state it reads has it)");
  });
  func.walk([&](KvAppendOp append) {
    std::string p = append.position().str();
    if (!dimInteger(p) && !binders.count(p))
      errorAt(append.getLoc(), "kvAppend at position '" + p + "', which entry '" +
                                   state.name +
                                   "' does not bind: declare it with "
                                   "valueInput(NAME, dyn(\"" +
                                   p + "\"), BOUNDS)");
  });
}
