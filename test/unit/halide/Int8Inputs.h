//===- Int8Inputs.h - Kernels with i8 weights in the lowering tests --*- C++ -*-===//
//
// The interpreter holds an i8 weight as i32 values in [-127, 127]; a Halide kernel
// reads it as bytes. runKernel hands every kernel input the buffer of its own element
// type, narrowing such a weight, so that one set of HostTensors feeds both sides.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_HALIDE_INT8INPUTS_H
#define KILN_TEST_UNIT_HALIDE_INT8INPUTS_H

#include "KernelHarness.h"

#include <algorithm>

namespace kiln::halide_backend::test {

/// `t` as the buffer a kernel input of `type` reads: a view of it, or for Int(8) a
/// narrowed copy (which the returned buffer owns).
inline Halide::Buffer<> bufferOf(const HostTensor &t, Halide::Type type) {
  if (type != Halide::Int(8))
    return KernelHarness::toBuffer(t);
  std::vector<int> sizes(t.shape.rbegin(), t.shape.rend());
  Halide::Buffer<int8_t> narrow(sizes);
  std::transform(t.i32.begin(), t.i32.end(), narrow.data(),
                 [](int32_t v) { return static_cast<int8_t>(v); });
  return narrow;
}

/// What KernelHarness::run does, each input as its ImageParam's type: realizes
/// `harness`'s kernel on `inputs` (operand order) into a tensor of `outShape`.
inline HostTensor runKernel(KernelHarness &harness, const std::vector<HostTensor> &inputs,
                            const Shape &outShape) {
  std::vector<Halide::Buffer<>> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    buffers.push_back(bufferOf(inputs[i], harness.kernel.inputs[i].type()));
    harness.kernel.inputs[i].set(buffers.back());
  }
  bool isInt = harness.kernel.output.output_types()[0] != Halide::Float(32);
  HostTensor out = isInt ? HostTensor::ints(outShape) : HostTensor::floats(outShape);
  out.f32.resize(isInt ? 0 : out.numElements());
  out.i32.resize(isInt ? out.numElements() : 0);
  Halide::Buffer<> result = KernelHarness::toBuffer(out);
  harness.realize(result);
  return out;
}

} // namespace kiln::halide_backend::test

#endif // KILN_TEST_UNIT_HALIDE_INT8INPUTS_H
