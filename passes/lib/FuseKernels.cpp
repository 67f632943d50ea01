//===- FuseKernels.cpp - Elementwise ops into the kernels around them -----===//
//
// Groups ops into kiln.fusion kernels the way XLA's and TVM's fusion passes do, in four
// sweeps over each entry, each claiming ops that the later ones no longer see:
//
//  1. a layer_norm or rms_norm takes the elementwise ops that only it reads (the
//     residual add of a post-norm layer) as its prologue: the sum is recomputed where
//     the row reductions read it, instead of being stored and read back; and a linear
//     whose result only that prologue reads (the sublayer's output projection) as the
//     group's first stage, computed whole inside the kernel before the rows are
//     normalised (a row needs every column of the product), so the linear, the
//     residual add and the norm are one kernel instead of two; and when that linear
//     reads another linear's value through elementwise ops alone (a feed-forward
//     block: linear, ReLU, linear), that linear and its epilogue too, computed whole
//     before it: the block, the residual add and the norm are one kernel;
//  2. a layer_norm or rms_norm left without a prologue whose result only a linear or
//     matmul reads, as that product's lhs, becomes the first stage of the product's
//     group, computed whole before the product reads it (a model's final norm and its
//     logits product, a pre-norm layer's norm and the projection after it): the mirror
//     of the linear computed before a normalisation;
//  3. a linear (kiln.linear or, over int8 weights, kiln.quantized_linear), matmul,
//     layer_norm or rms_norm takes the chain of elementwise ops that consumes its
//     result alone (bias, ReLU/GELU, residual add) as its epilogue, applied to each
//     output tile while it is in registers;
//  4. what is left of elementwise chains becomes one pointwise kernel per chain, which
//     also computes the values it alone reads that are expressions of the element's
//     index: an embedding's gathered rows, a range of positions and their sinusoids
//     (a model's input layer: rows * sqrt(d) + positions, one kernel instead of four).
//
// Only values read by one op stay inside a group: a value with several readers is
// stored once rather than recomputed in each (as XLA's fusion does by default), and a
// group's only output is its last op's result. Every value inside a group has the
// group's shape, so a group never recomputes a broadcast operand per element of a
// larger result. Attention stays outside (kiln-fuse-attention made it one kernel).
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/IR/BlockAndValueMapping.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace kiln;

namespace {

/// Ops whose schedule a group can take, with elementwise ops after them.
bool isAnchor(Operation *op) {
  return isa<LinearOp, QuantizedLinearOp, MatmulOp, LayerNormOp, RmsNormOp>(op);
}

/// The input that a normalisation reads row by row (and can take a prologue for), or
/// null for any other op.
Value normalizedInput(Operation *op) {
  if (auto norm = dyn_cast<LayerNormOp>(op))
    return norm.input();
  if (auto norm = dyn_cast<RmsNormOp>(op))
    return norm.input();
  return nullptr;
}

/// Ops whose values an elementwise group can compute where it reads them (sources):
/// gathers and position encodings, expressions of the element's index.
bool isSource(Operation *op) { return isa<EmbeddingOp, RangeOp, SinusoidOp>(op); }

/// Ops that a normalisation group can compute as its first stage: the linears, over
/// f32, bf16 or int8 weights.
bool isStage(Operation *op) { return isa<LinearOp, QuantizedLinearOp>(op); }

/// Ops that never become kernels of their own, about which a remark would say nothing.
bool isKernelFree(Operation *op) {
  return isa<ParameterOp, ReturnOp, ReshapeOp, FusionOp, StateAllocOp, StateReadOp,
             StateWriteOp>(op);
}

std::string opName(Operation *op) { return op->getName().getStringRef().str(); }

std::string usesText(Value value) {
  unsigned uses =
      static_cast<unsigned>(std::distance(value.use_begin(), value.use_end()));
  return std::to_string(uses) + (uses == 1 ? " use" : " uses");
}

class Grouper {
public:
  explicit Grouper(FuncOp func) : block(func.front()) {}

