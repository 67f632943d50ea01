//===- LowerFusion.cpp - A kiln.fusion group as one Halide pipeline -------===//
//
// A group is its anchor's algorithm with the group's other ops composed into it, as
// Halide's apps compose stages: the anchor reads its prologue (the elementwise ops that
// feed it) through a Func that Halide inlines where the anchor reads it, and stores its
// epilogue (the elementwise ops that consume its value) in its output stage, inside
// the tiles its schedule computes. The kernel takes the anchor's schedule, chosen by
// Scheduler.cpp as for the anchor alone. A normalisation's group may start with a
// linear or quantized_linear that its prologue reads: the linear's own stages come first
// in the pipeline, each with its own schedule and computed whole (the scheduler's
// compute_root), since every row the norm reduces needs all of the linear's columns.
// That linear may itself read an earlier linear's value, with its epilogue (a feed-
// forward block's first linear and ReLU), computed whole before it the same way. The
// mirror: a linear's or matmul's group may start with the layer_norm or rms_norm whose
// result is its lhs (a model's final norm before its logits product), computed whole as
// the product's first stage and read by it as any lhs Func. A group without an anchor is
// one pointwise kernel of its chain, which may gather its input rows (an embedding) and
// compute its positions (a range) and their encodings (a sinusoid) where it reads them:
// they are expressions of the element's index, like the chain itself. Each body argument
// is one kernel input, in order.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "Lowerings.h"

#include <map>
#include <set>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// A group input that holds a value of `value`'s type which `value` is computed from
/// (through elementwise ops of the group): the buffer whose extents `value` has.
llvm::Optional<unsigned> shapeInput(Value value, Type type) {
  if (auto arg = value.dyn_cast<BlockArgument>())
    return arg.getType() == type ? llvm::Optional<unsigned>(arg.getArgNumber())
                                 : llvm::None;
  Operation *producer = value.getDefiningOp();
  if (!pointwiseFormula(producer))
    return llvm::None;
  for (Value operand : producer->getOperands())
    if (llvm::Optional<unsigned> found = shapeInput(operand, type))
      return found;
  return llvm::None;
}

/// What a group computes besides elementwise ops: its anchor (null: none) and the
/// stages computed before it, in order: linears (f32 or quantized; at most two, as
/// kiln-fuse-kernels forms groups: a feed-forward block's) before a normalisation, or
/// one normalisation before a linear or matmul.
struct GroupOps {
  Operation *anchor = nullptr;
  llvm::SmallVector<Operation *, 1> stages;
};

/// Ops that an elementwise group without an anchor computes where it reads them, from
/// group inputs or each other: their values are expressions of the element's index.
bool isSource(Operation *op) { return isa<EmbeddingOp, SinusoidOp, RangeOp>(op); }

/// Whether source `op` reads what it can compute from: an embedding group inputs only
/// (it gathers rows of the table by ids it is handed), the others group inputs or
/// other sources (a sinusoid of a range's positions).
bool readsWhatItComputesFrom(Operation *op) {
  return llvm::all_of(op->getOperands(), [op](Value v) {
    return v.isa<BlockArgument>() ||
           (!isa<EmbeddingOp>(op) && isSource(v.getDefiningOp()));
  });
}

/// Whether `value` is `stage`'s result or computed from it by elementwise ops.
bool computedFrom(Value value, Operation *stage) {
  Operation *producer = value.getDefiningOp();
  if (producer == stage)
    return true;
  return producer && pointwiseFormula(producer) &&
         llvm::any_of(producer->getOperands(),
                      [&](Value operand) { return computedFrom(operand, stage); });
}

/// Whether `op` is a linear or quantized_linear that a normalisation group can compute
/// whole before its anchor, after the stages `before`: it reads group inputs, except
/// that an f32 or bf16 linear after another stage reads that stage's value (through
/// the stage's elementwise epilogue, a bias or activation) as its input, over a static
/// K; and only elementwise ops and linears read it.
bool isStage(Operation &op, llvm::ArrayRef<Operation *> before) {
  if (!isa<LinearOp, QuantizedLinearOp>(op))
    return false;
  for (OpOperand &use : op.getOpOperands()) {
    Value operand = use.get();
    if (operand.isa<BlockArgument>())
      continue;
    if (use.getOperandNumber() != 0 || before.empty() || !isa<LinearOp>(op) ||
        ShapedType::isDynamic(tensorType(operand).getShape().back()) ||
        !computedFrom(operand, before.back()))
      return false;
  }
  return llvm::all_of(op.getUsers(), [](Operation *user) {
    return pointwiseFormula(user) || isa<LinearOp>(user);
  });
}

