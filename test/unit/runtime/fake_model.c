/* fake_model.c - a hand-written stand-in for a compiled Kiln model, so the runtime is
 * tested without the compiler. It exports what docs/manifest.md asks of a model: the
 * manifest, the ABI version, KERNEL_argv entry points over halide_buffer_t, and the
 * Halide runtime's error-handler hook. Kernels check their buffers the way Halide's
 * generated code does, so a runtime that builds buffers wrongly fails here too.
 *
 * Variants (compile definitions): FAKE_ABI_VERSION=N, FAKE_MISSING_KERNEL,
 * FAKE_BAD_MANIFEST, FAKE_BAD_METADATA, FAKE_FLOAT_BOUNDS (bounds on the f32 input x),
 * FAKE_BAD_BOUNDS (a malformed bounds expression), FAKE_TARGET="..." (the manifest's
 * target), FAKE_TARGET_SECTION (the target in the .kiln.target section too: the runtime
 * reads it before dlopen) and FAKE_ABORT_ON_LOAD (a constructor that aborts: loading the
 * library runs it). */
#include <HalideRuntime.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION 4
#endif

/* forward:  z = view((x + y) * proj.weight + view(proj.bias)),  s = x + y
 * widen:    out = 2 * pos (as i64); `tok` only binds T, no kernel reads it
 * broken:   a kernel that fails through the Halide error handler
 * encode:   out = 2 * src_ids (as i64); its integer inputs declare value bounds: static
 *           ones on src_ids, ones with dimension expressions on src_lengths and start
 *           (which no kernel reads: the runtime checks them all the same) */
#ifndef FAKE_TARGET
#define FAKE_TARGET "x86-64-linux"
#endif
#ifdef FAKE_TARGET_SECTION
__attribute__((section(".kiln.target"), used)) static const char target[] = FAKE_TARGET;
#endif
#ifdef FAKE_ABORT_ON_LOAD
#include <stdlib.h>
__attribute__((constructor)) static void abortOnLoad(void) { abort(); }
#endif

#ifdef FAKE_FLOAT_BOUNDS
#define X_BOUNDS ", \"bounds\": [0, 1]"
#else
#define X_BOUNDS ""
#endif
#ifdef FAKE_BAD_BOUNDS
#define LENGTHS_BOUNDS "[1, \"S+\"]"
#else
#define LENGTHS_BOUNDS "[1, \"S\"]"
#endif
static const char *manifest =
    "{\n"
    "  \"abi_version\": 4,\n"
    "  \"model\": \"fake\",\n"
    "  \"target\": \"" FAKE_TARGET "\",\n"
    "  \"parameters\": [\n"
    "    {\"name\": \"proj.weight\", \"dtype\": \"f32\", \"shape\": [4]},\n"
    "    {\"name\": \"proj.bias\", \"dtype\": \"f32\", \"shape\": [2, 2]}\n"
    "  ],\n"
#ifdef FAKE_MISSING_KERNEL
    "  \"kernels\": [\"fake_add\", \"fake_scale\", \"fake_addb\", \"fake_widen\", "
    "\"fake_fail\","
    " \"fake_missing\"],\n"
#else
    "  \"kernels\": [\"fake_add\", \"fake_scale\", \"fake_addb\", \"fake_widen\", "
    "\"fake_fail\"],\n"