  void formGroups() {
    for (Operation &op : block)
      if (Value input = normalizedInput(&op))
        growPrologue(&op, input);
    for (Operation &op : block)
      if (normalizedInput(&op))
        computeBeforeProduct(&op);
    for (Operation &op : block)
      if (isAnchor(&op))
        growEpilogue(groupOf(&op));
    for (Operation &op : block)
      if (isElementwise(&op) && !claimed.count(&op))
        growEpilogue(startGroup(&op));
    // Readers first: a range joins the group that its sinusoid joined.
    for (Operation &op : llvm::reverse(block))
      if (isSource(&op))
        joinAsSource(&op);
    for (Operation &op : block)
      if (!isKernelFree(&op) && !inGroup(&op))
        unfused.emplace_back(&op, whyUnfused(&op));
    for (const Group &group : groups)
      if (group.ops.size() > 1)
        buildFusion(group);
  }

  /// The ops left outside every group, each with the reason, in program order.
  llvm::ArrayRef<std::pair<Operation *, std::string>> unfusedOps() const {
    return unfused;
  }

  /// A linear that a normalisation group's stage reads but that the group does not
  /// compute, and why. Held by location and name: the linear may itself join another
  /// group, whose building erases it.
  struct NotComputedBefore {
    Location loc;
    OperationName name;
    std::string reason;
  };

  llvm::ArrayRef<NotComputedBefore> notComputedBefore() const { return notBefore; }

private:
  struct Group {
    /// In program order; the last op's result is the group's.
    llvm::SmallVector<Operation *, 4> ops;
  };

  bool inGroup(Operation *op) const {
    auto found = claimed.find(op);
    return found != claimed.end() && groups[found->second].ops.size() > 1;
  }

  /// Why `op`, left outside every group, is its own kernel.
  std::string whyUnfused(Operation *op) const {
    if (isa<AttentionOp>(op))
      return "attention is its own kernel (kiln-fuse-attention's), which groups leave "
             "alone";
    if (isa<KvAppendOp>(op))
      return "it writes a session state in place; the backend's plan makes consecutive "
             "kv_appends of one shape one kernel call (docs/manifest.md)";
    if (isAnchor(op)) {
      std::string reason = "no elementwise op can join it as its epilogue: " +
                           whyNotEpilogue(op->getResult(0));
      auto notStage = notStages.find(op);
      if (notStage != notStages.end())
        reason += "; nor is it the first stage of the normalisation that reads it: " +
                  notStage->second;
      auto notBefore = notBeforeProduct.find(op);
      if (notBefore != notBeforeProduct.end())
        reason += (normalizedInput(op)
                       ? "; nor is it the first stage of the product that reads it: "
                       : "; nor does it compute the normalisation that it reads as its "
                         "first stage: ") +
                  notBefore->second;
      return reason;
    }
    auto notSource = notSources.find(op);
    if (notSource != notSources.end())
      return "no group of elementwise ops computes it where it reads it: " +
             notSource->second;
    if (!isElementwise(op))
      return "only elementwise ops join groups, and only linear, matmul, layer_norm and "
             "rms_norm "
             "anchor them";
    return "it can join neither its producers (" + whyNotAfterProducers(op) +
           ") nor its consumer (" + whyNotEpilogue(op->getResult(0)) + ")";
  }

  size_t startGroup(Operation *op) {
    groups.push_back({{op}});
    claimed[op] = groups.size() - 1;
    return groups.size() - 1;
  }

  size_t groupOf(Operation *op) {
    auto found = claimed.find(op);
    return found != claimed.end() ? found->second : startGroup(op);
  }

