/*===- check_tiny.c - Runs tiny.so through the C API and checks it by hand -===*/
/*
 * usage: check_tiny MODEL.so WEIGHTS.safetensors
 *
 * Writes known weights to WEIGHTS, runs the entry `forward` of the tiny model
 * (project/tiny.cpp: y = softmax(x Wᵀ + b)) on fresh random inputs, and compares y with
 * the same function computed here in double precision. Plain C against the installed
 * runtime only: the tests build it with CMake (Kiln::runtime) and with pkg-config.
 */

#include "kiln/runtime.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { kBatch = 3, kIn = 8, kOut = 5 };

/* Nonzero when the call succeeded; otherwise says what failed and why. */
static int succeeded(kiln_status *status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "check_tiny: %s: %s\n", what, kiln_status_get_message(status));
  kiln_status_free(status);
  return 0;
}

/* ‖y − softmax(x Wᵀ + b)‖ / ‖softmax(x Wᵀ + b)‖ over the whole batch. */
static double relativeError(const float *y, float x[kBatch][kIn], float weight[kOut][kIn],
                            const float *bias) {
  double diff = 0, norm = 0;
  for (int row = 0; row < kBatch; ++row) {
    double logits[kOut], max = -INFINITY, sum = 0;
    for (int o = 0; o < kOut; ++o) {
      logits[o] = bias[o];
      for (int i = 0; i < kIn; ++i)
        logits[o] += (double)x[row][i] * weight[o][i];
      max = logits[o] > max ? logits[o] : max;
    }
    for (int o = 0; o < kOut; ++o)
      sum += exp(logits[o] - max);
    for (int o = 0; o < kOut; ++o) {
      double expected = exp(logits[o] - max) / sum;
      diff += (y[row * kOut + o] - expected) * (y[row * kOut + o] - expected);
      norm += expected * expected;
    }
  }
  return sqrt(diff / norm);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: check_tiny MODEL.so WEIGHTS.safetensors\n");
    return 2;
  }
  float weight[kOut][kIn], bias[kOut], x[kBatch][kIn];
  for (int o = 0; o < kOut; ++o) {
    for (int i = 0; i < kIn; ++i)
      weight[o][i] = (float)sin(o * kIn + i + 1);
    bias[o] = 0.25f * (float)o - 0.5f;
  }
  unsigned seed = (unsigned)time(NULL) ^ ((unsigned)getpid() << 16);
  srand(seed);
  for (int row = 0; row < kBatch; ++row)
    for (int i = 0; i < kIn; ++i)
      x[row][i] = 4.0f * (float)rand() / (float)RAND_MAX - 2.0f;

  const int64_t weightShape[] = {kOut, kIn}, biasShape[] = {kOut},
                xShape[] = {kBatch, kIn};
  const kiln_tensor parameters[] = {
      {"proj.weight", KILN_DTYPE_F32, 2, weightShape, weight},
      {"proj.bias", KILN_DTYPE_F32, 1, biasShape, bias},
  };
  const kiln_tensor input = {"x", KILN_DTYPE_F32, 2, xShape, x};
  kiln_model *model = NULL;
  kiln_weights *weights = NULL;
  kiln_session *session = NULL;
  kiln_tensor y;
  int ok = succeeded(kiln_safetensors_write(argv[2], parameters, 2), argv[2]) &&
           succeeded(kiln_model_open(argv[1], &model), argv[1]) &&
           succeeded(kiln_weights_open(model, argv[2], &weights), argv[2]) &&
           succeeded(kiln_session_create(model, weights, NULL, &session), "session") &&
           succeeded(kiln_session_run(session, "forward", &input, 1), "forward") &&
           succeeded(kiln_session_get_output(session, "y", &y), "output y");
  if (ok && (y.dtype != KILN_DTYPE_F32 || y.rank != 2 || y.shape[0] != kBatch ||
             y.shape[1] != kOut)) {
    fprintf(stderr, "check_tiny: y: expected f32 [%d, %d], got %s of rank %d\n", kBatch,
            kOut, kiln_dtype_name(y.dtype), (int)y.rank);
    ok = 0;
  }
  if (ok) {
    double error = relativeError((const float *)y.data, x, weight, bias);
    printf("check_tiny: seed %u: relative error %.3g\n", seed, error);
    if (!(error < 1e-5)) {
      fprintf(stderr, "check_tiny: y differs from softmax(x Wᵀ + b): relative error %g\n",
              error);
      ok = 0;
    }
  }
  kiln_session_release(session);
  kiln_weights_release(weights);
  kiln_model_release(model);
  return ok ? 0 : 1;
}