bool isNorm(Operation *op) { return isa<LayerNormOp, RmsNormOp>(op); }

/// Whether `op` is a layer_norm or rms_norm that a product's group computes whole
/// before it, as its only stage: it reads group inputs, and only `next`, a linear or
/// matmul, reads it, as its lhs.
bool isNormStage(Operation &op, Operation &next, llvm::ArrayRef<Operation *> before) {
  return isNorm(&op) && before.empty() && isa<LinearOp, MatmulOp>(next) &&
         llvm::all_of(op.getOperands(), [](Value v) { return v.isa<BlockArgument>(); }) &&
         op.getResult(0).hasOneUse() && next.getOperand(0) == op.getResult(0);
}

/// The group's anchor and stages; emits an error and fails when the body is not
/// what this lowering composes: elementwise ops of the result's shape around at most
/// one anchor, which reads group inputs, except for a layer_norm's or rms_norm's input,
/// which may read stages through elementwise ops, and a linear's or matmul's lhs, which
/// may be a normalisation stage; without an anchor, sources
/// (embeddings, ranges, sinusoids) may feed the elementwise ops.
FailureOr<GroupOps> findAnchor(FusionOp fusion) {
  GroupOps group;
  Operation *&anchor = group.anchor;
  Operation *source = nullptr;
  for (Operation &op : fusion.getBody()->without_terminator()) {
    if (isSource(&op)) {
      source = &op;
      if (!readsWhatItComputesFrom(&op)) {
        op.emitError() << "'" << op.getName()
                       << "' in a kiln.fusion must read group inputs (or, unless it "
                          "is an embedding, ranges and sinusoids of the group)";
        return failure();
      }
      continue;
    }
    if (pointwiseFormula(&op)) {
      // The epilogue of a stage that a later linear reads has the stage's type.
      bool stageEpilogue = anchor && isa<LinearOp, QuantizedLinearOp>(anchor) &&
                           op.getResult(0).getType() == anchor->getResult(0).getType();
      if (op.getResult(0).getType() != fusion.getType() && !stageEpilogue) {
        op.emitError() << "an elementwise op in a kiln.fusion must have the "
                          "group's result type "
                       << fusion.getType() << ", got " << op.getResult(0).getType();
        return failure();
      }
      continue;
    }
    const OpLowering *lowering = lookupLowering(&op);
    if (!lowering || !lowering->anchorsGroups) {
      op.emitError() << "'" << op.getName()
                     << "' can neither anchor a kiln.fusion nor join one as an "
                        "elementwise op";
      return failure();
    }
    if (anchor) {
      // Only the last op of this kind anchors the group: before it, stages.
      if (!isStage(*anchor, group.stages) && !isNormStage(*anchor, op, group.stages)) {
        op.emitError() << "a kiln.fusion has one anchor, and '" << anchor->getName()
                       << "' is already this group's";
        return failure();
      }
      group.stages.push_back(anchor);
    }
    anchor = &op;
  }
  bool normStage = !group.stages.empty() && isNorm(group.stages.front());
  if (normStage && group.stages.size() > 1) {
    group.stages.back()->emitError()
        << "a layer_norm or rms_norm computed first in a kiln.fusion must be read by the "
           "group's anchor, and '"
        << group.stages.back()->getName() << "' comes between them";
    return failure();
  }
  if (!group.stages.empty() && !normStage &&
      (!isNorm(anchor) ||
       group.stages.back()->getResult(0).getType() != fusion.getType())) {
    group.stages.front()->emitError()
        << "a linear computed first in a kiln.fusion must be read by a layer_norm's or "
           "rms_norm's prologue, and this group's anchor is '"
        << anchor->getName() << "'";
    return failure();
  }
  if (source && anchor) {
    source->emitError() << "'" << source->getName()
                        << "' joins only a kiln.fusion without an anchor, and this "
                           "group's anchor is '"
                        << anchor->getName() << "'";
    return failure();
  }
  if (!anchor)
    return group;
  for (OpOperand &use : anchor->getOpOperands()) {
    Value operand = use.get();
    if (operand.isa<BlockArgument>() ||
        (normStage && operand.getDefiningOp() == group.stages.front()))
      continue;
    if (!isNorm(anchor) || use.getOperandNumber() != 0 ||
        !shapeInput(operand, operand.getType())) {
      anchor->emitError() << "operand #" << use.getOperandNumber()
                          << " of the kiln.fusion anchor '" << anchor->getName()
                          << "' must be a group input (only a layer_norm or rms_norm "
                             "reads a prologue, which needs a group input of its shape, "
                             "and only a linear's or matmul's lhs a normalisation stage)";
      return failure();
    }
  }
  return group;
}

