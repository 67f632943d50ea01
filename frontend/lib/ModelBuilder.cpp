//===- ModelBuilder.cpp - Declaring a model in the Kiln DSL ---------------===//

#include "kiln/frontend/ModelBuilder.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include <optional>

using namespace mlir;
using namespace kiln;

struct ModelBuilder::EntryState {
  std::string name;
  FuncOp func;
  std::vector<std::string> inputNames;
  std::vector<Attribute> inputDims;
  /// `kiln.bounds` per input (null for none), with where it was declared and the dim
  /// names it uses, which finish() checks once every input is known.
  struct DeclaredBounds {
    ArrayAttr attr;
    std::source_location loc;
    std::vector<std::string> names;
  };
  std::vector<DeclaredBounds> inputBounds;
  /// Per input: the dim its value binds (valueInput), or "".
  std::vector<std::string> inputValueDims;
  /// Per input: where it was declared.
  std::vector<std::source_location> inputLocs;
  /// Whether the entry creates or updates a state, which makes outputs optional.
  bool writesState = false;
  std::vector<std::string> outputNames;
  std::vector<Value> outputs;
  std::map<std::string, Value> parameterValues;
  /// Counts outputs declared even when their tensor failed to build, so that a failed op
  /// does not also produce a "no outputs" error.
  size_t declaredOutputs = 0;
};

std::string BuildError::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) +
         ": error: " + message;
}

void Model::printErrors(llvm::raw_ostream &os) const {
  for (const BuildError &e : errors_)
    os << e.str() << "\n";
}

static Type elementType(MLIRContext &ctx, DType dtype) {
  if (dtype == DType::I32)
    return IntegerType::get(&ctx, 32);
  if (dtype == DType::Bool)
    return IntegerType::get(&ctx, 1);
  return Float32Type::get(&ctx);
}

/// Why a tensor of `dtype` cannot cross an entry's boundary, or "".
static std::string boundaryProblem(DType dtype) {
  if (dtype != DType::Bool)
    return "";
  return " is boolean; masks exist only inside an entry point (runtime buffers are f32 "
         "or i32)";
}

/// `kiln.dims` / a state op's `dims`: each dim's name, "" for static ones.
static ArrayAttr dimsAttr(MLIRContext &ctx, const std::vector<Dim> &dims) {
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

Location ModelBuilder::location(std::source_location loc) {
  return FileLineColLoc::get(context_.get(), loc.file_name(), loc.line(), loc.column());
}

void ModelBuilder::error(std::source_location loc, const std::string &message) {
  errors_.push_back({loc.file_name(), loc.line(), loc.column(), message});
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
  for (const Dim &d : dims) {
    std::optional<SymShape> one = declaredShape({d}, "input '" + name + "'", loc);
    shape.push_back(one ? one->front() : SymDim::fixed(1));
  }
  auto type = RankedTensorType::get(staticShape(shape), elementType(ctx, dtype));
  Value arg = state.func.front().addArgument(type, builder_->location(loc));
  state.inputNames.push_back(name);
  state.inputDims.push_back(dimsAttr(ctx, dims));
  state.inputBounds.emplace_back();
  state.inputValueDims.emplace_back();
  state.inputLocs.push_back(loc);
  builder_->current_ = &state;
  return builder_->wrap(arg, std::move(shape), dtype);
}

std::optional<SymShape> Entry::declaredShape(const std::vector<Dim> &dims,
                                             const std::string &what,
                                             std::source_location loc) {
  SymShape shape;
  for (const Dim &d : dims) {
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

Tensor Entry::input(const std::string &name, DType dtype, std::vector<Dim> dims,
                    Bounds bounds, std::source_location loc) {
  Tensor t = input(name, dtype, std::move(dims), loc);
  auto &state = *builder_->entries_[index_];
  if (dtype != DType::I32) {
    builder_->error(loc, "input '" + name +
                             "' has bounds but is f32; bounds are for "
                             "i32 inputs (token ids, lengths)");
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

Tensor Parameter::get(std::source_location loc) const {
  if (!builder_)
    return {};
  return builder_->materialize(*this, loc);
}

/// "file:line", where a state was first used.
static std::string where(std::source_location loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

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
  auto [it, inserted] = states_.try_emplace(name, StateInfo{shape, loc});
  StateInfo &info = it->second;
  // Named dims are an entry's own (B here and B there may differ per run); ranks and
  // static sizes are the state's.
  bool fits = info.shape.size() == shape.size();
  for (size_t i = 0; fits && i < shape.size(); ++i)
    fits = !(shape[i].isStatic() && info.shape[i].isStatic()) ||
           shape[i].size == info.shape[i].size;
  if (!fits) {
    error(loc, "state '" + name + "' is used here as " + toString(shape) + " but as " +
                   toString(info.shape) + " at " + where(info.firstUse));
    return false;
  }
  if (use == StateUse::Create)
    info.created = true;
  else if (!info.firstNeed)
    info.firstNeed = loc;
  return true;
}

void ModelBuilder::markStateWrite() {
  for (auto &entry : entries_)
    if (opBuilder_->getBlock() == &entry->func.front())
      entry->writesState = true;
}

bool ModelBuilder::prepareOperands(llvm::ArrayRef<Tensor> operands,
                                   std::source_location loc) {
  Region *region = nullptr;
  for (const Tensor &t : operands) {
    if (!t.valid())
      return false;
    Region *r = t.value().getParentRegion();
    if (region && r != region) {
      error(loc, "operands come from different entry points");
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

/// An error at `loc`, an op's location (the DSL call that built it).
static BuildError buildErrorAt(Location loc, std::string message) {
  BuildError e{"", 0, 0, std::move(message)};
  if (auto fileLoc = loc.dyn_cast<FileLineColLoc>()) {
    e.file = fileLoc.getFilename().str();
    e.line = fileLoc.getLine();
    e.column = fileLoc.getColumn();
  }
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
    if (!binders.count(p))
      errorAt(append.getLoc(), "kvAppend at position '" + p + "', which entry '" +
                                   state.name +
                                   "' does not bind: declare it with "
                                   "valueInput(NAME, dyn(\"" +
                                   p + "\"), BOUNDS)");
  });
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
      errors_.push_back(
          {"", 0, 0,
           "entry point '" + state->name + "' has no outputs and writes no state"});
  }
  if (entries_.empty())
    errors_.push_back({"", 0, 0, "model '" + name_ + "' declares no entry point"});
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
