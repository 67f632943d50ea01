//===- WeightPrecision.cpp - Linear weights stored as bf16 or int8 --------===//
//
// A decoding step at batch 1 reads every weight once and does little else with it, so
// its time is the time to stream the weights: storing them in 16 or 8 bits is what
// CTranslate2's compute_type and PyTorch's dynamic quantization buy their speed with.
// This pass converts the weights of the products that read them that way (linears, and
// the tied output projection, a transpose_rhs matmul over the embedding table) into
// kiln.parameters computed at load time from the checkpoint's f32 tensors: bf16 ones
// read by the same op, or int8 ones with per-row scales read by
// kiln.quantized_linear. Everything else (embeddings, norms, biases, attention) keeps
// its f32 values. The decisions are module-wide because the parameters' names are: a
// tensor the manifest names once serves every entry point.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace kiln;

bool kiln::isWeightPrecision(llvm::StringRef name) {
  return name == "f32" || name == "bf16" || name == "int8";
}

namespace {

/// A product over rows [start, end) of the f32 parameter `source`, as its operand 1
/// (a linear's weight, a matmul's rhs) reads them, directly or through a slice.
struct WeightUse {
  Operation *product;
  ParameterOp source;
  int64_t start, end;
};

/// The weight that `op` multiplies by, if `op` is a product over a rank-2 weight (a
/// linear, or a matmul with a rank-2 rhs): what the pass converts or explains.
Value productWeight(Operation *op) {
  if (auto linear = dyn_cast<LinearOp>(op))
    return linear.weight();
  if (auto matmul = dyn_cast<MatmulOp>(op))
    if (matmul.rhs().getType().cast<RankedTensorType>().getRank() == 2)
      return matmul.rhs();
  return nullptr;
}

/// The parameter rows that `product` reads as its weight; a reason for a remark
/// otherwise (none for a weight converted already).
FailureOr<WeightUse> weightRows(Operation *product, std::string &reason) {
  if (auto matmul = dyn_cast<MatmulOp>(product)) {
    if (matmul.transpose_lhs()) {
      reason = "its lhs is transposed, and only [..., in] x [out, in]^T is a linear";
      return failure();
    }
    if (!matmul.transpose_rhs()) {
      reason = "its rhs is not transposed: only weights stored [out, in] (nn.Linear's "
               "layout, transpose_rhs) are converted, a row per output channel";
      return failure();
    }
  }
  Value weight = productWeight(product);
  int64_t start = 0, end = weight.getType().cast<RankedTensorType>().getDimSize(0);
  if (auto slice = weight.getDefiningOp<SliceOp>()) {
    if (slice.axis() != 0) {
      reason = "its weight is a slice along axis " + std::to_string(slice.axis()) +
               ", not a range of a parameter's rows";
      return failure();
    }
    start = static_cast<int64_t>(slice.start());
    end = static_cast<int64_t>(slice.end());
    weight = slice.input();
  }
  auto source = weight.getDefiningOp<ParameterOp>();
  if (!source) {
    Operation *producer = weight.getDefiningOp();
    reason = producer
                 ? "its weight is computed (by " +
                       producer->getName().getStringRef().str() + "), not a parameter"
                 : "its weight is an input of the entry, not a parameter";
    return failure();
  }
  if (source.conversion())
    return failure();
  return WeightUse{product, source, start, end};
}

/// Whether something other than a converted product reads `parameter`'s f32 values
/// (an embedding's gather of a tied table, say).
bool readAtF32(ParameterOp parameter, const llvm::DenseSet<Operation *> &converted) {
  auto isConverted = [&](OpOperand &use) {
    return converted.count(use.getOwner()) && use.getOperandNumber() == 1;
  };
  for (OpOperand &use : parameter.getResult().getUses()) {
    if (isConverted(use))
      continue;
    auto slice = dyn_cast<SliceOp>(use.getOwner());
    if (!slice || slice.axis() != 0 ||
        !llvm::all_of(slice.getResult().getUses(), isConverted))
      return true;
  }
  return false;
}

class Converter {
public:
  Converter(ModuleOp module, llvm::StringRef weights, llvm::StringSet<> sourcesReadAtF32)
      : weights(weights), sourcesReadAtF32(std::move(sourcesReadAtF32)) {
    module.walk([&](ParameterOp p) { existingNames.insert(p.name()); });
  }

  /// Rewrites `use`'s product to read the converted weight.
  LogicalResult convert(WeightUse use) {
    FailureOr<Value> weight = parameterFor(use, weights == "bf16" ? "bf16" : "int8");
    if (failed(weight))
      return failure();
    // The source before its slices, so that eraseUnused() sees the slices first.
    touched.insert(use.source);
    touched.insert(use.product->getOperand(1).getDefiningOp());
    if (weights == "bf16") {
      use.product->setOperand(1, *weight);
      return success();
    }
    FailureOr<Value> scale = parameterFor(use, "int8_scale");
    if (failed(scale))
      return failure();
    Value bias;
    if (auto linear = dyn_cast<LinearOp>(use.product))
      bias = linear.bias();
    OpBuilder builder(use.product);
    auto quantized = builder.create<QuantizedLinearOp>(
        use.product->getLoc(), use.product->getResult(0).getType(),
        use.product->getOperand(0), *weight, *scale, bias);
    use.product->replaceAllUsesWith(quantized);
    use.product->erase();
    return success();
  }

