//===- PackProjections.cpp - Linears over rows of one packed weight into one --===//
//
// Multi-head attention stores q, k and v's projections stacked in one weight
// (`in_proj_weight` [3d, d], `in_proj_bias` [3d]) and projects with three linears over
// its row slices. Where linears read the same input through adjacent row ranges of one
// weight and the same rows of one bias, one linear over the covering range computes
// every output column exactly as its own linear did (each column is the same dot
// product plus the same bias), and slices of its last dimension hand each user its
// part. Self-attention's q, k and v become one [..., 3d] linear, cross-attention's k
// and v (both over the memory) one [..., 2d] linear: one pass over the input instead
// of three, and one kernel with a wider, better-shaped matrix product.
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

using namespace mlir;
using namespace kiln;

namespace {

/// A linear whose weight is rows [start, end) of `weight` and whose bias is the same
/// rows of `bias`.
struct RowProjection {
  LinearOp linear;
  Value weight, bias;
  int64_t start = 0, end = 0;
};

/// The rows of a packed weight that `linear` projects through; a reason otherwise.
FailureOr<RowProjection> rowProjection(LinearOp linear, std::string &reason) {
  auto weightSlice = linear.weight().getDefiningOp<SliceOp>();
  if (!weightSlice || weightSlice.axis() != 0) {
    reason = "its weight is not a slice of rows of a packed weight";
    return failure();
  }
  auto biasSlice = linear.bias().getDefiningOp<SliceOp>();
  if (!biasSlice || biasSlice.start() != weightSlice.start() ||
      biasSlice.end() != weightSlice.end()) {
    reason = "its bias is not the same rows [" + std::to_string(weightSlice.start()) +
             ", " + std::to_string(weightSlice.end()) + ") of a packed bias";
    return failure();
  }
  return RowProjection{linear, weightSlice.input(), biasSlice.input(),
                       static_cast<int64_t>(weightSlice.start()),
                       static_cast<int64_t>(weightSlice.end())};
}

/// `value`'s type with its last dimension `size`.
RankedTensorType withLastDim(Value value, int64_t size) {
  auto type = value.getType().cast<RankedTensorType>();
  SmallVector<int64_t, 4> shape(type.getShape().begin(), type.getShape().end());
  shape.back() = size;
  return RankedTensorType::get(shape, type.getElementType());
}

/// Rows [start, end) of `packed` along axis 0: `packed` itself when they are all of it.
Value rowsOf(OpBuilder &builder, Location loc, Value packed, int64_t start, int64_t end) {
  auto type = packed.getType().cast<RankedTensorType>();
  if (start == 0 && type.getDimSize(0) == end)
    return packed;
  SmallVector<int64_t, 4> shape(type.getShape().begin(), type.getShape().end());
  shape[0] = end - start;
  return builder.create<SliceOp>(loc, RankedTensorType::get(shape, type.getElementType()),
                                 packed, 0, start, end);
}

/// Replaces the linears of `run` (adjacent row ranges, in row order) by one linear over
/// their covering rows and a slice of its result per linear.
void pack(MutableArrayRef<RowProjection> run) {
  Operation *first = run.front().linear;
  SmallVector<Location, 4> locations;
  for (RowProjection &member : run) {
    locations.push_back(member.linear.getLoc());
    if (member.linear->isBeforeInBlock(first))
      first = member.linear;
  }
  OpBuilder builder(first);
  Location loc = builder.getFusedLoc(locations);
  int64_t start = run.front().start, end = run.back().end;
  Value input = run.front().linear.input();
  // Named in order: argument evaluation order is unspecified, and the IR should read
  // weight, bias.
  Value weight = rowsOf(builder, loc, run.front().weight, start, end);
  Value bias = rowsOf(builder, loc, run.front().bias, start, end);
  auto packed =
      builder.create<LinearOp>(loc, withLastDim(input, end - start), input, weight, bias);
  int64_t axis = packed.getType().cast<RankedTensorType>().getRank() - 1;
  // Every part is built before any linear goes: the builder inserts before `first`.
  SmallVector<Value, 4> parts;
  for (RowProjection &member : run)
    parts.push_back(builder.create<SliceOp>(member.linear.getLoc(),
                                            member.linear.getType(), packed, axis,
                                            member.start - start, member.end - start));
  for (auto [member, part] : llvm::zip(run, parts)) {
    LinearOp linear = member.linear;
    linear.getResult().replaceAllUsesWith(part);
    Operation *weight = linear.weight().getDefiningOp(),
              *bias = linear.bias().getDefiningOp();
    linear.erase();
    for (Operation *slice : {weight, bias})
      if (slice->use_empty())
        slice->erase();
  }
}

struct PackProjectionsPass : public PackProjectionsBase<PackProjectionsPass> {
  PackProjectionsPass() = default;
  explicit PackProjectionsPass(bool emitRemarks) { remarks = emitRemarks; }

  void runOnOperation() override {
    // Keyed by what must be shared: the input, the packed weight and the packed bias.
    llvm::MapVector<std::tuple<Value, Value, Value>, SmallVector<RowProjection, 4>>
        groups;
    SmallVector<std::pair<LinearOp, std::string>, 4> unpacked;
    getOperation().walk([&](LinearOp linear) {
      std::string reason;
      FailureOr<RowProjection> rows = rowProjection(linear, reason);
      if (succeeded(rows))
        groups[{linear.input(), rows->weight, rows->bias}].push_back(*rows);
      else if (linear.weight().getDefiningOp<SliceOp>())
        unpacked.push_back({linear, reason});
    });

    // How many packed weights each input is projected through: a linear alone in its
    // group could pack only with another weight's rows (a concatenated copy).
    llvm::DenseMap<Value, int> weightsPerInput;
    for (auto &group : groups)
      ++weightsPerInput[std::get<0>(group.first)];

    SmallVector<SmallVector<RowProjection, 4>, 4> runs;
    for (auto &group : groups) {
      SmallVector<RowProjection, 4> &members = group.second;
      llvm::stable_sort(members, [](const RowProjection &a, const RowProjection &b) {
        return std::tie(a.start, a.end) < std::tie(b.start, b.end);
      });
      SmallVector<RowProjection, 4> run;
      auto close = [&] {
        if (run.size() > 1)
          runs.push_back(run);
        else if (members.size() > 1)
          unpacked.push_back({run.front().linear, kNotAdjacent});
        else if (weightsPerInput[std::get<0>(group.first)] > 1)
          unpacked.push_back({run.front().linear, kOtherWeight});
        run.clear();
      };
      for (const RowProjection &member : members) {
        if (!run.empty() && run.back().end != member.start)
          close();
        run.push_back(member);
      }
      close();
    }

    if (remarks || fusionRemarksEverywhere())
      for (auto &[linear, reason] : unpacked)
        emitRemark(linear.getLoc()) << "kiln.linear not packed with another projection "
                                       "of the same packed weight: "
                                    << reason;
    for (SmallVector<RowProjection, 4> &run : runs)
      pack(run);
  }

  static constexpr const char *kNotAdjacent =
      "its rows are not adjacent to the rows of another linear over the same input, "
      "weight and bias";
  static constexpr const char *kOtherWeight =
      "the other linears over the same input project through rows of another weight "
      "or bias, which would have to be copied into one";
};

} // namespace

std::unique_ptr<Pass> kiln::createPackProjectionsPass() {
  return std::make_unique<PackProjectionsPass>();
}

std::unique_ptr<Pass> kiln::createPackProjectionsPass(bool remarks) {
  return std::make_unique<PackProjectionsPass>(remarks);
}
