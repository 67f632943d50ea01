//===- WeightPanels.cpp - Product weights stored in column panels ---------===//
//
// A CPU product over a weight [N, K] stored as nn.Linear stores it, a row per output
// column, transposes each panel of columns before multiplying by it, on every call:
// the panel's rows are gathered from DRAM down k, and the cores wait for them. Stored
// once at load time as [P, K, W] panels, each panel of W columns is one contiguous
// stream that the register tiles read in place (see chooseWeightPanelWidth and
// schedulePanelProduct). transformer_base encode on a 2-core Cascade Lake VM (Xeon,
// family 6 model 85), kiln-run --repeat 11, median ms, as stored / in panels,
// alternated three times: B=1 S=128 with 112 positions valid 27.8-29.1 / 25.1-25.7;
// B=1 S=16 8.1 / 7.1-7.2 (one round under load left out). At B=8 S=128 the two were
// level within the VM's noise (per-kernel time over the unchanged attention's: the
// feed-forward group 8.1-8.7 / 7.8-8.6); KernelBench's encode_* cases time both.
//
// Only weights that nothing but such products over many rows reads are rewritten
// (module-wide, since entry points share parameters by name): a decode step's
// matrix-vector products stream a weight faster as stored (multipliesFewRows), a tied
// embedding table is also gathered, and converted (bf16, int8) weights have their own
// layout.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <map>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// Whether `product` multiplies a single row per batch entry (a decode step's [B, 1, K],
/// a vector) or a few static rows: the matrix-vector products of a step, which stream
/// the weight's rows side by side as stored (SchedulesCpuMatmulDot.cpp's form) faster
/// than its panels. transformer_base decode_step at batch 1, 2-core Cascade Lake VM,
/// median ms of 192 steps, three rounds: 5.4-6.5 as stored, 6.4-6.7 from panels.
bool multipliesFewRows(Operation *product) {
  auto lhs = product->getOperand(0).getType().cast<RankedTensorType>();
  if (lhs.getRank() < 2 || lhs.getDimSize(lhs.getRank() - 2) == 1)
    return true;
  if (!lhs.hasStaticShape())
    return false;
  constexpr int64_t kFewRows = 32;
  return lhs.getNumElements() / lhs.getDimSize(lhs.getRank() - 1) <= kFewRows;
}

/// Whether `use` is the weight of a product that multiplies many rows by its transpose
/// (a linear's weight, a transpose_rhs matmul's rank-2 rhs), directly or through a
/// kiln.fusion whose body reads it only that way.
bool isWeightUse(OpOperand &use) {
  Operation *owner = use.getOwner();
  if (auto fusion = dyn_cast<FusionOp>(owner)) {
    BlockArgument arg = fusion.getBody()->getArgument(use.getOperandNumber());
    return llvm::all_of(arg.getUses(), [](OpOperand &inner) {
      return !isa<FusionOp>(inner.getOwner()) && isWeightUse(inner);
    });
  }
  if (use.getOperandNumber() != 1 || multipliesFewRows(owner))
    return false;
  if (isa<LinearOp>(owner))
    return true;
  auto matmul = dyn_cast<MatmulOp>(owner);
  return matmul && matmul.transpose_rhs() && !matmul.transpose_lhs() &&
         matmul.rhs().getType().cast<RankedTensorType>().getRank() == 2;
}

/// The values through which products read `parameter` as their weight, each with the
/// source rows it holds: the parameter itself and its row slices. None when anything
/// else reads it.
llvm::Optional<std::vector<std::pair<Value, std::pair<int64_t, int64_t>>>>
weightReads(ParameterOp parameter) {
  auto type = parameter.getType().cast<RankedTensorType>();
  std::vector<std::pair<Value, std::pair<int64_t, int64_t>>> reads;
  bool whole = false;
  for (OpOperand &use : parameter.getResult().getUses()) {
    if (isWeightUse(use)) {
      whole = true;
      continue;
    }
    auto slice = dyn_cast<SliceOp>(use.getOwner());
    if (!slice || slice.axis() != 0 ||
        !llvm::all_of(slice.getResult().getUses(), isWeightUse))
      return llvm::None;
    reads.push_back(
        {slice.getResult(),
         {static_cast<int64_t>(slice.start()), static_cast<int64_t>(slice.end())}});
  }
  if (whole)
    reads.push_back({parameter.getResult(), {0, type.getDimSize(0)}});
  return reads;
}

/// Whether `parameter` is a checkpoint's f32 matrix, as the products read it.
bool isPlainMatrix(ParameterOp parameter) {
  auto type = parameter.getType().cast<RankedTensorType>();
  return !parameter.conversion() && type.getRank() == 2 && type.getElementType().isF32();
}

/// The name of rows [start, end) of `source`, stored in panels.
std::string panelsName(ParameterOp source, int64_t start, int64_t end) {
  std::string name = source.name().str();
  if (start != 0 || end != source.getType().cast<RankedTensorType>().getDimSize(0))
    name += "[" + std::to_string(start) + ":" + std::to_string(end) + "]";
  return name + ".panels";
}

} // namespace

LogicalResult kiln::halide_backend::packWeightPanels(ModuleOp module, int64_t width) {
  if (width <= 0)
    return success();
  // A name that some entry reads otherwise keeps its layout in every entry.
  llvm::StringSet<> names, kept;
  module.walk([&](ParameterOp parameter) {
    names.insert(parameter.name());
    if (!isPlainMatrix(parameter) || !weightReads(parameter))
      kept.insert(parameter.name());
  });
  std::vector<ParameterOp> parameters;
  module.walk([&](ParameterOp parameter) {
    if (!kept.contains(parameter.name()))
      parameters.push_back(parameter);
  });
  for (ParameterOp source : parameters) {
    auto type = source.getType().cast<RankedTensorType>();
    int64_t k = type.getDimSize(1);
    OpBuilder builder(source.getContext());
    builder.setInsertionPointAfter(source);
    std::map<std::pair<int64_t, int64_t>, Value> made;
    auto reads = weightReads(source);
    for (auto [read, rows] : *reads) {
      auto [start, end] = rows;
      Value &unpacked = made[rows];
      if (!unpacked) {
        std::string name = panelsName(source, start, end);
        if (names.contains(name))
          return source.emitError()
                 << "the column panels of '" << source.name() << "' would be named '"
                 << name << "', which the model already uses for another parameter";
        int64_t count = end - start;
        auto panelsType = RankedTensorType::get({(count + width - 1) / width, k, width},
                                                type.getElementType());
        // Rows always: the panels' shape holds the row count only to within W.
        ArrayAttr rowsAttr = builder.getI64ArrayAttr({start, end});
        auto panels = builder.create<ParameterOp>(
            source.getLoc(), panelsType, builder.getStringAttr(name), source.nameAttr(),
            builder.getStringAttr("panels"), rowsAttr);
        unpacked = builder.create<UnpackPanelsOp>(
            source.getLoc(), RankedTensorType::get({count, k}, type.getElementType()),
            panels);
      }
      Operation *slice = read.getDefiningOp();
      read.replaceAllUsesWith(unpacked);
      if (slice && slice != source.getOperation())
        slice->erase();
    }
    if (source->use_empty())
      source->erase();
  }
  return success();
}
