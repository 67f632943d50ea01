//===- Harness.cpp - Running a compiled model against the reference -------===//

#include "Harness.h"
#include "ExpectClose.h"
#include "Npy.h"

#include "kiln/ir/KilnOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

namespace kiln::e2e {

std::string buildDir() { return KILN_E2E_BUILD_DIR; }

std::string modelLibrary(const std::string &name) {
  return buildDir() + "/" + name + ".so";
}

bool expectOk(kiln_status *status, const char *what) {
  if (!status)
    return true;
  ADD_FAILURE() << what
                << " failed: " << kiln_status_code_string(kiln_status_get_code(status))
                << ": " << kiln_status_get_message(status);
  kiln_status_free(status);
  return false;
}

llvm::Optional<llvm::json::Value> manifestOf(kiln_model *model) {
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(kiln_model_manifest_json(model));
  if (!json) {
    ADD_FAILURE() << "the manifest is not JSON: " << llvm::toString(json.takeError());
    return llvm::None;
  }
  return std::move(*json);
}

namespace {

std::vector<int64_t> shapeOf(const kiln_tensor_info &info, const Dims &dims) {
  std::vector<int64_t> shape;
  for (int32_t d = 0; d < info.rank; ++d) {
    if (info.shape[d] >= 0) {
      shape.push_back(info.shape[d]);
      continue;
    }
    auto found = dims.find(info.dims[d]);
    EXPECT_NE(found, dims.end()) << "the test gives no size for dimension '"
                                 << info.dims[d] << "' of '" << info.name << "'";
    shape.push_back(found == dims.end() ? 1 : found->second);
  }
  return shape;
}

reference::HostTensor randomTensor(const std::vector<int64_t> &shape,
                                   std::mt19937 &random) {
  reference::HostTensor t = reference::HostTensor::floats(shape);
  t.f32.resize(t.numElements());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float &v : t.f32)
    v = uniform(random);
  return t;
}

/// Random i32 (or, `wide`, i64) integers within the input's bounds (a window of them
/// when they are wide).
reference::HostTensor randomInts(const std::vector<int64_t> &shape, int64_t lo,
                                 int64_t hi, bool wide, std::mt19937 &random) {
  reference::HostTensor t = reference::HostTensor::ints(shape);
  lo = std::max<int64_t>(lo, -1000);
  hi = std::max(lo, std::min<int64_t>(hi, 1000));
  std::uniform_int_distribution<int64_t> uniform(lo, hi);
  for (int32_t &v : t.i32)
    v = static_cast<int32_t>(uniform(random));
  if (!wide)
    return t;
  return reference::HostTensor::longs(shape, {t.i32.begin(), t.i32.end()});
}

kiln_tensor runtimeTensor(const std::string &name, const reference::HostTensor &t) {
  kiln_dtype dtype = t.isInt ? KILN_DTYPE_I32 : t.isI64 ? KILN_DTYPE_I64 : KILN_DTYPE_F32;
  const void *data = t.isInt   ? static_cast<const void *>(t.i32.data())
                     : t.isI64 ? static_cast<const void *>(t.i64.data())
                               : t.f32.data();
  return {name.c_str(), dtype, static_cast<int32_t>(t.shape.size()), t.shape.data(),
          data};
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dimsString(const Dims &dims) {
  std::string s;
  for (const auto &[name, size] : dims)
    s += (s.empty() ? "" : ", ") + name + "=" + std::to_string(size);
  return s;
}

} // namespace

Harness::Harness(const std::string &library, dsl::ModelBuildFn build, uint32_t seed,
                 const kiln_session_options *options)
    : reference_(build()), random_(seed) {
  if (!reference_.ok()) {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    reference_.printErrors(os);
    ADD_FAILURE() << "the model does not build:\n" << os.str();
    return;
  }
  if (!expectOk(kiln_model_open(library.c_str(), &model_), "kiln_model_open"))
    return;

  // A random checkpoint, written as safetensors for the runtime and kept for the
  // reference, which reads the model as built: a parameter that the runtime converts
  // at load time (a CPU model's weight panels) gets its source tensor, shaped as the
  // model declares it.
  size_t count = kiln_model_parameter_count(model_);
  std::map<std::string, std::vector<int64_t>> shapes, declared;
  module().walk([&](ParameterOp p) {
    llvm::ArrayRef<int64_t> shape = p.getType().cast<mlir::RankedTensorType>().getShape();
    declared[p.name().str()] = shape.vec();
  });
  for (size_t i = 0; i < count; ++i) {
    kiln_tensor_info info;
    kiln_parameter_source source;
    if (!expectOk(kiln_model_parameter_info(model_, i, &info),
                  "kiln_model_parameter_info") ||
        !expectOk(kiln_model_parameter_source(model_, i, &source),
                  "kiln_model_parameter_source"))
      return;
    std::vector<int64_t> shape = shapeOf(info, {});
    if (std::string(source.conversion) == "panels") {
      auto found = declared.find(source.tensor);
      if (found == declared.end()) {
        ADD_FAILURE() << "parameter '" << info.name << "' converts '" << source.tensor
                      << "', which the model does not declare";
        return;
      }
      shapes[source.tensor] = found->second;
    } else if (*source.conversion != '\0') {
      ADD_FAILURE() << "parameter '" << info.name << "' has conversion "
                    << source.conversion << ", which the harness cannot invert";
      return;
    } else {
      shapes[info.name] = shape;
    }
  }
  for (auto &[name, shape] : shapes)
    parameters_[name] = randomTensor(shape, random_);
  std::vector<kiln_tensor> tensors;
  for (auto &[name, t] : parameters_)
    tensors.push_back({name.c_str(), KILN_DTYPE_F32, static_cast<int32_t>(t.shape.size()),
                       t.shape.data(), t.f32.data()});
  if (count > 0) {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createTemporaryFile("kiln-e2e", "safetensors", path)) {
      ADD_FAILURE() << "cannot create a temporary weights file";
      return;
    }
    bool written =
        expectOk(kiln_safetensors_write(path.c_str(), tensors.data(), tensors.size()),
                 "kiln_safetensors_write") &&
        expectOk(kiln_weights_open(model_, path.c_str(), &weights_), "kiln_weights_open");
    llvm::sys::fs::remove(path); // the runtime keeps its mapping
    if (!written)
      return;
  }
  if (!expectOk(kiln_session_create(model_, weights_, options, &session_),
                "kiln_session_create"))
    return;
  if (const char *dir = std::getenv("KILN_RECORD_CASES"))
    startCase(dir, library, tensors);
}

