// kiln/runtime.hpp - header-only C++ wrapper over kiln/runtime.h: RAII handles, and
// errors as exceptions.
//
// Error style: every failing call throws kiln::Error (a std::runtime_error carrying the
// kiln_status_code); nothing returns a status. Model and Weights are cheap to copy (they
// share one reference-counted handle); Session is move-only (it is single-threaded).
// Thread safety is that of the C API (see runtime.h).
//
//   kiln::Model model = kiln::Model::open("demo.so");
//   kiln::Weights weights = kiln::Weights::open(model, "demo.safetensors");
//   kiln::Session session(model, weights);
//   std::vector<float> x = ...;
//   session.run("forward", {kiln::TensorArg::of("x", {2, 3, 64}, x.data())});
//   std::vector<float> y = session.outputData<float>("y");
#ifndef KILN_RUNTIME_HPP
#define KILN_RUNTIME_HPP

#include "kiln/runtime.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class Error : public std::runtime_error {
public:
  Error(kiln_status_code code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  kiln_status_code code() const { return code_; }

private:
  kiln_status_code code_;
};

// Throws (and frees) a non-OK status.
inline void check(kiln_status *status) {
  if (!status)
    return;
  Error error(kiln_status_get_code(status), kiln_status_get_message(status));
  kiln_status_free(status);
  throw error;
}

template <typename T> constexpr kiln_dtype dtypeOf();
template <> constexpr kiln_dtype dtypeOf<float>() { return KILN_DTYPE_F32; }
template <> constexpr kiln_dtype dtypeOf<int32_t>() { return KILN_DTYPE_I32; }
template <> constexpr kiln_dtype dtypeOf<int64_t>() { return KILN_DTYPE_I64; }

inline int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// A model input, output or parameter description (an owning copy of kiln_tensor_info).
struct TensorInfo {
  std::string name;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<std::string> dims; // "64", "B*S"
  std::vector<int64_t> shape;    // -1 where dynamic
  // Declared value bounds of an integer input ("0", "S-1"), as written; see hasBounds.
  bool hasBounds = false;
  std::string boundsMin, boundsMax;

  static TensorInfo from(const kiln_tensor_info &info) {
    TensorInfo t;
    t.name = info.name;
    t.dtype = info.dtype;
    for (int32_t d = 0; d < info.rank; ++d) {
      t.dims.emplace_back(info.dims[d]);
      t.shape.push_back(info.shape[d]);
    }
    if (info.bounds_min && info.bounds_max) {
      t.hasBounds = true;
      t.boundsMin = info.bounds_min;
      t.boundsMax = info.bounds_max;
    }
    return t;
  }
};

// An input for Session::run: owns name and shape, borrows the data.
struct TensorArg {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  const void *data;

  template <typename T>
  static TensorArg of(std::string name, std::vector<int64_t> shape, const T *data) {
    return {std::move(name), dtypeOf<T>(), std::move(shape), data};
  }
  kiln_tensor raw() const {
    return {name.c_str(), dtype, int32_t(shape.size()), shape.data(), data};
  }
};

// A borrowed view of a session output; valid until the session's next run.
struct OutputView {
  std::string name;
  kiln_dtype dtype;
  std::vector<int64_t> shape;
  const void *data;

  template <typename T> const T *as() const {
    if (dtype != dtypeOf<T>())
      throw Error(KILN_STATUS_INVALID_ARGUMENT, "output '" + name + "' is " +
                                                    kiln_dtype_name(dtype) + ", not " +
                                                    kiln_dtype_name(dtypeOf<T>()));
    return static_cast<const T *>(data);
  }
};

