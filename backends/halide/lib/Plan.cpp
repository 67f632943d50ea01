//===- Plan.cpp - Buffers, steps and unique kernels of a model ------------===//
//
// Every value of an entry point gets a buffer: inputs and parameters are bound by the
// runtime, a reshape (or a transpose that moves only unit dims) is a view of its operand
// (it moves no data), and every other op's result is a temporary written by one step.
// Where every reader takes a strided operand (attention's q, k and v, the copies into
// states), slices, head splits (a reshape of the last dimension, a transpose that keeps
// the innermost one) are strided views too, and attention writes its heads through a
// permuted view of the merged buffer: splitting and merging heads then moves no data.
// Ops with equal kernel signatures share one kernel, which is what lets the layers of a
// Transformer share their code. Session states (key/value caches) are planned in
// PlanStates.cpp.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "CollapseRows.h"

#include "kiln/ir/SourceLocation.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::halide_backend {

std::string sanitizeIdentifier(llvm::StringRef name) {
  std::string out = name.str();
  for (char &c : out)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  if (out.empty() || llvm::isDigit(out.front()))
    out.insert(out.begin(), '_');
  return out;
}

std::string dtypeName(Type type) {
  Type element = type.cast<ShapedType>().getElementType();
  if (element.isF32())
    return abi::dtypeName(KILN_DTYPE_F32);
  // i1 (boolean masks, only ever temporaries) is held as i32: see halideType.
  if (element.isInteger(32) || element.isInteger(1))
    return abi::dtypeName(KILN_DTYPE_I32);
  if (element.isInteger(64))
    return abi::dtypeName(KILN_DTYPE_I64);
  // Weights only: the verifier admits bf16 and i8 on converted parameters alone, and
  // no op computes either.
  if (element.isBF16())
    return abi::dtypeName(KILN_DTYPE_BF16);
  if (element.isInteger(8))
    return abi::dtypeName(KILN_DTYPE_I8);
  return "";
}

void Planner::setWeights(ModuleOp module) {
  // The module attribute that kiln-weight-precision sets (kWeightPrecisionAttr in
  // kiln/passes/Passes.h, spelled here because the backend does not link the passes).
  if (auto weights = module->getAttrOfType<StringAttr>("kiln.weights"))
    plan_.weights = weights.getValue().str();
}

Planner::Planner(llvm::StringRef model, bool layoutRemarks, bool collapseRows)
    : layoutRemarks_(layoutRemarks), collapseRows_(collapseRows) {
  plan_.model = model.str();
  symbolPrefix_ = "kiln_" + sanitizeIdentifier(model) + "_k";
}

/// The element offset of `slice` in its input when the slice is one contiguous run of
/// it, from static sizes only; None otherwise.
static llvm::Optional<int64_t> contiguousSliceOffset(SliceOp slice) {
  ArrayRef<int64_t> shape = slice.input().getType().cast<RankedTensorType>().getShape();
  int64_t axis = slice.axis();
  for (int64_t d = 0; d < axis; ++d)
    if (shape[d] != 1)
      return llvm::None;
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d) {
    if (ShapedType::isDynamic(shape[d]))
      return llvm::None;
    inner *= shape[d];
  }
  // The end must be known to fit: the kernel would check it at run time, a view cannot.
  if (ShapedType::isDynamic(shape[axis]))
    return llvm::None;
  return slice.start() * inner;
}

/// Whether `transpose` moves only dimensions of static size 1: the others keep their
/// order, so the result is its input's row-major data under another shape, as a
/// reshape's. A decoding step's [B, 1, H, d] <-> [B, H, 1, d] head splits are such.
static bool movesOnlyUnitDims(TransposeOp transpose) {
  ArrayRef<int64_t> shape =
      transpose.input().getType().cast<RankedTensorType>().getShape();
  int64_t last = -1;
  for (Attribute attr : transpose.permutation()) {
    int64_t from = attr.cast<IntegerAttr>().getInt();
    if (shape[from] == 1)
      continue;
    if (from < last)
      return false;
    last = from;
  }
  return true;
}