#endif
    "  \"entries\": [\n"
    "    {\n"
    "      \"name\": \"forward\",\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], "
    "\"buffer\": 0" X_BOUNDS "},\n"
    "        {\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], "
    "\"buffer\": 1}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"name\": \"z\", \"dtype\": \"f32\", \"shape\": [\"(B*S*4)/4\", 4], "
    "\"buffer\": 8},\n"
    "        {\"name\": \"s\", \"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], "
    "\"buffer\": 5}\n"
    "      ],\n"
    "      \"buffers\": [\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], \"kind\": \"input\", "
    "\"input\": 0},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], \"kind\": \"input\", "
    "\"input\": 1},\n"
    "        {\"dtype\": \"f32\", \"shape\": [4], \"kind\": \"parameter\", "
    "\"parameter\": 0},\n"
    "        {\"dtype\": \"f32\", \"shape\": [2, 2], \"kind\": \"parameter\", "
    "\"parameter\": 1},\n"
    "        {\"dtype\": \"f32\", \"shape\": [4], \"kind\": \"view\", \"view_of\": 3},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], \"kind\": \"temp\", "
    "\"live\": [0, 2]},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], \"kind\": \"temp\", "
    "\"live\": [1, 2]},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 4], \"kind\": \"temp\", "
    "\"live\": [2, 2]},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"B*S\", 4], \"kind\": \"view\", "
    "\"view_of\": 7}\n"
    "      ],\n"
    "      \"steps\": [\n"
    "        {\"kernel\": 0, \"args\": [0, 1, 5], \"loc\": \"fake.cpp:10\"},\n"
    "        {\"kernel\": 1, \"args\": [5, 2, 6], \"loc\": \"fake.cpp:11\"},\n"
    "        {\"kernel\": 2, \"args\": [6, 4, 7], \"loc\": \"fake.cpp:12\", "
    "\"locs\": [\"fake.cpp:12\", \"fake.cpp:13\"]}\n"
    "      ]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"widen\",\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"tok\", \"dtype\": \"i32\", \"shape\": [\"B\", \"T\"]},\n"
    "        {\"name\": \"pos\", \"dtype\": \"i32\", \"shape\": [\"B\", \"T+1\"], "
    "\"buffer\": 0}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"name\": \"out\", \"dtype\": \"i64\", \"shape\": [\"B\", \"T + 1\"], "
    "\"buffer\": 1}\n"
    "      ],\n"
    "      \"buffers\": [\n"
    "        {\"dtype\": \"i32\", \"shape\": [\"B\", \"T+1\"], \"kind\": \"input\", "
    "\"input\": 1},\n"
    "        {\"dtype\": \"i64\", \"shape\": [\"B\", \"T+1\"], \"kind\": \"temp\", "
    "\"live\": [0, 0]}\n"
    "      ],\n"
    "      \"steps\": [{\"kernel\": 3, \"args\": [0, 1]}]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"broken\",\n"
    "      \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"N\"], "
    "\"buffer\": 0}],\n"
    "      \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"N\"], "
    "\"buffer\": 1}],\n"
    "      \"buffers\": [\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"N\"], \"kind\": \"input\", \"input\": "
    "0},\n"
    "        {\"dtype\": \"f32\", \"shape\": [\"N\"], \"kind\": \"temp\", \"live\": [0, "
    "0]}\n"
    "      ],\n"
    "      \"steps\": [{\"kernel\": 4, \"args\": [0, 1]}]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"encode\",\n"
    "      \"inputs\": [\n"
    "        {\"name\": \"src_ids\", \"dtype\": \"i32\", \"shape\": [\"B\", \"S\"],"
    " \"bounds\": [\"0\", \"49\"], \"buffer\": 0},\n"
    "        {\"name\": \"src_lengths\", \"dtype\": \"i32\", \"shape\": [\"B\"],"
    " \"bounds\": " LENGTHS_BOUNDS "},\n"
    "        {\"name\": \"start\", \"dtype\": \"i64\", \"shape\": [\"B\"],"
    " \"bounds\": [-1, \"S-1\"]}\n"
    "      ],\n"
    "      \"outputs\": [\n"
    "        {\"name\": \"out\", \"dtype\": \"i64\", \"shape\": [\"B\", \"S\"], "
    "\"buffer\": 1}\n"
    "      ],\n"
    "      \"buffers\": [\n"
    "        {\"dtype\": \"i32\", \"shape\": [\"B\", \"S\"], \"kind\": \"input\", "
    "\"input\": 0},\n"
    "        {\"dtype\": \"i64\", \"shape\": [\"B\", \"S\"], \"kind\": \"temp\", "
    "\"live\": [0, 0]}\n"
    "      ],\n"
    "      \"steps\": [{\"kernel\": 3, \"args\": [0, 1]}]\n"
    "    }\n"