void Harness::startCase(const std::string &root, const std::string &library,
                        const std::vector<kiln_tensor> &weights) {
  static int cases = 0;
  const ::testing::TestInfo *test =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = test ? std::string(test->test_suite_name()) + "." + test->name()
                          : std::string("case");
  std::replace(name.begin(), name.end(), '/', '_');
  caseDir_ = root + "/" + name + "." + std::to_string(cases++);
  if (std::error_code ec = llvm::sys::fs::create_directories(caseDir_)) {
    ADD_FAILURE() << "cannot create " << caseDir_ << ": " << ec.message();
    caseDir_.clear();
    return;
  }
  std::ofstream text(caseDir_ + "/case.txt");
  text << "model " << llvm::sys::path::stem(library).str() << "\n";
  if (!weights.empty() &&
      expectOk(kiln_safetensors_write((caseDir_ + "/weights.safetensors").c_str(),
                                      weights.data(), weights.size()),
               "kiln_safetensors_write"))
    text << "weights weights.safetensors\n";
}

void Harness::recordRun(const std::string &entry, const reference::TensorMap &inputs,
                        const reference::TensorMap &outputs) {
  if (caseDir_.empty())
    return;
  std::ofstream text(caseDir_ + "/case.txt", std::ios::app);
  text << "run " << entry << "\n";
  auto write = [&](const char *kind, const reference::TensorMap &tensors) {
    int index = 0;
    for (const auto &[name, t] : tensors) {
      std::string file = std::to_string(recordedRuns_) + "." + kind + "." +
                         std::to_string(index++) + ".npy";
      driver::writeNpy(caseDir_ + "/" + file, runtimeTensor(name, t));
      text << kind << " " << file << " " << name << "\n";
    }
  };
  write("input", inputs);
  write("expect", outputs);
  ++recordedRuns_;
}