/// Whether `transpose` keeps the innermost dimension innermost: its result is then a
/// strided view of its input whose elements stay dense along the last dimension.
static bool keepsInnermost(TransposeOp transpose) {
  ArrayAttr permutation = transpose.permutation();
  return permutation[permutation.size() - 1].cast<IntegerAttr>().getInt() ==
         static_cast<int64_t>(permutation.size()) - 1;
}

/// Whether a reshape from `input` to `result` keeps every dimension but the last and
/// splits the last into static sizes (a head split, [B, S, 512] -> [B, S, 8, 64]): a
/// strided view with a dense last dimension stays one under it.
static bool splitsOnlyLastDim(llvm::ArrayRef<SymDim> input,
                              llvm::ArrayRef<SymDim> result) {
  size_t kept = input.size() - 1;
  if (input.empty() || result.size() < input.size() || !input.back().isStatic() ||
      input.take_front(kept) != result.take_front(kept))
    return false;
  int64_t split = 1;
  for (const SymDim &dim : result.drop_front(kept)) {
    if (!dim.isStatic())
      return false;
    split *= dim.size;
  }
  return split == input.back().size;
}

/// The element strides of `buffer` in the memory of its root.
static SymShape stridesOf(const BufferPlan &buffer) {
  return buffer.isStrided() ? buffer.strides : denseStrides(buffer.shape);
}

Operation *Planner::denseReader(Value value) {
  for (OpOperand &use : value.getUses()) {
    Operation *reader = use.getOwner();
    // Their kernels pin only the innermost stride (LowerAttention.cpp, LowerState.cpp).
    if ((isa<AttentionOp>(reader) && use.getOperandNumber() < 3) ||
        isa<KvAppendOp, StateWriteOp>(reader))
      continue;
    bool view = isa<SliceOp>(reader);
    if (auto transpose = dyn_cast<TransposeOp>(reader))
      view = keepsInnermost(transpose);
    if (auto reshape = dyn_cast<ReshapeOp>(reader))
      view =
          splitsOnlyLastDim(shapes_.lookup(value), shapes_.lookup(reshape.getResult()));
    if (!view)
      return reader;
    if (Operation *further = denseReader(reader->getResult(0)))
      return further;
  }
  return nullptr;
}

/// Says at `op` (a slice or transpose about to become a kernel) why it is not a view.
static void remarkLayoutKernel(Operation &op, Operation *reader) {
  InFlightDiagnostic remark = op.emitRemark()
                              << "'" << op.getName() << "' is a kernel, not a view: ";
  auto transpose = dyn_cast<TransposeOp>(op);
  if (transpose && !keepsInnermost(transpose))
    remark << "it moves the innermost dimension, which kernels read as contiguous rows";
  else if (reader)
    remark << "'" << reader->getName() << "' at " << reader->getLoc()
           << " reads it and needs a dense operand";
  else
    remark << "its data is not one contiguous run of its operand";
}

FailureOr<int> Planner::addStridedView(EntryPlan &entry, Operation *op, int source,
                                       SymShape strides, SymDim offset) {
  FailureOr<int> view =
      addBuffer(entry, op, op->getResult(0), BufferPlan::Kind::View, source);
  if (succeeded(view)) {
    entry.buffers[*view].strides = std::move(strides);
    entry.buffers[*view].offset = std::move(offset);
  }
  return view;
}

