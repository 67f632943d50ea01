/* kiln/runtime.h - C API of the Kiln runtime: load a compiled model, its weights, and run
 * it.
 *
 * A compiled Kiln model is one shared library (see docs/manifest.md). The runtime loads
 * it (kiln_model), maps a safetensors file checked against the model's parameters
 * (kiln_weights), and runs its entry points (kiln_session).
 *
 * Conventions (IREE-like):
 *   - Objects are opaque handles made by `kiln_X_open/create(..., kiln_X** out)` and
 *     dropped by `kiln_X_release`. Models and weights are reference counted: a session
 * keeps its model and weights alive, so they may be released in any order.
 *   - Every fallible call returns a `kiln_status*`: NULL means success; otherwise the
 * caller owns the status, reads its code and message, and frees it with kiln_status_free.
 *     On failure, `*out` is set to NULL.
 *   - The runtime never prints, never aborts and never exits; every error is a status.
 *
 * Thread safety:
 *   - kiln_model and kiln_weights are immutable after creation: any number of threads may
 *     query them and create sessions from them concurrently. Retain/release are atomic.
 *   - A kiln_session takes one call at a time: use one session per thread; sessions
 *     share their model and weights. Overlapping calls are detected, not undefined: a
 *     call made while another thread is inside a call on the same session fails with
 *     KILN_STATUS_FAILED_PRECONDITION "session is running on another thread" and changes
 *     nothing; the calls that return no status then do nothing
 *     (kiln_session_clear_states), report nothing (kiln_session_output_count returns 0,
 *     kiln_session_get_stats zeros) or, for kiln_session_release, leave the session alive
 *     rather than free it under the other thread. A pointer from get_output/get_state
 *     is only valid while no other call on the session runs: read it on the thread that
 *     ran, or copy it with kiln_session_copy_output.
 *   - kiln_status objects are independent values; the free-standing helpers are
 * thread-safe.
 */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KILN_RUNTIME_BUILDING)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

/* The model ABI this runtime understands (kiln_model_abi_version() of a compiled model).
 * 2: every temporary carries its live range, and an entry's temporaries share one arena.
 * 3: parameters may be bf16 or i8, converted at load time from a checkpoint tensor
 *    ("source", "conversion", "rows"), and the manifest says the weights' precision.
 * 4: a step may write several buffers, its last "outputs" args (one kernel appends to
 *    the key and the value cache at once).
 * 5: a parameter may be an f32 weight packed into column panels at load time
 *    (conversion "panels"), the layout the CPU matrix products read.
 * A runtime also loads models of the versions from KILN_MODEL_ABI_VERSION_MIN on: each
 * of those manifests means the same under the current version.
 */
#define KILN_MODEL_ABI_VERSION 5
#define KILN_MODEL_ABI_VERSION_MIN 4

/* ---- Status ------------------------------------------------------------------------ */

typedef enum kiln_status_code {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1, /* bad call: NULL pointer, wrong input, bad shape   */
  KILN_STATUS_NOT_FOUND = 2,       /* missing file, unknown entry/input/output name     */
  KILN_STATUS_IO_ERROR = 3,        /* a file could not be read or written               */
  KILN_STATUS_INVALID_MODEL = 4,   /* not a Kiln model, or a malformed manifest         */
  KILN_STATUS_INCOMPATIBLE = 5,    /* model built for another ABI version               */
  KILN_STATUS_INVALID_WEIGHTS = 6, /* not safetensors, or not matching the model        */
  KILN_STATUS_RESOURCE_EXHAUSTED = 7, /* out of memory, or over a configured limit */
  KILN_STATUS_KERNEL_ERROR = 8, /* a kernel returned an error while running          */
  KILN_STATUS_FAILED_PRECONDITION = 9, /* e.g. reading outputs before any run */
  KILN_STATUS_INTERNAL = 10
} kiln_status_code;

typedef struct kiln_status kiln_status;

KILN_API kiln_status_code
kiln_status_get_code(const kiln_status *status); /* NULL -> OK */
/* The message, valid until the status is freed; "" for NULL. Never NULL. */
KILN_API const char *kiln_status_get_message(const kiln_status *status);
KILN_API void kiln_status_free(kiln_status *status); /* accepts NULL */
KILN_API const char *
kiln_status_code_string(kiln_status_code code); /* "INVALID_ARGUMENT" */

