//===- Compile.cpp - Compiling a kiln module to a shared library ----------===//
//
// plan (buffers, unique kernels) -> lower each unique kernel to a Halide pipeline ->
// compile the pipelines and one Halide runtime to objects, in parallel -> link NAME.so
// with the manifest. MLIR is only touched on the calling thread; the worker threads see
// nothing but their own Halide pipeline, which is what Halide's compiler supports.
//
//===----------------------------------------------------------------------===//

#include "kiln/backends/halide/Compile.h"

#include "CollapseRows.h"
#include "CpuTuning.h"
#include "EmitObject.h"
#include "HalideGuard.h"
#include "Link.h"
#include "Lower.h"
#include "Manifest.h"
#include "Plan.h"
#include "Scheduler.h"

#include "kiln/ir/SourceLocation.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <thread>

using namespace mlir;

namespace kiln::halide_backend {

namespace {

/// A CUDA target that names no capability compiles for Volta (sm_70). Halide 14's own
/// default is sm_20 PTX (ISA 3.2), which today's drivers no longer JIT; its newest flag
/// is cuda_capability_86. PTX runs on every GPU of its capability or newer (the driver
/// compiles it for the device it runs on, an H100's sm_90 included), and 70 is the
/// oldest capability whose warp shuffles are the .sync forms that Volta's independent
/// thread scheduling requires. A higher flag would narrow the GPUs a model runs on for
/// little: the driver's JIT optimises for the device either way, and Halide 14 has no
/// tensor-core or async-copy codegen that a newer capability would unlock.
Halide::Target withDefaultCudaCapability(Halide::Target target) {
  if (!target.has_feature(Halide::Target::CUDA) ||
      target.get_cuda_capability_lower_bound() != 20)
    return target;
  return target.with_feature(Halide::Target::CUDACapability70);
}

FailureOr<Halide::Target> parseTarget(ModuleOp module, llvm::StringRef text) {
  Halide::Target target;
  bool valid =
      Halide::Target::validate_target_string(text.str()) &&
      !guardHalide("parsing the target", [&] { target = Halide::Target(text.str()); });
  if (!valid) {
    module.emitError() << "unsupported target '" << text
                       << "': expected 'host', 'host-cuda' or a Halide target "
                          "string such as 'x86-64-linux-avx2'";
    return failure();
  }
  if (target.os != Halide::Target::Linux) {
    module.emitError() << "unsupported target '" << text
                       << "': models are linked as Linux shared libraries, so the "
                          "target's OS must be linux";
    return failure();
  }
  return withDefaultCudaCapability(target);
}

/// "'kiln.matmul' at model.cpp:12:3" (with its call chain for an op of an nn module),
/// for messages about a kernel.
std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at ";
  if (std::vector<SourceFrame> frames = sourceFrames(op->getLoc()); !frames.empty()) {
    os << frames.front().file << ":" << frames.front().line << ":"
       << frames.front().column;
    if (frames.size() > 1)
      os << " (" << chainText(frames) << ")";
  } else
    os << op->getLoc();
  return os.str();
}

unsigned threadCount(const CompileOptions &options, size_t tasks) {
  unsigned threads = options.threads;
  if (const char *env = std::getenv("KILN_COMPILE_THREADS"))
    threads = static_cast<unsigned>(std::strtoul(env, nullptr, 10));
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<size_t>(threads, tasks));
}

/// Runs fn(0) ... fn(count - 1) on `threads` threads, each index exactly once.
void parallelFor(size_t count, unsigned threads, llvm::function_ref<void(size_t)> fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++)
      fn(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
}

std::string joinPath(llvm::StringRef dir, llvm::StringRef file) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, file);
  return path.str().str();
}

LogicalResult createDirectory(ModuleOp module, llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return module.emitError() << "cannot create the directory '" << dir
                              << "': " << ec.message();
  return success();
}

/// One object file to produce: a kernel, or the Halide runtime.
struct ObjectTask {
  std::string context;
  std::string object;
  /// The op a kernel's error points at; null for the runtime.
  Operation *op = nullptr;
  std::function<void()> compile;
  llvm::Optional<std::string> error;
};

struct Prepared {
  ModelPlan plan;
  Halide::Target target;
};

FailureOr<Prepared> prepare(ModuleOp module, llvm::StringRef name,
                            const CompileOptions &options) {
  if (name.empty() || name.contains('/')) {
    module.emitError() << "invalid model name '" << name
                       << "': it names the library file";
    return failure();
  }
  FailureOr<Halide::Target> target = parseTarget(module, options.target);
  if (failed(target))
    return failure();
  if (std::optional<std::string> error = cpu::coreTuningError()) {
    module.emitError() << *error;
    return failure();
  }
  if (failed(packWeightPanels(module, chooseWeightPanelWidth(*target))))
    return failure();
  FailureOr<ModelPlan> plan =
      planModel(module, name, options.layoutRemarks, chooseCollapsedRows(*target));
  if (failed(plan))
    return failure();
  return Prepared{std::move(*plan), *target};
}