FailureOr<int> Planner::resultBuffer(EntryPlan &entry, Operation &op) {
  Value result = op.getResult(0);
  auto merge = result.hasOneUse() ? dyn_cast<TransposeOp>(*result.getUsers().begin())
                                  : TransposeOp();
  // Attention writes through a permuted view of its merged heads (only its innermost
  // stride is pinned), which leaves the head merge nothing to move. A transpose that
  // moves only unit dims is a view of its input already.
  if (!isa<AttentionOp>(op) || !merge || !keepsInnermost(merge) ||
      movesOnlyUnitDims(merge))
    return addBuffer(entry, &op, result, BufferPlan::Kind::Temp, -1);
  FailureOr<int> merged =
      addBuffer(entry, merge, merge.getResult(), BufferPlan::Kind::Temp, -1);
  if (failed(merged))
    return failure();
  SymShape mergedStrides = denseStrides(entry.buffers[*merged].shape);
  SymShape strides(mergedStrides.size(), SymDim::fixed(0));
  for (auto it : llvm::enumerate(merge.permutation()))
    strides[it.value().cast<IntegerAttr>().getInt()] = mergedStrides[it.index()];
  return addStridedView(entry, &op, *merged, std::move(strides), SymDim::fixed(0));
}

void Planner::pushStep(EntryPlan &entry, Operation *op, int kernel,
                       std::vector<int> args) {
  flushAppends(entry);
  appendStep(entry, op, kernel, std::move(args), /*outputs=*/1);
}

void Planner::appendStep(EntryPlan &entry, llvm::ArrayRef<Operation *> ops, int kernel,
                         std::vector<int> args, int outputs) {
  StepPlan step;
  step.kernel = kernel;
  step.args = std::move(args);
  step.outputs = outputs;
  for (Operation *op : ops)
    for (std::string &loc : chainTexts(op->getLoc()))
      if (!llvm::is_contained(step.locs, loc))
        step.locs.push_back(std::move(loc));
  entry.steps.push_back(std::move(step));
}

FailureOr<int> Planner::pushBuffer(EntryPlan &entry, Operation *op, BufferPlan buffer) {
  for (const SymDim &dim : buffer.shape)
    if (dim.isUnknown()) {
      op->emitError() << "the shape " << toString(buffer.shape)
                      << " has a dimension that no input of the entry point "
                         "determines";
      return failure();
    }
  entry.buffers.push_back(std::move(buffer));
  return static_cast<int>(entry.buffers.size() - 1);
}

FailureOr<int> Planner::addBuffer(EntryPlan &entry, Operation *op, Value value,
                                  BufferPlan::Kind kind, int index) {
  BufferPlan buffer;
  buffer.kind = kind;
  buffer.index = index;
  buffer.dtype = dtypeName(value.getType());
  if (buffer.dtype.empty()) {
    op->emitError() << "cannot compile a tensor of type " << value.getType()
                    << ": the runtime supports f32, i32 and i64";
    return failure();
  }
  bool weightOnly = buffer.dtype == abi::dtypeName(KILN_DTYPE_BF16) ||
                    buffer.dtype == abi::dtypeName(KILN_DTYPE_I8);
  if (weightOnly && kind != BufferPlan::Kind::Parameter &&
      kind != BufferPlan::Kind::View) {
    op->emitError() << "cannot compile a tensor of type " << value.getType()
                    << " in a buffer of kind '" << abi::bufferKindName(kind)
                    << "': " << buffer.dtype
                    << " is for parameters only (kiln.parameter with a conversion)";
    return failure();
  }
  buffer.shape = shapes_.lookup(value);
  FailureOr<int> added = pushBuffer(entry, op, std::move(buffer));
  if (succeeded(added))
    buffers_[value] = *added;
  return added;
}

/// The plan of parameter `op`: its name, type and, for a converted one, what from.
static TensorPlan parameterPlan(ParameterOp op) {
  TensorPlan parameter;
  parameter.name = op.name().str();
  parameter.dtype = dtypeName(op.getType());
  parameter.shape = shapeOf(op.getType().cast<RankedTensorType>());
  if (op.conversion()) {
    parameter.source = op.source()->str();
    parameter.conversion = op.conversion()->str();
    if (llvm::Optional<ArrayAttr> rows = op.rows()) {
      SmallVector<int64_t, 4> range = extractFromI64ArrayAttr(*rows);
      parameter.rows.assign(range.begin(), range.end());
    }
  }
  return parameter;
}

