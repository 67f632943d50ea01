//===- SessionBindings.cpp - kiln.Session ---------------------------------===//
//
// Runs entries on numpy arrays, and reads a session's profile. Inputs go to the runtime
// in place when they already are C-contiguous arrays of the declared dtype. An output of
// kDetachMinBytes or more is detached (kiln_session_detach_output): the array takes over
// the block the kernels wrote, which costs the session one allocation at its next run
// instead of a copy now. Smaller outputs, which a copy beats, and outputs the runtime
// cannot hand over (a state's memory, which a later run or gather changes) are copied.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "Bindings.h"
#include "Handles.h"

#include <pybind11/stl.h>

#include <algorithm>

namespace kiln::python {
namespace {

using namespace pybind11::literals;

// The measured crossover: below it a copy costs less than handing the block over (which
// costs the session an allocation at its next run), above it more (README, "Python").
constexpr size_t kDetachMinBytes = 16 * 1024;

kiln_session_options sessionOptions(bool reuseTemps, uint64_t maxTempBytes,
                                    int32_t numThreads, bool profile) {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  options.reuse_temps = reuseTemps ? 1 : 0;
  options.max_temp_bytes = maxTempBytes;
  options.num_threads = numThreads;
  options.profile = profile ? 1 : 0;
  return options;
}

kiln_profile_key profileKey(const std::string &by) {
  if (by == "kernel")
    return KILN_PROFILE_BY_KERNEL;
  if (by == "line")
    return KILN_PROFILE_BY_LOC;
  throw Error(KILN_STATUS_INVALID_ARGUMENT,
              "Session.profile: by is '" + by + "'; expected 'kernel' or 'line'");
}

class PySession {
public:
  PySession(py::object model, py::object weights, bool reuseTemps, uint64_t maxTempBytes,
            int32_t numThreads, bool profile)
      : model_(std::move(model)), weights_(std::move(weights)),
        session_(create(model_, weights_,
                        sessionOptions(reuseTemps, maxTempBytes, numThreads, profile))) {}

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
      outputs[py::str(out.name)] = outputArray(out);
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

  py::list profile(const std::string &by) {
    InUse inUse(busy_, "session");
    kiln_profile_key key = profileKey(by);
    py::list rows;
    for (const kiln_profile_row &r : session_.profileSummary(key))
      rows.append(py::dict("name"_a = r.name, "calls"_a = r.calls,
                           "total_ns"_a = r.total_ns, "min_ns"_a = r.min_ns,
                           "max_ns"_a = r.max_ns));
    return rows;
  }
  py::list profileCalls() {
    InUse inUse(busy_, "session");
    py::list calls;
    for (const kiln_profile_call &c : session_.profileCalls())
      calls.append(py::dict("entry"_a = c.entry, "kernel"_a = c.kernel, "loc"_a = c.loc,
                            "locs"_a = c.locs, "step"_a = c.step, "run"_a = c.run,
                            "start_ns"_a = c.start_ns, "duration_ns"_a = c.duration_ns));
    return calls;
  }
  void writeTrace(const py::object &path) {
    std::string file = py::str(py::module_::import("os").attr("fspath")(path));
    InUse inUse(busy_, "session");
    session_.writeProfileTrace(file);
  }
  void resetProfile() {
    InUse inUse(busy_, "session");
    session_.resetProfile();
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

  // The output as an array the caller owns: its block when the session hands it over,
  // else a copy.
  py::array outputArray(const OutputView &out) {
    if (size_t(elementCount(out.shape)) * kiln_dtype_size(out.dtype) < kDetachMinBytes)
      return copyOf(out);
    kiln_buffer *buffer = nullptr;
    kiln_status *status =
        kiln_session_detach_output(session_.get(), out.name.c_str(), &buffer);
    if (kiln_status_get_code(status) == KILN_STATUS_FAILED_PRECONDITION) {
      kiln_status_free(status); // not in a block of its own (a state's memory)
      return copyOf(out);
    }
    check(status);
    return arrayOwning(Buffer(buffer));
  }

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

The outputs are arrays the caller owns: later runs, state changes and the session's
release leave them as they are. An output of 16 KiB or more is not copied: the array takes
over the memory the kernels wrote it in (its base is a capsule that frees it), and the
session allocates a fresh block for that output at its next run. Smaller outputs, and
outputs that are a state's memory, are copied (the session reuses its own memory at its
next run). Every output array is writable and C-contiguous.

The GIL is released while the kernels run, so other Python threads go on; the session
itself takes one call at a time (a second thread gets FailedPreconditionError): use one
session per thread.)";

const char *kProfileDoc =
    R"(The time spent in kernels since the session was created or reset_profile(), one dict
per kernel (by="kernel") or per line of the model's source that wrote the op (by="line";
a fused kernel counts at its first op's line, "" where the model has no locations):
name, calls, total_ns, min_ns and max_ns, by decreasing total_ns. A row's share is its
total_ns over the sum of all rows', its mean total_ns / calls. The session must have been
created with profile=True (FailedPreconditionError otherwise); another `by` raises
InvalidArgumentError.)";

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
      .def(py::init<py::object, py::object, bool, uint64_t, int32_t, bool>(),
           py::arg("model"), py::arg("weights") = py::none(),
           py::arg("reuse_temps") = true, py::arg("max_temp_bytes") = 0,
           py::arg("num_threads") = 0, py::arg("profile") = false,
           "weights may be None only for a model without parameters. reuse_temps: keep "
           "each entry's temporaries between runs (False: allocate them per run). "
           "max_temp_bytes: a run whose temporaries would exceed it raises "
           "ResourceExhaustedError before any kernel runs (0: no limit). num_threads: "
           "the threads the kernels run on, 1 to 256 (0: HL_NUM_THREADS if set, else "
           "every core; the pool is the model file's, shared by its sessions: README, "
           "'Threads and CPU features'); another value raises InvalidArgumentError. "
           "profile: time every kernel call (see profile()).")
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
      .def("profile", &PySession::profile, py::arg("by") = "kernel", kProfileDoc)
      .def("profile_calls", &PySession::profileCalls,
           "Every kernel call recorded since the session was created or reset_profile(), "
           "in order: dicts with entry, kernel, loc (the op's source line, "
           "'models/demo.cpp:64'), locs (every line of a fused kernel, ', '-joined), "
           "step, run (from 0), start_ns (since the session was created) and "
           "duration_ns. FailedPreconditionError without profile=True.")
      .def("write_trace", &PySession::writeTrace, py::arg("path"),
           "Writes the recorded calls to path (str or os.PathLike) as a Chrome trace "
           "(JSON, one complete event per call), which Perfetto (ui.perfetto.dev) and "
           "chrome://tracing open. FailedPreconditionError without profile=True.")
      .def("reset_profile", &PySession::resetProfile,
           "Forgets the recorded calls; the next run is run 0. "
           "FailedPreconditionError without profile=True.")
      .def_property_readonly("stats", &PySession::stats, "SessionStats")
      .def_property_readonly("model", &PySession::modelObject)
      .def_property_readonly("weights", &PySession::weightsObject);
}

} // namespace kiln::python
