/* state_kernels.c - a hand-written stand-in for real_copy (state_model.c) where the
 * Halide compiler is not installed: out[y, x] = src[y, x] over halide_buffer_t's of any
 * strides, with the unit-stride and bounds checks of Halide's generated code and its
 * message. */
#include <HalideRuntime.h>

#include <stdio.h>

#define EXPORT __attribute__((visibility("default")))

static void default_error(void *user_context, const char *message) {
  (void)user_context;
  fprintf(stderr, "state model (no handler installed): %s\n", message);
}
static halide_error_handler_t error_handler = default_error;

EXPORT halide_error_handler_t halide_set_error_handler(halide_error_handler_t handler) {
  halide_error_handler_t old = error_handler;
  error_handler = handler;
  return old;
}

static int check(const halide_buffer_t *b, const char *name) {
  char message[160];
  if (!b || !b->host || b->dimensions != 2 || b->type.code != halide_type_float ||
      b->type.bits != 32) {
    snprintf(message, sizeof message,
             "Buffer %s is not a 2-D f32 buffer with host memory", name);
    error_handler(NULL, message);
    return halide_error_code_bad_type;
  }
  if (b->dim[0].stride != 1) {
    snprintf(message, sizeof message, "Constraint violated: %s.stride.0 (%d) == 1 (1)",
             name, b->dim[0].stride);
    error_handler(NULL, message);
    return halide_error_code_constraint_violated;
  }
  return 0;
}

EXPORT int real_copy_argv(void **args) {
  const halide_buffer_t *src = args[0];
  const halide_buffer_t *out = args[1];
  int rc;
  if ((rc = check(src, "src")) || (rc = check(out, "copy")))
    return rc;
  for (int d = 0; d < 2; ++d)
    if (out->dim[d].extent > src->dim[d].extent && out->dim[d].extent > 0) {
      char message[160];
      snprintf(message, sizeof message,
               "Input buffer src is accessed at %d, which is beyond the max (%d) in "
               "dimension %d",
               out->dim[d].extent - 1, src->dim[d].extent - 1, d);
      error_handler(NULL, message);
      return halide_error_code_access_out_of_bounds;
    }
  const float *from = (const float *)src->host;
  float *to = (float *)out->host;
  for (int y = 0; y < out->dim[1].extent; ++y)
    for (int x = 0; x < out->dim[0].extent; ++x)
      to[y * out->dim[1].stride + x] = from[y * src->dim[1].stride + x];
  return 0;
}
