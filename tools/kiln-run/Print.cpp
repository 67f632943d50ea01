//===- Print.cpp - Showing models and outputs -----------------------------===//
//
// Text rendering of model listings, output tensors, run times and kernel profiles.
//
//===----------------------------------------------------------------------===//

#include "Print.h"

#include "HostTensor.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace kiln::driver {

namespace {

std::string dimsText(const std::vector<std::string> &dims) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d)
    s += (d ? ", " : "") + dims[d];
  return s + "]";
}

double valueAt(const kiln::OutputView &t, int64_t i) {
  switch (t.dtype) {
  case KILN_DTYPE_F32:
    return static_cast<const float *>(t.data)[i];
  case KILN_DTYPE_I32:
    return static_cast<const int32_t *>(t.data)[i];
  case KILN_DTYPE_I64:
    return double(static_cast<const int64_t *>(t.data)[i]);
  case KILN_DTYPE_BF16: // weights only: never an input or an output
  case KILN_DTYPE_F16:
  case KILN_DTYPE_I8:
    break;
  }
  return 0;
}

std::string format(const kiln::OutputView &t, int64_t i) {
  char buf[32];
  if (t.dtype == KILN_DTYPE_F32)
    std::snprintf(buf, sizeof buf, "%.6g", double(static_cast<const float *>(t.data)[i]));
  else if (t.dtype == KILN_DTYPE_I32)
    std::snprintf(buf, sizeof buf, "%d", static_cast<const int32_t *>(t.data)[i]);
  else
    std::snprintf(buf, sizeof buf, "%lld",
                  static_cast<long long>(static_cast<const int64_t *>(t.data)[i]));
  return buf;
}

void printRange(std::FILE *out, const kiln::OutputView &t, int64_t from, int64_t to) {
  for (int64_t i = from; i < to; ++i)
    std::fprintf(out, "%s%s", i > from ? " " : "", format(t, i).c_str());
}

void printProfileRows(std::FILE *out, const char *title,
                      const std::vector<kiln_profile_row> &rows, uint64_t totalNs) {
  int width = 24;
  for (const kiln_profile_row &row : rows)
    width = std::max(width, int(std::string(row.name).size()));
  std::fprintf(out, "  %-*s %8s %11s %11s %7s\n", width, title, "calls", "total ms",
               "mean us", "%");
  for (const kiln_profile_row &row : rows)
    std::fprintf(out, "  %-*s %8llu %11.3f %11.2f %7.2f\n", width,
                 *row.name ? row.name : "(no source line)",
                 static_cast<unsigned long long>(row.calls), double(row.total_ns) / 1e6,
                 double(row.total_ns) / 1e3 / double(row.calls),
                 totalNs ? 100.0 * double(row.total_ns) / double(totalNs) : 0.0);
}

/// The target's feature list holds "cuda" for a model whose kernels run on an NVIDIA GPU,
/// and "cuda_capability_NN" for the oldest GPU its PTX is for.
bool hasFeature(const std::string &target, const std::string &feature) {
  return ("-" + target + "-").find("-" + feature + "-") != std::string::npos;
}

void printDevice(std::FILE *out, const std::string &target) {
  if (!hasFeature(target, "cuda"))
    return;
  std::string capability = "any";
  for (const char *cc : {"30", "32", "35", "50", "61", "70", "75", "80", "86"})
    if (hasFeature(target, std::string("cuda_capability_") + cc)) {
      capability = std::string(1, cc[0]) + "." + (cc + 1) + " or newer";
      break;
    }
  std::fprintf(out,
               "device: CUDA; needs an NVIDIA GPU (compute capability %s) and its driver "
               "(libcuda.so) at run time\n",
               capability.c_str());
}

/// " (int8 of 'w' rows [0, 512))" for a parameter converted at load, "" otherwise.
std::string sourceText(const kiln::Model &model, size_t parameter) {
  kiln_parameter_source source;
  kiln::check(kiln_model_parameter_source(model.get(), parameter, &source));
  if (!*source.conversion)
    return "";
  std::string text =
      std::string(" (") + source.conversion + " of '" + source.tensor + "'";
  if (source.has_rows)
    text += " rows [" + std::to_string(source.row_begin) + ", " +
            std::to_string(source.row_end) + ")";
  return text + ")";
}

} // namespace