/// "bf16 [512, 512]", followed for a converted parameter by " (conversion bf16 of
/// 'SOURCE' rows [a, b))": what two entries sharing a parameter must agree on.
static std::string describeParameter(const TensorPlan &parameter) {
  std::string text = parameter.dtype + " " + toString(parameter.shape);
  if (parameter.conversion.empty())
    return text;
  text += " (conversion " + parameter.conversion + " of '" + parameter.source + "'";
  if (parameter.rows.size() == 2)
    text += " rows [" + std::to_string(parameter.rows[0]) + ", " +
            std::to_string(parameter.rows[1]) + ")";
  return text + ")";
}

FailureOr<int> Planner::parameterIndex(ParameterOp op) {
  TensorPlan parameter = parameterPlan(op);
  auto found = parameterIndices_.find(op.name());
  if (found != parameterIndices_.end()) {
    // Entries share weights by name, so they must agree on what the weight is.
    std::string known = describeParameter(plan_.parameters[found->second]);
    std::string here = describeParameter(parameter);
    if (known != here) {
      op.emitError() << "parameter '" << op.name() << "' is " << here << " here but "
                     << known << " in an earlier entry point";
      return failure();
    }
    return found->second;
  }
  plan_.parameters.push_back(std::move(parameter));
  int index = static_cast<int>(plan_.parameters.size() - 1);
  parameterIndices_[op.name()] = index;
  return index;
}

/// What a kernel's name says beyond its op, to whoever reads the manifest: "_embedding"
/// for a group that gathers rows of a table (it reads only its ids' rows of that
/// parameter, as an embedding's own kernel does), then "_checked" when the kernel checks
/// ids against their table.
static std::string kernelNameSuffix(Operation *op) {
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion)
    return embeddingChecksIds(op) ? "_checked" : "";
  bool gathers = false, checks = false;
  for (Operation &inner : fusion.getBody()->without_terminator()) {
    gathers |= isa<EmbeddingOp>(inner);
    checks |= embeddingChecksIds(&inner);
  }
  return std::string(gathers ? "_embedding" : "") + (checks ? "_checked" : "");
}

int Planner::kernelIndex(Operation *op, const std::string &signature, bool denseCopy) {
  auto [it, inserted] =
      kernelIndices_.try_emplace(signature, static_cast<int>(plan_.kernels.size()));
  if (inserted) {
    KernelPlan kernel;
    kernel.name = symbolPrefix_ + std::to_string(it->second) + "_" +
                  (denseCopy ? std::string("copy")
                             : sanitizeIdentifier(op->getName().stripDialect())) +
                  kernelNameSuffix(op);
    kernel.op = op;
    kernel.denseCopy = denseCopy;
    plan_.kernels.push_back(std::move(kernel));
  }
  ++plan_.kernels[it->second].uses;
  return it->second;
}

/// Each output's buffer. A strided view (what kv_append returns) is copied into a dense
/// temporary first: the caller receives a dense tensor, and the view's memory is the
/// state, which later runs overwrite.
LogicalResult Planner::planReturn(EntryPlan &entry, FuncOp func, ReturnOp ret) {
  for (auto it : llvm::enumerate(ret.getOperands())) {
    unsigned i = it.index();
    auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttr);
    if (!name || name.getValue().empty())
      return ret.emitError() << "output #" << i << " of '" << func.getName()
                             << "' has no '" << kNameAttr << "' attribute";
    int buffer = buffers_.lookup(it.value());
    if (entry.buffers[buffer].isStrided()) {
      flushAppends(entry);
      BufferPlan dense;
      dense.dtype = entry.buffers[buffer].dtype;
      dense.shape = entry.buffers[buffer].shape;
      FailureOr<int> copy = pushBuffer(entry, ret, std::move(dense));
      if (failed(copy))
        return failure();
      Value value = it.value();
      pushStep(entry, value.getDefiningOp(),
               kernelIndex(value.getDefiningOp(), denseCopySignature(value),
                           /*denseCopy=*/true),
               {buffer, *copy});
      buffer = *copy;
    }
    TensorPlan output;
    output.name = name.getValue().str();
    output.dtype = entry.buffers[buffer].dtype;
    output.shape = entry.buffers[buffer].shape;
    output.buffer = buffer;
    entry.outputs.push_back(std::move(output));
  }
  return success();
}

