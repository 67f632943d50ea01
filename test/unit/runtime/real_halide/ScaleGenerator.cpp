// ScaleGenerator.cpp - builds real Halide AOT kernels (and a standalone Halide runtime)
// the way the compiler's backend does, so the runtime is checked against genuine
// generated code: argv calling convention, metadata, buffer layout (strides included) and
// error reporting. real_scale serves real_model.c; real_copy serves state_model.c.
#include "Halide.h"

#include <string>

using namespace Halide;

int main(int argc, char **argv) {
  if (argc != 2)
    return 1;
  std::string dir = argv[1];
  // out[b, s, k] = a[b, s, k] * w[k]; Halide's x is the contiguous (last tensor) dim.
  ImageParam a(Float(32), 3, "a"), w(Float(32), 1, "w");
  Var x("x"), y("y"), z("z");
  Func out("out");
  out(x, y, z) = a(x, y, z) * w(x);
  out.vectorize(x, 8, TailStrategy::GuardWithIf).parallel(z);
  Target target = get_host_target();
  out.compile_to_object(dir + "/real_scale.o", {a, w}, "real_scale",
                        target.with_feature(Target::NoRuntime));
  // out[y, x] = src[y, x], for buffers of any strides (Halide's default only requires a
  // unit stride in its dimension 0, the last tensor dim): the state model's strided
  // views.
  ImageParam src(Float(32), 2, "src");
  Func copy("copy");
  copy(x, y) = src(x, y);
  copy.compile_to_object(dir + "/real_copy.o", {src}, "real_copy",
                         target.with_feature(Target::NoRuntime));
  compile_standalone_runtime(dir + "/halide_runtime.o", target);
  return 0;
}
