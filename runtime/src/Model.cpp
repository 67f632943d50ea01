// Model.cpp - dlopen a compiled model, check it is a Kiln model of our ABI, resolve its
// kernels and route its Halide runtime's errors to us.
#include "Model.h"

#include "CpuFeatures.h"
#include "DType.h"
#include "ElfCheck.h"
#include "Error.h"
#include "HalideErrors.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <sys/stat.h>

namespace kiln::rt {

namespace {

std::string dlerrorText() {
  const char *e = dlerror();
  return e ? e : "unknown dlopen error";
}

std::string typeName(const halide_type_t &t) {
  const char *code = t.code == halide_type_float    ? "f"
                     : t.code == halide_type_int    ? "i"
                     : t.code == halide_type_uint   ? "u"
                     : t.code == halide_type_bfloat ? "bf"
                                                    : "?";
  return cat(code, int(t.bits), t.lanes > 1 ? cat("x", t.lanes) : "");
}

} // namespace

halide_type_t halideType(kiln_dtype dtype) {
  halide_type_t t;
  t.code = dtype == KILN_DTYPE_BF16                             ? halide_type_bfloat
           : dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 ? halide_type_float
                                                                : halide_type_int;
  t.bits = uint8_t(kiln_dtype_size(dtype) * 8);
  t.lanes = 1;
  return t;
}

namespace {

bool sameType(const halide_type_t &t, kiln_dtype dtype) {
  halide_type_t want = halideType(dtype);
  return t.lanes == 1 && t.code == want.code && t.bits == want.bits;
}

} // namespace

Model::Model(const std::string &path) : path_(path) {
  if (path.empty())
    fail(KILN_STATUS_INVALID_ARGUMENT, "model path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    fail(err == ENOENT ? KILN_STATUS_NOT_FOUND : KILN_STATUS_IO_ERROR, "model file '",
         path, "': ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode))
    fail(KILN_STATUS_INVALID_MODEL, "model file '", path, "' is not a regular file");

  // Before dlopen runs any of the library's code (its Halide runtime's constructors are
  // compiled for its target too).
  std::string target = checkElfFile(path);
  checkCpuFeatures(path, target);
  // Without a slash dlopen would search the library path instead of opening this file.
  std::string dlPath = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_LOCAL: each model carries its own Halide runtime; two models must not bind to
  // each other's copy. RTLD_NOW: a missing symbol is an error here, not a crash mid-run.
  handle_ = dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    fail(KILN_STATUS_INVALID_MODEL, "cannot load model '", path, "': ", dlerrorText());

  try {
    auto manifestFn = reinterpret_cast<const char *(*)()>(symbol(abi::kManifestSymbol));
    if (!manifestFn)
      fail(KILN_STATUS_INVALID_MODEL, "'", path,
           "' is not a Kiln model (it does not export ", abi::kManifestSymbol, ")");
    auto abiFn = reinterpret_cast<int (*)()>(symbol(abi::kAbiVersionSymbol));
    if (!abiFn)
      fail(KILN_STATUS_INVALID_MODEL, "'", path, "' is not a Kiln model (it exports ",
           abi::kManifestSymbol, " but not ", abi::kAbiVersionSymbol, ")");
    int version = abiFn();
    if (!abi::isSupportedAbiVersion(version))
      fail(KILN_STATUS_INCOMPATIBLE, "model '", path, "' was built for Kiln model ABI ",
           version, "; this runtime supports ABI ", abi::kMinModelAbiVersion, " to ",
           abi::kModelAbiVersion, " (rebuild the model with a matching compiler)");
    const char *json = manifestFn();
    if (!json)
      fail(KILN_STATUS_INVALID_MODEL, "model '", path,
           "': kiln_model_manifest returned NULL");
    manifestJson_ = json;
    try {
      manifest_ = parseManifest(manifestJson_);
    } catch (const Error &e) {
      fail(e.code(), "model '", path, "': ", e.what());
    }
    // A library without the target section is checked now, before any kernel runs.
    if (target.empty())
      checkCpuFeatures(path, manifest_->target);
    resolveKernels();
    checkKernelSignatures();
    installHalideHandlers();
    device_ = deviceForTarget(manifest_->target,
                              [this](const char *name) { return symbol(name); });
  } catch (...) {
    dlclose(handle_);
    throw;
  }
}

Model::~Model() {
  device_.reset(); // its functions live in the library
  // Halide's runtime stops its thread pool from a destructor that runs on dlclose.
  if (handle_)
    dlclose(handle_);
}

void *Model::symbol(const std::string &name) const {
  dlerror();
  return dlsym(handle_, name.c_str());
}

void Model::resolveKernels() {
  std::vector<std::string> missing;
  for (const std::string &name : manifest_->kernels) {
    auto fn = reinterpret_cast<KernelFn>(symbol(name + abi::kKernelEntrySuffix));
    if (!fn)
      missing.push_back(name + abi::kKernelEntrySuffix);
    kernels_.push_back(fn);
    using MetadataFn = const halide_filter_metadata_t *(*)();
    auto metadataFn =
        reinterpret_cast<MetadataFn>(symbol(name + abi::kKernelMetadataSuffix));
    metadata_.push_back(metadataFn ? metadataFn() : nullptr);
  }
  if (!missing.empty())
    fail(KILN_STATUS_INVALID_MODEL, "model '", path_, "' does not export ",
         missing.size(), " kernel(s) its manifest declares: ",
         join(missing, [](const std::string &s) { return s; }));
}

// Where Halide's metadata is exported, the manifest's use of each kernel must agree with
// what the kernel was compiled for; otherwise the kernel would fail (or worse) mid-run.
void Model::checkKernelSignatures() const {
  for (const EntryDesc &e : manifest_->entries) {
    for (size_t s = 0; s < e.steps.size(); ++s) {
      const StepDesc &step = e.steps[s];
      const halide_filter_metadata_t *md = metadata_[step.kernel];
      if (!md || md->version != 1)
        continue;
      std::string where = cat("model '", path_, "': entry '", e.name, "' step ", s,
                              " (kernel '", kernelName(step.kernel), "')");
      if (size_t(md->num_arguments) != step.args.size())
        fail(KILN_STATUS_INVALID_MODEL, where, ": the kernel takes ", md->num_arguments,
             " arguments, the manifest passes ", step.args.size());
      for (size_t a = 0; a < step.args.size(); ++a) {
        const halide_filter_argument_t &arg = md->arguments[a];
        const BufferDesc &b = e.buffers[step.args[a]];
        bool isOutput = a >= firstOutput(step);
        int wantKind = isOutput ? halide_argument_kind_output_buffer
                                : halide_argument_kind_input_buffer;
        if (arg.kind != wantKind)
          fail(KILN_STATUS_INVALID_MODEL, where, ": argument ", a, " ('", arg.name,
               "') is ",
               arg.kind == halide_argument_kind_input_scalar   ? "a scalar"
               : arg.kind == halide_argument_kind_input_buffer ? "an input buffer"
                                                               : "an output buffer",
               ", expected ", isOutput ? "an output buffer" : "an input buffer");
        if (size_t(arg.dimensions) != b.dims.size() || !sameType(arg.type, b.dtype))
          fail(KILN_STATUS_INVALID_MODEL, where, ": argument ", a, " ('", arg.name,
               "') is a ", arg.dimensions, "-D ", typeName(arg.type),
               " buffer but buffers[", step.args[a], "] is ", kiln_dtype_name(b.dtype),
               " of rank ", b.dims.size());
      }
    }
  }
}

void Model::installHalideHandlers() {
  using ErrorHandler = void (*)(void *, const char *);
  if (auto set = reinterpret_cast<ErrorHandler (*)(ErrorHandler)>(
          symbol("halide_set_error_handler")))
    set(&halideErrorHandler);
  if (auto set = reinterpret_cast<ErrorHandler (*)(ErrorHandler)>(
          symbol("halide_set_custom_print")))
    set(&halidePrintHandler);
  copyToHost_ = reinterpret_cast<BufferFn>(symbol("halide_copy_to_host"));
  deviceFree_ = reinterpret_cast<BufferFn>(symbol("halide_device_free"));
  setThreads_ = reinterpret_cast<SetThreadsFn>(symbol("halide_set_num_threads"));
}

} // namespace kiln::rt