/// The group as seen by its anchor's lowering: the group's inputs, its prologue as a
/// Func, its epilogue around the anchor's value.
class GroupBoundary : public KernelBoundary {
public:
  explicit GroupBoundary(FusionOp fusion, const Halide::Target &target)
      : fusion_(fusion), target_(target) {
    for (auto operand : llvm::enumerate(fusion.getOperands()))
      inputs_.emplace_back(
          makeInput(operand.value(), "in" + std::to_string(operand.index())),
          extentsOf(tensorType(operand.value())));
  }

  ImageParam input(Value operand, const std::string &) override {
    // findAnchor has checked that the anchor reads nothing else through here.
    return inputs_[operand.cast<BlockArgument>().getArgNumber()].first;
  }

  Operand operand(Value operand, const std::string &name) override {
    if (operand.isa<BlockArgument>()) {
      ImageParam param = input(operand, name);
      return {param, param};
    }
    if (stageValues_.count(operand))
      return stageOperand(operand);
    std::vector<Var> vars = makeVars(tensorType(operand).getRank());
    Func prologue("prologue");
    prologue(vars) = valueAt(operand, vars);
    shape_ = *shapeInput(operand, operand.getType());
    return {prologue, inputs_[*shape_].first};
  }

  Expr store(Expr value, const std::vector<Var> &vars) override {
    anchorValue_ = value;
    Expr stored = valueAt(fusion_.yielded(), vars);
    anchorValue_ = Expr();
    return stored;
  }

  std::vector<ImageParam> inputs() const override {
    std::vector<ImageParam> params;
    for (const auto &input : inputs_)
      params.push_back(input.first);
    return params;
  }

  /// The inputs as a pointwise kernel of the group's shape reads them: those that only
  /// sources read (a table, ids, positions, a range's `like`) are not indexed by the
  /// output's dimensions, so no extent of theirs is the output's (empty extents).
  KernelInputs pointwiseInputs() {
    KernelInputs inputs = inputs_;
    for (unsigned i = 0; i < inputs.size(); ++i)
      if (!readElementwise(i))
        inputs[i].second.clear();
    return inputs;
  }

  /// Host stages that the sources need (a GPU target's id checks), computed first.
  const llvm::SmallVector<KernelDescription, 1> &sourceStages() const {
    return sourceStages_;
  }

  /// Pins the dynamic extents of the ids that embeddings read to the output's (`out`):
  /// an id's dimension d is the gathered value's d + 1 (dimension 0 is the row's).
  void tieGatheredIds(OutputImageParam out) {
    for (Operation &op : fusion_.getBody()->without_terminator()) {
      auto embedding = dyn_cast<EmbeddingOp>(op);
      if (!embedding)
        continue;
      Extents valueExt = extentsOf(tensorType(embedding.result()));
      const auto &[ids, idExt] =
          inputs_[embedding.ids().cast<BlockArgument>().getArgNumber()];
      for (size_t d = 0; d < idExt.size(); ++d)
        if (idExt[d] == kDynamicExtent && valueExt[d + 1] != 1)
          ids.dim(static_cast<int>(d))
              .set_extent(out.dim(static_cast<int>(d + 1)).extent());
    }
  }

  /// The value of `value` (a body argument, the anchor's result or an elementwise op's)
  /// at `vars`, the Vars of a value of the group's shape.
  Expr valueAt(Value value, const std::vector<Var> &vars) {
    if (auto arg = value.dyn_cast<BlockArgument>()) {
      read_.insert(arg.getArgNumber());
      const auto &[param, extents] = inputs_[arg.getArgNumber()];
      return param(broadcastIndex(extents, vars));
    }
    auto stage = stageValues_.find(value);
    if (stage != stageValues_.end())
      return stage->second(vars);
    Operation *producer = value.getDefiningOp();
    if (isSource(producer))
      return sourceAt(producer, broadcastIndex(extentsOf(tensorType(value)), vars));
    PointwiseFormula formula = pointwiseFormula(producer);
    if (!formula) {
      assert(anchorValue_.defined() && "only the epilogue reads the anchor's value");
      return anchorValue_;
    }
    std::vector<Expr> operands;
    for (Value operand : producer->getOperands())
      operands.push_back(valueAt(operand, vars));
    return formula(operands);
  }

