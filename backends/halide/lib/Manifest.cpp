//===- Manifest.cpp - The model manifest as JSON --------------------------===//
//
// One line per buffer, step and tensor so that a manifest reads well in a diff or when
// printed with --emit=manifest; the layout is docs/manifest.md's.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace kiln::halide_backend {

/// JSON's two-character escape of `c`, or null when it has none.
static const char *shortEscape(unsigned char c) {
  switch (c) {
  case '"':
    return "\\\"";
  case '\\':
    return "\\\\";
  case '\b':
    return "\\b";
  case '\f':
    return "\\f";
  case '\n':
    return "\\n";
  case '\r':
    return "\\r";
  case '\t':
    return "\\t";
  default:
    return nullptr;
  }
}

std::string jsonString(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '"';
  for (unsigned char c : text) {
    if (const char *escape = shortEscape(c))
      os << escape;
    else if (c < 0x20) // other control characters; bytes >= 0x80 are UTF-8 and pass
      os << llvm::format("\\u%04x", c);
    else
      os << c;
  }
  os << '"';
  return os.str();
}

namespace {

/// A static size as a number, a dimension expression as a string.
void writeDim(llvm::raw_ostream &os, const SymDim &dim) {
  if (dim.isStatic())
    os << dim.size;
  else
    os << jsonString(dim.expr);
}

void writeShape(llvm::raw_ostream &os, llvm::ArrayRef<SymDim> shape) {
  os << '[';
  llvm::interleaveComma(shape, os, [&](const SymDim &dim) { writeDim(os, dim); });
  os << ']';
}

/// A bound as the manifest prefers it: a plain integer as a number, anything else (an
/// expression such as "S" or "0-5") as a string.
void writeBound(llvm::raw_ostream &os, llvm::StringRef bound) {
  uint64_t value;
  if (!bound.empty() && llvm::all_of(bound, llvm::isDigit) &&
      !bound.getAsInteger(10, value) && value <= static_cast<uint64_t>(INT64_MAX))
    os << value;
  else
    os << jsonString(bound);
}

void writeTensor(llvm::raw_ostream &os, const TensorPlan &tensor) {
  os << "{\"name\": " << jsonString(tensor.name) << ", \"dtype\": \"" << tensor.dtype
     << "\", \"shape\": ";
  writeShape(os, tensor.shape);
  if (tensor.bounds.size() == 2) {
    os << ", \"bounds\": [";
    writeBound(os, tensor.bounds[0]);
    os << ", ";
    writeBound(os, tensor.bounds[1]);
    os << ']';
  }
  if (!tensor.valueDim.empty())
    os << ", \"value_dim\": " << jsonString(tensor.valueDim);
  if (tensor.buffer >= 0)
    os << ", \"buffer\": " << tensor.buffer;
  os << '}';
}

/// Writes `items` one per line at `indent`, as the members of a JSON array.
template <typename T, typename Fn>
void writeLines(llvm::raw_ostream &os, const std::vector<T> &items, unsigned indent,
                Fn writeItem) {
  os << '[';
  for (size_t i = 0; i < items.size(); ++i) {
    os << (i ? ",\n" : "\n");
    os.indent(indent);
    writeItem(items[i]);
  }
  if (!items.empty())
    os << '\n';
  os.indent(items.empty() ? 0 : indent - 2) << ']';
}

const char *kindName(BufferPlan::Kind kind) {
  switch (kind) {
  case BufferPlan::Kind::Input:
    return "input";
  case BufferPlan::Kind::Parameter:
    return "parameter";
  case BufferPlan::Kind::Temp:
    return "temp";
  case BufferPlan::Kind::View:
    return "view";
  case BufferPlan::Kind::State:
    return "state";
  }
  return "temp";
}

void writeBuffer(llvm::raw_ostream &os, const BufferPlan &buffer) {
  os << "{\"dtype\": \"" << buffer.dtype << "\", \"shape\": ";
  writeShape(os, buffer.shape);
  os << ", \"kind\": \"" << kindName(buffer.kind) << '"';
  switch (buffer.kind) {
  case BufferPlan::Kind::Input:
    os << ", \"input\": " << buffer.index;
    break;
  case BufferPlan::Kind::Parameter:
    os << ", \"parameter\": " << buffer.index;
    break;
  case BufferPlan::Kind::View:
    os << ", \"view_of\": " << buffer.index;
    if (!(buffer.offset.isStatic() && buffer.offset.size == 0)) {
      os << ", \"offset\": ";
      writeDim(os, buffer.offset);
    }
    if (buffer.isStrided()) {
      os << ", \"strides\": ";
      writeShape(os, buffer.strides);
    }
    break;
  case BufferPlan::Kind::State:
    os << ", \"state\": " << buffer.index;
    if (buffer.create)
      os << ", \"create\": true";
    break;
  case BufferPlan::Kind::Temp:
    break;
  }
  os << '}';
}

void writeEntry(llvm::raw_ostream &os, const EntryPlan &entry) {
  auto tensor = [&](const TensorPlan &t) { writeTensor(os, t); };
  os << "{\n      \"name\": " << jsonString(entry.name) << ",\n      \"inputs\": ";
  writeLines(os, entry.inputs, 8, tensor);
  os << ",\n      \"outputs\": ";
  writeLines(os, entry.outputs, 8, tensor);
  os << ",\n      \"buffers\": ";
  writeLines(os, entry.buffers, 8, [&](const BufferPlan &b) { writeBuffer(os, b); });
  os << ",\n      \"steps\": ";
  writeLines(os, entry.steps, 8, [&](const StepPlan &step) {
    os << "{\"kernel\": " << step.kernel << ", \"args\": [";
    llvm::interleaveComma(step.args, os);
    os << "]}";
  });
  os << "\n    }";
}

} // namespace

std::string writeManifest(const ModelPlan &plan, llvm::StringRef target) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "{\n  \"abi_version\": " << kModelAbiVersion
     << ",\n  \"model\": " << jsonString(plan.model)
     << ",\n  \"target\": " << jsonString(target) << ",\n  \"parameters\": ";
  writeLines(os, plan.parameters, 4, [&](const TensorPlan &t) { writeTensor(os, t); });
  if (!plan.states.empty()) {
    // Optional in the manifest: written only by models that keep states.
    os << ",\n  \"states\": ";
    writeLines(os, plan.states, 4, [&](const StatePlan &state) {
      os << "{\"name\": " << jsonString(state.name) << ", \"dtype\": \"" << state.dtype
         << "\", \"rank\": " << state.rank << '}';
    });
  }
  os << ",\n  \"kernels\": ";
  writeLines(os, plan.kernels, 4, [&](const KernelPlan &k) { os << jsonString(k.name); });
  os << ",\n  \"entries\": ";
  writeLines(os, plan.entries, 4, [&](const EntryPlan &e) { writeEntry(os, e); });
  os << "\n}\n";
  return os.str();
}

} // namespace kiln::halide_backend
