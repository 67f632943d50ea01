//===- Entry.cpp - Declaring an entry point's inputs, outputs and states ----===//
//
// Each declaration is checked where the user wrote it (names, dims, bounds, dtypes at an
// entry's boundary); what needs every input of the entry is checked by finish()
// (DimensionBindings.cpp).
//
//===----------------------------------------------------------------------===//

#include "BuilderInternals.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::dsl;

const std::string &Entry::name() const { return builder_->entries_[index_]->name; }

Tensor Entry::input(const std::string &name, DType dtype, std::vector<Dim> dims,
                    std::source_location loc) {
  auto &state = *builder_->entries_[index_];
  for (const std::string &n : state.inputNames)
    if (n == name)
      builder_->error(loc,
                      "entry '" + state.name + "' already has an input '" + name + "'");
  if (std::string problem = boundaryProblem(dtype); !problem.empty()) {
    builder_->error(loc, "input '" + name + "'" + problem);
    dtype = DType::F32;
  }
  MLIRContext &ctx = builder_->context();
  // A bad dim is reported; a size of 1 in its place keeps later ops from cascading.
  SymShape shape;
  std::vector<Attribute> maxes;
  bool bounded = false;
  for (const Dim &d : dims) {
    std::optional<SymShape> one =
        declaredShape({d}, "input '" + name + "'", loc, /*allowMax=*/true);
    shape.push_back(one ? one->front() : SymDim::fixed(1));
    int64_t max = one && !d.name.empty() ? d.max : 0;
    maxes.push_back(IntegerAttr::get(IntegerType::get(&ctx, 64), max));
    if (max == 0)
      continue;
    bounded = true;
    // A bound belongs to the name, not the input: guessing which of two differing
    // bounds the user meant would hide a mistake.
    auto [it, inserted] = state.dimMax.try_emplace(
        d.name, ModelBuilder::EntryState::DeclaredMax{max, name});
    if (!inserted && it->second.max != max)
      builder_->error(loc, "input '" + name + "' bounds dimension '" + d.name + "' by " +
                               std::to_string(max) + ", but input '" + it->second.input +
                               "' bounds it by " + std::to_string(it->second.max) +
                               "; give every input the same bound, or none");
  }
  auto type = RankedTensorType::get(staticShape(shape), elementType(ctx, dtype));
  Value arg = state.func.front().addArgument(type, builder_->location(loc));
  state.inputNames.push_back(name);
  state.inputDims.push_back(dimsAttr(ctx, dims));
  state.inputDimMax.push_back(bounded ? ArrayAttr::get(&ctx, maxes) : ArrayAttr());
  state.inputBounds.emplace_back();
  state.inputValueDims.emplace_back();
  state.inputLocs.push_back(loc);
  builder_->current_ = &state;
  return builder_->wrap(arg, std::move(shape), dtype);
}

Tensor Entry::input(const std::string &name, DType dtype, std::vector<Dim> dims,
                    Bounds bounds, std::source_location loc) {
  Tensor t = input(name, dtype, std::move(dims), loc);
  auto &state = *builder_->entries_[index_];
  if (dtype != DType::I32) {
    builder_->error(loc, "input '" + name + "' has bounds but is " + dtypeName(dtype) +
                             "; bounds are for i32 inputs (token ids, lengths)");
    return t;
  }
  ModelBuilder::EntryState::DeclaredBounds declared;
  declared.loc = loc;
  llvm::SmallVector<llvm::Optional<int64_t>, 2> constant;
  for (const Bound *end : {&bounds.min, &bounds.max}) {
    llvm::Expected<std::vector<std::string>> names = dimExprNames(end->expr);
    if (!names) {
      builder_->error(loc, "bounds of input '" + name +
                               "': " + llvm::toString(names.takeError()));
      return t;
    }
    declared.names.insert(declared.names.end(), names->begin(), names->end());
    constant.push_back(llvm::None);
    if (!names->empty())
      continue;
    auto noNames = [](llvm::StringRef) { return llvm::Optional<int64_t>(); };
    llvm::Expected<int64_t> value = evaluateDimExpr(end->expr, noNames);
    if (!value) {
      builder_->error(loc, "bounds of input '" + name +
                               "': " + llvm::toString(value.takeError()));
      return t;
    }
    constant.back() = *value;
  }
  if (constant[0] && constant[1] && *constant[0] > *constant[1]) {
    builder_->error(loc, "bounds of input '" + name + "' are empty: [" + bounds.min.expr +
                             ", " + bounds.max.expr + "]");
    return t;
  }
  MLIRContext &ctx = builder_->context();
  declared.attr = ArrayAttr::get(&ctx, {StringAttr::get(&ctx, bounds.min.expr),
                                        StringAttr::get(&ctx, bounds.max.expr)});
  state.inputBounds.back() = std::move(declared);
  return t;
}