// An output detached from its session (Session::detachOutput): owns the memory the
// kernels wrote it in, without a copy. Move-only.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(kiln_buffer *adopted) : handle_(adopted) {}
  Buffer(Buffer &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Buffer &operator=(Buffer &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() { kiln_buffer_release(handle_); }

  kiln_buffer *get() const { return handle_; }
  // Gives up ownership (e.g. to a Python capsule that releases it).
  kiln_buffer *release() { return std::exchange(handle_, nullptr); }
  void *data() const { return kiln_buffer_data(handle_); }
  // The output's name, dtype and shape, and data as a const pointer.
  OutputView view() const {
    kiln_tensor t = kiln_buffer_tensor(handle_);
    return {t.name ? t.name : "", t.dtype,
            std::vector<int64_t>(t.shape, t.shape + t.rank), t.data};
  }

private:
  kiln_buffer *handle_ = nullptr;
};

class Model {
public:
  Model() = default;
  explicit Model(kiln_model *adopted) : handle_(adopted) {}
  static Model open(const std::string &path) {
    kiln_model *m = nullptr;
    check(kiln_model_open(path.c_str(), &m));
    return Model(m);
  }
  Model(const Model &other) : handle_(other.handle_) { kiln_model_retain(handle_); }
  Model(Model &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Model &operator=(Model other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Model() { kiln_model_release(handle_); }

  kiln_model *get() const { return handle_; }
  std::string name() const { return kiln_model_name(handle_); }
  std::string target() const { return kiln_model_target(handle_); }

  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < kiln_model_entry_count(handle_); ++i)
      names.emplace_back(kiln_model_entry_name(handle_, i));
    return names;
  }
  std::vector<TensorInfo> inputs(const std::string &entry) const {
    return io(entry, true);
  }
  std::vector<TensorInfo> outputs(const std::string &entry) const {
    return io(entry, false);
  }
  std::vector<TensorInfo> parameters() const {
    std::vector<TensorInfo> params;
    for (size_t i = 0; i < kiln_model_parameter_count(handle_); ++i) {
      kiln_tensor_info info;
      check(kiln_model_parameter_info(handle_, i, &info));
      params.push_back(TensorInfo::from(info));
    }
    return params;
  }

private:
  std::vector<TensorInfo> io(const std::string &entry, bool input) const {
    size_t e = 0;
    check(kiln_model_find_entry(handle_, entry.c_str(), &e));
    std::vector<TensorInfo> list;
    size_t n =
        input ? kiln_model_input_count(handle_, e) : kiln_model_output_count(handle_, e);
    for (size_t i = 0; i < n; ++i) {
      kiln_tensor_info info;
      check(input ? kiln_model_input_info(handle_, e, i, &info)
                  : kiln_model_output_info(handle_, e, i, &info));
      list.push_back(TensorInfo::from(info));
    }
    return list;
  }

  kiln_model *handle_ = nullptr;
};

class Weights {
public:
  Weights() = default;
  explicit Weights(kiln_weights *adopted) : handle_(adopted) {}
  static Weights open(const Model &model, const std::string &path) {
    kiln_weights *w = nullptr;
    check(kiln_weights_open(model.get(), path.c_str(), &w));
    return Weights(w);
  }
  Weights(const Weights &other) : handle_(other.handle_) { kiln_weights_retain(handle_); }
  Weights(Weights &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Weights &operator=(Weights other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Weights() { kiln_weights_release(handle_); }

  kiln_weights *get() const { return handle_; }

private:
  kiln_weights *handle_ = nullptr;
};

// kiln_session_options with the defaults of kiln_session_options_initialize.
inline kiln_session_options defaultSessionOptions() {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  return options;
}

class Session {
public:
  // weights may be empty (default-constructed) for a model without parameters.
  Session(const Model &model, const Weights &weights,
          const kiln_session_options *options = nullptr) {
    check(kiln_session_create(model.get(), weights.get(), options, &handle_));
  }
  Session(Session &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { kiln_session_release(handle_); }

  kiln_session *get() const { return handle_; }

  void run(const std::string &entry, const std::vector<TensorArg> &inputs) {
    std::vector<kiln_tensor> raw;
    raw.reserve(inputs.size());
    for (const TensorArg &t : inputs)
      raw.push_back(t.raw());
    check(kiln_session_run(handle_, entry.c_str(), raw.data(), raw.size()));
  }

  size_t outputCount() const { return kiln_session_output_count(handle_); }
  OutputView output(const std::string &name) const {
    kiln_tensor t;
    check(kiln_session_get_output(handle_, name.c_str(), &t));
    return view(t);
  }
  OutputView outputAt(size_t index) const {
    kiln_tensor t;
    check(kiln_session_get_output_at(handle_, index, &t));
    return view(t);
  }
  // A copy of an output's elements; throws if T is not its dtype.
  template <typename T> std::vector<T> outputData(const std::string &name) const {
    OutputView out = output(name);
    const T *data = out.as<T>();
    return std::vector<T>(data, data + elementCount(out.shape));
  }
  // Takes an output's memory out of the session, without a copy (see
  // kiln_session_detach_output: the next run allocates a fresh block for it).
  Buffer detachOutput(const std::string &name) {
    kiln_buffer *b = nullptr;
    check(kiln_session_detach_output(handle_, name.c_str(), &b));
    return Buffer(b);
  }
  kiln_session_stats stats() const {
    kiln_session_stats s;
    kiln_session_get_stats(handle_, &s);
    return s;
  }

  // Session state (see kiln_session_get_state and friends in runtime.h).
  OutputView state(const std::string &name) const {
    kiln_tensor t;
    check(kiln_session_get_state(handle_, name.c_str(), &t));
    return view(t);
  }
  void gatherStates(const std::vector<int32_t> &rows) {
    check(kiln_session_gather_states(handle_, rows.data(), rows.size()));
  }
  void clearStates() { kiln_session_clear_states(handle_); }

  // Profiling (a session created with kiln_session_options.profile; see runtime.h). The
  // strings in the calls and rows live as long as the model.
  std::vector<kiln_profile_call> profileCalls() const {
    const kiln_profile_call *calls = nullptr;
    size_t count = 0;
    check(kiln_session_profile_calls(handle_, &calls, &count));
    return std::vector<kiln_profile_call>(calls, calls + count);
  }
  std::vector<kiln_profile_row> profileSummary(kiln_profile_key by) const {
    const kiln_profile_row *rows = nullptr;
    size_t count = 0;
    check(kiln_session_profile_summary(handle_, by, &rows, &count));
    return std::vector<kiln_profile_row>(rows, rows + count);
  }
  void writeProfileTrace(const std::string &path) const {
    check(kiln_session_profile_write_trace(handle_, path.c_str()));
  }
  void resetProfile() { check(kiln_session_profile_reset(handle_)); }

private:
  static OutputView view(const kiln_tensor &t) {
    return {t.name, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank), t.data};
  }

  kiln_session *handle_ = nullptr;
};

inline void writeSafetensors(const std::string &path,
                             const std::vector<TensorArg> &tensors) {
  std::vector<kiln_tensor> raw;
  raw.reserve(tensors.size());
  for (const TensorArg &t : tensors)
    raw.push_back(t.raw());
  check(kiln_safetensors_write(path.c_str(), raw.data(), raw.size()));
}

} // namespace kiln

#endif // KILN_RUNTIME_HPP
