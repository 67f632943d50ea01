// Weights.cpp - matching a safetensors file to the model's parameter list.
#include "Weights.h"

#include "DType.h"
#include "Error.h"
#include "Session.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace kiln::rt {

Weights::Weights(const Manifest &manifest, const std::string &path) : file_(path) {
  std::unordered_map<std::string, const SafetensorsTensor *> byName;
  for (const SafetensorsTensor &t : file_.tensors())
    byName.emplace(t.name, &t);

  std::vector<std::string> problems;
  std::vector<const SafetensorsTensor *> matched;
  for (const TensorDesc &p : manifest.parameters) {
    signatures_.push_back({p.name, p.dtype, p.staticShape});
    auto it = byName.find(p.name);
    if (it == byName.end()) {
      problems.push_back(cat("missing tensor '", p.name, "' (expected ",
                             safetensorsDTypeName(p.dtype), " ",
                             formatShape(p.staticShape), ")"));
      matched.push_back(nullptr);
      continue;
    }
    const SafetensorsTensor &t = *it->second;
    byName.erase(it);
    matched.push_back(&t);
    bool dtypeOk = parseSafetensorsDType(t.dtype) == p.dtype;
    bool shapeOk = t.shape == p.staticShape;
    if (!dtypeOk && !shapeOk)
      problems.push_back(cat(
          "tensor '", p.name, "' is ", t.dtype, " ", formatShape(t.shape), ", expected ",
          safetensorsDTypeName(p.dtype), " ", formatShape(p.staticShape)));
    else if (!dtypeOk)
      problems.push_back(cat("tensor '", p.name, "' has dtype ", t.dtype, ", expected ",
                             safetensorsDTypeName(p.dtype)));
    else if (!shapeOk)
      problems.push_back(cat("tensor '", p.name, "' has shape ", formatShape(t.shape),
                             ", expected ", formatShape(p.staticShape)));
  }
  // File order, so the message is stable.
  for (const SafetensorsTensor &t : file_.tensors())
    if (byName.count(t.name))
      problems.push_back(cat("unexpected tensor '", t.name, "' (", t.dtype, " ",
                             formatShape(t.shape), "): the model has no such parameter"));

  if (!problems.empty())
    fail(KILN_STATUS_INVALID_WEIGHTS, "weights file '", path, "' does not match model '",
         manifest.model, "' (", problems.size(),
         problems.size() == 1 ? " problem):\n  " : " problems):\n  ",
         join(
             problems, [](const std::string &s) { return s; }, "\n  "));

  for (size_t i = 0; i < matched.size(); ++i) {
    const uint8_t *src = file_.data(*matched[i]);
    size_t bytes = matched[i]->end - matched[i]->begin;
    size_t align = kiln_dtype_size(manifest.parameters[i].dtype);
    if (reinterpret_cast<uintptr_t>(src) % align == 0) {
      data_.push_back(src);
      continue;
    }
    // Tensors packed at odd offsets by some writers: kernels may assume natural
    // alignment.
    void *copy = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!copy)
      throw std::bad_alloc();
    copies_.emplace_back(copy);
    std::memcpy(copy, src, bytes);
    data_.push_back(copy);
  }
}

void Weights::FreeDeleter::operator()(void *p) const { std::free(p); }

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