LogicalResult Planner::planOp(EntryPlan &entry, FuncOp func, Operation &op) {
  if (auto parameter = dyn_cast<ParameterOp>(op)) {
    FailureOr<int> index = parameterIndex(parameter);
    if (failed(index))
      return failure();
    return addBuffer(entry, &op, parameter.getResult(), BufferPlan::Kind::Parameter,
                     *index);
  }
  if (auto unpack = dyn_cast<UnpackPanelsOp>(op)) {
    // Its readers, products only (packWeightPanels), take the panels as they are.
    buffers_[unpack.getResult()] = buffers_.lookup(unpack.panels());
    return success();
  }
  if (auto ret = dyn_cast<ReturnOp>(op))
    return planReturn(entry, func, ret);
  if (isa<StateAllocOp, StateWriteOp, StateReadOp, KvAppendOp>(op))
    return planStateOp(entry, op);
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Row-major data reads the same under any shape with the same element count; a
    // strided view's elements are not one row-major run, and no kernel reshapes.
    int source = buffers_.lookup(reshape.input());
    const BufferPlan &viewed = entry.buffers[source];
    if (viewed.isStrided() && viewed.strides.back() == SymDim::fixed(1) &&
        splitsOnlyLastDim(viewed.shape, shapes_.lookup(reshape.getResult())) &&
        !denseReader(reshape.getResult())) {
      // A head split of a strided view: the split dims are dense inside the last one.
      SymShape strides(viewed.strides.begin(), viewed.strides.end() - 1);
      SymShape split =
          denseStrides(llvm::makeArrayRef(shapes_.lookup(reshape.getResult()))
                           .drop_front(strides.size()));
      strides.append(split.begin(), split.end());
      return addStridedView(entry, &op, source, std::move(strides), SymDim::fixed(0));
    }
    if (viewed.isStrided())
      return reshape.emitError()
             << "cannot reshape a strided view of a cache (the result of "
                "'kiln.kv_append', shape "
             << toString(entry.buffers[source].shape)
             << "): its positions are not one contiguous run of memory; reshape the "
                "value before kv_append instead";
    return addBuffer(entry, &op, reshape.getResult(), BufferPlan::Kind::View, source);
  }
  if (auto transpose = dyn_cast<TransposeOp>(op)) {
    // Copies nothing where it moves only unit dims; a strided view's is a kernel.
    // A head merge that attention already wrote into (resultBuffer) has its buffer.
    if (buffers_.count(transpose.getResult()))
      return success();
    int source = buffers_.lookup(transpose.input());
    if (movesOnlyUnitDims(transpose) && !entry.buffers[source].isStrided())
      return addBuffer(entry, &op, transpose.getResult(), BufferPlan::Kind::View, source);
    if (keepsInnermost(transpose) && !denseReader(transpose.getResult())) {
      SymShape from = stridesOf(entry.buffers[source]), strides;
      for (Attribute attr : transpose.permutation())
        strides.push_back(from[attr.cast<IntegerAttr>().getInt()]);
      return addStridedView(entry, &op, source, std::move(strides), SymDim::fixed(0));
    }
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // A slice that is one contiguous run of its input (every dim before the axis is 1 and
    // every dim after it static) is a view at an offset: slicing q, k and v out of a
    // stacked in_proj weight then copies nothing on every run. A slice of a strided
    // view is a kernel, which reads the view with its strides.
    int source = buffers_.lookup(slice.input());
    llvm::Optional<int64_t> offset = contiguousSliceOffset(slice);
    if (offset && !entry.buffers[source].isStrided()) {
      FailureOr<int> view =
          addBuffer(entry, &op, slice.getResult(), BufferPlan::Kind::View, source);
      if (failed(view))
        return failure();
      entry.buffers[*view].offset = SymDim::fixed(*offset);
      return success();
    }
    if (!denseReader(slice.getResult())) {
      // q, k and v out of a packed projection's result: its columns, strided by rows.
      SymShape strides = stridesOf(entry.buffers[source]);
      SymDim start = multiplyDims(SymDim::fixed(slice.start()), strides[slice.axis()]);
      return addStridedView(entry, &op, source, std::move(strides), std::move(start));
    }
  }
  if (layoutRemarks_ && isa<TransposeOp, SliceOp>(op))
    remarkLayoutKernel(op, denseReader(op.getResult(0)));
  if (!needsKernel(&op))
    return op.emitError() << "the Halide backend has no kernel for '" << op.getName()
                          << "' and it is not a view of another tensor";
  if (op.getNumResults() != 1)
    return op.emitError() << "a kernel must produce exactly one tensor, '" << op.getName()
                          << "' produces " << op.getNumResults();
  // The queued appends run first, and their kernel is numbered before this one.
  flushAppends(entry);
  bool collapsed = collapsesRows(entry, op);
  int kernel = collapsed ? kernelIndex(&op, kernelSignature(&op) + " collapsed rows")
                         : kernelIndex(&op);
  plan_.kernels[kernel].collapsedRows = collapsed;
  std::vector<int> args;
  for (Value operand : op.getOperands()) {
    int buffer = buffers_.lookup(operand);
    if (collapsed && isRowTensor(&op, operand)) {
      FailureOr<int> view = collapsedView(entry, &op, buffer);
      if (failed(view))
        return failure();
      buffer = *view;
    }
    args.push_back(buffer);
  }
  FailureOr<int> result = resultBuffer(entry, op);
  if (succeeded(result) && collapsed)
    result = collapsedView(entry, &op, *result);
  if (failed(result))
    return failure();
  args.push_back(*result);
  pushStep(entry, &op, kernel, std::move(args));
  return success();
}

