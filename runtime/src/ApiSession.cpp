// ApiSession.cpp - the C boundary for sessions.
#include "Error.h"
#include "Session.h"

#include <cstring>

using namespace kiln::rt;

namespace {
Session *unwrap(kiln_session *s) { return reinterpret_cast<Session *>(s); }
const Session *unwrap(const kiln_session *s) {
  return reinterpret_cast<const Session *>(s);
}
} // namespace

extern "C" {

KILN_API void kiln_session_options_initialize(kiln_session_options *options) {
  if (!options)
    return;
  options->reuse_temps = 1;
  options->max_temp_bytes = 0;
  options->num_threads = 0;
  options->profile = 0;
}

KILN_API kiln_status *kiln_session_create(const kiln_model *model,
                                          const kiln_weights *weights,
                                          const kiln_session_options *options,
                                          kiln_session **out_session) {
  if (out_session)
    *out_session = nullptr;
  return guard([&] {
    if (!model || !out_session)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "kiln_session_create: model and out_session must not be NULL");
    auto *m = reinterpret_cast<const Model *>(model);
    auto *w = reinterpret_cast<const Weights *>(weights);
    size_t params = m->manifest().parameters.size();
    if (!w && params > 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "model '", m->manifest().model, "' has ", params,
           " parameters; the session needs weights");
    if (w && !w->fits(m->manifest()))
      fail(KILN_STATUS_INVALID_ARGUMENT, "weights '", w->path(),
           "' were opened for a model with different parameters than '",
           m->manifest().model, "'");
    kiln_session_options defaults;
    kiln_session_options_initialize(&defaults);
    *out_session = reinterpret_cast<kiln_session *>(
        new Session(m, w, options ? *options : defaults));
  });
}

// Freeing a session another thread is inside would crash that thread: it is left alive
// (leaked) instead, which runtime.h states.
KILN_API void kiln_session_release(kiln_session *session) {
  if (session && unwrap(session)->tryEnter())
    delete unwrap(session);
}

KILN_API kiln_status *kiln_session_run(kiln_session *session, const char *entry_name,
                                       const kiln_tensor *inputs, size_t input_count) {
  return guard([&] {
    if (!session)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_run: session is NULL");
    Session::InUse use(*unwrap(session));
    unwrap(session)->run(entry_name, inputs, input_count);
  });
}

KILN_API size_t kiln_session_output_count(const kiln_session *session) {
  if (!session || !unwrap(session)->tryEnter())
    return 0;
  size_t count = unwrap(session)->outputCount();
  unwrap(session)->leave();
  return count;
}

KILN_API kiln_status *kiln_session_get_output(const kiln_session *session,
                                              const char *name, kiln_tensor *out_tensor) {
  return guard([&] {
    if (!session || !out_tensor)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_get_output: NULL argument");
    Session::InUse use(*unwrap(session));
    *out_tensor = unwrap(session)->output(name);
  });
}

KILN_API kiln_status *kiln_session_get_output_at(const kiln_session *session,
                                                 size_t index, kiln_tensor *out_tensor) {
  return guard([&] {
    if (!session || !out_tensor)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_get_output_at: NULL argument");
    Session::InUse use(*unwrap(session));
    *out_tensor = unwrap(session)->outputAt(index);
  });
}

KILN_API kiln_status *kiln_session_copy_output(const kiln_session *session,
                                               const char *name, void *dst,
                                               size_t dst_size) {
  return guard([&] {
    if (!session)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_copy_output: session is NULL");
    Session::InUse use(*unwrap(session)); // until the bytes are copied
    kiln_tensor t = unwrap(session)->output(name);
    size_t bytes = kiln_dtype_size(t.dtype);
    for (int32_t d = 0; d < t.rank; ++d)
      bytes *= size_t(t.shape[d]);
    if (dst_size < bytes)
      fail(KILN_STATUS_INVALID_ARGUMENT, "output '", t.name, "' needs ", bytes,
           " bytes, the destination has ", dst_size);
    if (bytes && !dst)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_copy_output: dst is NULL");
    if (bytes)
      std::memcpy(dst, t.data, bytes);
  });
}

KILN_API kiln_status *kiln_session_detach_output(kiln_session *session, const char *name,
                                                 kiln_buffer **out_buffer) {
  if (out_buffer)
    *out_buffer = nullptr;
  return guard([&] {
    if (!session || !out_buffer)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_detach_output: NULL argument");
    Session::InUse use(*unwrap(session));
    *out_buffer =
        reinterpret_cast<kiln_buffer *>(unwrap(session)->detachOutput(name).release());
  });
}

KILN_API void kiln_session_get_stats(const kiln_session *session,
                                     kiln_session_stats *out) {
  if (!out)
    return;
  *out = kiln_session_stats{};
  if (!session || !unwrap(session)->tryEnter())
    return;
  *out = unwrap(session)->stats();
  unwrap(session)->leave();
}

KILN_API kiln_status *kiln_session_profile_calls(const kiln_session *session,
                                                 const kiln_profile_call **out_calls,
                                                 size_t *out_count) {
  return guard([&] {
    if (!session || !out_calls || !out_count)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_profile_calls: NULL argument");
    Session::InUse use(*unwrap(session));
    const std::vector<kiln_profile_call> &calls = unwrap(session)->profiler().calls();
    *out_calls = calls.data();
    *out_count = calls.size();
  });
}

KILN_API kiln_status *kiln_session_profile_summary(const kiln_session *session,
                                                   int32_t by,
                                                   const kiln_profile_row **out_rows,
                                                   size_t *out_count) {
  return guard([&] {
    if (!session || !out_rows || !out_count)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_profile_summary: NULL argument");
    Session::InUse use(*unwrap(session));
    const std::vector<kiln_profile_row> &rows = unwrap(session)->profiler().summary(by);
    *out_rows = rows.data();
    *out_count = rows.size();
  });
}

KILN_API kiln_status *kiln_session_profile_write_trace(const kiln_session *session,
                                                       const char *path) {
  return guard([&] {
    if (!session || !path || !*path)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "kiln_session_profile_write_trace: NULL session or empty path");
    Session::InUse use(*unwrap(session));
    unwrap(session)->profiler().writeTrace(path);
  });
}

KILN_API kiln_status *kiln_session_profile_reset(kiln_session *session) {
  return guard([&] {
    if (!session)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_profile_reset: session is NULL");
    Session::InUse use(*unwrap(session));
    unwrap(session)->profiler().reset();
  });
}

KILN_API kiln_status *kiln_session_get_state(const kiln_session *session,
                                             const char *name, kiln_tensor *out_tensor) {
  return guard([&] {
    if (!session || !name || !out_tensor)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_get_state: NULL argument");
    Session::InUse use(*unwrap(session));
    *out_tensor = unwrap(session)->state(name);
  });
}

KILN_API kiln_status *kiln_session_gather_states(kiln_session *session,
                                                 const int32_t *rows, size_t row_count) {
  return guard([&] {
    if (!session)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_gather_states: session is NULL");
    Session::InUse use(*unwrap(session));
    unwrap(session)->gatherStates(rows, row_count);
  });
}

KILN_API void kiln_session_clear_states(kiln_session *session) {
  if (!session || !unwrap(session)->tryEnter())
    return;
  unwrap(session)->clearStates();
  unwrap(session)->leave();
}

} // extern "C"
