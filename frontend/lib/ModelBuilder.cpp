//===- ModelBuilder.cpp - Declaring a model in the Kiln DSL ---------------===//
//
// The builder itself: parameters, entry points, where ops go, and finish(), which
// closes every entry, binds its dims (DimensionBindings.cpp) and verifies the module.
//
//===----------------------------------------------------------------------===//

#include "BuilderInternals.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::dsl;

std::string kiln::dsl::boundaryProblem(DType dtype) {
  if (dtype != DType::Bool)
    return "";
  return " is boolean; masks exist only inside an entry point (runtime buffers are f32, "
         "i32 or i64)";
}

ArrayAttr kiln::dsl::dimsAttr(MLIRContext &ctx, const std::vector<Dim> &dims) {
  std::vector<Attribute> names;
  for (const Dim &d : dims)
    names.push_back(StringAttr::get(&ctx, d.name));
  return ArrayAttr::get(&ctx, names);
}

ModelBuilder::ModelBuilder(std::string name)
    : name_(std::move(name)), context_(std::make_unique<MLIRContext>()) {
  context_->loadDialect<KilnDialect>();
  opBuilder_ = std::make_unique<OpBuilder>(context_.get());
  module_ = ModuleOp::create(UnknownLoc::get(context_.get()), StringRef(name_));
}

ModelBuilder::~ModelBuilder() = default;

ModelBuilder::Scope::Scope(ModelBuilder &builder, const void *module, std::string name,
                           std::source_location callSite) {
  if (!builder.frames_.empty() && builder.frames_.back().module == module)
    return;
  builder.frames_.push_back({module, std::move(name), callSite, builder.errors_.size()});
  builder_ = &builder;
}

ModelBuilder::Scope::~Scope() {
  if (builder_)
    builder_->frames_.pop_back();
}

Location ModelBuilder::location(std::source_location loc) {
  auto fileLine = [&](std::source_location at) -> Location {
    return FileLineColLoc::get(context_.get(), at.file_name(), at.line(), at.column());
  };
  if (frames_.empty())
    return fileLine(loc);
  // Each frame's call site is a line of the frame outside it (the user's, outermost).
  Location caller = fileLine(frames_.front().callSite);
  for (size_t i = 1; i < frames_.size(); ++i)
    caller = CallSiteLoc::get(
        NameLoc::get(StringAttr::get(context_.get(), frames_[i - 1].name),
                     fileLine(frames_[i].callSite)),
        caller);
  return CallSiteLoc::get(
      NameLoc::get(StringAttr::get(context_.get(), frames_.back().name), fileLine(loc)),
      caller);
}

void ModelBuilder::error(Location loc, const std::string &message) {
  // One mistake at the user's line (a wrong width into an attention layer) fails every
  // projection inside the module; the first error says it, the rest would repeat it.
  if (!frames_.empty() && errors_.size() > frames_.front().errorsBefore)
    return;
  errors_.push_back(buildErrorAt(loc, message));
}

void ModelBuilder::error(std::source_location loc, const std::string &message) {
  error(location(loc), message);
}

Parameter ModelBuilder::parameter(const std::string &name, std::vector<int64_t> shape,
                                  DType dtype, std::source_location loc) {
  for (int64_t d : shape)
    if (d <= 0)
      error(loc, "parameter '" + name + "' needs positive static dimensions");
  if (std::string problem = boundaryProblem(dtype); !problem.empty())
    error(loc, "parameter '" + name + "'" + problem);
  auto [it, inserted] = parameters_.try_emplace(name, ParameterInfo{shape, dtype});
  if (!inserted && (it->second.shape != shape || it->second.dtype != dtype)) {
    SymShape before, now;
    for (int64_t d : it->second.shape)
      before.push_back(SymDim::fixed(d));
    for (int64_t d : shape)
      now.push_back(SymDim::fixed(d));
    error(loc, "parameter '" + name + "' declared again as " + toString(now) +
                   ", first declared as " + toString(before));
  }
  return Parameter(this, name, std::move(shape), dtype);
}

Entry ModelBuilder::entry(const std::string &name, std::source_location loc) {
  for (const auto &e : entries_)
    if (e->name == name)
      error(loc, "entry point '" + name + "' is declared twice");
  auto state = std::make_unique<EntryState>();
  state->name = name;
  state->func =
      FuncOp::create(location(loc), name, FunctionType::get(&context(), {}, {}));
  state->func.addEntryBlock();
  module_->push_back(state->func);
  current_ = state.get();
  entries_.push_back(std::move(state));
  return Entry(this, entries_.size() - 1);
}

