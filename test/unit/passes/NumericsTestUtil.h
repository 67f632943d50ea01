//===- NumericsTestUtil.h - Random inputs and weights for pipeline tests -*- C++ -*-===//
//
// What the numerics tests of the passes share: they run a module before and after a
// pipeline with the reference interpreter on the same random inputs and weights, and
// compare the outputs by relative error.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_PASSES_NUMERICSTESTUTIL_H
#define KILN_TEST_UNIT_PASSES_NUMERICSTESTUTIL_H

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace kiln::test {

using namespace mlir;
using kiln::reference::HostTensor;
using kiln::reference::TensorMap;

/// The sizes of the named dynamic dims in every test: T queries, S keys.
inline const std::map<std::string, int64_t> kDims = {{"B", 2}, {"T", 5}, {"S", 7}};

/// Random inputs for `func`: f32 uniform in [-2, 2); i32 within the input's kiln.bounds
/// or else in [0, S] with the first element 0 (a sequence whose keys are all padding).
inline TensorMap randomInputs(FuncOp func, std::mt19937 &rng) {
  TensorMap inputs;
  auto lookup = [](StringRef name) -> Optional<int64_t> {
    auto it = kDims.find(name.str());
    return it == kDims.end() ? None : Optional<int64_t>(it->second);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = func.getArgument(i).getType().cast<RankedTensorType>();
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, kiln::kDimsAttr);
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      shape.push_back(type.isDynamicDim(d)
                          ? kDims.at(dims[d].cast<StringAttr>().getValue().str())
                          : type.getDimSize(d));
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, kiln::kNameAttr).getValue().str();
    if (type.getElementType().isF32()) {
      std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
      std::vector<float> data(n);
      for (float &x : data)
        x = dist(rng);
      inputs[name] = HostTensor::floats(shape, data);
      continue;
    }
    int64_t lo = 0, hi = kDims.at("S");
    bool bounded = false;
    if (auto bounds = func.getArgAttrOfType<ArrayAttr>(i, kiln::kBoundsAttr)) {
      lo = cantFail(
          kiln::evaluateDimExpr(bounds[0].cast<StringAttr>().getValue(), lookup));
      hi = cantFail(
          kiln::evaluateDimExpr(bounds[1].cast<StringAttr>().getValue(), lookup));
      bounded = true;
    }
    std::uniform_int_distribution<int32_t> dist(lo, hi);
    std::vector<int32_t> data(n);
    for (int32_t &x : data)
      x = dist(rng);
    if (!bounded)
      data[0] = 0;
    inputs[name] = HostTensor::ints(shape, data);
  }
  return inputs;
}

/// Random weights for every kiln.parameter of `module`.
inline TensorMap randomParameters(ModuleOp module, std::mt19937 &rng) {
  TensorMap parameters;
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  module.walk([&](kiln::ParameterOp p) {
    auto type = p.getType().cast<RankedTensorType>();
    std::vector<float> data(type.getNumElements());
    for (float &x : data)
      x = dist(rng);
    parameters[p.name().str()] = HostTensor::floats(type.getShape().vec(), data);
  });
  return parameters;
}

inline double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

/// Whether `func` keeps session states: reference::run runs one entry without a
/// session, so entries that keep states (decode_start, decode_step) are left to
/// test/unit/generate, which runs them in order on the compiled translator.
inline bool usesStates(FuncOp func) {
  bool states = false;
  func.walk([&](Operation *op) {
    states |=
        isa<kiln::StateAllocOp, kiln::StateWriteOp, kiln::StateReadOp, kiln::KvAppendOp>(
            op);
  });
  return states;
}

/// Runs every entry of `before` that keeps no states, then the same entry of `after`,
/// on the same random inputs and `parameters`, and calls `compare` with each output's
/// relative error (after against before). Returns how many outputs it compared; a
/// failed run or a shape that differs fails the test.
inline int compareOutputs(
    ModuleOp before, ModuleOp after, const TensorMap &parameters, std::mt19937 &rng,
    llvm::function_ref<void(llvm::StringRef entry, const std::string &output, double)>
        compare) {
  int compared = 0;
  for (FuncOp func : before.getOps<FuncOp>()) {
    if (usesStates(func))
      continue;
    TensorMap inputs = randomInputs(func, rng);
    auto expected = kiln::reference::run(before, func.getName(), inputs, parameters);
    auto actual = kiln::reference::run(after, func.getName(), inputs, parameters);
    if (!expected || !actual) {
      ADD_FAILURE() << func.getName().str() << ": "
                    << (expected ? "" : llvm::toString(expected.takeError()))
                    << (actual ? "" : llvm::toString(actual.takeError()));
      continue;
    }
    for (const auto &[name, want] : *expected) {
      const HostTensor &got = actual->at(name);
      EXPECT_EQ(got.shape, want.shape) << func.getName().str() << " output " << name;
      if (got.shape == want.shape)
        compare(func.getName(), name, relativeError(got.f32, want.f32));
      ++compared;
    }
  }
  return compared;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_PASSES_NUMERICSTESTUTIL_H