std::optional<SymShape> Entry::declaredShape(const std::vector<Dim> &dims,
                                             const std::string &what,
                                             std::source_location loc, bool allowMax) {
  SymShape shape;
  for (const Dim &d : dims) {
    if (d.max < 0 || (d.max > 0 && !allowMax)) {
      builder_->error(
          loc, what + " bounds dimension '" + d.name + "' by " + std::to_string(d.max) +
                   (allowMax ? "; a bound is a positive size"
                             : "; bound a dimension where an input declares "
                               "it (a state's sizes follow from the inputs)"));
      return std::nullopt;
    }
    if (!d.name.empty()) {
      if (!isDimName(d.name)) {
        builder_->error(loc, what + " names a dimension \"" + d.name +
                                 "\"; a name is a letter or '_' then letters, digits "
                                 "and '_'");
        return std::nullopt;
      }
      shape.push_back(SymDim::named(d.name));
    } else if (d.size > 0) {
      shape.push_back(SymDim::fixed(d.size));
    } else {
      builder_->error(loc, what + " has a dimension of size " + std::to_string(d.size) +
                               "; use dyn(\"NAME\") for a dynamic one");
      return std::nullopt;
    }
  }
  return shape;
}

void Entry::insertAtEnd() {
  auto &state = *builder_->entries_[index_];
  builder_->opBuilder().setInsertionPointToEnd(&state.func.front());
  builder_->current_ = &state;
}

Tensor Entry::valueInput(const std::string &name, const Dim &dim, Bounds bounds,
                         std::source_location loc) {
  Tensor t = input(name, DType::I32, {}, std::move(bounds), loc);
  if (dim.name.empty() || !isDimName(dim.name)) {
    builder_->error(loc,
                    "value input '" + name +
                        "' needs a dimension name to bind, "
                        "as dyn(\"P\"), got " +
                        (dim.name.empty() ? "the static size " + std::to_string(dim.size)
                                          : "\"" + dim.name + "\""));
    return t;
  }
  builder_->entries_[index_]->inputValueDims.back() = dim.name;
  return t;
}

void Entry::stateAlloc(const std::string &name, std::vector<Dim> dims,
                       std::source_location loc) {
  std::optional<SymShape> shape = declaredShape(dims, "state '" + name + "'", loc);
  insertAtEnd();
  builder_->markStateWrite();
  if (!shape)
    return;
  if (!builder_->useState(name, *shape, ModelBuilder::StateUse::Create, loc))
    return;
  MLIRContext &ctx = builder_->context();
  auto type = RankedTensorType::get(staticShape(*shape), Float32Type::get(&ctx));
  builder_->opBuilder().create<StateAllocOp>(builder_->location(loc), StringRef(name),
                                             type, dimsAttr(ctx, dims));
}

Tensor Entry::stateRead(const std::string &name, std::vector<Dim> dims,
                        std::source_location loc) {
  std::optional<SymShape> shape = declaredShape(dims, "state '" + name + "'", loc);
  if (!shape)
    return {};
  insertAtEnd();
  if (!builder_->useState(name, *shape, ModelBuilder::StateUse::Read, loc))
    return {};
  MLIRContext &ctx = builder_->context();
  auto type = RankedTensorType::get(staticShape(*shape), Float32Type::get(&ctx));
  Value value = builder_->opBuilder().create<StateReadOp>(
      builder_->location(loc), type, StringRef(name), dimsAttr(ctx, dims));
  return builder_->wrap(value, std::move(*shape), DType::F32);
}

void Entry::output(const std::string &name, const Tensor &value,
                   std::source_location loc) {
  auto &state = *builder_->entries_[index_];
  ++state.declaredOutputs;
  if (!value.valid())
    return; // The op that produced it has reported why.
  if (std::string problem = boundaryProblem(value.dtype()); !problem.empty()) {
    builder_->error(loc, "output '" + name + "'" + problem);
    return;
  }
  for (const std::string &n : state.outputNames)
    if (n == name)
      builder_->error(loc,
                      "entry '" + state.name + "' already has an output '" + name + "'");
  if (value.value().getParentRegion() != &state.func.getBody()) {
    builder_->error(loc, "output '" + name + "' of entry '" + state.name +
                             "' is a tensor of another entry point");
    return;
  }
  state.outputNames.push_back(name);
  state.outputs.push_back(value.value());
}