/* ---- Tensors ----------------------------------------------------------------------- */

/* Zero is deliberately not a dtype, so a zero-initialised kiln_tensor is rejected. */
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 1,
  KILN_DTYPE_I32 = 2,
  KILN_DTYPE_I64 = 3,
  /* Weights only: the stored forms of reduced-precision parameters (a model's inputs,
   * outputs and states are f32, i32 or i64), and f16 as a checkpoint holds it. */
  KILN_DTYPE_BF16 = 4,
  KILN_DTYPE_F16 = 5,
  KILN_DTYPE_I8 = 6
} kiln_dtype;

KILN_API const char *kiln_dtype_name(
    kiln_dtype dtype); /* "f32", "i32", "i64", "bf16", "f16", "i8"; "?" else */
KILN_API size_t kiln_dtype_size(kiln_dtype dtype); /* bytes per element; 0 if invalid */

/* A dense row-major tensor (last dimension contiguous) owned by someone else. */
typedef struct kiln_tensor {
  const char *name;
  kiln_dtype dtype;
  int32_t rank;
  const int64_t *shape; /* rank sizes; may be NULL when rank == 0 */
  const void *data;     /* product(shape) * kiln_dtype_size(dtype) bytes */
} kiln_tensor;

/* Describes a model input, output or parameter. Pointers are valid while the model lives.
 */
typedef struct kiln_tensor_info {
  const char *name;
  kiln_dtype dtype;
  int32_t rank;
  const char *const *dims; /* rank strings: "64" or a dimension expression like "B*S" */
  const int64_t *shape;    /* rank sizes; -1 where the size is dynamic */
  /* Inclusive bounds every value of an integer input must lie in, as the manifest writes
   * them: an integer ("0", "-1") or a dimension expression ("S", "T+1"); the runtime
   * rejects a run whose input holds a value outside them. NULL when the tensor declares
   * none (always NULL for outputs and parameters). kiln_model_input_bounds evaluates
   * them. */
  const char *bounds_min;
  const char *bounds_max;
} kiln_tensor_info;

/* ---- Model ------------------------------------------------------------------------- */

typedef struct kiln_model kiln_model;

/* Loads a compiled model library (dlopen, RTLD_LOCAL) and validates its manifest. */
KILN_API kiln_status *kiln_model_open(const char *path, kiln_model **out_model);
KILN_API void kiln_model_retain(kiln_model *model);
KILN_API void kiln_model_release(kiln_model *model); /* accepts NULL */

KILN_API const char *kiln_model_name(const kiln_model *model);
KILN_API const char *
kiln_model_target(const kiln_model *model); /* Halide target string */
KILN_API const char *kiln_model_manifest_json(const kiln_model *model);

KILN_API size_t kiln_model_entry_count(const kiln_model *model);
/* NULL when index is out of range. */
KILN_API const char *kiln_model_entry_name(const kiln_model *model, size_t entry_index);
/* NOT_FOUND (listing the available entries) when there is no such entry. */
KILN_API kiln_status *kiln_model_find_entry(const kiln_model *model,
                                            const char *entry_name,
                                            size_t *out_entry_index);
KILN_API size_t kiln_model_input_count(const kiln_model *model, size_t entry_index);
KILN_API size_t kiln_model_output_count(const kiln_model *model, size_t entry_index);
KILN_API kiln_status *kiln_model_input_info(const kiln_model *model, size_t entry_index,
                                            size_t input_index,
                                            kiln_tensor_info *out_info);
KILN_API kiln_status *kiln_model_output_info(const kiln_model *model, size_t entry_index,
                                             size_t output_index,
                                             kiln_tensor_info *out_info);

/* The entry's dynamic dimensions: the names its inputs' shapes bind ("B", "S", ...), then
 * those only the shapes of the states it reads bind, then those its value_dim inputs bind
 * (docs/manifest.md). */
KILN_API size_t kiln_model_dim_count(const kiln_model *model, size_t entry_index);
KILN_API const char *kiln_model_dim_name(const kiln_model *model, size_t entry_index,
                                         size_t dim_index); /* NULL when out of range */

/* Evaluates an input's (or output's) shape for given values of the entry's dynamic
 * dimensions (dim_names[i] = dim_values[i]; extra names are ignored). out_shape must hold
 * the tensor's rank. A driver uses this to allocate inputs or outputs ahead of a run.
 * NOT_FOUND names a dimension the shape needs that was not given. */