Tensor ModelBuilder::wrap(Value value, SymShape shape, DType dtype) {
  return Tensor(this, value, std::move(shape), dtype);
}

Tensor ModelBuilder::materialize(const Parameter &parameter, std::source_location loc) {
  if (!current_) {
    error(loc, "parameter '" + parameter.name() + "' used before any entry point");
    return {};
  }
  Value &cached = current_->parameterValues[parameter.name()];
  SymShape shape;
  for (int64_t d : parameter.shape())
    shape.push_back(SymDim::fixed(d));
  if (!cached) {
    // Parameters go first in the body, in order of first use, so the graph reads
    // top-down and tools list weights in the order the model uses them.
    OpBuilder::InsertionGuard guard(*opBuilder_);
    Block &body = current_->func.front();
    auto params = body.getOps<ParameterOp>();
    if (params.empty())
      opBuilder_->setInsertionPointToStart(&body);
    else
      opBuilder_->setInsertionPointAfter(*std::prev(params.end()));
    auto type = RankedTensorType::get(parameter.shape(),
                                      elementType(context(), parameter.dtype_));
    cached = opBuilder_->create<ParameterOp>(location(loc), type, parameter.name());
  }
  return wrap(cached, std::move(shape), parameter.dtype_);
}

std::string ModelBuilder::operandOf(llvm::ArrayRef<Tensor> operands, Region *region) {
  std::string entry = "?";
  for (const auto &state : entries_)
    if (&state->func.getBody() == region)
      entry = state->name;
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i].value().getParentRegion() == region)
      return "operand #" + std::to_string(i) + " " + toString(operands[i].shape()) +
             " is a tensor of entry '" + entry + "'";
  return "entry '" + entry + "'";
}

bool ModelBuilder::prepareOperands(llvm::ArrayRef<Tensor> operands,
                                   std::source_location loc) {
  Region *region = nullptr;
  for (const Tensor &t : operands) {
    if (!t.valid())
      return false;
    Region *r = t.value().getParentRegion();
    if (region && r != region) {
      error(loc, "operands come from different entry points: " +
                     operandOf(operands, region) + " and " + operandOf(operands, r) +
                     "; pass a value between entries as an output and an input, or "
                     "as a state");
      return false;
    }
    region = r;
  }
  if (!region) {
    if (!current_) {
      error(loc, "an op without operands (a constant) is built before any entry point");
      return false;
    }
    region = &current_->func.getBody();
  }
  opBuilder_->setInsertionPointToEnd(&region->front());
  return true;
}

Model ModelBuilder::finish() {
  Model model;
  model.name_ = name_;
  MLIRContext &ctx = context();
  for (auto &state : entries_) {
    FuncOp func = state->func;
    opBuilder_->setInsertionPointToEnd(&func.front());
    opBuilder_->create<ReturnOp>(func.getLoc(), state->outputs);
    llvm::SmallVector<Type> inputs(func.front().getArgumentTypes());
    llvm::SmallVector<Type> results;
    for (Value v : state->outputs)
      results.push_back(v.getType());
    func.setType(FunctionType::get(&ctx, inputs, results));
    bindDimensions(*state);
    for (size_t i = 0; i < state->outputNames.size(); ++i)
      func.setResultAttr(i, kNameAttr, StringAttr::get(&ctx, state->outputNames[i]));
    if (state->declaredOutputs == 0 && !state->writesState)
      errors_.push_back(buildErrorAt(
          func.getLoc(), "entry point '" + state->name +
                             "' has no outputs and writes no state: declare one with "
                             "output(NAME, TENSOR)"));
  }
  if (entries_.empty())
    errors_.push_back({"", 0, 0, "model '" + name_ + "' declares no entry point", {}});
  for (const auto &[name, info] : states_)
    if (!info.created && info.firstNeed)
      error(*info.firstNeed, "state '" + name +
                                 "' is used, but no entry point creates "
                                 "it (with stateAlloc or stateWrite)");

  if (errors_.empty()) {
    // Anything the DSL's own checks missed still reaches the user with a location.
    ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
      errors_.push_back(buildErrorAt(d.getLocation(), d.str()));
      return success();
    });
    if (succeeded(verify(*module_)))
      for (auto &state : entries_)
        if (failed(inferSymbolicShapes(state->func)))
          break;
  }
  model.errors_ = errors_;
  if (errors_.empty()) {
    model.module_ = std::move(module_);
    model.context_ = std::move(context_);
  }
  return model;
}