/// Lowers every kernel of `plan` (on this thread: lowering reads MLIR) and returns the
/// objects to compile, the Halide runtime first: it is the largest, so it overlaps the
/// kernels. Every kernel is lowered even after a failure, so that one run reports every
/// op that cannot be compiled.
FailureOr<std::vector<ObjectTask>> planObjects(const ModelPlan &plan,
                                               const Halide::Target &target,
                                               const std::string &kernelsDir,
                                               bool emitStmt) {
  std::vector<ObjectTask> tasks(1);
  tasks[0].context = "compiling the Halide runtime for " + target.to_string();
  tasks[0].object = joinPath(kernelsDir, "halide_runtime.o");
  tasks[0].compile = [object = tasks[0].object, target] {
    Halide::compile_standalone_runtime(object,
                                       target.without_feature(Halide::Target::NoRuntime));
  };

  bool lowered = true;
  Halide::Target kernelTarget = target.with_feature(Halide::Target::NoRuntime);
  for (const KernelPlan &kernel : plan.kernels) {
    ObjectTask task;
    task.op = kernel.op;
    task.context = "compiling kernel '" + kernel.name + "' for " + describeOp(kernel.op);
    task.object = joinPath(kernelsDir, kernel.name + ".o");
    FailureOr<LoweredKernel> pipeline = failure();
    if (llvm::Optional<std::string> error = guardHalide(task.context, [&] {
          if (kernel.denseCopy)
            pipeline = lowerDenseCopy(kernel.op->getResult(0), target);
          else if (kernel.appends > 1)
            pipeline =
                lowerKvAppends(cast<KvAppendOp>(kernel.op), kernel.appends, target);
          else if (kernel.collapsedRows)
            pipeline = lowerCollapsedRows(kernel.op, target);
          else
            pipeline = lowerOp(kernel.op, target);
        })) {
      kernel.op->emitError() << "Halide failed to lower this op to kernel '"
                             << kernel.name << "': " << *error;
      pipeline = failure();
    }
    if (failed(pipeline)) {
      lowered = false;
      continue;
    }
    std::map<Halide::OutputFileType, std::string> outputs = {
        {Halide::OutputFileType::object, task.object}};
    if (emitStmt)
      outputs[Halide::OutputFileType::stmt] = joinPath(kernelsDir, kernel.name + ".stmt");
    task.compile = [pipeline = *pipeline, outputs, kernelTarget, name = kernel.name] {
      std::vector<Halide::Argument> args(pipeline.inputs.begin(), pipeline.inputs.end());
      emitKernelFiles(pipelineOf(pipeline).compile_to_module(args, name, kernelTarget),
                      outputs, pipeline.codegen.prefetchLevel());
    };
    tasks.push_back(std::move(task));
  }
  if (!lowered)
    return failure();
  return tasks;
}

/// Compiles every task's object, in parallel; reports each failure at its op.
LogicalResult compileObjects(ModuleOp module, std::vector<ObjectTask> &tasks,
                             const CompileOptions &options) {
  parallelFor(tasks.size(), threadCount(options, tasks.size()), [&](size_t i) {
    tasks[i].error = guardHalide(tasks[i].context, tasks[i].compile);
  });
  bool compiled = true;
  for (ObjectTask &task : tasks) {
    if (!task.error)
      continue;
    compiled = false;
    InFlightDiagnostic diag = task.op ? task.op->emitError() : module.emitError();
    diag << "Halide failed while " << task.context << ": " << *task.error;
  }
  return success(compiled);
}

} // namespace

FailureOr<std::string> emitManifest(ModuleOp module, llvm::StringRef name,
                                    const CompileOptions &options) {
  FailureOr<Prepared> prepared = prepare(module, name, options);
  if (failed(prepared))
    return failure();
  return writeManifest(prepared->plan, prepared->target.to_string());
}

FailureOr<std::string> compileModel(ModuleOp module, llvm::StringRef name,
                                    const CompileOptions &options, CompileStats *stats) {
  auto start = std::chrono::steady_clock::now();
  FailureOr<Prepared> prepared = prepare(module, name, options);
  if (failed(prepared))
    return failure();
  const ModelPlan &plan = prepared->plan;
  // Before any kernel is compiled: a missing linker should not cost a minute to find.
  llvm::Expected<std::string> cCompiler = findCCompiler(options.cCompiler);
  if (!cCompiler) {
    module.emitError() << llvm::toString(cCompiler.takeError());
    return failure();
  }
  std::string kernelsDir = options.kernelsDir.empty()
                               ? joinPath(options.outputDir, name.str() + ".kernels")
                               : options.kernelsDir;
  if (failed(createDirectory(module, options.outputDir)) ||
      failed(createDirectory(module, kernelsDir)))
    return failure();

  FailureOr<std::vector<ObjectTask>> tasks =
      planObjects(plan, prepared->target, kernelsDir, options.emitStmt);
  if (failed(tasks) || failed(compileObjects(module, *tasks, options)))
    return failure();

  LinkJob job;
  job.output = joinPath(options.outputDir, name.str() + ".so");
  job.workDir = kernelsDir;
  for (const ObjectTask &task : *tasks)
    job.objects.push_back(task.object);
  job.target = prepared->target.to_string();
  job.manifest = writeManifest(plan, job.target);
  job.cCompiler = *cCompiler;
  job.extraArgs = options.extraLinkArgs;
  {
    // A copy beside the objects, for whoever inspects what was compiled.
    std::error_code ignored;
    llvm::raw_fd_ostream(joinPath(kernelsDir, "manifest.json"), ignored) << job.manifest;
  }
  if (llvm::Error error = linkModel(job)) {
    module.emitError() << llvm::toString(std::move(error));
    return failure();
  }

  if (stats) {
    stats->kernels = static_cast<unsigned>(plan.kernels.size());
    stats->steps = 0;
    for (const KernelPlan &kernel : plan.kernels)
      stats->steps += kernel.uses;
    stats->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return job.output;
}

} // namespace kiln::halide_backend
