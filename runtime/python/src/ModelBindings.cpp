//===- ModelBindings.cpp - kiln.Model, kiln.Entry, kiln.Weights -----------===//
//
// What a compiled model declares, as Python objects: entries with their inputs and
// outputs (dtype, shape with the names of dynamic dimensions, value bounds), parameters,
// states and target.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"
#include "Handles.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>

namespace kiln::python {
namespace {

struct EntryInfo {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<std::string> dims; // the dynamic dimensions, as runtime.h orders them
};

EntryInfo entryInfo(const Model &model, const std::string &name) {
  size_t index = 0;
  check(kiln_model_find_entry(model.get(), name.c_str(), &index));
  EntryInfo entry{name, model.inputs(name), model.outputs(name), {}};
  for (size_t d = 0; d < kiln_model_dim_count(model.get(), index); ++d)
    entry.dims.emplace_back(kiln_model_dim_name(model.get(), index, d));
  return entry;
}

/// Static sizes as ints, dynamic ones as their names ("B", "S+1"), as ONNX Runtime's
/// NodeArg.shape shows them.
py::tuple shapeOf(const TensorInfo &t) {
  py::tuple shape(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d)
    shape[d] = t.shape[d] >= 0 ? py::object(py::int_(t.shape[d])) : py::str(t.dims[d]);
  return shape;
}

std::string names(const std::vector<TensorInfo> &list) {
  std::string s;
  for (const TensorInfo &t : list)
    s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

/// The numpy dtype of `dtype`, or "bfloat16" for a bf16 weight: numpy has none.
py::object dtypeOf(kiln_dtype dtype) {
  if (dtype == KILN_DTYPE_BF16)
    return py::str("bfloat16");
  return numpyDType(dtype);
}

void bindTensorInfo(py::module_ &m) {
  py::class_<TensorInfo>(m, "TensorInfo",
                         "An entry's input or output, or a model parameter.")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly(
          "dtype", [](const TensorInfo &t) { return dtypeOf(t.dtype); },
          "numpy dtype (float32, int32 or int64; int8 for an int8 weight), or the string "
          "'bfloat16' for a bf16 weight, which numpy lacks")
      .def_property_readonly("shape", &shapeOf,
                             "Tuple of sizes: an int where static, the dimension's name "
                             "or expression (e.g. 'B', 'S+1') where dynamic")
      .def_property_readonly(
          "bounds",
          [](const TensorInfo &t) -> py::object {
            if (!t.hasBounds)
              return py::none();
            return py::make_tuple(t.boundsMin, t.boundsMax);
          },
          "(min, max) that every value of an integer input must lie in, inclusive, as "
          "the model writes them (an integer or a dimension expression); None if the "
          "input declares none")
      .def("__repr__", [](const TensorInfo &t) {
        std::string s = "TensorInfo('" + t.name + "', " +
                        std::string(py::str(dtypeOf(t.dtype))) + ", " +
                        std::string(py::repr(shapeOf(t)));
        if (t.hasBounds)
          s += ", bounds=('" + t.boundsMin + "', '" + t.boundsMax + "')";
        return s + ")";
      });
}

void bindEntry(py::module_ &m) {
  py::class_<EntryInfo>(m, "Entry", "An entry point of a model.")
      .def_readonly("name", &EntryInfo::name)
      .def_readonly("inputs", &EntryInfo::inputs, "list of TensorInfo")
      .def_readonly("outputs", &EntryInfo::outputs,
                    "list of TensorInfo (empty for an entry that only writes states)")
      .def_readonly("dims", &EntryInfo::dims,
                    "Names of the entry's dynamic dimensions (bound by its inputs' "
                    "shapes, the states it reads, and its value inputs)")
      .def("__repr__", [](const EntryInfo &e) {
        return "Entry('" + e.name + "', inputs=[" + names(e.inputs) + "], outputs=[" +
               names(e.outputs) + "])";
      });
}

} // namespace

void bindModel(py::module_ &m) {
  bindTensorInfo(m);
  bindEntry(m);

  py::class_<ModelHandle>(m, "Model",
                          "A compiled model (NAME.so), loaded and its manifest checked. "
                          "Immutable: any number of threads and sessions may share it.")
      .def(py::init([](const std::filesystem::path &path) {
             return ModelHandle{Model::open(path), path};
           }),
           py::arg("path"))
      .def_readonly("path", &ModelHandle::path)
      .def_property_readonly("name", [](const ModelHandle &h) { return h.model.name(); })
      .def_property_readonly(
          "target", [](const ModelHandle &h) { return h.model.target(); },
          "The Halide target the kernels were compiled for")
      .def_property_readonly(
          "manifest",
          [](const ModelHandle &h) -> std::string {
            return kiln_model_manifest_json(h.model.get());
          },
          "The manifest as JSON text (docs/manifest.md)")
      .def_property_readonly(
          "entries",
          [](const ModelHandle &h) {
            std::vector<EntryInfo> list;
            for (const std::string &name : h.model.entries())
              list.push_back(entryInfo(h.model, name));
            return list;
          },
          "list of Entry, in the model's order")
      .def(
          "entry",
          [](const ModelHandle &h, const std::string &name) {
            return entryInfo(h.model, name);
          },
          py::arg("name"), "The entry called name (NotFoundError lists the others)")
      .def_property_readonly(
          "parameters", [](const ModelHandle &h) { return h.model.parameters(); },
          "list of TensorInfo: what the weights file must hold")
      .def_property_readonly(
          "states",
          [](const ModelHandle &h) {
            std::vector<std::string> list;
            for (size_t i = 0; i < kiln_model_state_count(h.model.get()); ++i)
              list.emplace_back(kiln_model_state_name(h.model.get(), i));
            return list;
          },
          "Names of the states a session of this model keeps between runs")
      .def("__repr__", [](const ModelHandle &h) {
        return "<kiln.Model '" + h.model.name() + "' from '" + h.path + "'>";
      });

  py::class_<WeightsHandle>(m, "Weights",
                            "A safetensors file mapped and checked against a model's "
                            "parameters (every missing, unexpected, mis-shaped or "
                            "mis-typed tensor is reported in one InvalidWeightsError).")
      .def(py::init([](const ModelHandle &model, const std::filesystem::path &path) {
             return WeightsHandle{Weights::open(model.model, path), path};
           }),
           py::arg("model"), py::arg("path"))
      .def_readonly("path", &WeightsHandle::path)
      .def("__repr__",
           [](const WeightsHandle &h) { return "<kiln.Weights from '" + h.path + "'>"; });
}

} // namespace kiln::python