  /// Why the single reader of `value` cannot be the next op of its group; "" when it
  /// can.
  std::string whyNotEpilogue(Value value) const {
    if (!value.hasOneUse())
      return "its result has " + usesText(value) +
             ", and a value with several readers is stored once, not recomputed";
    Operation *user = *value.user_begin();
    if (isa<ReturnOp>(user))
      return "its result is an output of the entry";
    if (!isElementwise(user))
      return "its only reader, " + opName(user) + ", is not elementwise";
    if (user->getResult(0).getType() != value.getType())
      return "its reader " + opName(user) +
             " broadcasts it to a larger shape, which would recompute it per element";
    if (claimed.count(user))
      return "its reader " + opName(user) +
             " is already in another group (a normalisation's prologue or "
             "another op's epilogue)";
    return "";
  }

  /// Why no producer of elementwise `op` took it into its group.
  std::string whyNotAfterProducers(Operation *op) const {
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !(isAnchor(producer) || isElementwise(producer)))
        continue;
      std::string reason = whyNotEpilogue(operand);
      if (!reason.empty())
        return "its operand from " + opName(producer) + ": " + reason;
    }
    return "no operand comes from a linear, matmul, layer_norm, rms_norm or elementwise "
           "op";
  }

  /// Why `source`'s value cannot be computed inside the group of its reader; "" when it
  /// can.
  std::string whyNotSource(Operation *source) const {
    Value value = source->getResult(0);
    if (!value.hasOneUse())
      return "its result has " + usesText(value) +
             ", and a value with several readers is stored once, not recomputed";
    Operation *user = *value.user_begin();
    auto found = claimed.find(user);
    if (found == claimed.end())
      return "its only reader, " + opName(user) + ", is in no kernel group";
    for (Operation *op : groups[found->second].ops)
      if (isAnchor(op))
        return "its reader " + opName(user) + " is in the group of " + opName(op) +
               ", and only a group of elementwise ops computes sources";
    if (isa<EmbeddingOp>(user))
      return "its reader is an embedding, which gathers rows by stored ids";
    return "";
  }

  /// Takes `source` into the group of its only reader, or records why not.
  void joinAsSource(Operation *source) {
    std::string reason = whyNotSource(source);
    if (!reason.empty()) {
      notSources[source] = reason;
      return;
    }
    size_t group = claimed.find(*source->getResult(0).user_begin())->second;
    auto &ops = groups[group].ops;
    ops.insert(
        llvm::find_if(ops, [&](Operation *op) { return source->isBeforeInBlock(op); }),
        source);
    claimed[source] = group;
  }

  void growEpilogue(size_t group) {
    Operation *tail = groups[group].ops.back();
    while (whyNotEpilogue(tail->getResult(0)).empty()) {
      tail = *tail->getResult(0).user_begin();
      groups[group].ops.push_back(tail);
      claimed[tail] = group;
    }
  }

  /// The elementwise ops of `input`'s shape that only `norm` reads, directly or through
  /// each other.
  void growPrologue(Operation *norm, Value input) {
    Type rowType = input.getType();
    llvm::SetVector<Operation *> prologue;
    llvm::SmallVector<Value, 4> pending = {input};
    while (!pending.empty()) {
      Value value = pending.pop_back_val();
      Operation *producer = value.getDefiningOp();
      if (!producer || !isElementwise(producer) || !value.hasOneUse() ||
          value.getType() != rowType || claimed.count(producer))
        continue;
      prologue.insert(producer);
      for (Value operand : producer->getOperands())
        pending.push_back(operand);
    }
    if (prologue.empty())
      return;
    if (Operation *stage = findStage(prologue, rowType)) {
      prologue.insert(stage);
      for (Operation *op : stageBefore(stage))
        prologue.insert(op);
    }
    size_t group = startGroup(norm);
    llvm::SmallVector<Operation *, 4> ops(prologue.begin(), prologue.end());
    llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *op : ops)
      claimed[op] = group;
    ops.push_back(norm);
    groups[group].ops = std::move(ops);
  }

  /// Why `norm` cannot be the first stage of `product`, the only op that reads it; ""
  /// when it can.
  std::string whyNotBeforeProduct(Operation *norm, Operation *product) const {
    if (isa<QuantizedLinearOp>(product))
      return "the product is a " + opName(product) +
             ", which reads its input from memory";
    if (product->getOperand(0) != norm->getResult(0))
      return "the product (" + opName(product) +
             ") reads the normalised value as its right-hand side, and a stage computes "
             "only the left-hand side";
    if (claimed.count(norm))
      return "the normalisation anchors the group of its prologue, which a first stage "
             "cannot take";
    if (claimed.count(product))
      return "the product (" + opName(product) +
             ") is already the first stage of a later normalisation's group";
    return "";
  }

  /// Makes `norm` the first stage of the group of the linear or matmul that alone reads
  /// it, or records why not (where that reader is a product, the one case in which a
  /// remark has something to add to the epilogue's reason).
  void computeBeforeProduct(Operation *norm) {
    Value value = norm->getResult(0);
    if (!value.hasOneUse())
      return;
    Operation *product = *value.user_begin();
    if (!isa<LinearOp, QuantizedLinearOp, MatmulOp>(product))
      return;
    std::string reason = whyNotBeforeProduct(norm, product);
    if (!reason.empty()) {
      notBeforeProduct[norm] = reason;
      notBeforeProduct[product] = reason;
      return;
    }
    size_t group = startGroup(norm);
    groups[group].ops.push_back(product);
    claimed[product] = group;
  }

  /// The linear that the prologue reads and that can be the group's first stage: read
  /// by nothing else, beside another input of the row's shape that gives the kernel its
  /// extents. Null when there is none; records why when a linear misses the second.
  Operation *findStage(const llvm::SetVector<Operation *> &prologue, Type rowType) {
    Operation *stage = nullptr;
    bool rowInput = false;
    for (Operation *op : prologue)
      for (Value operand : op->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (prologue.count(producer) || operand.getType() != rowType)
          continue;
        if (producer && isStage(producer) && !stage && operand.hasOneUse())
          stage = producer;
        else
          rowInput = true;
      }
    if (stage && !rowInput) {
      notStages[stage] = "the prologue reads no other value of the row's shape, which "
                         "the kernel takes its extents from";
      return nullptr;
    }
    return stage;
  }

  /// The linear that `stage` reads through elementwise ops of its input's type, with
  /// those ops, when the group can compute them whole before `stage`: each value read
  /// by the next op alone, `stage` an f32 or bf16 linear (a quantized_linear reads its
  /// input from memory) over a static K. Empty when there is none; records why for a
  /// linear that misses.
  llvm::SmallVector<Operation *, 4> stageBefore(Operation *stage) {
    Value input = stage->getOperand(0);
    llvm::SmallVector<Operation *, 4> chain;
    std::string reason;
    for (Value value = input;;) {
      Operation *producer = value.getDefiningOp();
      if (!producer || value.getType() != input.getType() ||
          !(isStage(producer) || isElementwise(producer)))
        return {};
      chain.push_back(producer);
      if (reason.empty() && !value.hasOneUse())
        reason = "its value reaches " + opName(stage) + " through a value with " +
                 usesText(value) + ", which is stored once, not recomputed";
      if (reason.empty() && claimed.count(producer))
        reason = "its value reaches " + opName(stage) + " through " + opName(producer) +
                 ", already in another group";
      if (isStage(producer))
        break;
      // The chain goes on through the one operand that an elementwise op or a linear
      // computes; others are inputs of the group (a bias).
      llvm::SmallVector<Value, 2> computed;
      for (Value operand : producer->getOperands())
        if (Operation *p = operand.getDefiningOp();
            p && (isStage(p) || isElementwise(p)) && operand.getType() == input.getType())
          computed.push_back(operand);
      if (computed.size() != 1)
        return {};
      value = computed.front();
    }
    if (reason.empty() && !isa<LinearOp>(stage))
      reason = "the linear that reads it is a " + opName(stage) +
               ", which reads its input from memory";
    if (reason.empty() &&
        ShapedType::isDynamic(input.getType().cast<ShapedType>().getShape().back()))
      reason = "the linear that reads it has a dynamic K";
    if (!reason.empty()) {
      notBefore.push_back({chain.back()->getLoc(), chain.back()->getName(), reason});
      return {};
    }
    return chain;
  }

  /// Replaces the group's ops by one kiln.fusion at its last op.
  void buildFusion(const Group &group) {
    Operation *last = group.ops.back();
    llvm::DenseSet<Operation *> members(group.ops.begin(), group.ops.end());
    llvm::SetVector<Value> operands;
    llvm::SmallVector<Location, 4> locations;
    for (Operation *op : group.ops) {
      locations.push_back(op->getLoc());
      for (Value operand : op->getOperands())
        if (!members.count(operand.getDefiningOp()))
          operands.insert(operand);
    }
    OpBuilder builder(last);
    Location loc = builder.getFusedLoc(locations);
    auto fusion = builder.create<FusionOp>(loc, last->getResult(0).getType(),
                                           operands.getArrayRef());
    Block *body = builder.createBlock(&fusion.body());
    BlockAndValueMapping mapping;
    for (Value operand : operands)
      mapping.map(operand, body->addArgument(operand.getType(), operand.getLoc()));
    for (Operation *op : group.ops)
      builder.clone(*op, mapping);
    builder.create<YieldOp>(loc, mapping.lookup(Value(last->getResult(0))));
    last->getResult(0).replaceAllUsesWith(fusion.getResult());
    for (Operation *op : llvm::reverse(group.ops))
      op->erase();
  }

  Block &block;
  std::vector<Group> groups;
  /// The group that each claimed op belongs to.
  llvm::DenseMap<Operation *, size_t> claimed;
  std::vector<std::pair<Operation *, std::string>> unfused;
  std::vector<NotComputedBefore> notBefore;
  /// Why each linear read by a normalisation's prologue is not that group's first stage.
  llvm::DenseMap<Operation *, std::string> notStages;
  /// Why each normalisation read by a product alone is not the first stage of that
  /// product's group, held at both.
  llvm::DenseMap<Operation *, std::string> notBeforeProduct;
  /// Why each embedding, range or sinusoid is not computed in its reader's group.
  llvm::DenseMap<Operation *, std::string> notSources;
};

