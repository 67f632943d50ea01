/* state_model.c - the manifest of a model with session states, value dimensions and
 * strided views (docs/manifest.md), over one kernel: real_copy, out[y, x] = src[y, x]
 * (real Halide output where the Halide compiler is installed, else state_kernels.c).
 *
 * states: cache f32 [B, 3] (a tiny "KV cache" of capacity 3), aux f32 [N, 2].
 *   start      creates cache [B, 3], zero-filled; `batch` only binds B. No output.
 *   start_aux  creates aux [N, 2] and copies input a into it. No output.
 *   step       writes v [B, 1] at position P (`pos`, a value_dim with bounds [0, 2]) of
 *              every row, through a view at offset P with strides [3, 1], and outputs the
 *              prefix [B, P+1] (a strided view copied into a dense temp). `limit` [B],
 *              which no kernel reads, has bounds [0, P]: bounds may use a value_dim.
 *   peek       the prefix [B, P+1] again, with B and W bound by the cache's shape only
 * and strides ["W", 1]; `pos` has no bounds, so only the view fit check stops a P past
 * the capacity. whole      outputs the cache itself (an output that is the state's
 * memory). broken     writes v into position 0, then copies w [B, K] into a [B, 2] temp:
 * Halide rejects K < 2 after the cache was written. */
#define EXPORT __attribute__((visibility("default")))

EXPORT const char *kiln_model_manifest(void) {
  return "{\"abi_version\": 4, \"model\": \"stateful\", \"target\": \"host\",\n"
         " \"kernels\": [\"real_copy\"],\n"
         " \"states\": [{\"name\": \"cache\", \"dtype\": \"f32\", \"rank\": 2},\n"
         "            {\"name\": \"aux\", \"dtype\": \"f32\", \"rank\": 2}],\n"
         " \"entries\": [\n"
         "  {\"name\": \"start\",\n"
         "   \"inputs\": [{\"name\": \"batch\", \"dtype\": \"i32\", \"shape\": "
         "[\"B\"]}],\n"
         "   \"outputs\": [],\n"
         "   \"buffers\": [{\"dtype\": \"f32\", \"shape\": [\"B\", 3], \"kind\": "
         "\"state\","
         " \"state\": 0, \"create\": true}],\n"
         "   \"steps\": []},\n"
         "  {\"name\": \"start_aux\",\n"
         "   \"inputs\": [{\"name\": \"a\", \"dtype\": \"f32\", \"shape\": [\"N\", 2],"
         " \"buffer\": 0}],\n"
         "   \"outputs\": [],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"N\", 2], \"kind\": \"input\", "
         "\"input\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"N\", 2], \"kind\": \"state\", "
         "\"state\": 1,"
         " \"create\": true}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [0, 1]}]},\n"
         "  {\"name\": \"step\",\n"
         "   \"inputs\": [{\"name\": \"v\", \"dtype\": \"f32\", \"shape\": [\"B\", 1],"
         " \"buffer\": 0},\n"
         "              {\"name\": \"pos\", \"dtype\": \"i32\", \"shape\": [],"
         " \"bounds\": [0, 2], \"value_dim\": \"P\"},\n"
         "              {\"name\": \"limit\", \"dtype\": \"i32\", \"shape\": [\"B\"],"
         " \"bounds\": [0, \"P\"]}],\n"
         "   \"outputs\": [{\"name\": \"prefix\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"P+1\"],"
         " \"buffer\": 4}],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 1], \"kind\": \"input\", "
         "\"input\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 3], \"kind\": \"state\", "
         "\"state\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 1], \"kind\": \"view\", "
         "\"view_of\": 1,"
         " \"offset\": \"P\", \"strides\": [3, 1]},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"P+1\"], \"kind\": \"view\", "
         "\"view_of\": 1,"
         " \"strides\": [3, 1]},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"P+1\"], \"kind\": \"temp\", "
         "\"live\": [1, 1]}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [0, 2]}, {\"kernel\": 0, \"args\": "
         "[3, 4]}]},\n"
         "  {\"name\": \"peek\",\n"
         "   \"inputs\": [{\"name\": \"pos\", \"dtype\": \"i64\", \"shape\": [],"
         " \"value_dim\": \"P\"}],\n"
         "   \"outputs\": [{\"name\": \"prefix\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"P+1\"],"
         " \"buffer\": 2}],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"W\"], \"kind\": \"state\", "
         "\"state\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"P+1\"], \"kind\": \"view\", "
         "\"view_of\": 0,"
         " \"strides\": [\"W\", 1]},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"P+1\"], \"kind\": \"temp\", "
         "\"live\": [0, 0]}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [1, 2]}]},\n"
         "  {\"name\": \"whole\",\n"
         "   \"inputs\": [],\n"
         "   \"outputs\": [{\"name\": \"cache\", \"dtype\": \"f32\", \"shape\": [\"B\", "
         "\"W\"],"
         " \"buffer\": 0}],\n"
         "   \"buffers\": [{\"dtype\": \"f32\", \"shape\": [\"B\", \"W\"], \"kind\": "
         "\"state\","
         " \"state\": 0}],\n"
         "   \"steps\": []},\n"
         "  {\"name\": \"broken\",\n"
         "   \"inputs\": [{\"name\": \"v\", \"dtype\": \"f32\", \"shape\": [\"B\", 1],"
         " \"buffer\": 0},\n"
         "              {\"name\": \"w\", \"dtype\": \"f32\", \"shape\": [\"B\", \"K\"],"
         " \"buffer\": 3}],\n"
         "   \"outputs\": [{\"name\": \"out\", \"dtype\": \"f32\", \"shape\": [\"B\", 2],"
         " \"buffer\": 4}],\n"
         "   \"buffers\": [\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 1], \"kind\": \"input\", "
         "\"input\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 3], \"kind\": \"state\", "
         "\"state\": 0},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 1], \"kind\": \"view\", "
         "\"view_of\": 1,"
         " \"strides\": [3, 1]},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", \"K\"], \"kind\": \"input\", "
         "\"input\": 1},\n"
         "     {\"dtype\": \"f32\", \"shape\": [\"B\", 2], \"kind\": \"temp\", \"live\": "
         "[1, 1]}],\n"
         "   \"steps\": [{\"kernel\": 0, \"args\": [0, 2]}, {\"kernel\": 0, \"args\": "
         "[3, 4]}]}\n"
         " ]}\n";
}

EXPORT int kiln_model_abi_version(void) { return 4; }
