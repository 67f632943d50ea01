//===- CompiledModel.h - A compiled model run through the C runtime -*- C++ -*-===//
//
// The conformance tests run Kiln-compiled models through the public C API with
// PyTorch's weights, on tensors read from the reference files.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_CONFORMANCE_COMPILEDMODEL_H
#define KILN_TEST_CONFORMANCE_COMPILEDMODEL_H

#include "Safetensors.h"

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kiln::test {

/// Frees a status; returns its message, or "" when OK.
inline std::string take(kiln_status *status) {
  if (!status)
    return "";
  std::string message = kiln_status_get_message(status);
  kiln_status_free(status);
  return message.empty() ? "(error without message)" : message;
}

/// A compiled model with PyTorch's weights loaded.
class CompiledModel {
public:
  CompiledModel(const std::string &library, const std::string &weights) {
    error_ = take(kiln_model_open(library.c_str(), &model_));
    if (error_.empty())
      error_ = take(kiln_weights_open(model_, weights.c_str(), &weights_));
    if (error_.empty())
      error_ = take(kiln_session_create(model_, weights_, nullptr, &session_));
  }
  CompiledModel(const CompiledModel &) = delete;
  CompiledModel &operator=(const CompiledModel &) = delete;
  ~CompiledModel() {
    kiln_session_release(session_);
    kiln_weights_release(weights_);
    kiln_model_release(model_);
  }
  const std::string &error() const { return error_; }

  /// Runs `entry` on the named tensors; returns the error message or "".
  std::string run(const std::string &entry, const reference::TensorMap &inputs,
                  const std::vector<std::string> &names) {
    std::vector<kiln_tensor> raw;
    for (const std::string &name : names) {
      const reference::HostTensor &t = inputs.at(name);
      raw.push_back({name.c_str(), t.isInt ? KILN_DTYPE_I32 : KILN_DTYPE_F32,
                     static_cast<int32_t>(t.shape.size()), t.shape.data(),
                     t.isInt ? static_cast<const void *>(t.i32.data()) : t.f32.data()});
    }
    return take(kiln_session_run(session_, entry.c_str(), raw.data(), raw.size()));
  }

  std::vector<float> output(const std::string &name) {
    kiln_tensor out;
    if (!take(kiln_session_get_output(session_, name.c_str(), &out)).empty())
      return {};
    size_t n = 1;
    for (int32_t i = 0; i < out.rank; ++i)
      n *= out.shape[i];
    const float *data = static_cast<const float *>(out.data);
    return std::vector<float>(data, data + n);
  }

private:
  kiln_model *model_ = nullptr;
  kiln_weights *weights_ = nullptr;
  kiln_session *session_ = nullptr;
  std::string error_;
};

/// The tensors of a safetensors file; none, with a test failure, when it cannot be read.
inline reference::TensorMap loadOrFail(const std::string &path) {
  auto tensors = readSafetensors(path);
  if (!tensors) {
    ADD_FAILURE() << llvm::toString(tensors.takeError());
    return {};
  }
  return std::move(*tensors);
}

} // namespace kiln::test

#endif // KILN_TEST_CONFORMANCE_COMPILEDMODEL_H
