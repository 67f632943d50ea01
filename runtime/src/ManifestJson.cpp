//===- ManifestJson.cpp - Reading the manifest's JSON ---------------------===//
//
// Every read checks the JSON kind it expects and names the path of what it rejects, so
// that a compiler bug in the manifest surfaces as a message, not a crash.
//
//===----------------------------------------------------------------------===//

#include "ManifestJson.h"

#include <set>

namespace kiln::rt {

void invalid(const std::string &path, const std::string &problem) {
  fail(KILN_STATUS_INVALID_MODEL, "invalid manifest: ", path, ": ", problem);
}

const Json &member(const Json &object, const char *key, const std::string &path) {
  if (!object.isObject())
    invalid(path, cat("expected an object, got ", Json::kindName(object.kind())));
  const Json *value = object.find(key);
  if (!value)
    invalid(path, cat("missing \"", key, "\""));
  return *value;
}

const std::string &getString(const Json &object, const char *key,
                             const std::string &path) {
  const Json &value = member(object, key, path);
  if (!value.isString())
    invalid(at(path, key), cat("expected a string, got ", Json::kindName(value.kind())));
  return value.asString();
}

const std::vector<Json> &getArray(const Json &object, const char *key,
                                  const std::string &path) {
  const Json &value = member(object, key, path);
  if (!value.isArray())
    invalid(at(path, key), cat("expected an array, got ", Json::kindName(value.kind())));
  return value.items();
}

int checkIndex(const Json &value, size_t limit, const std::string &path,
               const char *what) {
  if (!value.isInteger())
    invalid(path, cat("expected an integer index, got ", Json::kindName(value.kind())));
  if (value.asInt() < 0 || uint64_t(value.asInt()) >= limit)
    invalid(path, cat("index ", value.asInt(), " out of range (", limit, " ", what, ")"));
  return int(value.asInt());
}

int getIndex(const Json &object, const char *key, size_t limit, const std::string &path,
             const char *what) {
  return checkIndex(member(object, key, path), limit, at(path, key), what);
}

kiln_dtype getDType(const Json &object, const std::string &path) {
  const std::string &name = getString(object, key::kDType, path);
  std::optional<kiln_dtype> dtype = abi::parseDType(name);
  if (!dtype)
    invalid(at(path, key::kDType),
            cat("unknown dtype \"", name, "\" (expected ",
                alternatives(abi::kDTypeNames,
                             [](const abi::DTypeName &d) { return d.name; }),
                ")"));
  return *dtype;
}

DimExpr getDimItem(const Json &item, const std::string &itemPath, bool isSize,
                   const char *noun) {
  if (item.isInteger()) {
    if (isSize && item.asInt() < 0)
      invalid(itemPath, cat("negative ", noun, " ", item.asInt()));
    return DimExpr::constant(item.asInt());
  }
  if (!item.isString())
    invalid(itemPath, cat("expected an integer or a dimension expression, got ",
                          Json::kindName(item.kind())));
  std::string error;
  auto expr = DimExpr::parse(item.asString(), error);
  if (!expr)
    invalid(itemPath, cat("bad dimension expression \"", item.asString(), "\": ", error));
  if (isSize && expr->isConstant() && expr->constantValue() < 0)
    invalid(itemPath, cat("\"", item.asString(), "\" is negative"));
  return std::move(*expr);
}

std::vector<DimExpr> getShape(const Json &object, const std::string &path) {
  std::vector<DimExpr> dims;
  const auto &items = getArray(object, key::kShape, path);
  for (size_t i = 0; i < items.size(); ++i)
    dims.push_back(getDimItem(items[i], at(path, key::kShape, i), true));
  return dims;
}

// "bounds": [LO, HI] of an input: inclusive, integer inputs only. Names in them are
// resolved with the entry's other dimensions (resolveDims).
void getBounds(const Json &object, TensorDesc &t, const std::string &path) {
  const Json *bounds = object.find(key::kBounds);
  if (!bounds)
    return;
  std::string bpath = at(path, key::kBounds);
  if (t.dtype != KILN_DTYPE_I32 && t.dtype != KILN_DTYPE_I64)
    invalid(bpath, cat("input '", t.name, "' is ", kiln_dtype_name(t.dtype),
                       "; bounds are only allowed on i32 and i64 inputs"));
  if (!bounds->isArray())
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       Json::kindName(bounds->kind())));
  const auto &items = bounds->items();
  if (items.size() != 2)
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       items.size(), " item", items.size() == 1 ? "" : "s"));
  TensorDesc::ValueBounds b{getDimItem(items[0], bpath + "[0]", false),
                            getDimItem(items[1], bpath + "[1]", false)};
  if (b.min.isConstant() && b.max.isConstant() &&
      b.min.constantValue() > b.max.constantValue())
    invalid(bpath, cat("bounds [", b.min.text(), ", ", b.max.text(), "] of input '",
                       t.name, "' admit no value"));
  t.bounds = std::move(b);
}

// Bounds are for inputs: the runtime checks nothing else against them.
void rejectBounds(const Json &object, const std::string &path, const char *what) {
  if (object.isObject() && object.find(key::kBounds))
    invalid(at(path, key::kBounds),
            cat("only entry inputs may declare bounds, not ", what));
}

TensorDesc getTensor(const Json &object, const std::string &path) {
  TensorDesc t;
  t.name = getString(object, key::kName, path);
  if (t.name.empty())
    invalid(at(path, key::kName), "empty name");
  t.dtype = getDType(object, path);
  t.dims = getShape(object, path);
  for (const DimExpr &d : t.dims) {
    t.dimTexts.push_back(d.text());
    t.staticShape.push_back(d.isConstant() ? d.constantValue() : -1);
  }
  return t;
}

void checkUnique(const std::vector<TensorDesc> &tensors, const std::string &path,
                 const char *what) {
  std::set<std::string> seen;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!seen.insert(tensors[i].name).second)
      invalid(cat(path, "[", i, "]"),
              cat("duplicate ", what, " name '", tensors[i].name, "'"));
}

// "value_dim": NAME on an input: a rank-0 integer whose value binds NAME.
void getValueDim(const Json &object, TensorDesc &t, const std::string &path) {
  const Json *v = object.find(key::kValueDim);
  if (!v)
    return;
  std::string vpath = at(path, key::kValueDim);
  if (!v->isString())
    invalid(vpath, cat("expected a dimension name, got ", Json::kindName(v->kind())));
  std::string error;
  auto expr = DimExpr::parse(v->asString(), error);
  if (!expr || !expr->bareName())
    invalid(vpath, cat("\"", v->asString(), "\" is not a dimension name"));
  if (t.dtype != KILN_DTYPE_I32 && t.dtype != KILN_DTYPE_I64)
    invalid(vpath, cat("input '", t.name, "' is ", kiln_dtype_name(t.dtype),
                       "; a value_dim input is i32 or i64"));
  if (!t.dims.empty())
    invalid(vpath, cat("input '", t.name, "' has shape ", t.describe(),
                       "; a value_dim input has rank 0 (one element)"));
  t.valueDim = *expr->bareName();
}

} // namespace kiln::rt
