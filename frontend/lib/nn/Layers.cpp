//===- Layers.cpp - Basic layers of the Kiln DSL --------------------------===//

#include "kiln/frontend/nn/Layers.h"

#include <cmath>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::nn;

Linear::Linear(ModelBuilder &m, const std::string &prefix, int64_t in, int64_t out,
               bool bias)
    : module_(m, "nn::Linear", prefix),
      weight_(m.parameter(prefix + ".weight", {out, in})) {
  if (bias)
    bias_ = m.parameter(prefix + ".bias", {out});
}

Tensor Linear::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!bias_)
    return matmul(x, weight_, /*transposeLhs=*/false, /*transposeRhs=*/true);
  return linear(x, weight_, *bias_);
}

Conv1D::Conv1D(ModelBuilder &m, const std::string &prefix, int64_t in, int64_t out)
    : module_(m, "nn::Conv1D", prefix),
      weight_(m.parameter(prefix + ".weight", {in, out})),
      bias_(m.parameter(prefix + ".bias", {out})), out_(out) {}

Tensor Conv1D::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return columns(x, 0, out_);
}

Tensor Conv1D::columns(const Tensor &x, int64_t begin, int64_t end,
                       std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (begin == 0 && end == out_)
    return matmul(x, weight_) + bias_;
  return matmul(x, slice(weight_, 1, begin, end)) + slice(bias_, 0, begin, end);
}

LayerNorm::LayerNorm(ModelBuilder &m, const std::string &prefix, int64_t dim,
                     float epsilon)
    : module_(m, "nn::LayerNorm", prefix),
      weight_(m.parameter(prefix + ".weight", {dim})),
      bias_(m.parameter(prefix + ".bias", {dim})), epsilon_(epsilon) {}

Tensor LayerNorm::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return layerNorm(x, weight_, bias_, epsilon_);
}

RMSNorm::RMSNorm(ModelBuilder &m, const std::string &prefix, int64_t dim, float epsilon)
    : module_(m, "nn::RMSNorm", prefix), weight_(m.parameter(prefix + ".weight", {dim})),
      epsilon_(epsilon) {}

Tensor RMSNorm::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return rmsNorm(x, weight_, epsilon_);
}

Tensor nn::activate(const Tensor &x, Activation activation) {
  switch (activation) {
  case Activation::ReLU:
    return relu(x);
  case Activation::GELU:
    return gelu(x);
  case Activation::GELUTanh:
    return geluTanh(x);
  case Activation::SiLU:
    return silu(x);
  }
  return {};
}

FeedForward::FeedForward(ModelBuilder &m, const std::string &prefix, int64_t dModel,
                         int64_t dFF, Activation activation)
    : module_(m, "nn::FeedForward", prefix), linear1_(m, prefix + "linear1", dModel, dFF),
      linear2_(m, prefix + "linear2", dFF, dModel), activation_(activation) {}

Tensor FeedForward::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return linear2_(activate(linear1_(x), activation_));
}

Embedding::Embedding(ModelBuilder &m, const std::string &prefix, int64_t vocab,
                     int64_t dModel)
    : module_(m, "nn::Embedding", prefix),
      table_(m.parameter(prefix + ".weight", {vocab, dModel})), vocab_(vocab),
      dModel_(dModel) {}

Tensor Embedding::scaledRows(const Tensor &ids) const {
  return embedding(table_, ids) * std::sqrt(static_cast<float>(dModel_));
}

Tensor Embedding::operator()(const Tensor &ids, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor scaled = scaledRows(ids);
  return scaled + sinusoid(positions(ids, /*axis=*/1), dModel_);
}

Tensor Embedding::atPosition(const Tensor &ids, const Tensor &position,
                             std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor scaled = scaledRows(ids);
  // [1, d_model], broadcast over the batch as operator()'s [T, d_model] is.
  return scaled + sinusoid(reshape(position, {1}), dModel_);
}

Tensor Embedding::project(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return matmul(x, table_, /*transposeLhs=*/false, /*transposeRhs=*/true);
}