KILN_API kiln_status *kiln_model_input_shape(const kiln_model *model, size_t entry_index,
                                             size_t input_index,
                                             const char *const *dim_names,
                                             const int64_t *dim_values, size_t dim_count,
                                             int64_t *out_shape);
KILN_API kiln_status *kiln_model_output_shape(const kiln_model *model, size_t entry_index,
                                              size_t output_index,
                                              const char *const *dim_names,
                                              const int64_t *dim_values, size_t dim_count,
                                              int64_t *out_shape);

/* Evaluates an integer input's value bounds for given values of the entry's dynamic
 * dimensions (as kiln_model_input_shape does): every value of the input must lie in
 * [*out_min, *out_max]. An integer input that declares no bounds gets its dtype's full
 * range. INVALID_ARGUMENT for an f32 input (it has no bounds); NOT_FOUND names a
 * dimension the bounds need that was not given. The values are as evaluated: they may lie
 * outside the dtype's range, and min > max means no value is accepted. */
KILN_API kiln_status *kiln_model_input_bounds(const kiln_model *model, size_t entry_index,
                                              size_t input_index,
                                              const char *const *dim_names,
                                              const int64_t *dim_values, size_t dim_count,
                                              int64_t *out_min, int64_t *out_max);

KILN_API size_t kiln_model_parameter_count(const kiln_model *model);
KILN_API kiln_status *kiln_model_parameter_info(const kiln_model *model, size_t index,
                                                kiln_tensor_info *out_info);

/* The precision the model's linear weights were compiled for: "f32", "bf16" or "int8"
 * (CTranslate2's compute_type; docs/precision.md). "" for a NULL model. */
KILN_API const char *kiln_model_weight_precision(const kiln_model *model);

/* Where a parameter comes from. A reduced-precision weight is computed at load time from
 * a checkpoint tensor (or read as it is from a file that stores it converted, see
 * kiln_weights_open). Strings are valid while the model lives. */
typedef struct kiln_parameter_source {
  const char *tensor;     /* the checkpoint tensor: the parameter's own name if plain */
  const char *conversion; /* "" (plain), "bf16", "int8", "int8_scale" or "panels" */
  int32_t has_rows;       /* nonzero: only rows [row_begin, row_end) of the tensor */
  int64_t row_begin, row_end;
} kiln_parameter_source;

/* NOT_FOUND for an index out of range. */
KILN_API kiln_status *kiln_model_parameter_source(const kiln_model *model, size_t index,
                                                  kiln_parameter_source *out_source);

/* ---- Weights ----------------------------------------------------------------------- */

typedef struct kiln_weights kiln_weights;

/* Maps a safetensors file and checks it against the model's parameters: every missing,
 * unexpected, mis-shaped or mis-typed tensor is reported (INVALID_WEIGHTS) in one status.
 * A parameter stored under its own name with its dtype and shape is read in place;
 * otherwise it is computed at load time from its source tensor (its own name for an f32
 * parameter) held as F32, F16 or BF16: widened exactly, rounded to bf16, or quantized to
 * int8 with per-row scales (docs/precision.md, "Loading and converting weights"). Every
 * tensor of the file must be a parameter or a source. The weights stay usable after the
 * model is released. The file must not change while it is open: replace a weights file
 * by renaming a new one into place, never by rewriting it (a run finds a file changed in
 * place and fails with FAILED_PRECONDITION; see docs/model-and-weight-files.md). */
KILN_API kiln_status *kiln_weights_open(const kiln_model *model,
                                        const char *safetensors_path,
                                        kiln_weights **out_weights);
KILN_API void kiln_weights_retain(kiln_weights *weights);
KILN_API void kiln_weights_release(kiln_weights *weights); /* accepts NULL */

/* Where the parameters' bytes (as the model reads them) came from. A file already in the
 * model's precision, such as one kiln-run --convert-weights wrote, is all mapped. */
typedef struct kiln_weights_stats {
  uint64_t mapped_bytes;    /* read in place from the file's mapping: no copy */
  uint64_t converted_bytes; /* computed at load time from a source tensor */
  uint64_t copied_bytes;    /* copied as they are, only to align them */
} kiln_weights_stats;

