//===- ManifestJson.h - Reading the manifest's JSON -------------*- C++ -*-===//
//
// Typed reads of the manifest's JSON values for the parser (Manifest.cpp and the entry
// checks of ManifestBuffers.cpp and ManifestDims.cpp). Each failure throws Error with
// INVALID_MODEL and a message that names the JSON path of the offending value:
// "invalid manifest: entries[0] ('forward').buffers[3].view_of: index 9 out of range".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MANIFESTJSON_H
#define KILN_RUNTIME_MANIFESTJSON_H

#include "Error.h"
#include "Json.h"
#include "Manifest.h"

namespace kiln::rt {

namespace key = abi::key;

/// Fails the manifest: "invalid manifest: PATH: PROBLEM".
[[noreturn]] void invalid(const std::string &path, const std::string &problem);

/// The JSON path of member `key` of the value at `path`: "PATH.KEY".
inline std::string at(const std::string &path, const char *key) {
  return cat(path, ".", key);
}
/// The JSON path of item `i` of array `key` of the value at `path`: "PATH.KEY[I]".
inline std::string at(const std::string &path, const char *key, size_t i) {
  return cat(path, ".", key, "[", i, "]");
}

/// "a, b or c" for a message that lists what was expected.
template <typename Range, typename Fn>
std::string alternatives(const Range &items, Fn &&toString) {
  std::string out;
  size_t n = std::size(items), i = 0;
  for (const auto &item : items) {
    if (i > 0)
      out += i + 1 == n ? " or " : ", ";
    out += toString(item);
    ++i;
  }
  return out;
}

/// Member `key` of `object`, which must be an object that has it.
const Json &member(const Json &object, const char *key, const std::string &path);
const std::string &getString(const Json &object, const char *key,
                             const std::string &path);
const std::vector<Json> &getArray(const Json &object, const char *key,
                                  const std::string &path);
/// Member `key` of `object`: a string that is one of `names`, whose index it returns;
/// `what` names it in the message ("kind").
template <size_t N>
size_t getOneOf(const Json &object, const char *key, const std::string &path,
                const char *what, const char *const (&names)[N]) {
  const std::string &value = getString(object, key, path);
  for (size_t i = 0; i < N; ++i)
    if (value == names[i])
      return i;
  invalid(at(path, key), cat("unknown ", what, " \"", value, "\" (expected ",
                             alternatives(names, [](const char *n) { return n; }), ")"));
}

/// `value` as an index below `limit`; `what` names what it indexes ("buffers").
int checkIndex(const Json &value, size_t limit, const std::string &path,
               const char *what);
int getIndex(const Json &object, const char *key, size_t limit, const std::string &path,
             const char *what);
/// The "dtype" of `object`.
kiln_dtype getDType(const Json &object, const std::string &path);

/// A shape item, a view's offset or stride, or a bound: an integer, or a string holding
/// a dimension expression. Sizes (offsets, strides) must not be negative; bounds may be.
DimExpr getDimItem(const Json &item, const std::string &itemPath, bool isSize,
                   const char *noun = "size");
/// The "shape" of `object`.
std::vector<DimExpr> getShape(const Json &object, const std::string &path);

/// A parameter, input or output: its name, dtype and shape.
TensorDesc getTensor(const Json &object, const std::string &path);
/// Fails on two tensors of one name.
void checkUnique(const std::vector<TensorDesc> &tensors, const std::string &path,
                 const char *what);
/// An input's optional "bounds" and "value_dim".
void getBounds(const Json &object, TensorDesc &t, const std::string &path);
void getValueDim(const Json &object, TensorDesc &t, const std::string &path);
/// Fails when `object` (a parameter or output) declares bounds.
void rejectBounds(const Json &object, const std::string &path, const char *what);
/// Fails when `t` (an input or output: `what`) has a dtype only weights may have.
void rejectWeightDType(const TensorDesc &t, const std::string &path, const char *what);

/// The root's "parameters", each checked, with the source of each converted one
/// (ManifestParameters.cpp).
std::vector<TensorDesc> parseParameters(const Json &root);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MANIFESTJSON_H