Harness::~Harness() {
  if (!caseDir_.empty() && recordedRuns_ == 0) // it checked only failures
    llvm::sys::fs::remove_directories(caseDir_);
  kiln_session_release(session_);
  kiln_weights_release(weights_);
  kiln_model_release(model_);
}

bool Harness::randomInputs(size_t entryIndex, const Dims &dims, const InputEdit &edit,
                           reference::TensorMap &inputs) {
  for (size_t i = 0; i < kiln_model_input_count(model_, entryIndex); ++i) {
    kiln_tensor_info info;
    if (!expectOk(kiln_model_input_info(model_, entryIndex, i, &info), "input info"))
      return false;
    reference::HostTensor t;
    if (info.dtype == KILN_DTYPE_F32) {
      t = randomTensor(shapeOf(info, dims), random_);
    } else {
      std::vector<const char *> names;
      std::vector<int64_t> values;
      for (const auto &[name, size] : dims) {
        names.push_back(name.c_str());
        values.push_back(size);
      }
      int64_t lo = 0, hi = 0;
      if (!expectOk(kiln_model_input_bounds(model_, entryIndex, i, names.data(),
                                            values.data(), names.size(), &lo, &hi),
                    "input bounds"))
        return false;
      t = randomInts(shapeOf(info, dims), lo, hi, info.dtype == KILN_DTYPE_I64, random_);
    }
    if (edit)
      edit(info.name, t);
    inputs[info.name] = std::move(t);
  }
  return true;
}

/// An entry with a manifest "trim" runs over its longest sequence only and has zeros
/// past it in its outputs (runtime/src/SessionTrim.cpp); the reference runs whole, so
/// its outputs get the same zeros, and the values before them must match.
static void zeroPastLongest(kiln_model *model, const std::string &entry,
                            size_t entryIndex, const reference::TensorMap &inputs,
                            reference::TensorMap &outputs) {
  llvm::Optional<llvm::json::Value> manifest = manifestOf(model);
  const llvm::json::Array *entries =
      manifest ? manifest->getAsObject()->getArray("entries") : nullptr;
  if (!entries)
    return;
  const llvm::json::Object *trim = nullptr;
  for (const llvm::json::Value &e : *entries)
    if (e.getAsObject()->getString("name") == llvm::StringRef(entry))
      trim = e.getAsObject()->getObject("trim");
  if (!trim)
    return;
  std::string dim = trim->getString("dim")->str();
  auto lengths = inputs.find(trim->getString("lengths")->str());
  ASSERT_NE(lengths, inputs.end());
  int64_t longest = 1;
  for (int32_t length : lengths->second.i32)
    longest = std::max<int64_t>(longest, length);
  for (size_t i = 0; i < kiln_model_output_count(model, entryIndex); ++i) {
    kiln_tensor_info info;
    ASSERT_TRUE(expectOk(kiln_model_output_info(model, entryIndex, i, &info), "output"));
    auto out = outputs.find(info.name);
    if (out == outputs.end())
      continue;
    reference::HostTensor &t = out->second;
    for (int32_t axis = 0; axis < info.rank; ++axis) {
      if (info.dims[axis] != dim)
        continue;
      int64_t inner = 1;
      for (size_t d = size_t(axis) + 1; d < t.shape.size(); ++d)
        inner *= t.shape[d];
      int64_t extent = t.shape[size_t(axis)];
      for (int64_t e = 0; e < t.numElements(); ++e) {
        if ((e / inner) % extent < longest)
          continue;
        if (t.isInt)
          t.i32[size_t(e)] = 0;
        else if (t.isI64)
          t.i64[size_t(e)] = 0;
        else
          t.f32[size_t(e)] = 0.0f;
      }
    }
  }
}

/// The runtime's tensors over `inputs`' data.
static std::vector<kiln_tensor> runtimeTensors(const reference::TensorMap &inputs) {
  std::vector<kiln_tensor> tensors;
  for (auto &[name, t] : inputs)
    tensors.push_back(runtimeTensor(name, t));
  return tensors;
}

