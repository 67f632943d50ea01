//===- Errors.cpp - kiln.Error and its subclasses -------------------------===//
//
// Every kiln::Error (a failed C call, or a check of the bindings themselves) becomes the
// exception class of its status code, carrying the runtime's message unchanged and the
// code's name in `code`. Each class also derives from the built-in exception a Python
// caller would catch for that kind of failure (InvalidArgumentError is a ValueError).
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include <array>
#include <cstring>

namespace kiln::python {
namespace {

struct ErrorClass {
  kiln_status_code code;
  const char *name;
  PyObject *builtin; // the second base; null: kiln.Error only
  const char *doc;
};

// Filled once when the module loads; the classes live as long as the interpreter.
PyObject *errorBase = nullptr;
std::array<PyObject *, KILN_STATUS_INTERNAL + 1> errorByCode{};

std::array<ErrorClass, 10> errorClasses() {
  return {{
      {KILN_STATUS_INVALID_ARGUMENT, "InvalidArgumentError", PyExc_ValueError,
       "A bad call: wrong input, dtype, shape or value, or a bad option."},
      {KILN_STATUS_NOT_FOUND, "NotFoundError", PyExc_LookupError,
       "A missing file, or an unknown entry, input, output, state or dimension name."},
      {KILN_STATUS_IO_ERROR, "FileError", PyExc_OSError,
       "A file could not be read or written."},
      {KILN_STATUS_INVALID_MODEL, "InvalidModelError", PyExc_ValueError,
       "Not a Kiln model, or a malformed manifest."},
      {KILN_STATUS_INCOMPATIBLE, "IncompatibleModelError", nullptr,
       "A model built for another ABI version."},
      {KILN_STATUS_INVALID_WEIGHTS, "InvalidWeightsError", PyExc_ValueError,
       "Not safetensors, or not matching the model's parameters."},
      {KILN_STATUS_RESOURCE_EXHAUSTED, "ResourceExhaustedError", PyExc_MemoryError,
       "Out of memory, or over a configured limit (max_temp_bytes)."},
      {KILN_STATUS_KERNEL_ERROR, "KernelError", PyExc_RuntimeError,
       "A kernel returned an error while running."},
      {KILN_STATUS_FAILED_PRECONDITION, "FailedPreconditionError", PyExc_RuntimeError,
       "A call out of order: a state not set yet, a session busy on another thread."},
      {KILN_STATUS_INTERNAL, "InternalError", PyExc_RuntimeError, "A bug in Kiln."},
  }};
}

PyObject *newClass(const std::string &name, const char *doc, PyObject *bases) {
  PyObject *cls =
      PyErr_NewExceptionWithDoc(("kiln." + name).c_str(), doc, bases, nullptr);
  if (!cls)
    throw py::error_already_set();
  return cls;
}

/// Sets the Python error for `error`: its class by code, the message as given (bytes
/// that are not UTF-8, e.g. from a file name, are replaced rather than lost).
void setPythonError(const Error &error) {
  kiln_status_code code = error.code();
  PyObject *cls = code > KILN_STATUS_OK && code <= KILN_STATUS_INTERNAL
                      ? errorByCode[code]
                      : errorBase;
  const char *what = error.what();
  auto message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(what, Py_ssize_t(std::strlen(what)), "replace"));
  if (!message)
    throw py::error_already_set();
  py::object exc = py::reinterpret_borrow<py::object>(cls)(message);
  exc.attr("code") = kiln_status_code_string(code);
  PyErr_SetObject(cls, exc.ptr());
}

} // namespace

void bindErrors(py::module_ &m) {
  errorBase =
      newClass("Error",
               "Base of every Kiln error. str(e) is the runtime's message; e.code "
               "names its status code (e.g. 'INVALID_ARGUMENT').",
               PyExc_Exception);
  m.add_object("Error", py::handle(errorBase));
  for (const ErrorClass &c : errorClasses()) {
    py::tuple bases = c.builtin
                          ? py::make_tuple(py::handle(errorBase), py::handle(c.builtin))
                          : py::make_tuple(py::handle(errorBase));
    errorByCode[c.code] = newClass(c.name, c.doc, bases.ptr());
    m.add_object(c.name, py::handle(errorByCode[c.code]));
  }
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      try {
        setPythonError(e);
      } catch (py::error_already_set &failed) {
        failed.restore(); // the error raised while building the exception
      }
    }
  });
}

} // namespace kiln::python
