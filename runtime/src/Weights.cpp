//===- Weights.cpp - A model's parameters ---------------------------------===//
//
// Loads what WeightsPlan.cpp matched: a stored parameter is the file's mapping (copied
// only when misaligned); a converted one is computed into memory of its own. A source
// is widened to f32 once for all the parameters computed from it, and only when it is
// not F32 already: an F32 checkpoint is read from the mapping.
//
//===----------------------------------------------------------------------===//

#include "Weights.h"

#include "DType.h"
#include "Error.h"
#include "Session.h"
#include "WeightConversion.h"
#include "WeightsPlan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

namespace kiln::rt {

namespace {

size_t byteCount(const TensorDesc &p) {
  return size_t(elementCount(p.staticShape)) * kiln_dtype_size(p.dtype);
}

} // namespace

Weights::Weights(const Manifest &manifest, const std::string &path) : file_(path) {
  std::vector<ParameterPlan> plans = planWeights(manifest, file_);
  data_.resize(plans.size());
  // By source, in parameter order: each source is widened once for all its users.
  std::map<const SafetensorsTensor *, std::vector<size_t>> bySource;
  for (size_t i = 0; i < plans.size(); ++i) {
    const TensorDesc &p = manifest.parameters[i];
    signatures_.push_back({p.name, p.dtype, p.staticShape});
    if (plans[i].source) {
      bySource[plans[i].source].push_back(i);
      continue;
    }
    const uint8_t *src = file_.data(*plans[i].stored);
    size_t bytes = byteCount(p);
    if (reinterpret_cast<uintptr_t>(src) % kiln_dtype_size(p.dtype) == 0) {
      data_[i] = src;
      stats_.mapped_bytes += bytes;
      continue;
    }
    // Tensors packed at odd offsets by some writers: kernels may assume natural
    // alignment.
    std::memcpy(place(i, bytes), src, bytes);
    stats_.copied_bytes += bytes;
  }
  // A converted source is not read again unless a parameter maps it as well: its
  // pages leave the process as soon as it is converted, so that the weights do not
  // count twice in its memory (transformer_base's linear weights, in panels, would).
  for (const auto &[source, users] : bySource) {
    convert(manifest, *source, users);
    const SafetensorsTensor *converted = source;
    if (std::none_of(plans.begin(), plans.end(),
                     [&](const ParameterPlan &plan) { return plan.stored == converted; }))
      file_.release(*source);
  }
}

Weights::Block Weights::allocate(size_t bytes) {
  void *block = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!block)
    throw std::bad_alloc();
  return Block(block);
}

void *Weights::place(size_t parameter, size_t bytes) {
  void *block = arena_.allocate(bytes);
  data_[parameter] = block;
  return block;
}

void Weights::own(size_t parameter, Block block) {
  data_[parameter] = block.get();
  copies_.push_back(std::move(block));
}