KILN_API void kiln_weights_get_stats(const kiln_weights *weights,
                                     kiln_weights_stats *out); /* zeros for NULL */

/* Parameter `index` (kiln_model_parameter_info's order) as the kernels read it: name,
 * dtype, shape and data, valid while the weights live. Writing every parameter with
 * kiln_safetensors_write gives a file that loads without conversion. NOT_FOUND for an
 * index out of range. */
KILN_API size_t kiln_weights_parameter_count(const kiln_weights *weights);
KILN_API kiln_status *kiln_weights_parameter(const kiln_weights *weights, size_t index,
                                             kiln_tensor *out_tensor);

/* Writes tensors (names unique, data row-major) as a safetensors file, atomically
 * (a temporary file renamed into place). */
KILN_API kiln_status *kiln_safetensors_write(const char *path, const kiln_tensor *tensors,
                                             size_t tensor_count);

/* ---- Session ----------------------------------------------------------------------- */

typedef struct kiln_session kiln_session;

typedef struct kiln_session_options {
  /* Nonzero (default): an entry's temporaries (one arena per entry, shared by the
   * temporaries whose live ranges do not overlap, and one block per output) are kept
   * across runs and grown only when a run needs more. Zero: they are allocated afresh
   * for each run. */
  int32_t reuse_temps;
  /* 0 (default): no limit. Otherwise a run whose temporaries (arena and outputs) would
   * exceed this many bytes fails with RESOURCE_EXHAUSTED before any kernel runs. */
  uint64_t max_temp_bytes;
  /* The threads the kernels run on, 1 to 256. 0 (default): Halide's default, the
   * environment variable HL_NUM_THREADS when it is set, else the number of cores. Each
   * model library carries its own Halide runtime and thread pool, and the loader loads a
   * file once per process: a run sets the count of that pool as it starts, so sessions of
   * one model file that run at the same time with different counts share the one set
   * last. Sessions of different model files are independent. */
  int32_t num_threads;
  /* Nonzero: time every kernel call of every run (see "Profiling"). 0 (default): nothing
   * is recorded and no clock is read. */
  int32_t profile;
} kiln_session_options;

KILN_API void kiln_session_options_initialize(kiln_session_options *options);

/* weights may be NULL only for a model without parameters; they must have been opened for
 * a model with the same parameter list. options may be NULL (defaults).
 *
 * A model compiled for a GPU (kiln_model_target contains "cuda"; docs/gpu.md) runs on the
 * device, through the Halide runtime inside its own library, which loads the NVIDIA
 * driver (libcuda.so) when first used; this library links no CUDA library. Opening and
 * listing such a model needs no GPU: the device is probed here. Without a driver or a
 * device, creating a session fails with KILN_STATUS_FAILED_PRECONDITION and a message
 * starting "no CUDA device: " followed by the driver's or Halide's reason. The first
 * session of a weights handle on a model uploads the weights; they stay on the device
 * until the weights are released (which keeps the model loaded till then), shared by
 * every session. Device memory exhausted (here or in a run) is
 * KILN_STATUS_RESOURCE_EXHAUSTED naming the bytes asked for. Outputs and states stay on
 * the device until read (get_output, copy_output, detach_output, get_state download
 * them); gather_states moves rows on the device. */
KILN_API kiln_status *kiln_session_create(const kiln_model *model,
                                          const kiln_weights *weights,
                                          const kiln_session_options *options,
                                          kiln_session **out_session);
KILN_API void kiln_session_release(kiln_session *session); /* accepts NULL */

/* Runs an entry point. Inputs are matched by name; each must appear exactly once. The
 * inputs' memory is only read, and only during the call. */
KILN_API kiln_status *kiln_session_run(kiln_session *session, const char *entry_name,
                                       const kiln_tensor *inputs, size_t input_count);

/* Outputs of the last successful run. out->data (and out->shape) are owned by the session
 * and valid until the next run or release (kiln_session_detach_output hands an output's
 * memory over instead); out->name lives as long as the model. An output that is a
 * state's memory (see "Session state") is only readable until the next gather or clear
 * of the states: after one, getting it is FAILED_PRECONDITION. */
KILN_API size_t kiln_session_output_count(const kiln_session *session);
KILN_API kiln_status *kiln_session_get_output(const kiln_session *session,
                                              const char *name, kiln_tensor *out_tensor);
