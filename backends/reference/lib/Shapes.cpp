//===- Shapes.cpp - Host tensors and shape arithmetic of the interpreter --===//

#include "Kernels.h"

using namespace kiln::reference;

/// A tensor of `shape` whose `field` holds `data`, or zeros when `data` is empty. A
/// wrong size is kept so that run() can report it.
template <typename T>
static HostTensor filled(std::vector<int64_t> shape, std::vector<T> data,
                         std::vector<T> HostTensor::*field) {
  HostTensor t;
  t.shape = std::move(shape);
  t.*field = data.empty() ? std::vector<T>(std::max<int64_t>(t.numElements(), 0))
                          : std::move(data);
  return t;
}

HostTensor HostTensor::floats(std::vector<int64_t> shape, std::vector<float> data) {
  return filled(std::move(shape), std::move(data), &HostTensor::f32);
}

HostTensor HostTensor::ints(std::vector<int64_t> shape, std::vector<int32_t> data) {
  HostTensor t = filled(std::move(shape), std::move(data), &HostTensor::i32);
  t.isInt = true;
  return t;
}

HostTensor HostTensor::longs(std::vector<int64_t> shape, std::vector<int64_t> data) {
  HostTensor t = filled(std::move(shape), std::move(data), &HostTensor::i64);
  t.isI64 = true;
  return t;
}

int64_t HostTensor::numElements() const { return product(shape); }

HostTensor kiln::reference::emptyLike(const HostTensor &t, Shape shape) {
  HostTensor out;
  out.shape = std::move(shape);
  out.isInt = t.isInt;
  out.isI64 = t.isI64;
  return out;
}

void kiln::reference::appendElement(HostTensor &out, const HostTensor &in,
                                    int64_t offset) {
  if (in.isInt)
    out.i32.push_back(in.i32[offset]);
  else if (in.isI64)
    out.i64.push_back(in.i64[offset]);
  else
    out.f32.push_back(in.f32[offset]);
}

std::string kiln::reference::shapeToString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t kiln::reference::product(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape kiln::reference::rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

llvm::Expected<Shape> kiln::reference::broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                                       llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Aligned from the trailing dimension; a missing dimension acts as 1.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      return makeError("shapes " + shapeToString(lhs) + " and " + shapeToString(rhs) +
                       " do not broadcast: " + std::to_string(l) + " vs " +
                       std::to_string(r));
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

Shape kiln::reference::broadcastStrides(llvm::ArrayRef<int64_t> shape, size_t rank) {
  Shape own = rowMajorStrides(shape);
  Shape strides(rank, 0);
  size_t offset = rank - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    strides[offset + i] = shape[i] == 1 ? 0 : own[i];
  return strides;
}

void kiln::reference::forEachIndex(
    llvm::ArrayRef<int64_t> shape,
    const std::function<void(llvm::ArrayRef<int64_t>)> &body) {
  if (product(shape) == 0)
    return;
  Shape index(shape.size(), 0);
  while (true) {
    body(index);
    // Odometer increment, last dimension fastest.
    size_t d = shape.size();
    while (d > 0 && ++index[d - 1] == shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      return;
  }
}

Shape kiln::reference::unravelIndex(int64_t flat, llvm::ArrayRef<int64_t> shape) {
  Shape index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t kiln::reference::dot(llvm::ArrayRef<int64_t> index,
                             llvm::ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (size_t i = 0; i < index.size(); ++i)
    offset += index[i] * strides[i];
  return offset;
}

HostTensor kiln::reference::gather(const HostTensor &input, Shape shape,
                                   llvm::ArrayRef<int64_t> source) {
  HostTensor out = emptyLike(input, std::move(shape));
  for (int64_t s : source)
    appendElement(out, input, s);
  return out;
}

llvm::Error kiln::reference::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<AxisLines> kiln::reference::axisLines(llvm::ArrayRef<int64_t> shape,
                                                     int64_t axis,
                                                     llvm::StringRef opName) {
  if (axis < 0 || axis >= static_cast<int64_t>(shape.size()))
    return makeError(opName + " axis " + std::to_string(axis) + " is out of range for " +
                     shapeToString(shape));
  return AxisLines{product(shape.take_front(axis)), shape[axis],
                   product(shape.drop_front(axis + 1))};
}