void Weights::convert(const Manifest &manifest, const SafetensorsTensor &source,
                      const std::vector<size_t> &users) {
  const kiln_dtype dtype = *parseSafetensorsDType(source.dtype);
  const uint8_t *bytes = file_.data(source);
  const size_t count = size_t(elementCount(source.shape));
  const size_t rowLength = size_t(elementCount(source.shape, 1));
  // The source as f32: the mapping itself when it is F32 and aligned, else widened once.
  const float *values = reinterpret_cast<const float *>(bytes);
  Block widened;
  if (dtype != KILN_DTYPE_F32 || reinterpret_cast<uintptr_t>(bytes) % 4 != 0) {
    widened = allocate(count * 4);
    widenToF32(bytes, dtype, count, static_cast<float *>(widened.get()));
    values = static_cast<const float *>(widened.get());
  }
  for (size_t i : users) {
    const TensorDesc &p = manifest.parameters[i];
    stats_.converted_bytes += byteCount(p);
    if (!p.source) { // a plain f32 parameter read from F16 or BF16
      own(i, std::move(widened));
      continue;
    }
    const size_t first = p.source->rows ? size_t(p.source->rows->first) : 0;
    const size_t rows = p.staticShape.empty() ? 1 : size_t(p.staticShape[0]);
    const float *from = values + first * rowLength;
    switch (p.source->conversion) {
    case Conversion::BF16: {
      auto *to = static_cast<uint16_t *>(place(i, rows * rowLength * 2));
      for (size_t k = 0; k < rows * rowLength; ++k)
        to[k] = f32ToBF16(from[k]);
      break;
    }
    case Conversion::Int8: {
      size_t s = size_t(scalePartner(manifest.parameters, i));
      auto *q = static_cast<int8_t *>(place(i, rows * rowLength));
      auto *scales = static_cast<float *>(place(s, rows * 4));
      for (size_t r = 0; r < rows; ++r) {
        float scale = quantizeRow(from + r * rowLength, rowLength, q + r * rowLength);
        if (std::isnan(scale))
          fail(KILN_STATUS_INVALID_WEIGHTS, "weights file '", path(), "': tensor '",
               source.name, "' row ", first + r,
               " holds a NaN or an infinity; parameter '", p.name,
               "' quantizes it to int8, which needs finite values");
        scales[r] = scale;
      }
      break;
    }
    case Conversion::Int8Scale: // made with its int8 weight, above
      break;
    case Conversion::Panels: {
      // [P, K, W] from the rows (checked by the plan: P panels of W hold them all).
      const auto &rowRange = p.source->rows;
      const int64_t count =
          rowRange ? rowRange->second - rowRange->first : source.shape[0];
      const std::vector<int64_t> &shape = p.staticShape;
      packPanels(from, KILN_DTYPE_F32, count, shape[1], shape[2], shape[0],
                 static_cast<float *>(place(i, byteCount(p))));
      break;
    }
    }
  }
}

void Weights::FreeDeleter::operator()(void *p) const { std::free(p); }

kiln_tensor Weights::tensor(size_t parameter) const {
  const Signature &s = signatures_[parameter];
  return {s.name.c_str(), s.dtype, int32_t(s.shape.size()), s.shape.data(),
          data_[parameter]};
}

struct Weights::Resident {
  const Model *model; // retained: its library holds the device's functions
  DeviceBlock block;  // every parameter, each at a 64-byte aligned offset
  std::vector<uint64_t> addresses;
  explicit Resident(const Model &m) : model(&m), block(*m.device()) {
    m.refs.fetch_add(1);
  }
  ~Resident() {
    block.reset();
    releaseModel(model);
  }
};

void Weights::ResidentDeleter::operator()(Resident *r) const { delete r; }

const std::vector<uint64_t> &Weights::onDevice(const Model &model) const {
  std::lock_guard<std::mutex> lock(residentMutex_);
  for (const auto &r : resident_)
    if (r->model == &model)
      return r->addresses;
  std::vector<uint64_t> offsets, bytes;
  uint64_t total = 0;
  for (const Signature &s : signatures_) {
    offsets.push_back(total);
    bytes.push_back(uint64_t(elementCount(s.shape)) * kiln_dtype_size(s.dtype));
    total += (bytes.back() + 63) / 64 * 64;
  }
  std::unique_ptr<Resident, ResidentDeleter> r(new Resident(model));
  r->block.reserve(total);
  for (size_t i = 0; i < data_.size(); ++i) {
    r->addresses.push_back(r->block.address() + offsets[i]);
    model.device()->upload(r->addresses[i], data_[i], bytes[i]);
  }
  resident_.push_back(std::move(r));
  return resident_.back()->addresses;
}

bool Weights::fits(const Manifest &manifest) const {
  if (manifest.parameters.size() != signatures_.size())
    return false;
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const TensorDesc &p = manifest.parameters[i];
    const Signature &s = signatures_[i];
    if (p.name != s.name || p.dtype != s.dtype || p.staticShape != s.shape)
      return false;
  }
  return true;
}

} // namespace kiln::rt
