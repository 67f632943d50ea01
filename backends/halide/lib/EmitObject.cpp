//===- EmitObject.cpp - A kernel's object file from its Halide module -----===//
//
// Halide 14 lowers a schedule's `prefetch` to llvm.prefetch with locality 0 ("no
// temporal locality"), which x86 encodes as prefetchnta. Kiln's one prefetch (the dot
// form's next weight panel, SchedulesCpuMatmul.cpp) fetches lines that the same kernel
// reads a few microseconds later, often more than once (one pass per row tile): what
// locality 3 (prefetcht0, into every cache level) is for. Intel documents that its
// server cores bring prefetchnta's lines into L1 but not L2, and on a Cascade Lake VM
// the NTA prefetch made transformer_base's short encodes and batched decode steps 2x
// slower than no prefetch at all, where prefetcht0 is level with none or ahead
// (SchedulesCpuMatmul.cpp has the figures, at the prefetch). The LLVM module is
// Halide's own, after its optimisation; only the prefetch calls' locality changes
// before the machine code is emitted. Halide's JIT (the unit tests, KernelBench) has
// no such step and keeps prefetchnta.
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
constexpr int kHighLocality = 3;

void keepPrefetchedLinesCached(llvm::Module &module) {
  for (llvm::Function &function : module)
    for (llvm::BasicBlock &block : function)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
            call && call->getIntrinsicID() == llvm::Intrinsic::prefetch)
          call->setArgOperand(
              kLocalityOperand,
              llvm::ConstantInt::get(call->getArgOperand(kLocalityOperand)->getType(),
                                     kHighLocality));
}

} // namespace

void emitKernelFiles(const Halide::Module &module,
                     const std::map<Halide::OutputFileType, std::string> &outputs) {
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
  keepPrefetchedLinesCached(*ir);
  for (const auto &[type, path] : machineCode) {
    std::unique_ptr<llvm::raw_fd_ostream> out = Halide::make_raw_fd_ostream(path);
    if (type == OutputFileType::object)
      Halide::compile_llvm_module_to_object(*ir, *out);
    else
      Halide::compile_llvm_module_to_assembly(*ir, *out);
  }
}

} // namespace kiln::halide_backend