std::pair<std::string, std::string> Harness::failures(const Dims &dims,
                                                      const std::string &entry) {
  SCOPED_TRACE("dims " + dimsString(dims));
  size_t entryIndex = 0;
  reference::TensorMap inputs;
  if (!ok() ||
      !expectOk(kiln_model_find_entry(model_, entry.c_str(), &entryIndex),
                "find entry") ||
      !randomInputs(entryIndex, dims, nullptr, inputs))
    return {};
  std::vector<kiln_tensor> tensors = runtimeTensors(inputs);
  std::string runtime = "(the runtime succeeded)";
  if (kiln_status *status =
          kiln_session_run(session_, entry.c_str(), tensors.data(), tensors.size())) {
    runtime = std::string(kiln_status_code_string(kiln_status_get_code(status))) + ": " +
              kiln_status_get_message(status);
    kiln_status_free(status);
  }
  llvm::Expected<reference::TensorMap> expected =
      reference::run(module(), entry, inputs, parameters_, &states_);
  if (expected)
    return {runtime, "(the reference succeeded)"};
  return {runtime, llvm::toString(expected.takeError())};
}

size_t Harness::check(const Dims &dims, const std::string &entry, const InputEdit &edit) {
  SCOPED_TRACE("dims " + dimsString(dims));
  if (!ok()) {
    ADD_FAILURE() << "the model is not loaded";
    return 0;
  }
  size_t entryIndex = 0;
  if (!expectOk(kiln_model_find_entry(model_, entry.c_str(), &entryIndex), "find entry"))
    return 0;

  reference::TensorMap inputs;
  if (!randomInputs(entryIndex, dims, edit, inputs))
    return 0;
  std::vector<kiln_tensor> runtimeInputs = runtimeTensors(inputs);
  if (!expectOk(kiln_session_run(session_, entry.c_str(), runtimeInputs.data(),
                                 runtimeInputs.size()),
                "kiln_session_run"))
    return 0;

  llvm::Expected<reference::TensorMap> expected =
      reference::run(module(), entry, inputs, parameters_, &states_);
  if (!expected) {
    ADD_FAILURE() << "the reference fails: " << llvm::toString(expected.takeError());
    return 0;
  }
  zeroPastLongest(model_, entry, entryIndex, inputs, *expected);
  recordRun(entry, inputs, *expected);
  size_t compared = 0;
  for (size_t i = 0; i < kiln_model_output_count(model_, entryIndex); ++i) {
    kiln_tensor_info info;
    if (!expectOk(kiln_model_output_info(model_, entryIndex, i, &info), "output info"))
      continue;
    kiln_tensor actual;
    if (!expectOk(kiln_session_get_output(session_, info.name, &actual), "get output"))
      continue;
    auto want = expected->find(info.name);
    if (want == expected->end()) {
      ADD_FAILURE() << "the reference has no output '" << info.name << "'";
      continue;
    }
    std::vector<int64_t> shape(actual.shape, actual.shape + actual.rank);
    if (shape != want->second.shape) {
      ADD_FAILURE() << "output '" << info.name << "' is " << shapeString(shape)
                    << ", the reference's " << shapeString(want->second.shape);
      continue;
    }
    std::string what = "output '" + std::string(info.name) + "' " + shapeString(shape);
    if (want->second.isInt) {
      EXPECT_EQ(actual.dtype, KILN_DTYPE_I32) << what;
      const auto *data = static_cast<const int32_t *>(actual.data);
      EXPECT_EQ(std::vector<int32_t>(data, data + want->second.i32.size()),
                want->second.i32)
          << what;
    } else if (want->second.isI64) {
      EXPECT_EQ(actual.dtype, KILN_DTYPE_I64) << what;
      const auto *data = static_cast<const int64_t *>(actual.data);
      EXPECT_EQ(std::vector<int64_t>(data, data + want->second.i64.size()),
                want->second.i64)
          << what;
    } else {
      expectClose(what, static_cast<const float *>(actual.data), want->second.f32,
                  kTolerance);
    }
    ++compared;
  }
  return compared;
}

} // namespace kiln::e2e