KILN_API kiln_status *kiln_session_get_output_at(const kiln_session *session,
                                                 size_t index, kiln_tensor *out_tensor);
/* Copies an output into caller memory of dst_size bytes (at least the output's size). */
KILN_API kiln_status *kiln_session_copy_output(const kiln_session *session,
                                               const char *name, void *dst,
                                               size_t dst_size);

/* ---- Detached outputs -------------------------------------------------------------- */

/* An output's memory, handed over by the session: the caller owns it (and may write it)
 * until kiln_buffer_release, whatever the session does meanwhile (runs, state changes,
 * release). */
typedef struct kiln_buffer kiln_buffer;

/* Takes an output of the last successful run out of the session without copying it: the
 * block the kernels wrote it in becomes *out_buffer. The session no longer has it:
 * getting, copying or detaching that output again is FAILED_PRECONDITION, and the entry's
 * next run allocates a fresh block for it (one allocation per run for an output detached
 * at every run, which kiln_session_stats.temp_allocations counts; reuse_temps and
 * max_temp_bytes apply to the new block as to any other). Only an output that has a block
 * of its own can be detached: one that is a state's memory, a view of an input or
 * parameter, or shares its block with another output is FAILED_PRECONDITION naming the
 * output and why (copy it instead). */
KILN_API kiln_status *kiln_session_detach_output(kiln_session *session, const char *name,
                                                 kiln_buffer **out_buffer);
/* The output's first element (64-byte aligned); NULL for a NULL buffer. */
KILN_API void *kiln_buffer_data(const kiln_buffer *buffer);
/* The output as a tensor: name, dtype, shape and data, valid until the release (all
 * zero for a NULL buffer). */
KILN_API kiln_tensor kiln_buffer_tensor(const kiln_buffer *buffer);
KILN_API void kiln_buffer_release(kiln_buffer *buffer); /* accepts NULL */

typedef struct kiln_session_stats {
  uint64_t runs;       /* successful runs */
  uint64_t temp_bytes; /* bytes of temporaries currently held (arenas and outputs) */
  /* Blocks of temporaries allocated so far: an entry's arena, and each of its outputs (a
   * reused one is not counted) */
  uint64_t temp_allocations;
  uint64_t state_bytes; /* bytes of memory held for states (kept after a clear) */
  /* Batch rows kiln_session_gather_states has moved so far: per gather, the rows i whose
   * source is another row (rows[i] != i, or i >= the old batch), counted once however
   * many states there are. */
  uint64_t state_rows_copied;
} kiln_session_stats;

KILN_API void kiln_session_get_stats(const kiln_session *session,
                                     kiln_session_stats *out);

/* ---- Profiling --------------------------------------------------------------------- */

/* A session created with kiln_session_options.profile records one kiln_profile_call per
 * kernel call (the clock is read around each call on the calling thread; a kernel's own
 * worker threads are inside that time). Records accumulate over runs until
 * kiln_session_profile_reset, at 32 bytes each. The calls below fail with
 * FAILED_PRECONDITION on a session created without profile. Pointers they return are
 * owned by the session and valid until its next run, profile call or release; the
 * strings in them live as long as the model. */

typedef struct kiln_profile_call {
  const char *entry;  /* the entry point that ran */
  const char *kernel; /* the kernel's name in the model ("kiln_demo_k3_fusion") */
  /* Where in the model's source the call's op was written, as the manifest's "loc" gives
   * it: the model's own line, then for an op built inside an nn module the line in each
   * module down the call chain ("models/translator.cpp:32 > Transformer.cpp:188 >
   * Attention.cpp:20"; "models/demo.cpp:64" for an op the model builds itself; "" when
   * the model has none; a fused kernel's first op's chain); and for a fused kernel every
   * chain it computes, joined by ", " ("" otherwise). */
  const char *loc;
  const char *locs;
  uint32_t step;        /* the step's index in the entry */
  uint32_t run;         /* the run it belongs to, from 0 at the last reset */
  uint64_t start_ns;    /* when it started, in ns since the session was created */
  uint64_t duration_ns; /* how long the kernel took */
} kiln_profile_call;

/* The recorded calls, in the order they ran. */
KILN_API kiln_status *kiln_session_profile_calls(const kiln_session *session,
                                                 const kiln_profile_call **out_calls,
                                                 size_t *out_count);

