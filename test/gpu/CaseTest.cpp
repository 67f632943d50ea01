//===- CaseTest.cpp - Recorded cases run on the GPU against their expected outputs ===//
//
// A case is a directory with case.txt (test/gpu/README.md), the weights, and .npy files
// of each run's inputs and expected outputs: the reference interpreter's for the e2e op
// models (recorded on the build machine, KILN_RECORD_CASES), PyTorch's for the base
// Transformer (written on the device by make_pytorch_cases.py). The reference links
// MLIR, which cannot travel to the device; its answers can.
//
//===----------------------------------------------------------------------===//

#include "ExpectClose.h"
#include "Npy.h"

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

struct NamedFile {
  std::string name, file;
};

struct Run {
  std::string entry;
  std::vector<NamedFile> inputs, expects;
};

struct Case {
  fs::path dir;
  std::string model, weights;
  double tolerance = 1e-5; // issue 12: every op kernel within 1e-5 of the reference
  std::vector<Run> runs;
};

/// Parses DIR/case.txt; a malformed line is a test failure naming it.
Case readCase(const fs::path &dir) {
  Case c;
  c.dir = dir;
  std::ifstream in(dir / "case.txt");
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::istringstream words(line);
    std::string keyword, value;
    words >> keyword >> value;
    std::string rest;
    std::getline(words, rest);
    if (!rest.empty() && rest[0] == ' ')
      rest.erase(0, 1); // a tensor's name, which may hold spaces
    if (keyword == "model")
      c.model = value;
    else if (keyword == "weights")
      c.weights = value;
    else if (keyword == "tolerance")
      c.tolerance = std::stod(value);
    else if (keyword == "run")
      c.runs.push_back({value, {}, {}});
    else if ((keyword == "input" || keyword == "expect") && !c.runs.empty())
      (keyword == "input" ? c.runs.back().inputs : c.runs.back().expects)
          .push_back({rest, value});
    else
      ADD_FAILURE() << (dir / "case.txt").string() << ":" << number
                    << ": expected 'model', 'weights', 'tolerance', 'run', or 'input' / "
                       "'expect' after a 'run', got '"
                    << line << "'";
  }
  return c;
}

std::string take(kiln_status *status) {
  if (!status)
    return "";
  std::string message =
      std::string(kiln_status_code_string(kiln_status_get_code(status))) + ": " +
      kiln_status_get_message(status);
  kiln_status_free(status);
  return message;
}

/// The declared dtype of an entry's input or output, which the .npy is read as.
kiln_dtype declaredDtype(kiln_model *model, size_t entry, const std::string &name,
                         bool input) {
  size_t count = input ? kiln_model_input_count(model, entry)
                       : kiln_model_output_count(model, entry);
  for (size_t i = 0; i < count; ++i) {
    kiln_tensor_info info;
    if (take(input ? kiln_model_input_info(model, entry, i, &info)
                   : kiln_model_output_info(model, entry, i, &info))
            .empty() &&
        name == info.name)
      return info.dtype;
  }
  ADD_FAILURE() << "the model has no " << (input ? "input" : "output") << " '" << name
                << "'";
  return KILN_DTYPE_F32;
}

void compare(const std::string &what, const kiln_tensor &actual,
             const kiln::driver::HostTensor &expected, double tolerance) {
  std::vector<int64_t> shape(actual.shape, actual.shape + actual.rank);
  ASSERT_EQ(shape, expected.shape) << what;
  ASSERT_EQ(actual.dtype, expected.dtype) << what;
  size_t bytes = expected.bytes.size();
  if (expected.dtype != KILN_DTYPE_F32) {
    EXPECT_EQ(std::memcmp(actual.data, expected.bytes.data(), bytes), 0)
        << what << ": integers differ";
    return;
  }
  std::vector<float> want(bytes / sizeof(float));
  std::memcpy(want.data(), expected.bytes.data(), bytes);
  double error = kiln::e2e::expectClose(what, static_cast<const float *>(actual.data),
                                        want, tolerance);
  // The measured error, for choosing tolerances on the device (stdout of the test).
  std::printf("  %s: relative error %.3g\n", what.c_str(), error);
}

/// Runs every run of the case in one session on the model's CUDA build and compares.
void runCase(const Case &c) {
  SCOPED_TRACE(c.dir.string());
  std::string library = "models/" + c.model + "_cuda.so";
  kiln_model *model = nullptr;
  kiln_weights *weights = nullptr;
  kiln_session *session = nullptr;
  std::string error = take(kiln_model_open(library.c_str(), &model));
  if (error.empty() && !c.weights.empty())
    error =
        take(kiln_weights_open(model, (c.dir / c.weights).string().c_str(), &weights));
  if (error.empty())
    error = take(kiln_session_create(model, weights, nullptr, &session));
  EXPECT_EQ(error, "") << library;
  for (size_t r = 0; error.empty() && r < c.runs.size(); ++r) {
    const Run &run = c.runs[r];
    size_t entry = 0;
    if (!(error = take(kiln_model_find_entry(model, run.entry.c_str(), &entry))).empty())
      break;
    std::vector<kiln::driver::HostTensor> values;
    for (const NamedFile &in : run.inputs)
      values.push_back(kiln::driver::readNpy((c.dir / in.file).string(),
                                             declaredDtype(model, entry, in.name, true)));
    std::vector<kiln_tensor> tensors;
    for (size_t i = 0; i < values.size(); ++i)
      tensors.push_back({run.inputs[i].name.c_str(), values[i].dtype,
                         int32_t(values[i].shape.size()), values[i].shape.data(),
                         values[i].bytes.data()});
    error = take(
        kiln_session_run(session, run.entry.c_str(), tensors.data(), tensors.size()));
    EXPECT_EQ(error, "") << "run " << r << " (" << run.entry << ")";
    for (size_t o = 0; error.empty() && o < run.expects.size(); ++o) {
      const NamedFile &out = run.expects[o];
      kiln_tensor actual;
      std::string got = take(kiln_session_get_output(session, out.name.c_str(), &actual));
      EXPECT_EQ(got, "") << "output '" << out.name << "'";
      if (got.empty())
        compare(c.dir.filename().string() + " run " + std::to_string(r) + " '" +
                    out.name + "'",
                actual,
                kiln::driver::readNpy((c.dir / out.file).string(),
                                      declaredDtype(model, entry, out.name, false)),
                c.tolerance);
    }
  }
  kiln_session_release(session);
  kiln_weights_release(weights);
  kiln_model_release(model);
}

/// Runs every case under `root`, at least one.
void runCases(const fs::path &root, const char *origin) {
  ASSERT_TRUE(fs::is_directory(root)) << root.string() << " is missing: " << origin;
  std::vector<fs::path> dirs;
  for (const fs::directory_entry &e : fs::directory_iterator(root))
    if (fs::exists(e.path() / "case.txt"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  ASSERT_FALSE(dirs.empty()) << "no cases under " << root.string() << ": " << origin;
  for (const fs::path &dir : dirs)
    runCase(readCase(dir));
}

} // namespace

TEST(GpuKernels, EveryRecordedOpCaseMatchesTheReferenceInterpreter) {
  runCases("cases/ops", "tools/make-gpu-bundle.sh records them from the e2e tests");
}

TEST(GpuConformance, BaseTransformerMatchesPyTorch) {
  runCases("cases/pytorch", "tools/run-gpu-tests.sh writes them with "
                            "test/gpu/make_pytorch_cases.py before the tests");
}
