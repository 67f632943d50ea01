// SessionTrim.cpp - runs of an entry over its longest sequence only ("trim").
//
// The compiler marks an entry whose values before T = max(lengths) do not depend on
// the padding past T (kiln-trim-padding). Such a run binds the padded dimension to T:
// the inputs are cut to their first T positions, the kernels compute T positions, and
// the outputs are written back at the caller's length with zeros past T. A batch is
// only as long as its longest sequence, as CTranslate2 runs it.
#include "Session.h"

#include "Error.h"

#include <algorithm>
#include <cstring>

namespace kiln::rt {

namespace {

// Copies the dense row-major box `from` (shape `fromShape`) into the dense box `to`
// (shape `toShape`, of the same rank): each index within both shapes gets its element,
// each index past `fromShape` a zero.
void copyBox(const uint8_t *from, const std::vector<int64_t> &fromShape, uint8_t *to,
             const std::vector<int64_t> &toShape, size_t elementBytes) {
  size_t rank = toShape.size();
  if (rank == 0) {
    std::memcpy(to, from, elementBytes);
    return;
  }
  // Bytes of one index of each dimension, in each box.
  std::vector<size_t> fromStride(rank), toStride(rank);
  size_t fs = elementBytes, ts = elementBytes;
  for (size_t d = rank; d-- > 0;) {
    fromStride[d] = fs;
    toStride[d] = ts;
    fs *= size_t(fromShape[d]);
    ts *= size_t(toShape[d]);
  }
  auto copy = [&](auto &self, size_t d, const uint8_t *src, uint8_t *dst) -> void {
    size_t common = size_t(std::min(fromShape[d], toShape[d]));
    if (d + 1 == rank) {
      std::memcpy(dst, src, common * elementBytes);
    } else {
      for (size_t i = 0; i < common; ++i)
        self(self, d + 1, src + i * fromStride[d], dst + i * toStride[d]);
    }
    if (size_t(toShape[d]) > common)
      std::memset(dst + common * toStride[d], 0,
                  (size_t(toShape[d]) - common) * toStride[d]);
  };
  copy(copy, 0, from, to);
}

int64_t elementsOf(const int64_t *shape, size_t rank) {
  int64_t n = 1;
  for (size_t d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

int64_t elementsOf(const std::vector<int64_t> &shape) {
  return elementsOf(shape.data(), shape.size());
}

} // namespace

int64_t Session::cutInputs(const EntryDesc &e, EntryState &st,
                           std::vector<const kiln_tensor *> &inputs) {
  if (e.trimSlot < 0)
    return -1;
  const kiln_tensor &lengths = *inputs[size_t(e.trimLengths)];
  int64_t batch = lengths.shape[0];
  int64_t full = st.dimValues[size_t(e.trimSlot)];
  if (batch == 0)
    return -1;
  // The bounds have been checked (bindAllDims): every length is at most `full`.
  const int32_t *values = static_cast<const int32_t *>(lengths.data);
  int64_t longest = 1; // a kernel over zero positions would compute nothing
  for (int64_t b = 0; b < batch; ++b)
    longest = std::max<int64_t>(longest, values[b]);
  if (longest >= full)
    return -1;

  // An empty input has no memory to cut (Halide reads a null pointer as a bounds
  // query); such a run costs nothing whole.
  for (size_t k = 0; k < e.inputs.size(); ++k)
    if (!e.trimInputAxes[k].empty() &&
        elementsOf(inputs[k]->shape, size_t(inputs[k]->rank)) == 0)
      return -1;

  st.cutInputs.resize(e.inputs.size());
  st.cutShapes.resize(e.inputs.size());
  st.cutBlocks.resize(e.inputs.size());
  for (size_t k = 0; k < e.inputs.size(); ++k) {
    const std::vector<size_t> &axes = e.trimInputAxes[k];
    if (axes.empty())
      continue;
    const kiln_tensor &in = *inputs[k];
    std::vector<int64_t> inShape(in.shape, in.shape + in.rank);
    std::vector<int64_t> &shape = st.cutShapes[k];
    shape = inShape;
    for (size_t axis : axes)
      shape[axis] = longest;
    size_t elementBytes = kiln_dtype_size(in.dtype);
    if (!st.cutBlocks[k])
      st.cutBlocks[k] = std::make_unique<TempBlock>();
    if (st.cutBlocks[k]->reserve(size_t(elementsOf(shape)) * elementBytes))
      ++stats_.temp_allocations;
    copyBox(static_cast<const uint8_t *>(in.data), inShape, st.cutBlocks[k]->bytes(),
            shape, elementBytes);
    kiln_tensor &cut = st.cutInputs[k];
    cut = in;
    cut.shape = shape.data();
    cut.data = st.cutBlocks[k]->data();
    inputs[k] = &cut;
  }
  st.dimValues[size_t(e.trimSlot)] = longest;
  return full;
}

void Session::padOutputs(const EntryDesc &e, EntryState &st, int64_t fullLength) {
  st.paddedBlocks.resize(e.outputs.size());
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const std::vector<size_t> &axes = e.trimOutputAxes[i];
    if (axes.empty())
      continue;
    Output &out = outputs_[i];
    // A device session's output comes to the host now, where it is padded, rather
    // than when it is read.
    downloadOutput(out);
    std::vector<int64_t> shape = out.shape;
    for (size_t axis : axes)
      shape[axis] = fullLength;
    if (elementsOf(shape) == 0) { // its memory is the placeholder of empty tensors
      out.shape = std::move(shape);
      continue;
    }
    size_t elementBytes = kiln_dtype_size(out.desc->dtype);
    std::unique_ptr<TempBlock> &block = st.paddedBlocks[i];
    if (!block)
      block = std::make_unique<TempBlock>();
    if (block->reserve(size_t(elementsOf(shape)) * elementBytes))
      ++stats_.temp_allocations;
    copyBox(static_cast<const uint8_t *>(out.data), out.shape, block->bytes(), shape,
            elementBytes);
    out.shape = std::move(shape);
    out.data = block->data();
    out.padded = block.get();
  }
}

} // namespace kiln::rt