  /// Makes `stage`, the output of a stage's pipeline, the value of `read` (the
  /// stage op's result, or a linear's epilogue's that the next stage reads), and ties a
  /// linear's input (operand 0), when it is a group input, to the group's output
  /// (below): its rows are the output's, only its last dimension (K) differs. A
  /// normalisation's input has its result's extents, to which the product that reads
  /// it ties the output, as to any lhs.
  void addStage(Operation *op, Value read, Func stage) {
    stageValues_[read] = stage;
    Value input = op->getOperand(0);
    if (auto arg = input.dyn_cast<BlockArgument>()) {
      if (!isNorm(op))
        tiedFrom_[arg.getArgNumber()] = 1;
      stageRows_[read] = inputs_[arg.getArgNumber()].first;
    } else {
      stageRows_[read] = stageRows_.lookup(input);
    }
  }

  /// The stage output that holds `value`, with the group input whose extents it has
  /// past its last dimension.
  Operand stageOperand(Value value) const {
    return {stageValues_.lookup(value), stageRows_.lookup(value)};
  }

  /// What a stage stores given its linear's `value` at `vars`: `read`, the value the
  /// next stage reads, computed from it by the stage's epilogue.
  Expr storeStage(Value read, Expr value, const std::vector<Var> &vars) {
    anchorValue_ = value;
    Expr stored = valueAt(read, vars);
    anchorValue_ = Expr();
    return stored;
  }

  /// Pins the dynamic extents of the inputs that the elementwise ops and stages
  /// read, where they do not broadcast, to the output's (`out`): every value they make
  /// has its shape.
  void tieReadInputs(OutputImageParam out) {
    for (unsigned i : read_)
      tiedFrom_[i] = 0;
    for (auto [i, first] : tiedFrom_) {
      if (shape_ && i == *shape_)
        continue; // the anchor ties the output to it
      const auto &[param, extents] = inputs_[i];
      for (size_t d = first; d < extents.size(); ++d)
        if (extents[d] == kDynamicExtent)
          param.dim(static_cast<int>(d))
              .set_extent(out.dim(static_cast<int>(d)).extent());
    }
  }

private:
  /// Whether an elementwise op of the body reads input `i`.
  bool readElementwise(unsigned i) {
    return llvm::any_of(fusion_.getBody()->getArgument(i).getUsers(),
                        [](Operation *user) { return !isSource(user); });
  }

  /// The value of source `op` (an embedding, range or sinusoid) at `index`.
  Expr sourceAt(Operation *op, const std::vector<Expr> &index) {
    if (isa<RangeOp>(op))
      return index[0];
    if (auto sinusoid = dyn_cast<SinusoidOp>(op))
      return sinusoidAt(sinusoid,
                        operandAt(sinusoid.positions(),
                                  std::vector<Expr>(index.begin() + 1, index.end())),
                        index[0]);
    auto embedding = cast<EmbeddingOp>(op);
    auto inputOf = [&](Value operand) -> const ImageParam & {
      return inputs_[operand.cast<BlockArgument>().getArgNumber()].first;
    };
    return embeddingAt(embedding, inputOf(embedding.table()), inputOf(embedding.ids()),
                       index, target_, sourceStages_);
  }

  /// A source's operand at `index`: a group input's element or another source's value.
  Expr operandAt(Value operand, const std::vector<Expr> &index) {
    if (auto arg = operand.dyn_cast<BlockArgument>())
      return inputs_[arg.getArgNumber()].first(index);
    return sourceAt(operand.getDefiningOp(), index);
  }

