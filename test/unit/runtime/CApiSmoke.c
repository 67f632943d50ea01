/* CApiSmoke.c - the C API from plain C99, as an embedding application would use it: open,
 * run on random inputs, compare against values computed here, release in any order.
 * Usage: kiln_c_api_smoke MODEL.so WORKDIR; exits 0 on success. */
#include "kiln/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(kiln_status *status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "%s: %s: %s\n", what,
          kiln_status_code_string(kiln_status_get_code(status)),
          kiln_status_get_message(status));
  kiln_status_free(status);
  return 0;
}

static float random_nonzero(void) {
  float v;
  do
    v = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
  while (v == 0.0f);
  return v;
}

int main(int argc, char **argv) {
  enum { B = 2, S = 5, N = B * S * 4 };
  float weight[4], bias[4], x[N], y[N];
  int64_t wshape[1] = {4}, bshape[2] = {2, 2}, xshape[3] = {B, S, 4};
  char path[4096];
  kiln_model *model = NULL;
  kiln_weights *weights = NULL;
  kiln_session *session = NULL;
  kiln_tensor params[2], inputs[2], z;
  int i;

  if (argc != 3)
    return 2;
  srand(3);
  for (i = 0; i < 4; ++i) {
    weight[i] = random_nonzero();
    bias[i] = random_nonzero();
  }
  for (i = 0; i < N; ++i) {
    x[i] = random_nonzero();
    y[i] = random_nonzero();
  }
  snprintf(path, sizeof path, "%s/c_smoke.safetensors", argv[2]);
  params[0].name = "proj.weight";
  params[0].dtype = KILN_DTYPE_F32;
  params[0].rank = 1;
  params[0].shape = wshape;
  params[0].data = weight;
  params[1] = params[0];
  params[1].name = "proj.bias";
  params[1].rank = 2;
  params[1].shape = bshape;
  params[1].data = bias;
  if (!check(kiln_safetensors_write(path, params, 2), "write") ||
      !check(kiln_model_open(argv[1], &model), "open") ||
      !check(kiln_weights_open(model, path, &weights), "weights") ||
      !check(kiln_session_create(model, weights, NULL, &session), "session"))
    return 1;
  /* The fake model keeps no state: there is nothing to gather. */
  {
    int32_t rows[1] = {0};
    kiln_status *none = kiln_session_gather_states(session, rows, 1);
    int ok = kiln_model_state_count(model) == 0 &&
             kiln_model_state_name(model, 0) == NULL &&
             kiln_status_get_code(none) == KILN_STATUS_FAILED_PRECONDITION;
    kiln_status_free(none);
    if (!ok) {
      fprintf(stderr, "a model without states reports states\n");
      return 1;
    }
  }
  kiln_model_release(model); /* the session keeps both alive */
  kiln_weights_release(weights);

  inputs[0].name = "x";
  inputs[0].dtype = KILN_DTYPE_F32;
  inputs[0].rank = 3;
  inputs[0].shape = xshape;
  inputs[0].data = x;
  inputs[1] = inputs[0];
  inputs[1].name = "y";
  inputs[1].data = y;
  if (!check(kiln_session_run(session, "forward", inputs, 2), "run") ||
      !check(kiln_session_get_output(session, "z", &z), "output"))
    return 1;
  if (z.rank != 2 || z.shape[0] != B * S || z.shape[1] != 4) {
    fprintf(stderr, "unexpected output shape\n");
    return 1;
  }
  for (i = 0; i < N; ++i) {
    float want = (x[i] + y[i]) * weight[i % 4] + bias[i % 4];
    float got = ((const float *)z.data)[i];
    if (fabsf(got - want) > 1e-6f * (1.0f + fabsf(want))) {
      fprintf(stderr, "z[%d] = %g, expected %g\n", i, got, want);
      return 1;
    }
  }
  kiln_session_release(session);
  remove(path);
  printf("ok\n");
  return 0;
}
