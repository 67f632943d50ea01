//===- ManifestParameters.cpp - The manifest's parameters -----------------===//
//
// The model's "parameters": static shapes, and for a reduced-precision weight the
// checkpoint tensor it is converted from. The combinations of conversion, dtype and rows
// are those kiln.parameter's verifier accepts, checked again here because the runtime
// trusts nothing a model library says; an int8 weight without its scales (or scales
// without their weight) could not be loaded from a pre-converted file.
//
//===----------------------------------------------------------------------===//

#include "ManifestJson.h"

#include "DType.h"

namespace kiln::rt {
namespace {

/// Panels of `width` rows that `rows` rows fill, the last one perhaps in part.
int64_t panelCount(int64_t rows, int64_t width) {
  return rows / width + (rows % width != 0); // no rows + width - 1: it could overflow
}

/// "rows": [start, end) of the source: as many as the parameter's dimension 0, or for
/// panels as many as its panels hold.
std::pair<int64_t, int64_t> getRows(const Json &object, const TensorDesc &p,
                                    Conversion conversion, const std::string &path) {
  const Json &rows = member(object, key::kRows, path);
  std::string rpath = at(path, key::kRows);
  if (!rows.isArray() || rows.items().size() != 2 || !rows.items()[0].isInteger() ||
      !rows.items()[1].isInteger())
    invalid(rpath, "expected [start, end] (integers)");
  int64_t start = rows.items()[0].asInt(), end = rows.items()[1].asInt();
  if (conversion == Conversion::Panels) {
    if (start < 0 || end <= start)
      invalid(rpath, cat("rows [", start, ", ", end, ") of parameter '", p.name,
                         "': expected 0 <= start < end"));
    int64_t filled = panelCount(end - start, p.staticShape[2]);
    if (!panelsFit(p, end - start))
      invalid(rpath, cat("rows [", start, ", ", end, ") of parameter '", p.name,
                         "' do not fit its shape ", p.describe(), ": ", end - start,
                         " rows fill ", filled, filled == 1 ? " panel" : " panels",
                         " of ", p.staticShape[2], " rows, not ", p.staticShape[0]));
    return {start, end};
  }
  if (p.staticShape.empty() || start < 0 || end - start != p.staticShape[0])
    invalid(rpath, cat("rows [", start, ", ", end, ") of parameter '", p.name,
                       "' do not fit its shape ", p.describe(),
                       ": expected [start, start + dimension 0)"));
  return {start, end};
}

/// Whether `p` has the dtype and rank that its conversion produces.
bool conversionFits(Conversion conversion, const TensorDesc &p) {
  switch (conversion) {
  case Conversion::BF16:
    return p.dtype == KILN_DTYPE_BF16;
  case Conversion::Int8:
    return p.dtype == KILN_DTYPE_I8 && !p.staticShape.empty();
  case Conversion::Int8Scale:
    return p.dtype == KILN_DTYPE_F32 && p.staticShape.size() == 1;
  case Conversion::Panels:
    return p.dtype == KILN_DTYPE_F32 && p.staticShape.size() == 3 &&
           p.staticShape[0] >= 1 && p.staticShape[2] >= 1;
  }
  return false;
}

/// What each conversion produces, by Conversion, for the message when `p` is not that.
constexpr const char *kConversionResult[] = {
    "bf16 of any shape", "i8 of rank 1 or more", "f32 of rank 1",
    "f32 of rank 3, [panels, K, width] with panels and width >= 1"};

/// A converted parameter's "source", "conversion" and "rows".
ParameterSource getSource(const Json &object, const TensorDesc &p,
                          const std::string &path) {
  ParameterSource s;
  s.conversion = Conversion(
      getOneOf(object, key::kConversion, path, "conversion", abi::kConversionNames));
  const char *name = abi::conversionName(s.conversion);
  if (!object.find(key::kSource))
    invalid(path, cat("parameter '", p.name, "' has conversion \"", name,
                      "\" but no \"source\" tensor"));
  s.tensor = getString(object, key::kSource, path);
  if (s.tensor.empty())
    invalid(at(path, key::kSource), "empty source tensor name");
  if (!conversionFits(s.conversion, p))
    invalid(at(path, key::kDType),
            cat("parameter '", p.name, "' is ", kiln_dtype_name(p.dtype), " ",
                p.describe(), "; conversion \"", name, "\" makes ",
                kConversionResult[size_t(s.conversion)]));
  if (object.find(key::kRows))
    s.rows = getRows(object, p, s.conversion, path);
  return s;
}

/// The conversions made and stored in pairs: an int8 weight and its scales.
bool isInt8Pair(Conversion conversion) {
  return conversion == Conversion::Int8 || conversion == Conversion::Int8Scale;
}

/// Plain parameters are stored as the model reads them: f32, i32 or i64.
void checkPlain(const Json &object, const TensorDesc &p, const std::string &path) {
  for (const char *k : {key::kSource, key::kRows})
    if (object.find(k))
      invalid(at(path, k),
              cat("parameter '", p.name, "' has \"", k, "\" but no \"conversion\""));
  if (isWeightOnlyDType(p.dtype))
    invalid(at(path, key::kDType),
            cat("parameter '", p.name, "' is ", kiln_dtype_name(p.dtype),
                p.dtype == KILN_DTYPE_F16
                    ? "; f16 is a checkpoint's dtype, converted at load, never a model's"
                    : " without a \"conversion\" (checkpoints hold f32, f16 or bf16)"));
}

/// Every int8 weight has exactly one int8_scale of the same source rows, and the
/// reverse: the two are computed together, and stored together by a converted file.
void checkScalesPaired(const std::vector<TensorDesc> &params) {
  for (size_t i = 0; i < params.size(); ++i) {
    const auto &s = params[i].source;
    if (!s || !isInt8Pair(s->conversion))
      continue;
    int partner = scalePartner(params, i);
    if (partner >= 0 && scalePartner(params, size_t(partner)) == int(i))
      continue;
    const char *wanted = abi::conversionName(
        s->conversion == Conversion::Int8 ? Conversion::Int8Scale : Conversion::Int8);
    invalid(cat(key::kParameters, "[", i, "]"),
            cat("parameter '", params[i].name, "' (", abi::conversionName(s->conversion),
                " of '", s->tensor, "') needs exactly one ", wanted,
                " parameter of the same source rows, ",
                partner < 0 ? std::string("found none")
                            : cat("but '", params[size_t(partner)].name,
                                  "' is one for more than one parameter")));
  }
}

} // namespace

bool panelsFit(const TensorDesc &p, int64_t rows) {
  return rows >= 1 && panelCount(rows, p.staticShape[2]) == p.staticShape[0];
}

int scalePartner(const std::vector<TensorDesc> &params, size_t i) {
  const auto &s = params[i].source;
  if (!s || !isInt8Pair(s->conversion))
    return -1;
  Conversion other =
      s->conversion == Conversion::Int8 ? Conversion::Int8Scale : Conversion::Int8;
  for (size_t j = 0; j < params.size(); ++j) {
    const auto &t = params[j].source;
    if (t && t->conversion == other && t->tensor == s->tensor && t->rows == s->rows)
      return int(j);
  }
  return -1;
}

std::vector<TensorDesc> parseParameters(const Json &root) {
  std::vector<TensorDesc> params;
  if (!root.find(key::kParameters))
    return params;
  const auto &items = getArray(root, key::kParameters, "manifest");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = cat(key::kParameters, "[", i, "]");
    TensorDesc p = getTensor(items[i], path);
    rejectBounds(items[i], path, "parameters");
    for (size_t d = 0; d < p.dims.size(); ++d)
      if (!p.dims[d].isConstant())
        invalid(at(path, key::kShape, d),
                cat("parameter shapes must be static, got \"", p.dimTexts[d], "\""));
    if (items[i].find(key::kConversion))
      p.source = getSource(items[i], p, path);
    else
      checkPlain(items[i], p, path);
    params.push_back(std::move(p));
  }
  checkUnique(params, key::kParameters, "parameter");
  checkScalesPaired(params);
  return params;
}

void rejectWeightDType(const TensorDesc &t, const std::string &path, const char *what) {
  if (isWeightOnlyDType(t.dtype))
    invalid(at(path, key::kDType),
            cat(what, " '", t.name, "' is ", kiln_dtype_name(t.dtype),
                "; only parameters may be ", kiln_dtype_name(t.dtype)));
}

} // namespace kiln::rt