  FusionOp fusion_;
  Halide::Target target_;
  KernelInputs inputs_;
  /// The sources' host stages.
  llvm::SmallVector<KernelDescription, 1> sourceStages_;
  /// The inputs read by elementwise ops.
  std::set<unsigned> read_;
  /// The stages' outputs, by the value of the group they compute.
  llvm::DenseMap<Value, Func> stageValues_;
  /// The group input whose extents each stage output has past its last dimension.
  llvm::DenseMap<Value, ImageParam> stageRows_;
  /// The inputs to tie to the output, each from its first Halide dimension on.
  std::map<unsigned, size_t> tiedFrom_;
  /// The input whose extents the prologue's result has.
  llvm::Optional<unsigned> shape_;
  /// While the epilogue is built: the anchor's value at the output's Vars.
  Expr anchorValue_;
};

/// A stage as its lowering sees the group: the group's inputs or the stage before, and
/// the value that the next stage or the norm's prologue reads stored.
class StageBoundary : public KernelBoundary {
public:
  StageBoundary(GroupBoundary &group, Value read) : group_(group), read_(read) {}
  ImageParam input(Value operand, const std::string &name) override {
    return group_.input(operand, name);
  }
  Operand operand(Value operand, const std::string &name) override {
    if (!operand.isa<BlockArgument>())
      return group_.stageOperand(operand);
    ImageParam param = input(operand, name);
    return {param, param};
  }
  Expr store(Expr value, const std::vector<Var> &vars) override {
    return group_.storeStage(read_, value, vars);
  }
  std::vector<ImageParam> inputs() const override { return group_.inputs(); }

private:
  GroupBoundary &group_;
  Value read_;
};

FailureOr<KernelAlgorithm> lowerFusion(FusionOp fusion, const Halide::Target &target) {
  FailureOr<GroupOps> ops = findAnchor(fusion);
  if (failed(ops))
    return failure();
  GroupBoundary group(fusion, target);
  if (!ops->anchor) {
    KernelAlgorithm chain =
        lowerPointwiseKernel(tensorType(fusion.getResult()), group.pointwiseInputs(),
                             [&](const std::vector<Var> &vars) {
                               return group.valueAt(fusion.yielded(), vars);
                             });
    group.tieGatheredIds(outputOf(chain.stages.back()).output_buffer());
    llvm::SmallVector<KernelDescription, 2> stages(group.sourceStages().begin(),
                                                   group.sourceStages().end());
    stages.append(chain.stages.begin(), chain.stages.end());
    chain.stages.assign(stages.begin(), stages.end());
    return chain;
  }
  llvm::SmallVector<KernelDescription, 2> stages;
  for (size_t i = 0; i < ops->stages.size(); ++i) {
    Operation *op = ops->stages[i];
    Value read =
        i + 1 < ops->stages.size() ? ops->stages[i + 1]->getOperand(0) : op->getResult(0);
    StageBoundary boundary(group, read);
    FailureOr<KernelAlgorithm> stage = lookupLowering(op)->lower(op, target, boundary);
    if (failed(stage))
      return failure();
    group.addStage(op, read, outputOf(stage->stages.back()));
    stages.append(stage->stages.begin(), stage->stages.end());
  }
  FailureOr<KernelAlgorithm> algorithm =
      lookupLowering(ops->anchor)->lower(ops->anchor, target, group);
  if (failed(algorithm))
    return failure();
  // Appended, not inserted: SmallVector's insert of an empty range self-move-assigns
  // the elements after it, which empties a Halide Func.
  stages.append(algorithm->stages.begin(), algorithm->stages.end());
  algorithm->stages.assign(stages.begin(), stages.end());
  group.tieReadInputs(outputOf(algorithm->stages.back()).output_buffer());
  return algorithm;
}

/// The body, which decides what the kernel computes: each op's signature (its
/// attributes and types) and where its operands come from.
void printBody(FusionOp fusion, llvm::raw_ostream &os) {
  llvm::DenseMap<Operation *, unsigned> index;
  unsigned next = 0;
  auto printRef = [&](Value value) {
    if (auto arg = value.dyn_cast<BlockArgument>())
      os << "a" << arg.getArgNumber();
    else
      os << "v" << index.lookup(value.getDefiningOp());
  };
  os << "{";
  for (Operation &op : fusion.getBody()->without_terminator()) {
    index[&op] = next++;
    os << kernelSignature(&op) << "[";
    llvm::interleaveComma(op.getOperands(), os, printRef);
    os << "];";
  }
  os << "yield ";
  printRef(fusion.yielded());
  os << "}";
}

} // namespace

void kiln::halide_backend::populateFusionLowerings(LoweringTable &table) {
  table.add<FusionOp>(lowerFusion, printBody);
}