bool Planner::collapsesRows(const EntryPlan &entry, Operation &op) {
  if (!collapseRows_ || !rowsCollapsible(&op))
    return false;
  // A dense view of a strided one reads with the strided one's strides (the runtime's
  // strideSource), so the whole chain of views must be dense.
  auto denseChain = [&](int buffer) {
    for (;; buffer = entry.buffers[buffer].index) {
      if (entry.buffers[buffer].isStrided())
        return false;
      if (entry.buffers[buffer].kind != BufferPlan::Kind::View)
        return true;
    }
  };
  const SymShape &result = shapes_.lookup(op.getResult(0));
  for (Value operand : op.getOperands()) {
    if (!isRowTensor(&op, operand))
      continue;
    const SymShape &shape = shapes_.lookup(operand);
    if (shape.size() != result.size() ||
        !std::equal(shape.begin(), shape.end() - 1, result.begin()) ||
        !denseChain(buffers_.lookup(operand)))
      return false;
  }
  return true;
}

FailureOr<int> Planner::collapsedView(EntryPlan &entry, Operation *op, int buffer) {
  BufferPlan view;
  view.kind = BufferPlan::Kind::View;
  view.index = buffer;
  view.dtype = entry.buffers[buffer].dtype;
  view.shape = collapseRows(entry.buffers[buffer].shape);
  return pushBuffer(entry, op, std::move(view));
}