#ifdef FAKE_BAD_MANIFEST
    "    ,{\"name\": \"bad\", \"inputs\": [], \"outputs\": [{\"name\": \"o\", \"dtype\": "
    "\"f32\","
    " \"shape\": [2], \"buffer\": 7}], \"buffers\": [], \"steps\": []}\n"
#endif
    "  ]\n"
    "}\n";

EXPORT const char *kiln_model_manifest(void) { return manifest; }
EXPORT int kiln_model_abi_version(void) { return FAKE_ABI_VERSION; }

/* --- The part of Halide's runtime the runtime talks to.
 * --------------------------------- */

static void default_error(void *user_context, const char *message) {
  (void)user_context;
  fprintf(stderr, "fake model (no handler installed): %s\n", message);
}
static halide_error_handler_t error_handler = default_error;

EXPORT halide_error_handler_t halide_set_error_handler(halide_error_handler_t handler) {
  halide_error_handler_t old = error_handler;
  error_handler = handler;
  return old;
}

static void report(const char *fmt, const char *a, long b, long c) {
  char message[256];
  snprintf(message, sizeof message, fmt, a, b, c);
  error_handler(NULL, message);
}

/* --- Kernels.
 * ---------------------------------------------------------------------------- */

/* Checks a buffer like Halide's generated prologue: type, rank, host pointer. */
static int check_buffer(const halide_buffer_t *b, const char *name, int code, int bits,
                        int dims) {
  if (!b || !b->host) {
    report("Buffer %s has no host memory (%ld, %ld)", name, 0, 0);
    return halide_error_code_buffer_argument_is_null;
  }
  if (b->type.code != code || b->type.bits != bits || b->type.lanes != 1) {
    report("Input buffer %s has type code %ld, bits %ld, which is wrong", name,
           b->type.code, b->type.bits);
    return halide_error_code_bad_type;
  }
  if (dims >= 0 && b->dimensions != dims) {
    report("Buffer %s requires %ld dimensions, got %ld", name, dims, b->dimensions);
    return halide_error_code_bad_dimensions;
  }
  return 0;
}

static int same_extents(const halide_buffer_t *a, const halide_buffer_t *b,
                        const char *name) {
  if (a->dimensions != b->dimensions) {
    report("Buffer %s: rank %ld vs %ld", name, a->dimensions, b->dimensions);
    return halide_error_code_bad_dimensions;
  }
  for (int d = 0; d < a->dimensions; ++d)
    if (a->dim[d].extent != b->dim[d].extent || a->dim[d].min != 0 ||
        b->dim[d].min != 0) {
      report("Buffer %s is accessed out of bounds in dimension %ld (extent %ld)", name, d,
             b->dim[d].extent);
      return halide_error_code_access_out_of_bounds;
    }
  return 0;
}

/* Visits every element of `shape` (Halide dim order) and calls fn with the element
 * offsets, in elements, into up to three buffers (second one broadcast along dim 0 when
 * `broadcast`). */
typedef void (*visit_fn)(const halide_buffer_t *bufs[3], const int64_t offsets[3]);

static void for_each(const halide_buffer_t *bufs[3], int nbufs, int broadcast,
                     visit_fn fn) {
  const halide_buffer_t *shape = bufs[nbufs - 1];
  int64_t total = 1;
  for (int d = 0; d < shape->dimensions; ++d)
    total *= shape->dim[d].extent;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear;
    int64_t offsets[3] = {0, 0, 0};
    for (int d = 0; d < shape->dimensions; ++d) {
      int64_t i = rest % shape->dim[d].extent;
      rest /= shape->dim[d].extent;
      for (int k = 0; k < nbufs; ++k) {
        if (broadcast && k == 1) {
          if (d == 0)
            offsets[k] += i * bufs[k]->dim[0].stride;
        } else {
          offsets[k] += i * bufs[k]->dim[d].stride;
        }
      }
    }
    fn(bufs, offsets);
  }
}