struct FuseKernelsPass : public FuseKernelsBase<FuseKernelsPass> {
  FuseKernelsPass() = default;
  explicit FuseKernelsPass(bool emitRemarks) { remarks = emitRemarks; }

  void runOnOperation() override {
    FuncOp func = getOperation();
    Grouper grouper(func);
    grouper.formGroups();
    if (!remarks && !fusionRemarksEverywhere())
      return;
    for (const auto &[op, reason] : grouper.unfusedOps())
      emitRemark(op->getLoc()) << op->getName()
                               << " not fused into a kernel group: " << reason;
    for (const auto &[loc, name, reason] : grouper.notComputedBefore())
      emitRemark(loc)
          << name
          << " not computed inside the normalisation group of the linear that reads "
             "it: "
          << reason;
  }
};

} // namespace

Operation *kiln::fusionAnchor(FusionOp fusion) {
  // First stages (linears before a normalisation, a normalisation before a product)
  // come before the anchor.
  Operation *anchor = nullptr;
  for (Operation &op : fusion.getBody()->without_terminator())
    if (isAnchor(&op))
      anchor = &op;
  return anchor;
}

std::unique_ptr<Pass> kiln::createFuseKernelsPass() {
  return std::make_unique<FuseKernelsPass>();
}

std::unique_ptr<Pass> kiln::createFuseKernelsPass(bool remarks) {
  return std::make_unique<FuseKernelsPass>(remarks);
}