LogicalResult Planner::planInputs(EntryPlan &entry, FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr);
    if (!name || name.getValue().empty())
      return func.emitError() << "input #" << i << " of '" << func.getName()
                              << "' has no '" << kNameAttr << "' attribute";
    Value arg = func.getArgument(i);
    TensorPlan input;
    input.name = name.getValue().str();
    input.valueDim = valueDimOf(func, i);
    // An input that only binds a dimension with its value needs no buffer; one that an
    // op also reads (a position encoding of the step) keeps it.
    if (!input.valueDim.empty() && arg.use_empty()) {
      input.dtype = dtypeName(arg.getType());
      input.shape = shapes_.lookup(arg);
    } else {
      FailureOr<int> buffer =
          addBuffer(entry, func, arg, BufferPlan::Kind::Input, static_cast<int>(i));
      if (failed(buffer))
        return failure();
      input.dtype = entry.buffers[*buffer].dtype;
      input.shape = entry.buffers[*buffer].shape;
      input.buffer = *buffer;
    }
    if (auto dims = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttr))
      for (Attribute d : dims)
        if (auto dim = d.dyn_cast<StringAttr>(); dim && !dim.getValue().empty())
          if (llvm::Optional<int64_t> max = dimMax(func, dim.getValue()))
            entry.dimMax.emplace(dim.getValue().str(), *max);
    if (auto bounds = func.getArgAttrOfType<ArrayAttr>(i, kBoundsAttr)) {
      // The verifier has checked the form; the runtime checks the values at every run.
      for (Attribute end : bounds)
        if (auto text = end.dyn_cast<StringAttr>())
          input.bounds.push_back(text.getValue().str());
      if (input.bounds.size() != 2)
        return func.emitError()
               << "input '" << name.getValue() << "' has malformed '" << kBoundsAttr
               << "': expected two strings, got " << bounds;
    }
    entry.inputs.push_back(std::move(input));
  }
  return success();
}

LogicalResult Planner::planEntry(FuncOp func) {
  if (func.isDeclaration())
    return func.emitError() << "entry point '" << func.getName() << "' has no body";
  FailureOr<SymbolicShapeMap> shapes = inferSymbolicShapes(func);
  if (failed(shapes))
    return failure();
  shapes_ = std::move(*shapes);
  buffers_.clear();
  stateBuffers_.clear();
  queuedAppends_ = QueuedAppends();

  EntryPlan entry;
  entry.name = func.getName().str();
  if (failed(planInputs(entry, func)))
    return failure();
  for (Operation &op : func.front())
    if (failed(planOp(entry, func, op)))
      return failure();
  flushAppends(entry);
  planLifetimes(entry);
  if (auto trim = func->getAttrOfType<DictionaryAttr>(kTrimAttr)) {
    auto dim = trim.getAs<StringAttr>("dim");
    auto lengths = trim.getAs<IntegerAttr>("lengths");
    if (!dim || !lengths || lengths.getInt() < 0 ||
        lengths.getInt() >= int64_t(entry.inputs.size()))
      return func.emitError() << "malformed '" << kTrimAttr << "': " << trim;
    entry.trimDim = dim.getValue().str();
    entry.trimLengths = entry.inputs[size_t(lengths.getInt())].name;
  }
  plan_.entries.push_back(std::move(entry));
  return success();
}

FailureOr<ModelPlan> planModel(ModuleOp module, llvm::StringRef model, bool layoutRemarks,
                               bool collapseRows) {
  Planner planner(model, layoutRemarks, collapseRows);
  planner.setWeights(module);
  bool any = false;
  for (FuncOp func : module.getOps<FuncOp>()) {
    any = true;
    if (failed(planner.planEntry(func)))
      return failure();
  }
  if (!any) {
    module.emitError() << "model '" << model << "' has no entry point";
    return failure();
  }
  return planner.takePlan();
}

} // namespace kiln::halide_backend
