// make_fake_weights.cpp - writes fake_model's parameters with known values for the
// kiln-run tests in CMakeLists.txt.
#include "kiln/runtime.hpp"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fake_weights OUT.safetensors\n");
    return 1;
  }
  const float weight[4] = {2, -1, 0.5f, 3};
  const float bias[4] = {0.25f, -0.5f, 1, 2};
  try {
    kiln::writeSafetensors(argv[1], {kiln::TensorArg::of("proj.weight", {4}, weight),
                                     kiln::TensorArg::of("proj.bias", {2, 2}, bias)});
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "make_fake_weights: %s\n", e.what());
    return 1;
  }
  return 0;
}