  /// Erases the slices and f32 parameters that the converted products were the last to
  /// read.
  void eraseUnused() {
    for (Operation *op : llvm::reverse(touched))
      if (op->use_empty())
        op->erase();
  }

private:
  /// The name the contract gives rows [start, end) of `source` once converted.
  std::string convertedName(WeightUse use) {
    std::string name = use.source.name().str();
    if (use.start != 0 ||
        use.end != use.source.getType().cast<RankedTensorType>().getDimSize(0))
      name += "[" + std::to_string(use.start) + ":" + std::to_string(use.end) + "]";
    if (sourcesReadAtF32.contains(use.source.name()))
      name += "." + weights.str();
    return name;
  }

  /// The parameter holding `conversion` of `use`'s rows, made once per entry point
  /// right after its source (so that two products over the same rows share it).
  FailureOr<Value> parameterFor(WeightUse use, llvm::StringRef conversion) {
    std::string name = convertedName(use);
    if (conversion == "int8_scale")
      name += ".scale";
    auto func = use.product->getParentOfType<FuncOp>();
    Value &made = madeParameters[{func, name}];
    if (made)
      return made;
    if (name != use.source.name() && existingNames.contains(name)) {
      use.source.emitError() << "kiln-weight-precision: the " << conversion
                             << " form of '" << use.source.name() << "' would be named '"
                             << name
                             << "', which the model already uses for another parameter";
      return failure();
    }
    auto sourceType = use.source.getType().cast<RankedTensorType>();
    MLIRContext *context = sourceType.getContext();
    SmallVector<int64_t, 2> shape(sourceType.getShape().begin(),
                                  sourceType.getShape().end());
    shape[0] = use.end - use.start;
    Type element = conversion == "bf16"   ? Type(FloatType::getBF16(context))
                   : conversion == "int8" ? Type(IntegerType::get(context, 8))
                                          : Type(FloatType::getF32(context));
    auto type = conversion == "int8_scale" ? RankedTensorType::get({shape[0]}, element)
                                           : RankedTensorType::get(shape, element);
    // After the source and what was made from it before, in the order they are made.
    Operation *&last = lastAfter[use.source];
    OpBuilder builder(context);
    builder.setInsertionPointAfter(last ? last : use.source.getOperation());
    ArrayAttr rows;
    if (use.start != 0 || use.end != sourceType.getDimSize(0))
      rows = builder.getI64ArrayAttr({use.start, use.end});
    auto parameter = builder.create<ParameterOp>(
        use.source.getLoc(), type, builder.getStringAttr(name), use.source.nameAttr(),
        builder.getStringAttr(conversion), rows);
    last = parameter;
    made = parameter.getResult();
    return made;
  }

  llvm::StringRef weights;
  llvm::StringSet<> sourcesReadAtF32;
  llvm::StringSet<> existingNames;
  std::map<std::pair<Operation *, std::string>, Value> madeParameters;
  llvm::DenseMap<Operation *, Operation *> lastAfter;
  /// The weights' sources and slices, each source before its slices.
  llvm::SetVector<Operation *> touched;
};

struct WeightPrecisionPass : public WeightPrecisionBase<WeightPrecisionPass> {
  WeightPrecisionPass() = default;
  WeightPrecisionPass(llvm::StringRef precision, bool emitRemarks) {
    weights = precision.str();
    remarks = emitRemarks;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isWeightPrecision(weights)) {
      module.emitError() << "kiln-weight-precision: unknown weights '" << weights
                         << "' (expected " << kWeightPrecisionChoices << ")";
      return signalPassFailure();
    }
    if (auto done = module->getAttrOfType<StringAttr>(kWeightPrecisionAttr))
      if (done.getValue() != weights) {
        module.emitError() << "kiln-weight-precision: the module's weights are "
                           << done.getValue() << " already, cannot make them " << weights;
        return signalPassFailure();
      }
    if (weights == "f32")
      return;

    SmallVector<WeightUse, 16> uses;
    llvm::DenseSet<Operation *> converted;
    bool explain = remarks || fusionRemarksEverywhere();
    module.walk([&](Operation *op) {
      if (!productWeight(op))
        return;
      std::string reason;
      FailureOr<WeightUse> use = weightRows(op, reason);
      if (succeeded(use)) {
        uses.push_back(*use);
        converted.insert(op);
      } else if (explain && !reason.empty()) {
        op->emitRemark() << op->getName() << " keeps its f32 weight: " << reason;
      }
    });
    // By name: another entry point may read a source at f32 through its own
    // parameter op.
    llvm::StringSet<> sourcesReadAtF32;
    module.walk([&](ParameterOp p) {
      if (!p.conversion() && readAtF32(p, converted))
        sourcesReadAtF32.insert(p.name());
    });

    Converter converter(module, weights, std::move(sourcesReadAtF32));
    for (WeightUse use : uses)
      if (failed(converter.convert(use)))
        return signalPassFailure();
    converter.eraseUnused();
    module->setAttr(kWeightPrecisionAttr, StringAttr::get(&getContext(), weights));
  }
};

} // namespace

std::unique_ptr<Pass> kiln::createWeightPrecisionPass() {
  return std::make_unique<WeightPrecisionPass>();
}

std::unique_ptr<Pass> kiln::createWeightPrecisionPass(llvm::StringRef weights,
                                                      bool remarks) {
  return std::make_unique<WeightPrecisionPass>(weights, remarks);
}
