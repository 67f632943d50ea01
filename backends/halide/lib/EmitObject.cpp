//===- EmitObject.cpp - A kernel's object file from its Halide module -----===//
//
// Halide 14 lowers a schedule's `prefetch` to llvm.prefetch with locality 0 ("no
// temporal locality"), which x86 encodes as prefetchnta. Kiln's prefetches (the dot
// form's next weight panel, SchedulesCpuMatmulDot.cpp; the panel schedule's next panel
// and rows, PanelPrefetch.h) fetch lines that the same kernel reads a few microseconds
// later, often more than once (one pass per row tile). Intel documents that its server
// cores bring prefetchnta's lines into L1 but not L2, and on a Cascade Lake VM the NTA
// prefetch made transformer_base's short encodes and batched decode steps 2x slower
// than no prefetch at all, where prefetcht0 is level with none or ahead
// (SchedulesCpuMatmulDot.cpp has the figures, at the prefetch). So each kernel's
// prefetches get the level its schedules asked for (CodegenRequests in Schedules.h):
// locality 3 (prefetcht0, every level) or 2 (prefetcht1, L2 and beyond: on Zen 4 the
// weight streams of batched decode steps gained from it). The LLVM module is Halide's
// own, after its optimisation; only the prefetch calls' locality changes before the
// machine code is emitted. Halide's JIT (the unit tests, KernelBench) has no such step
// and keeps prefetchnta.
//
//===----------------------------------------------------------------------===//

#include "EmitObject.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace kiln::halide_backend {

namespace {

/// llvm.prefetch(address, rw, locality, cache type): locality is operand 2, 0 to 3.
constexpr unsigned kLocalityOperand = 2;

/// The locality that x86 encodes as the prefetch into `level`.
int localityOf(PrefetchLevel level) {
  switch (level) {
  case PrefetchLevel::L1:
    return 3; // prefetcht0
  case PrefetchLevel::L2:
    return 2; // prefetcht1
  }
  return 3;
}

void setPrefetchLevel(llvm::Module &module, PrefetchLevel level) {
  const int locality = localityOf(level);
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
            call && call->getIntrinsicID() == llvm::Intrinsic::prefetch)
          call->setArgOperand(
              kLocalityOperand,
              llvm::ConstantInt::get(call->getArgOperand(kLocalityOperand)->getType(),
                                     locality));
}

} // namespace

void emitKernelFiles(const Halide::Module &module,
                     const std::map<Halide::OutputFileType, std::string> &outputs,
                     PrefetchLevel prefetchLevel) {
  using Halide::OutputFileType;
  std::map<OutputFileType, std::string> machineCode, others;
  for (const auto &[type, path] : outputs)
    (type == OutputFileType::object || type == OutputFileType::assembly ? machineCode
                                                                        : others)
        .emplace(type, path);
  // Submodules (offloaded code) are resolved by Module::compile itself; Kiln's kernels
  // have none, and would keep Halide's prefetches if they had.
  if (machineCode.empty() || !module.submodules().empty()) {
    module.compile(outputs);
    return;
  }
  if (!others.empty())
    module.compile(others);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir =
      Halide::compile_module_to_llvm_module(module, context);
  setPrefetchLevel(*ir, prefetchLevel);
  for (const auto &[type, path] : machineCode) {
    std::unique_ptr<llvm::raw_fd_ostream> out = Halide::make_raw_fd_ostream(path);
    if (type == OutputFileType::object)
      Halide::compile_llvm_module_to_object(*ir, *out);
    else
      Halide::compile_llvm_module_to_assembly(*ir, *out);
  }
}

} // namespace kiln::halide_backend