void printModel(std::FILE *out, const kiln::Model &model) {
  std::vector<kiln::TensorInfo> params = model.parameters();
  std::vector<std::string> entries = model.entries();
  std::fprintf(out, "model %s (target %s): %zu entr%s, %zu parameter%s, %s weights\n",
               model.name().c_str(),
               model.target().empty() ? "unknown" : model.target().c_str(),
               entries.size(), entries.size() == 1 ? "y" : "ies", params.size(),
               params.size() == 1 ? "" : "s", kiln_model_weight_precision(model.get()));
  printDevice(out, model.target());
  for (size_t e = 0; e < entries.size(); ++e) {
    std::string dims;
    for (size_t d = 0; d < kiln_model_dim_count(model.get(), e); ++d)
      dims += std::string(d ? ", " : "") + kiln_model_dim_name(model.get(), e, d);
    std::fprintf(out, "entry %s%s\n", entries[e].c_str(),
                 dims.empty() ? "" : (" (dynamic dims: " + dims + ")").c_str());
    for (const kiln::TensorInfo &t : model.inputs(entries[e]))
      std::fprintf(
          out, "  input  %s: %s %s%s\n", t.name.c_str(), kiln_dtype_name(t.dtype),
          dimsText(t.dims).c_str(),
          t.hasBounds ? (", values in [" + t.boundsMin + ", " + t.boundsMax + "]").c_str()
                      : "");
    for (const kiln::TensorInfo &t : model.outputs(entries[e]))
      std::fprintf(out, "  output %s: %s %s\n", t.name.c_str(), kiln_dtype_name(t.dtype),
                   dimsText(t.dims).c_str());
  }
  if (!params.empty())
    std::fprintf(out, "parameters:\n");
  for (size_t i = 0; i < params.size(); ++i) {
    const kiln::TensorInfo &p = params[i];
    std::fprintf(out, "  %s: %s %s%s\n", p.name.c_str(), kiln_dtype_name(p.dtype),
                 formatShape(p.shape).c_str(), sourceText(model, i).c_str());
  }
}

void printOutput(std::FILE *out, const kiln::OutputView &t, PrintMode mode) {
  const int64_t n = kiln::elementCount(t.shape);
  std::fprintf(out, "output %s: %s %s\n", t.name.c_str(), kiln_dtype_name(t.dtype),
               formatShape(t.shape).c_str());
  if (mode == PrintMode::None)
    return;
  if (n == 0) {
    std::fprintf(out, "  (empty)\n");
    return;
  }
  if (mode == PrintMode::Full) {
    const int64_t row = t.shape.empty() ? 1 : t.shape.back();
    for (int64_t start = 0; start < n; start += row) {
      std::string index;
      int64_t rest = start / row;
      // Leading indices of this row, e.g. "[1, 2, :]" for a rank-3 tensor.
      for (size_t d = t.shape.size() - (t.shape.empty() ? 0 : 1); d-- > 0;) {
        index = std::to_string(rest % t.shape[d]) + (index.empty() ? "" : ", ") + index;
        rest /= t.shape[d];
      }
      if (t.shape.size() > 1)
        std::fprintf(out, "  [%s, :] ", index.c_str());
      else
        std::fprintf(out, "  ");
      printRange(out, t, start, start + row);
      std::fprintf(out, "\n");
    }
    return;
  }
  constexpr int64_t kShown = 6;
  if (n <= 2 * kShown) {
    std::fprintf(out, "  values: ");
    printRange(out, t, 0, n);
  } else {
    std::fprintf(out, "  values: ");
    printRange(out, t, 0, kShown);
    std::fprintf(out, " ... ");
    printRange(out, t, n - kShown, n);
  }
  double sum = 0, absMax = 0;
  int64_t nonFinite = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = valueAt(t, i);
    if (!std::isfinite(v)) {
      ++nonFinite;
      continue;
    }
    sum += v;
    absMax = std::fmax(absMax, std::fabs(v));
  }
  std::fprintf(out, "\n  mean=%.6g abs-max=%.6g", sum / double(n - nonFinite), absMax);
  // A NaN hidden in a mean is the bug a summary exists to show.
  if (nonFinite)
    std::fprintf(out, " non-finite=%lld", static_cast<long long>(nonFinite));
  std::fprintf(out, "\n");
}

void printTimes(std::FILE *out, const std::vector<double> &times) {
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
  std::fprintf(out,
               "time: median %.3f ms, min %.3f ms over %zu run%s (mean %.3f ms, max "
               "%.3f ms, total %.3f ms)\n",
               median, sorted.front(), n, n == 1 ? "" : "s", mean, sorted.back(),
               mean * double(n));
}

void printProfile(std::FILE *out, const kiln::Session &session) {
  // Runs are numbered from 0 at the last reset, and every run calls at least one kernel.
  uint64_t runs = 0;
  for (const kiln_profile_call &call : session.profileCalls())
    runs = std::max<uint64_t>(runs, uint64_t(call.run) + 1);
  std::vector<kiln_profile_row> byKernel = session.profileSummary(KILN_PROFILE_BY_KERNEL);
  uint64_t calls = 0, totalNs = 0;
  for (const kiln_profile_row &row : byKernel) {
    calls += row.calls;
    totalNs += row.total_ns;
  }
  std::fprintf(out,
               "profile: %llu run%s, %llu kernel calls, %.3f ms in kernels (%.3f ms "
               "per run)\n",
               static_cast<unsigned long long>(runs), runs == 1 ? "" : "s",
               static_cast<unsigned long long>(calls), double(totalNs) / 1e6,
               runs ? double(totalNs) / 1e6 / double(runs) : 0.0);
  printProfileRows(out, "by kernel", byKernel, totalNs);
  printProfileRows(out, "by source line", session.profileSummary(KILN_PROFILE_BY_LOC),
                   totalNs);
}

} // namespace kiln::driver