typedef enum kiln_profile_key {
  KILN_PROFILE_BY_KERNEL = 1, /* one row per kernel (shared by every op it computes) */
  KILN_PROFILE_BY_LOC = 2     /* one row per source chain ("loc"; "" for none) */
} kiln_profile_key;

/* The recorded calls aggregated by kernel or by source chain: the same line of every
 * layer of a model built from nn modules shares one row. */
typedef struct kiln_profile_row {
  const char *name; /* the kernel, or the source chain */
  uint64_t calls;
  uint64_t total_ns;
  uint64_t min_ns;
  uint64_t max_ns;
} kiln_profile_row;

/* Rows by decreasing total_ns (ties by name), by a kiln_profile_key (an int32_t, so
 * that any value a caller passes is defined: INVALID_ARGUMENT for one outside the enum).
 * A row's share of the time is its total_ns over the sum of every row's; its mean is
 * total_ns / calls. */
KILN_API kiln_status *kiln_session_profile_summary(const kiln_session *session,
                                                   int32_t by,
                                                   const kiln_profile_row **out_rows,
                                                   size_t *out_count);

/* Writes the recorded calls as a Chrome trace (JSON: "traceEvents", one complete event,
 * "ph": "X", per call, with "ts" and "dur" in microseconds since the session was created,
 * "name" the kernel and "args" its entry, step, run, loc and locs), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open. The file is replaced atomically. */
KILN_API kiln_status *kiln_session_profile_write_trace(const kiln_session *session,
                                                       const char *path);

/* Forgets the recorded calls; the next run is run 0. */
KILN_API kiln_status *kiln_session_profile_reset(kiln_session *session);

/* ---- Session state ----------------------------------------------------------------- */

/* A model may declare states (the manifest's "states"): f32 tensors a session keeps
 * between runs, such as the key/value caches of incremental decoding. An entry point
 * creates a state (zero-filled or written in full: `decode_start` of a Transformer) and
 * later runs read it or update it in place (`decode_step` appends one position to each
 * cache without copying the rest). Dimension 0 of every state is the batch: row r of
 * each state belongs to the sequence in row r of the inputs.
 *
 * A run that needs a state no earlier run created fails with FAILED_PRECONDITION naming
 * it and the entries that create it; a state whose shape disagrees with the run's inputs
 * (e.g. another batch size) fails with INVALID_ARGUMENT. A run that fails once it has
 * started changing states (creating them or running kernels) forgets the states it
 * creates or writes; one rejected before that (bad inputs, shapes or bounds) changes no
 * state.
 *
 * Appends are tracked per state: after its creation, positions are written in order from
 * 0 (`decode_step` at step P needs steps 0 to P - 1 done; running P again rewrites it). A
 * run that would skip positions fails with INVALID_ARGUMENT naming the state, the
 * position and the positions written, and changes nothing; gathering rows keeps the
 * count, creating the state again resets it. */

KILN_API size_t kiln_model_state_count(const kiln_model *model);
/* NULL when index is out of range. */
KILN_API const char *kiln_model_state_name(const kiln_model *model, size_t state_index);

/* The current value of a state: out->data and out->shape are owned by the session and
 * valid until the next run, gather or clear. FAILED_PRECONDITION when the state is not
 * set, NOT_FOUND when the model has no such state. */
KILN_API kiln_status *kiln_session_get_state(const kiln_session *session,
                                             const char *name, kiln_tensor *out_tensor);

/* Reorders the batch of every state that is set: afterwards row i of each state holds
 * what row rows[i] held before, and the batch is row_count (rows may repeat, and a row
 * left out is dropped: a beam search keeps its surviving hypotheses this way). Rows that
 * stay where they are are not copied; the others are moved in place (one row at a time
 * is staged aside to break a cycle), and a state whose memory is too small for row_count
 * rows moves to a larger block. rows may be NULL when row_count is 0. INVALID_ARGUMENT
 * for an index outside the batch or states of different batch sizes; FAILED_PRECONDITION
 * when no state is set. On failure the states are unchanged. */
KILN_API kiln_status *kiln_session_gather_states(kiln_session *session,
                                                 const int32_t *rows, size_t row_count);

/* Forgets every state (their memory is kept for reuse). */
KILN_API void kiln_session_clear_states(kiln_session *session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
