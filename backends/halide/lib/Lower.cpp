//===- Lower.cpp - kiln ops as scheduled Halide kernels -------------------===//
//
// The entry points of the lowering: which ops become kernels, their signatures, and
// lowering one, all derived from the table of op lowerings (Lowerings.h) that the op
// families fill. An op's algorithm is written once for every target; `schedule`
// (Scheduler.h) then picks its schedule for the target.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "Lowerings.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

void LoweringTable::insert(TypeID op, OpLowering lowering) {
  bool inserted = lowerings_.try_emplace(op, std::move(lowering)).second;
  assert(inserted && "an op has two lowerings");
  (void)inserted;
}

const OpLowering *LoweringTable::lookup(Operation *op) const {
  llvm::Optional<RegisteredOperationName> info = op->getRegisteredInfo();
  if (!info)
    return nullptr;
  auto found = lowerings_.find(info->getTypeID());
  return found == lowerings_.end() ? nullptr : &found->second;
}

namespace {

const LoweringTable &loweringTable() {
  static const LoweringTable table = [] {
    LoweringTable families;
    populateElementwiseLowerings(families);
    populateMatmulLowerings(families);
    populateNormalizationLowerings(families);
    populateReductionLowerings(families);
    populateDataMovementLowerings(families);
    populateEmbeddingLowerings(families);
    populateAttentionLowerings(families);
    populateStateLowerings(families);
    populateFusionLowerings(families);
    populateQuantizedLinearLowerings(families);
    return families;
  }();
  return table;
}

/// `value`'s type, marked when it is a strided view: a kernel that pins an operand's
/// strides dense cannot serve one that is not.
void printOperandType(Value value, llvm::raw_ostream &os) {
  os << value.getType();
  if (UnpackPanelsOp unpack = panelsOf(value))
    os << " panels(" << unpack.panels().getType() << ")";
  if (llvm::Optional<int64_t> axis = stridedViewAxis(value))
    os << " strided(axis=" << *axis << ")";
}

/// `algorithm` scheduled for `target`; emits an error at `loc` when the target has no
/// schedule for it.
FailureOr<LoweredKernel> scheduleAt(Location loc, const KernelAlgorithm &algorithm,
                                    const Halide::Target &target) {
  CodegenRequests codegen;
  if (llvm::Error error = schedule(algorithm.stages, target, codegen)) {
    emitError(loc) << llvm::toString(std::move(error));
    return failure();
  }
  return LoweredKernel{algorithm.inputs, outputOf(algorithm.stages.back()),
                       std::move(codegen)};
}

} // namespace

Halide::Pipeline kiln::halide_backend::pipelineOf(const LoweredKernel &kernel) {
  Halide::Pipeline pipeline(kernel.output);
  // The pipeline keeps raw pointers to its passes; each deleter holds a reference, so
  // that a pass lives as long as the pipeline.
  for (const std::shared_ptr<Halide::Internal::IRMutator> &pass : kernel.codegen.passes)
    pipeline.add_custom_lowering_pass(pass.get(), [pass] {});
  return pipeline;
}

const OpLowering *kiln::halide_backend::lookupLowering(Operation *op) {
  return loweringTable().lookup(op);
}

ImageParam OwnKernel::input(Value operand, const std::string &name) {
  assert(operand == op_->getOperand(inputs_.size()) &&
         "a lowering takes its operands in operand order");
  inputs_.push_back(makeInput(operand, name));
  return inputs_.back();
}

Operand OwnKernel::operand(Value operand, const std::string &name) {
  ImageParam param = input(operand, name);
  return {param, param};
}

bool kiln::halide_backend::needsKernel(Operation *op) {
  return loweringTable().lookup(op) != nullptr;
}

std::string kiln::halide_backend::kernelSignature(Operation *op) {
  const OpLowering *lowering = loweringTable().lookup(op);
  assert(lowering && "only an op that needs a kernel has a kernel signature");
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << op->getName().getStringRef();
  if (lowering->printAttributes)
    lowering->printAttributes(op, os);
  os << "(";
  llvm::interleaveComma(op->getOperands(), os,
                        [&](Value operand) { printOperandType(operand, os); });
  os << ")->(";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ")";
  return os.str();
}

std::string kiln::halide_backend::denseCopySignature(Value value) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << "copy(";
  printOperandType(value, os);
  os << ")";
  return os.str();
}

FailureOr<LoweredKernel> kiln::halide_backend::lowerOp(Operation *op,
                                                       const Halide::Target &target) {
  const OpLowering *lowering = loweringTable().lookup(op);
  if (!lowering) {
    op->emitError() << "the Halide backend has no lowering for '" << op->getName() << "'";
    return failure();
  }
  OwnKernel boundary(op);
  FailureOr<KernelAlgorithm> algorithm = lowering->lower(op, target, boundary);
  if (failed(algorithm))
    return failure();
  return scheduleAt(op->getLoc(), *algorithm, target);
}

FailureOr<LoweredKernel>
kiln::halide_backend::lowerDenseCopy(Value value, const Halide::Target &target) {
  return scheduleAt(value.getLoc(), lowerCopy(value, llvm::None), target);
}

FailureOr<LoweredKernel>
kiln::halide_backend::lowerKvAppends(KvAppendOp op, unsigned count,
                                     const Halide::Target &target) {
  // Equal signatures: one value's type stands for every one's.
  llvm::SmallVector<Value, 2> sources(count, op.value());
  return scheduleAt(op.getLoc(), lowerCopy(sources, static_cast<int64_t>(op.axis())),
                    target);
}