#define F32(b, o) (((float *)(b)->host)[o])

static void add_elem(const halide_buffer_t *b[3], const int64_t o[3]) {
  F32(b[2], o[2]) = F32(b[0], o[0]) + F32(b[1], o[1]);
}
static void mul_elem(const halide_buffer_t *b[3], const int64_t o[3]) {
  F32(b[2], o[2]) = F32(b[0], o[0]) * F32(b[1], o[1]);
}
static void widen_elem(const halide_buffer_t *b[3], const int64_t o[3]) {
  ((int64_t *)b[1]->host)[o[1]] = 2 * (int64_t)((const int32_t *)b[0]->host)[o[0]];
}

/* out = a OP b, elementwise (broadcast = 0) or with b a vector along the last tensor dim.
 */
static int binary(void **args, int broadcast, visit_fn fn) {
  const halide_buffer_t *bufs[3] = {args[0], args[1], args[2]};
  int rc;
  if ((rc = check_buffer(bufs[0], "a", halide_type_float, 32, -1)) ||
      (rc = check_buffer(bufs[1], "b", halide_type_float, 32, broadcast ? 1 : -1)) ||
      (rc = check_buffer(bufs[2], "out", halide_type_float, 32, bufs[0]->dimensions)) ||
      (rc = same_extents(bufs[0], bufs[2], "a")))
    return rc;
  if (broadcast) {
    if (bufs[1]->dim[0].extent != bufs[2]->dim[0].extent) {
      report("Buffer %s has extent %ld, needs %ld", "b", bufs[1]->dim[0].extent,
             bufs[2]->dim[0].extent);
      return halide_error_code_access_out_of_bounds;
    }
  } else if ((rc = same_extents(bufs[1], bufs[2], "b"))) {
    return rc;
  }
  for_each(bufs, 3, broadcast, fn);
  return 0;
}

EXPORT int fake_add_argv(void **args) { return binary(args, 0, add_elem); }
EXPORT int fake_scale_argv(void **args) { return binary(args, 1, mul_elem); }
EXPORT int fake_addb_argv(void **args) { return binary(args, 1, add_elem); }

EXPORT int fake_widen_argv(void **args) {
  const halide_buffer_t *bufs[3] = {args[0], args[1], NULL};
  int rc;
  if ((rc = check_buffer(bufs[0], "pos", halide_type_int, 32, 2)) ||
      (rc = check_buffer(bufs[1], "out", halide_type_int, 64, 2)) ||
      (rc = same_extents(bufs[0], bufs[1], "pos")))
    return rc;
  for_each(bufs, 2, 0, widen_elem);
  return 0;
}

EXPORT int fake_fail_argv(void **args) {
  const halide_buffer_t *x = args[0];
  report("fake_fail: refusing to process %s of %ld elements (%ld)", "x", x->dim[0].extent,
         0);
  return halide_error_code_generic_error;
}

/* Halide's metadata for one kernel, as generated code exports it: each argument an f32
 * buffer of `dims` dimensions. */
#define F32_BUFFER(name, kind, dims)                                                     \
  { name, kind, dims, {halide_type_float, 32, 1}, NULL, NULL, NULL, NULL, NULL }
static const struct halide_filter_argument_t add_arguments[3] = {
    F32_BUFFER("a", halide_argument_kind_input_buffer, 3),
    F32_BUFFER("b", halide_argument_kind_input_buffer, 3),
#ifdef FAKE_BAD_METADATA
    F32_BUFFER("out", halide_argument_kind_output_buffer, 2),
#else
    F32_BUFFER("out", halide_argument_kind_output_buffer, 3),
#endif
};
static const struct halide_filter_metadata_t add_metadata = {1, 3, add_arguments,
                                                             "x86-64-linux", "fake_add"};

EXPORT const struct halide_filter_metadata_t *fake_add_metadata(void) {
  return &add_metadata;
}
