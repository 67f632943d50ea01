/* real_model.c - the manifest of a model built from one real Halide kernel (real_scale).
 */
#define EXPORT __attribute__((visibility("default")))

EXPORT const char *kiln_model_manifest(void) {
  return "{\"abi_version\": 4, \"model\": \"real\", \"target\": \"host\",\n"
         " \"parameters\": [{\"name\": \"scale\", \"dtype\": \"f32\", \"shape\": "
         "[16]}],\n"
         " \"kernels\": [\"real_scale\"],\n"
         " \"entries\": [\n"
         "  {\"name\": \"forward\",\n"
         "   \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"S\", 16],"
         " \"buffer\": 0}],\n"
         "   \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"S\", 16],"
         " \"buffer\": 2}],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 16], \"kind\": \"input\", "
         "\"input\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [16], \"kind\": \"parameter\", "
         "\"parameter\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 16], \"kind\": "
         "\"temp\", \"live\": [0, 0]}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [0, 1, 2]}]},\n"
         /* Feeds the kernel a w shorter than x's last dim: Halide's own bounds check
            fails. */
         "  {\"name\": \"mismatch\",\n"
         "   \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"S\", \"K\"],"
         " \"buffer\": 0},\n"
         "              {\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [\"W\"], "
         "\"buffer\": 1}],\n"
         "   \"outputs\": [{\"name\": \"y\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"S\", \"K\"],"
         " \"buffer\": 2}],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", \"K\"], \"kind\": "
         "\"input\", \"input\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"W\"], \"kind\": \"input\", \"input\": "
         "1},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", \"K\"], \"kind\": "
         "\"temp\", \"live\": [0, 0]}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [0, 1, 2]}]}]}\n";
}

EXPORT int kiln_model_abi_version(void) { return 4; }
