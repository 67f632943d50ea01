//===- SessionBindings.cpp - kiln.Session ---------------------------------===//
//
// Runs entries on numpy arrays. Inputs go to the runtime in place when they already are
// C-contiguous arrays of the declared dtype. Outputs are copied: the runtime reuses an
// output's memory at the session's next run (or frees it, with reuse_temps=False), and a
// gather or clear of the states invalidates outputs that view a state, so a numpy view
// of it would change or dangle under a live array. One copy costs a fraction of the run
// that produced it (README, "Python").
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"
#include "Handles.h"

#include <pybind11/stl.h>

#include <algorithm>

namespace kiln::python {
namespace {

kiln_session_options sessionOptions(bool reuseTemps, uint64_t maxTempBytes) {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  options.reuse_temps = reuseTemps ? 1 : 0;
  options.max_temp_bytes = maxTempBytes;
  return options;
}

class PySession {
public:
  PySession(py::object model, py::object weights, bool reuseTemps, uint64_t maxTempBytes)
      : model_(std::move(model)), weights_(std::move(weights)),
        session_(create(model_, weights_, sessionOptions(reuseTemps, maxTempBytes))) {}

  py::dict run(const std::string &entry, const py::kwargs &inputs) {
    InUse inUse(busy_, "session");
    std::vector<TensorInfo> declared = model().inputs(entry);
    std::vector<py::array> arrays; // keeps converted inputs alive through the run
    std::vector<TensorArg> args;
    for (auto [key, value] : inputs) {
      std::string name = py::str(key);
      auto want = std::find_if(declared.begin(), declared.end(),
                               [&](const TensorInfo &t) { return t.name == name; });
      if (want == declared.end()) {
        // The runtime matches names before it reads a dtype or data, and rejects this
        // one naming the entry's inputs.
        args.push_back({name, KILN_DTYPE_F32, {}, nullptr});
        continue;
      }
      py::array array = inputArray(entry, *want, value);
      args.push_back({name, want->dtype,
                      std::vector<int64_t>(array.shape(), array.shape() + array.ndim()),
                      array.data()});
      arrays.push_back(std::move(array));
    }
    {
      py::gil_scoped_release release;
      session_.run(entry, args);
    }
    py::dict outputs;
    for (size_t i = 0; i < session_.outputCount(); ++i) {
      OutputView out = session_.outputAt(i);
      outputs[py::str(out.name)] = copyOf(out);
    }
    return outputs;
  }

  py::array state(const std::string &name) {
    InUse inUse(busy_, "session");
    return copyOf(session_.state(name));
  }
  void gatherStates(const std::vector<int32_t> &rows) {
    InUse inUse(busy_, "session");
    session_.gatherStates(rows);
  }
  void clearStates() {
    InUse inUse(busy_, "session");
    session_.clearStates();
  }
  kiln_session_stats stats() {
    InUse inUse(busy_, "session");
    return session_.stats();
  }

  const py::object &modelObject() const { return model_; }
  const py::object &weightsObject() const { return weights_; }

private:
  static Session create(const py::object &model, const py::object &weights,
                        const kiln_session_options &options) {
    if (!py::isinstance<ModelHandle>(model))
      throw py::type_error("model must be a kiln.Model, not " +
                           std::string(py::str(py::type::of(model))));
    if (!weights.is_none() && !py::isinstance<WeightsHandle>(weights))
      throw py::type_error("weights must be a kiln.Weights or None, not " +
                           std::string(py::str(py::type::of(weights))));
    Weights none;
    const Weights &w = weights.is_none() ? none : weights.cast<WeightsHandle &>().weights;
    return Session(model.cast<ModelHandle &>().model, w, &options);
  }
  const Model &model() const { return model_.cast<ModelHandle &>().model; }

  py::object model_, weights_; // the Python objects, for Session.model and .weights
  Session session_;
  std::atomic<bool> busy_{false};
};

const char *kRunDoc =
    R"(Runs the entry point `entry` on the given inputs, by name (e.g. src_ids=ids), and returns
its outputs by name, in the model's order (an entry that only writes states returns {}).

An input is anything numpy.asarray takes. One that is already a C-contiguous array of the
declared dtype is read in place; any other is converted first (int64 token ids to an int32
input, float64 to float32, a strided view to a dense copy). A conversion that would change
the kind of the values (float to integer, a string) or overflow an integer raises
InvalidArgumentError naming the input, as do a wrong rank, shape, dimension or value,
which the runtime checks.

The outputs are new arrays the caller owns: later runs, state changes and the session's
release leave them as they are (the session's own output memory is reused at its next
run). The GIL is released while the kernels run, so other Python threads go on; the
session itself takes one call at a time (a second thread gets FailedPreconditionError):
use one session per thread.)";

} // namespace

void bindSession(py::module_ &m) {
  py::class_<kiln_session_stats>(m, "SessionStats", "Counters of a session (runtime.h).")
      .def_readonly("runs", &kiln_session_stats::runs, "successful runs")
      .def_readonly("temp_bytes", &kiln_session_stats::temp_bytes,
                    "bytes of temporaries held now (arenas and outputs)")
      .def_readonly("temp_allocations", &kiln_session_stats::temp_allocations,
                    "blocks of temporaries allocated so far")
      .def_readonly("state_bytes", &kiln_session_stats::state_bytes,
                    "bytes held for states (kept after a clear)")
      .def_readonly("state_rows_copied", &kiln_session_stats::state_rows_copied,
                    "batch rows gather_states has moved so far")
      .def("__repr__", [](const kiln_session_stats &s) {
        return "SessionStats(runs=" + std::to_string(s.runs) +
               ", temp_bytes=" + std::to_string(s.temp_bytes) +
               ", temp_allocations=" + std::to_string(s.temp_allocations) +
               ", state_bytes=" + std::to_string(s.state_bytes) +
               ", state_rows_copied=" + std::to_string(s.state_rows_copied) + ")";
      });

  py::class_<PySession>(m, "Session",
                        "Runs a model's entry points and keeps its states (such as KV "
                        "caches) between runs. Keeps its model and weights alive.")
      .def(py::init<py::object, py::object, bool, uint64_t>(), py::arg("model"),
           py::arg("weights") = py::none(), py::arg("reuse_temps") = true,
           py::arg("max_temp_bytes") = 0,
           "weights may be None only for a model without parameters. reuse_temps: keep "
           "each entry's temporaries between runs (False: allocate them per run). "
           "max_temp_bytes: a run whose temporaries would exceed it raises "
           "ResourceExhaustedError before any kernel runs (0: no limit).")
      .def("run", &PySession::run, py::arg("entry"), py::pos_only(), kRunDoc)
      .def("state", &PySession::state, py::arg("name"),
           "A copy of the state called name. FailedPreconditionError when no run has "
           "set it (or after clear_states), NotFoundError when the model has no such "
           "state.")
      .def("gather_states", &PySession::gatherStates, py::arg("rows"),
           "Reorders the batch of every state that is set: row i afterwards holds what "
           "row rows[i] held (rows may repeat or be left out, as a beam search keeps "
           "its surviving hypotheses).")
      .def("clear_states", &PySession::clearStates,
           "Forgets every state (their memory is kept for reuse).")
      .def_property_readonly("stats", &PySession::stats, "SessionStats")
      .def_property_readonly("model", &PySession::modelObject)
      .def_property_readonly("weights", &PySession::weightsObject);
}

} // namespace kiln::python
