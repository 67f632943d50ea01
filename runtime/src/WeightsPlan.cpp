//===- WeightsPlan.cpp - Which file tensor feeds each parameter -----------===//
//
// Three passes over the parameters: those stored as they are; the int8 weights and
// scales, which are stored both or neither; the rest, each from its source. Then the
// tensors nothing used. Problems are collected, never thrown one by one.
//
//===----------------------------------------------------------------------===//

#include "WeightsPlan.h"

#include "DType.h"
#include "Error.h"

#include <unordered_map>
#include <unordered_set>

namespace kiln::rt {
namespace {

const char *kConvertible = "F32, F16 or BF16";

bool isConvertible(const std::string &dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16";
}

std::string st(kiln_dtype dtype) { return safetensorsDTypeName(dtype); }

/// "parameter 'P' (int8 of rows [0, 512))".
std::string describe(const TensorDesc &p) {
  const ParameterSource &s = *p.source;
  return cat("parameter '", p.name, "' (", abi::conversionName(s.conversion),
             s.rows ? cat(" of rows [", s.rows->first, ", ", s.rows->second, ")")
                    : std::string(),
             ")");
}

bool isPanels(const TensorDesc &p) {
  return p.source && p.source->conversion == Conversion::Panels;
}

/// The shape a source of `p` must have: "[2, 5]", or "[R, 5] with R >= 2" for rows; a
/// [P, K, W] panels parameter's is [R, K], its R rows filling P panels of W.
std::string sourceShape(const TensorDesc &p) {
  if (isPanels(p)) {
    const std::vector<int64_t> &s = p.staticShape;
    return cat("[R, ", s[1], "] with ",
               p.source->rows ? cat("R >= ", p.source->rows->second)
                              : cat("ceil(R / ", s[2], ") = ", s[0]));
  }
  if (!p.source || !p.source->rows)
    return formatShape(p.staticShape);
  std::string dims = "[R";
  for (size_t d = 1; d < p.staticShape.size(); ++d)
    dims += cat(", ", p.staticShape[d]);
  return cat(dims, "] with R >= ", p.source->rows->second);
}

bool sourceShapeFits(const TensorDesc &p, const SafetensorsTensor &t) {
  if (isPanels(p))
    return t.shape.size() == 2 && t.shape[1] == p.staticShape[1] &&
           (p.source->rows ? t.shape[0] >= p.source->rows->second
                           : panelsFit(p, t.shape[0]));
  if (!p.source || !p.source->rows)
    return t.shape == p.staticShape;
  return t.shape.size() == p.staticShape.size() && t.shape[0] >= p.source->rows->second &&
         std::equal(t.shape.begin() + 1, t.shape.end(), p.staticShape.begin() + 1);
}

bool isStored(const TensorDesc &p, const SafetensorsTensor *t) {
  return t && parseSafetensorsDType(t->dtype) == p.dtype && t->shape == p.staticShape;
}

/// What is wrong with `t` as the tensor of a plain parameter `p`, or "" if nothing:
/// f32 parameters convert from F16 and BF16, integer ones are taken as they are.
std::string plainProblem(const TensorDesc &p, const SafetensorsTensor &t) {
  bool f32 = p.dtype == KILN_DTYPE_F32;
  bool dtypeOk = f32 ? isConvertible(t.dtype) : parseSafetensorsDType(t.dtype) == p.dtype;
  bool shapeOk = t.shape == p.staticShape;
  std::string alternatives = f32 ? " (or F16 or BF16, converted at load)" : "";
  if (!dtypeOk && !shapeOk)
    return cat("tensor '", p.name, "' is ", t.dtype, " ", formatShape(t.shape),
               ", expected ", st(p.dtype), " ", formatShape(p.staticShape), alternatives);
  if (!dtypeOk)
    return cat("tensor '", p.name, "' has dtype ", t.dtype, ", expected ", st(p.dtype),
               alternatives);
  if (!shapeOk)
    return cat("tensor '", p.name, "' has shape ", formatShape(t.shape), ", expected ",
               formatShape(p.staticShape));
  return "";
}

/// What is wrong with `t` (null: absent) as the source of the converted parameter `p`.
std::string sourceProblem(const TensorDesc &p, const SafetensorsTensor *t) {
  const std::string &name = p.source->tensor;
  if (!t)
    return cat("missing tensor '", name, "' for ", describe(p), ": expected ",
               kConvertible, " ", sourceShape(p), " to convert from, or ",
               name == p.name ? std::string() : cat("tensor '", p.name, "' "),
               "stored as ", st(p.dtype), " ", formatShape(p.staticShape));
  // Under the parameter's own name, its dtype says that the tensor is the parameter
  // stored, with the wrong shape; except for panels, f32 as their sources are, where a
  // rank-2 tensor is the source.
  if (name == p.name && parseSafetensorsDType(t->dtype) == p.dtype &&
      (!isPanels(p) || t->shape.size() == p.staticShape.size()))
    return cat("tensor '", name, "' has shape ", formatShape(t->shape), ", expected ",
               formatShape(p.staticShape));
  if (!isConvertible(t->dtype))
    return cat("tensor '", name, "' has dtype ", t->dtype, "; ", describe(p),
               " converts from ", kConvertible);
  if (!sourceShapeFits(p, *t))
    return cat("tensor '", name, "' has shape ", formatShape(t->shape), "; ", describe(p),
               " needs ", sourceShape(p));
  return "";
}

/// An int8 weight and its scales come from the file both or neither: scales computed
/// from a source can only go with weights quantized from it.
std::string pairProblem(const TensorDesc &weight, bool weightStored,
                        const TensorDesc &scale, bool scaleStored) {
  if (weightStored == scaleStored)
    return "";
  if (weightStored)
    return cat("missing tensor '", scale.name, "' (expected F32 ",
               formatShape(scale.staticShape), "): the file holds '", weight.name,
               "' quantized (I8), which needs its scales stored beside it");
  return cat("tensor '", scale.name, "' holds stored int8 scales, but '", weight.name,
             "' is not stored quantized (expected I8 ", formatShape(weight.staticShape),
             "): store both or neither");
}

} // namespace

std::vector<ParameterPlan> planWeights(const Manifest &manifest,
                                       const SafetensorsFile &file) {
  std::unordered_map<std::string, const SafetensorsTensor *> byName;
  for (const SafetensorsTensor &t : file.tensors())
    byName.emplace(t.name, &t);
  auto find = [&](const std::string &name) -> const SafetensorsTensor * {
    auto it = byName.find(name);
    return it == byName.end() ? nullptr : it->second;
  };

  const std::vector<TensorDesc> &params = manifest.parameters;
  std::vector<ParameterPlan> plans(params.size());
  std::vector<bool> settled(params.size());
  std::unordered_set<std::string> used;
  for (size_t i = 0; i < params.size(); ++i)
    if (const SafetensorsTensor *t = find(params[i].name); isStored(params[i], t)) {
      plans[i].stored = t;
      settled[i] = true;
      used.insert(t->name);
    }

  std::vector<std::string> problems;
  auto report = [&](std::string problem) {
    if (!problem.empty())
      problems.push_back(std::move(problem));
    return !problem.empty();
  };
  for (size_t w = 0; w < params.size(); ++w)
    if (params[w].source && params[w].source->conversion == Conversion::Int8) {
      size_t s = size_t(scalePartner(params, w));
      if (report(pairProblem(params[w], bool(plans[w].stored), params[s],
                             bool(plans[s].stored))))
        settled[w] = settled[s] = true;
    }

  for (size_t i = 0; i < params.size(); ++i) {
    const TensorDesc &p = params[i];
    if (settled[i])
      continue;
    if (!p.source) {
      const SafetensorsTensor *t = find(p.name);
      if (!t)
        report(cat("missing tensor '", p.name, "' (expected ", st(p.dtype), " ",
                   formatShape(p.staticShape), ")"));
      else if (!report(plainProblem(p, *t)))
        plans[i].source = t;
      if (t)
        used.insert(t->name);
      continue;
    }
    // The int8 weight speaks for its scales: one pass over the source makes both.
    if (p.source->conversion == Conversion::Int8Scale)
      continue;
    const SafetensorsTensor *t = find(p.source->tensor);
    if (t)
      used.insert(t->name);
    if (report(sourceProblem(p, t)))
      continue;
    plans[i].source = t;
    if (p.source->conversion == Conversion::Int8)
      plans[size_t(scalePartner(params, i))].source = t;
  }
  // File order, so the message is stable.
  for (const SafetensorsTensor &t : file.tensors())
    if (!used.count(t.name))
      problems.push_back(cat("unexpected tensor '", t.name, "' (", t.dtype, " ",
                             formatShape(t.shape),
                             "): the model has no such parameter or source"));

  if (!problems.empty())
    fail(KILN_STATUS_INVALID_WEIGHTS, "weights file '", file.path(),
         "' does not match model '", manifest.model, "' (", problems.size(),
         problems.size() == 1 ? " problem):\n  " : " problems):\n  ",
         join(
             problems, [](const std::string &s) { return s; }, "\n  "));
  return plans;
}

} // namespace kiln::rt
