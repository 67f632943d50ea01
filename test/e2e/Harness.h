//===- Harness.h - Running a compiled model against the reference -*- C++ -*-===//
//
// Loads NAME.so with the runtime, gives it random weights, and runs an entry point on
// fresh random inputs both there and in the reference interpreter (on the module built
// from the same DSL source), expecting every output to agree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_E2E_HARNESS_H
#define KILN_TEST_E2E_HARNESS_H

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/frontend/Registry.h"
#include "kiln/runtime.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kiln::e2e {

/// Named dynamic dimension sizes, e.g. {{"B", 2}, {"S", 17}}.
using Dims = std::map<std::string, int64_t>;

/// The largest relative error the tests accept: max|a - b| / max|b|.
inline constexpr double kTolerance = 1e-5;

/// Changes a generated input before a run (e.g. to mask a row with -inf).
using InputEdit = std::function<void(const std::string &name, reference::HostTensor &)>;

/// A compiled model, its random weights, and the module the reference interpreter runs.
///
/// With KILN_RECORD_CASES=DIR in the environment, each harness also writes what it
/// checks as a case for the GPU tests (test/gpu/README.md): DIR/TEST.N/case.txt, the
/// weights, and every checked run's inputs and the reference's outputs as .npy files.
class Harness {
public:
  /// Opens `library` and builds the reference module with `build`; the session gets
  /// `options` (null: the defaults). Failures are gtest failures; check ok() afterwards.
  Harness(const std::string &library, dsl::ModelBuildFn build, uint32_t seed = 1,
          const kiln_session_options *options = nullptr);
  ~Harness();
  Harness(const Harness &) = delete;
  Harness &operator=(const Harness &) = delete;

  bool ok() const { return session_ != nullptr; }
  kiln_model *model() const { return model_; }
  kiln_session *session() const { return session_; }
  mlir::ModuleOp module() const { return reference_.module(); }

  /// Runs `entry` with random inputs shaped by `dims` in both backends and expects every
  /// output to match within kTolerance. Returns the number of outputs compared.
  size_t check(const Dims &dims, const std::string &entry = "forward",
               const InputEdit &edit = nullptr);

  /// Runs `entry` with random inputs shaped by `dims` in both backends, expecting both
  /// to fail: the runtime's status ("INVALID_ARGUMENT: ...") and the interpreter's
  /// error, each replaced
  /// by "(the runtime succeeded)" or "(the reference succeeded)" when it did not fail.
  std::pair<std::string, std::string> failures(const Dims &dims,
                                               const std::string &entry);

private:
  /// Fills `inputs` with random values shaped by `dims`, ints within their bounds;
  /// false (with a test failure) when the runtime cannot describe an input.
  bool randomInputs(size_t entryIndex, const Dims &dims, const InputEdit &edit,
                    reference::TensorMap &inputs);

  /// Starts this harness's case under `root` (KILN_RECORD_CASES).
  void startCase(const std::string &root, const std::string &library,
                 const std::vector<kiln_tensor> &weights);
  /// Appends a run and its expected outputs to the case, when recording.
  void recordRun(const std::string &entry, const reference::TensorMap &inputs,
                 const reference::TensorMap &outputs);

  std::string caseDir_;
  int recordedRuns_ = 0;
  dsl::Model reference_;
  kiln_model *model_ = nullptr;
  kiln_weights *weights_ = nullptr;
  kiln_session *session_ = nullptr;
  reference::TensorMap parameters_;
  /// The interpreter's session states, kept across check() calls as the runtime session
  /// keeps its own: decode_start, then decode_step at positions 0, 1, ...
  reference::StateMap states_;
  std::mt19937 random_;
};

/// The path of a model library built by kiln_add_model in this directory.
std::string modelLibrary(const std::string &name);

/// Where a model compiled by kiln_add_model lives: the tests' build directory.
std::string buildDir();

/// The manifest of a loaded model, parsed; None (and a test failure) when it is not JSON.
llvm::Optional<llvm::json::Value> manifestOf(kiln_model *model);

/// Fails the current test with the message of `status` (and frees it) when not OK.
bool expectOk(kiln_status *status, const char *what);

} // namespace kiln::e2e

#endif // KILN_TEST_E2E_HARNESS_H
