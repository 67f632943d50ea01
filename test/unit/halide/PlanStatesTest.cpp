//===- PlanStatesTest.cpp - Session states in the plan and its manifest ---===//
//
// What the planner makes of kiln.state_alloc / state_write / state_read / kv_append and
// kiln.value_dim inputs (docs/manifest.md, "States, value dimensions and strided
// views"), read back from the manifest JSON the runtime receives; and the errors for
// what the plan cannot express.
//
//===----------------------------------------------------------------------===//

#include "PlanTestSupport.h"

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

/// A decoder in two entries: `start` allocates the caches and stores a memory, `step`
/// appends one projected token per run at position P (the value of input "step") and
/// attends over the cache's first P + 1 positions.
const char *kDecoder = R"mlir(
func @start(%m: tensor<?x2x3x4xf32> {kiln.name = "memory", kiln.dims = ["B", "", "", ""]}) {
  kiln.state_alloc "k_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.state_alloc "v_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.state_write "memory", %m : tensor<?x2x3x4xf32>
  kiln.return
}
func @step(%x: tensor<?x2x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P",
                            kiln.bounds = ["0", "7"]})
    -> (tensor<?x2x1x4xf32> {kiln.name = "y"}) {
  %wk = kiln.parameter "wk" : tensor<4x4xf32>
  %bk = kiln.parameter "bk" : tensor<4xf32>
  %k = kiln.linear %x, %wk, %bk
      : (tensor<?x2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x2x1x4xf32>
  %ks = kiln.kv_append "k_cache", %k {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %vs = kiln.kv_append "v_cache", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %a = kiln.attention %x, %ks, %vs {scale = 0.5 : f32}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  kiln.return %a : tensor<?x2x1x4xf32>
}
)mlir";

/// The arguments of an entry taking x [B, 2, 1, 4] and the step, for the error cases.
const char *kStepArgs =
    R"mlir(%x: tensor<?x2x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})mlir";

class PlanStates : public PlanTest {
protected:
  /// Plans an entry `(kStepArgs) -> resultType` with `body`; the error it gives.
  std::string planError(const std::string &body, const std::string &resultType) {
    std::string text = "func @step(" + std::string(kStepArgs) + ") -> (" + resultType +
                       " {kiln.name = \"y\"}) {\n" + body + "\n}\n";
    EXPECT_FALSE(plan(text)) << text_;
    return errors;
  }

  /// Plans an entry `(kStepArgs) -> resultType` with `body`; its steps, each as its
  /// args, followed by "/N" when it writes N > 1 of them.
  std::vector<std::string> stepArgs(const std::string &body,
                                    const std::string &resultType) {
    return stepArgsOf("func @step(" + std::string(kStepArgs) + ") -> (" + resultType +
                      " {kiln.name = \"y\"}) {\n" + body + "\n}\n");
  }

  /// The same for `text`, a whole module whose entry is @step.
  std::vector<std::string> stepArgsOf(const std::string &text) {
    std::vector<std::string> result;
    if (!plan(text)) {
      ADD_FAILURE() << errors;
      return result;
    }
    for (const Value &s : *entry("step").getArray("steps")) {
      const Object &step = *s.getAsObject();
      std::string args = str(step.get("args"));
      if (llvm::Optional<int64_t> outputs = step.getInteger("outputs"))
        args += "/" + std::to_string(*outputs);
      result.push_back(args);
    }
    return result;
  }
};

TEST_F(PlanStates, StatesAreListedModelWide) {
  ASSERT_TRUE(plan(kDecoder)) << errors;
  EXPECT_EQ(str(root().get("states")), R"([{"dtype":"f32","name":"k_cache","rank":4},)"
                                       R"({"dtype":"f32","name":"v_cache","rank":4},)"
                                       R"({"dtype":"f32","name":"memory","rank":4}])");
}

TEST_F(PlanStates, CreatingEntryAllocatesWithoutStepsAndWritesWithACopy) {
  ASSERT_TRUE(plan(kDecoder)) << errors;
  const Object &start = entry("start");
  // buffers: the input, the two caches, the memory.
  const Array &buffers = *start.getArray("buffers");
  ASSERT_EQ(buffers.size(), 4u) << text_;
  EXPECT_EQ(
      str(&buffers[1]),
      R"({"create":true,"dtype":"f32","kind":"state","shape":["B",2,8,4],"state":0})");
  EXPECT_EQ(
      str(&buffers[2]),
      R"({"create":true,"dtype":"f32","kind":"state","shape":["B",2,8,4],"state":1})");
  EXPECT_EQ(
      str(&buffers[3]),
      R"({"create":true,"dtype":"f32","kind":"state","shape":["B",2,3,4],"state":2})");
  const Array &steps = *start.getArray("steps");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(str(steps[0].getAsObject()->get("args")), "[0,3]");
  EXPECT_EQ(kernelName(steps[0].getAsObject()->getInteger("kernel").getValueOr(0)),
            "kiln_m_k0_state_write");
  EXPECT_EQ(str(start.get("outputs")), "[]");
}

TEST_F(PlanStates, ValueDimInputHasNoBuffer) {
  ASSERT_TRUE(plan(kDecoder)) << errors;
  const Array &inputs = *entry("step").getArray("inputs");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(str(&inputs[1]),
            R"({"bounds":[0,7],"dtype":"i32","name":"step","shape":[],"value_dim":"P"})");
}

TEST_F(PlanStates, KvAppendWritesPositionPAndReadsAStridedPrefix) {
  ASSERT_TRUE(plan(kDecoder)) << errors;
  const Object &step = entry("step");
  // x, wk, bk, the projection, then per cache: state, target, prefix; the attention.
  const Array &buffers = *step.getArray("buffers");
  ASSERT_EQ(buffers.size(), 11u) << text_;
  EXPECT_EQ(str(&buffers[4]),
            R"({"dtype":"f32","kind":"state","shape":["B",2,8,4],"state":0})");
  EXPECT_EQ(str(&buffers[5]),
            R"({"dtype":"f32","kind":"view","offset":"P*4",)"
            R"("shape":["B",2,1,4],"strides":[64,32,4,1],"view_of":4})");
  EXPECT_EQ(str(&buffers[6]), R"({"dtype":"f32","kind":"view","shape":["B",2,"P+1",4],)"
                              R"("strides":[64,32,4,1],"view_of":4})");
  EXPECT_EQ(str(&buffers[7]),
            R"({"dtype":"f32","kind":"state","shape":["B",2,8,4],"state":1})");
  const Array &steps = *step.getArray("steps");
  ASSERT_EQ(steps.size(), 3u) << text_;
  // linear, the two appends (one call of one kernel: both values, then both targets),
  // the attention over the two prefixes.
  EXPECT_EQ(str(steps[1].getAsObject()->get("args")), "[3,0,5,8]");
  EXPECT_EQ(steps[1].getAsObject()->getInteger("outputs").getValueOr(-1), 2);
  EXPECT_EQ(steps[2].getAsObject()->getInteger("outputs").getValueOr(-1), -1)
      << "a step with one output says nothing";
  EXPECT_EQ(str(steps[2].getAsObject()->get("args")), "[0,6,9,10]");
  int64_t kernel = steps[1].getAsObject()->getInteger("kernel").getValueOr(-1);
  EXPECT_EQ(str(&(*root().getArray("kernels"))[kernel]), R"("kiln_m_k2_kv_append_x2")");
  EXPECT_EQ(str(&(*step.getArray("outputs"))[0]),
            R"({"buffer":10,"dtype":"f32","name":"y","shape":["B",2,1,4]})");
}

TEST_F(PlanStates, StridesAndOffsetFollowDynamicDimensions) {
  ASSERT_TRUE(plan(R"mlir(
func @step(%x: tensor<?x?x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "H", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "T"})
    -> (tensor<?x?x?x4xf32> {kiln.name = "y"}) {
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 16 : i64, position = "T"}
      : (tensor<?x?x1x4xf32>) -> tensor<?x?x?x4xf32>
  %r = kiln.relu %c : tensor<?x?x?x4xf32>
  kiln.return %r : tensor<?x?x?x4xf32>
}
)mlir"))
      << errors;
  const Object &step = entry("step");
  EXPECT_EQ(str(&buffer(step, 2)), R"({"dtype":"f32","kind":"view","offset":"T*4",)"
                                   R"("shape":["B","H",1,4],"strides":["H*64",64,4,1],)"
                                   R"("view_of":1})");
  EXPECT_EQ(str(&(*step.getArray("inputs"))[1]),
            R"({"dtype":"i32","name":"step","shape":[],"value_dim":"T"})");
}

TEST_F(PlanStates, APrefillWritesABlockFromZeroAndReadsItInPlace) {
  ASSERT_TRUE(plan(R"mlir(
func @prefill(%x: tensor<?x2x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "N", ""]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}) {
  kiln.state_alloc "c" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "0"}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.relu %c : tensor<?x2x?x4xf32>
  kiln.return %r : tensor<?x2x?x4xf32>
}
)mlir"))
      << errors;
  const Object &prefill = entry("prefill");
  EXPECT_EQ(
      str(&buffer(prefill, 1)),
      R"({"create":true,"dtype":"f32","kind":"state","shape":["B",2,8,4],"state":0})");
  // Positions [0, N): no offset; the prefix [0, 0 + N) is the same block.
  EXPECT_EQ(str(&buffer(prefill, 2)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,"N",4],)"
            R"("strides":[64,32,4,1],"view_of":1})");
  EXPECT_EQ(str(&buffer(prefill, 3)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,"N",4],)"
            R"("strides":[64,32,4,1],"view_of":1})");
}

TEST_F(PlanStates, ABlockAtPHasAnOffsetOfPPositions) {
  ASSERT_TRUE(plan(R"mlir(
func @step(%x: tensor<?x2x3x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P", kiln.bounds = ["0", "5"]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}) {
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x3x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.relu %c : tensor<?x2x?x4xf32>
  kiln.return %r : tensor<?x2x?x4xf32>
}
func @start(%x: tensor<?x2x3x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]}) {
  kiln.state_alloc "c" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.return
}
)mlir"))
      << errors;
  const Object &step = entry("step");
  EXPECT_EQ(str(&buffer(step, 2)), R"({"dtype":"f32","kind":"view","offset":"P*4",)"
                                   R"("shape":["B",2,3,4],"strides":[64,32,4,1],)"
                                   R"("view_of":1})");
  EXPECT_EQ(str(&buffer(step, 3)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,"P+3",4],)"
            R"("strides":[64,32,4,1],"view_of":1})");
}

TEST_F(PlanStates, ReadStateIsTheStateBufferAndValueDimReadAsDataKeepsItsBuffer) {
  ASSERT_TRUE(plan(R"mlir(
func @step(%p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
    -> (tensor<?x3xf32> {kiln.name = "y"}, tensor<4xf32> {kiln.name = "pos"}) {
  %m = kiln.state_read "memory" {dims = ["B", ""]} : tensor<?x3xf32>
  %r = kiln.relu %m : tensor<?x3xf32>
  %q = kiln.reshape %p {shape = [1]} : (tensor<i32>) -> tensor<1xi32>
  %s = kiln.sinusoid %q : (tensor<1xi32>) -> tensor<1x4xf32>
  %t = kiln.reshape %s {shape = [4]} : (tensor<1x4xf32>) -> tensor<4xf32>
  kiln.return %r, %t : tensor<?x3xf32>, tensor<4xf32>
}
)mlir"))
      << errors;
  const Object &step = entry("step");
  EXPECT_EQ(str(&(*step.getArray("inputs"))[0]),
            R"({"buffer":0,"dtype":"i32","name":"step","shape":[],"value_dim":"P"})");
  EXPECT_EQ(str(&buffer(step, 1)),
            R"({"dtype":"f32","kind":"state","shape":["B",3],"state":0})");
  EXPECT_EQ(str((*step.getArray("steps"))[0].getAsObject()->get("args")), "[1,2]");
}

TEST_F(PlanStates, ReturnedPrefixIsCopiedOutDense) {
  ASSERT_TRUE(plan(std::string("func @step(") + kStepArgs + R"mlir()
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}) {
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %c : tensor<?x2x?x4xf32>
}
)mlir"))
      << errors;
  const Object &step = entry("step");
  EXPECT_EQ(str(&buffer(step, 4)),
            R"({"dtype":"f32","kind":"temp","live":[1,1],"shape":["B",2,"P+1",4]})");
  EXPECT_EQ(str((*step.getArray("steps"))[1].getAsObject()->get("args")), "[3,4]");
  EXPECT_EQ(kernelName(1), "kiln_m_k1_copy");
  EXPECT_EQ(
      (*step.getArray("outputs"))[0].getAsObject()->getInteger("buffer").getValueOr(-1),
      4);
}

TEST_F(PlanStates, SliceOfAPrefixIsAKernelNotAView) {
  ASSERT_TRUE(plan(std::string("func @step(") + kStepArgs + R"mlir()
    -> (tensor<?x2x1x4xf32> {kiln.name = "y"}) {
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %s = kiln.slice %c {axis = 2 : i64, start = 0 : i64, end = 1 : i64}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  kiln.return %s : tensor<?x2x1x4xf32>
}
)mlir"))
      << errors;
  EXPECT_EQ(str(&buffer(entry("step"), 4)),
            R"({"dtype":"f32","kind":"temp","live":[1,1],"shape":["B",2,1,4]})");
  EXPECT_EQ(kernelName(1), "kiln_m_k1_slice");
}

TEST_F(PlanStates, TransposeOfUnitDimsIsAView) {
  // A step's head split [B, 1, 2, 4] -> [B, 2, 1, 4] moves only the unit dim: a view,
  // which kv_append copies from. Moving a dim of size 2 past the 4 is a kernel.
  ASSERT_TRUE(plan(R"mlir(
func @step(%x: tensor<?x1x2x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}, tensor<?x4x1x2xf32> {kiln.name = "z"}) {
  %h = kiln.transpose %x {permutation = [0, 2, 1, 3]}
      : (tensor<?x1x2x4xf32>) -> tensor<?x2x1x4xf32>
  %c = kiln.kv_append "c", %h {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.relu %c : tensor<?x2x?x4xf32>
  %t = kiln.transpose %h {permutation = [0, 3, 2, 1]}
      : (tensor<?x2x1x4xf32>) -> tensor<?x4x1x2xf32>
  kiln.return %r, %t : tensor<?x2x?x4xf32>, tensor<?x4x1x2xf32>
}
)mlir"))
      << errors;
  const Object &step = entry("step");
  EXPECT_EQ(str(&buffer(step, 1)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,1,4],"view_of":0})");
  EXPECT_EQ(str((*step.getArray("steps"))[0].getAsObject()->get("args")), "[1,3]");
  EXPECT_EQ(str(root().get("kernels")),
            R"(["kiln_m_k0_kv_append","kiln_m_k1_relu","kiln_m_k2_transpose"])");
}

TEST_F(PlanStates, StridedOperandsGetTheirOwnKernels) {
  // The same attention over dense keys (a state read) and over a strided prefix: a
  // kernel that pins dense strides cannot serve the prefix.
  ASSERT_TRUE(plan(std::string("func @step(") + kStepArgs + R"mlir()
    -> (tensor<?x2x1x4xf32> {kiln.name = "y"}, tensor<?x2x1x4xf32> {kiln.name = "z"}) {
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %m = kiln.state_read "m" {dims = ["B", "", "S", ""]} : tensor<?x2x?x4xf32>
  %a = kiln.attention %x, %c, %c {scale = 0.5 : f32}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  %b = kiln.attention %x, %m, %m {scale = 0.5 : f32}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  kiln.return %a, %b : tensor<?x2x1x4xf32>, tensor<?x2x1x4xf32>
}
)mlir"))
      << errors;
  EXPECT_EQ(str(root().get("kernels")),
            R"(["kiln_m_k0_kv_append","kiln_m_k1_attention","kiln_m_k2_attention"])");
}

TEST_F(PlanStates, ReshapeOfAPrefixIsAnError) {
  std::string error = planError(R"mlir(
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.reshape %c {shape = [0, 0, -1]} : (tensor<?x2x?x4xf32>) -> tensor<?x2x?xf32>
  kiln.return %r : tensor<?x2x?xf32>)mlir",
                                "tensor<?x2x?xf32>");
  EXPECT_NE(error.find("cannot reshape a strided view of a cache (the result of "
                       "'kiln.kv_append', shape [B, 2, P+1, 4])"),
            std::string::npos)
      << error;
}

TEST_F(PlanStates, HeadSplitOfAPrefixThatAKernelReadsDenseIsAnError) {
  // A split of the last dimension keeps a strided view strided, but only readers that
  // take one may read it so; relu pins dense strides.
  std::string error = planError(R"mlir(
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.reshape %c {shape = [0, 0, 0, 2, 2]}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x2x2xf32>
  %y = kiln.relu %r : tensor<?x2x?x2x2xf32>
  kiln.return %y : tensor<?x2x?x2x2xf32>)mlir",
                                "tensor<?x2x?x2x2xf32>");
  EXPECT_NE(error.find("cannot reshape a strided view of a cache"), std::string::npos)
      << error;
}

const char *kAppendK = R"mlir(
  %k = kiln.kv_append "k", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>)mlir";

TEST_F(PlanStates, AppendsThatAKernelReadsBetweenAreTwoSteps) {
  // The relu reads k's cache before v's append: k's copy must run first.
  EXPECT_EQ(stepArgs(std::string(kAppendK) + R"mlir(
  %r = kiln.relu %k : tensor<?x2x?x4xf32>
  %v = kiln.kv_append "v", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %s = kiln.add %r, %v : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %s : tensor<?x2x?x4xf32>)mlir",
                     "tensor<?x2x?x4xf32>"),
            (std::vector<std::string>{"[0,2]", "[3,4]", "[0,6]", "[4,7,8]"}));
}

/// How many of `steps` (as stepArgs gives them) write two buffers.
size_t pairedSteps(const std::vector<std::string> &steps) {
  return static_cast<size_t>(llvm::count_if(
      steps, [](const std::string &s) { return llvm::StringRef(s).endswith("/2"); }));
}

TEST_F(PlanStates, AppendsOfDifferentShapesAreTwoSteps) {
  // Equal types (so equal kernel signatures), positions N and M: one call writes every
  // output over the first one's extents, so only values of one shape share it.
  auto steps = [&](const std::string &secondDim) {
    std::string text = R"mlir(
func @step(%a: tensor<?x2x?x4xf32> {kiln.name = "a", kiln.dims = ["B", "", "N", ""]},
           %b: tensor<?x2x?x4xf32> {kiln.name = "b", kiln.dims = ["B", "", ")mlir" +
                       secondDim + R"mlir(", ""]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}, tensor<?x2x?x4xf32> {kiln.name = "z"}) {
  %k = kiln.kv_append "k", %a {axis = 2 : i64, capacity = 16 : i64, position = "0"}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %v = kiln.kv_append "v", %b {axis = 2 : i64, capacity = 16 : i64, position = "0"}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %k, %v : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}
)mlir";
    return stepArgsOf(text);
  };
  std::vector<std::string> same = steps("N"), different = steps("M");
  // Both appends, then both dense copies out.
  EXPECT_EQ(same.size(), 3u);
  EXPECT_EQ(pairedSteps(same), 1u);
  EXPECT_EQ(different.size(), 4u);
  EXPECT_EQ(pairedSteps(different), 0u);
}

TEST_F(PlanStates, AppendOfAQueuedCacheIsItsOwnStep) {
  // v's value is a (non-strided-typed) view of k's cache, of the same shape and type
  // as x: it may only be read once k's copy ran. Appending x itself shares the call.
  auto steps = [&](const std::string &vValue) {
    return stepArgs(R"mlir(
  %k = kiln.kv_append "k", %x {axis = 2 : i64, capacity = 8 : i64, position = "0"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x1x4xf32>
  %t = kiln.transpose %k {permutation = [0, 1, 2, 3]}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x1x4xf32>
  %v = kiln.kv_append "v", )mlir" +
                        vValue +
                        R"mlir( {axis = 2 : i64, capacity = 8 : i64, position = "0"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x1x4xf32>
  kiln.return %v : tensor<?x2x1x4xf32>)mlir",
                    "tensor<?x2x1x4xf32>");
  };
  std::vector<std::string> ofCache = steps("%t"), ofInput = steps("%x");
  EXPECT_EQ(pairedSteps(ofCache), 0u) << llvm::join(ofCache, " ");
  EXPECT_EQ(ofCache.size(), 3u) << llvm::join(ofCache, " ");
  EXPECT_EQ(pairedSteps(ofInput), 1u) << llvm::join(ofInput, " ");
  EXPECT_EQ(ofInput.size(), 2u) << llvm::join(ofInput, " ");
}

TEST_F(PlanStates, CreateAfterUseIsAnError) {
  std::string error = planError(R"mlir(
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.state_alloc "c" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.return %x : tensor<?x2x1x4xf32>)mlir",
                                "tensor<?x2x1x4xf32>");
  EXPECT_NE(error.find("state 'c' is created here, after an earlier op of entry point "
                       "'step' uses it"),
            std::string::npos)
      << error;
}

TEST_F(PlanStates, RankMismatchIsAnError) {
  std::string error = planError(R"mlir(
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %m = kiln.state_read "c" {dims = ["B", ""]} : tensor<?x4xf32>
  kiln.return %x : tensor<?x2x1x4xf32>)mlir",
                                "tensor<?x2x1x4xf32>");
  EXPECT_NE(
      error.find("state 'c' has rank 2 here but rank 4 where the model first uses it"),
      std::string::npos)
      << error;
}

TEST_F(PlanStates, ShapeMismatchInOneEntryIsAnError) {
  std::string error = planError(R"mlir(
  %m = kiln.state_read "c" {dims = ["B", "", "S", ""]} : tensor<?x2x?x4xf32>
  %c = kiln.kv_append "c", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %x : tensor<?x2x1x4xf32>)mlir",
                                "tensor<?x2x1x4xf32>");
  EXPECT_NE(
      error.find("state 'c' has shape [B, 2, 8, 4] here but [B, 2, S, 4] earlier in "
                 "entry point 'step'"),
      std::string::npos)
      << error;
}

/// Self-attention over one packed projection [B, S, 12] of 2 heads of 2: q, k and v are
/// its column slices split into heads, and the heads are merged after attention. `%q`'s
/// extra reader, if any, follows the split.
std::string packedAttention(const std::string &extraReader) {
  return R"mlir(
func @encode(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "S", ""]})
    -> (tensor<?x?x4xf32> {kiln.name = "y"}) {
  %w = kiln.parameter "in_proj_weight" : tensor<12x4xf32>
  %b = kiln.parameter "in_proj_bias" : tensor<12xf32>
  %p = kiln.linear %x, %w, %b
      : (tensor<?x?x4xf32>, tensor<12x4xf32>, tensor<12xf32>) -> tensor<?x?x12xf32>
  %q0 = kiln.slice %p {axis = 2 : i64, start = 0 : i64, end = 4 : i64}
      : (tensor<?x?x12xf32>) -> tensor<?x?x4xf32>
  %k0 = kiln.slice %p {axis = 2 : i64, start = 4 : i64, end = 8 : i64}
      : (tensor<?x?x12xf32>) -> tensor<?x?x4xf32>
  %v0 = kiln.slice %p {axis = 2 : i64, start = 8 : i64, end = 12 : i64}
      : (tensor<?x?x12xf32>) -> tensor<?x?x4xf32>
  %q1 = kiln.reshape %q0 {shape = [0, 0, 2, 2]} : (tensor<?x?x4xf32>) -> tensor<?x?x2x2xf32>
  %k1 = kiln.reshape %k0 {shape = [0, 0, 2, 2]} : (tensor<?x?x4xf32>) -> tensor<?x?x2x2xf32>
  %v1 = kiln.reshape %v0 {shape = [0, 0, 2, 2]} : (tensor<?x?x4xf32>) -> tensor<?x?x2x2xf32>
  %q = kiln.transpose %q1 {permutation = [0, 2, 1, 3]}
      : (tensor<?x?x2x2xf32>) -> tensor<?x2x?x2xf32>
  %k = kiln.transpose %k1 {permutation = [0, 2, 1, 3]}
      : (tensor<?x?x2x2xf32>) -> tensor<?x2x?x2xf32>
  %v = kiln.transpose %v1 {permutation = [0, 2, 1, 3]}
      : (tensor<?x?x2x2xf32>) -> tensor<?x2x?x2xf32>
)mlir" + extraReader +
         R"mlir(
  %a = kiln.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>, tensor<?x2x?x2xf32>) -> tensor<?x2x?x2xf32>
  %m = kiln.transpose %a {permutation = [0, 2, 1, 3]}
      : (tensor<?x2x?x2xf32>) -> tensor<?x?x2x2xf32>
  %y = kiln.reshape %m {shape = [0, 0, 4]} : (tensor<?x?x2x2xf32>) -> tensor<?x?x4xf32>
  kiln.return %y : tensor<?x?x4xf32>
}
)mlir";
}

TEST_F(PlanStates, PackedHeadsAreReadAndMergedInPlace) {
  layoutRemarks = true;
  ASSERT_TRUE(plan(packedAttention(""))) << errors;
  EXPECT_EQ(errors, "") << "no slice or transpose should be left a kernel";
  const Object &encode = entry("encode");
  EXPECT_EQ(str(root().get("kernels")), R"(["kiln_m_k0_linear","kiln_m_k1_attention"])");
  // Buffers: x, w, b, p, then q0, k0, v0, q1, k1, v1, q, k, v as views of p.
  EXPECT_EQ(str(&buffer(encode, 5)),
            R"({"dtype":"f32","kind":"view","offset":4,"shape":["B","S",4],)"
            R"("strides":["S*12",12,1],"view_of":3})");
  EXPECT_EQ(str(&buffer(encode, 8)),
            R"({"dtype":"f32","kind":"view","shape":["B","S",2,2],)"
            R"("strides":["S*12",12,2,1],"view_of":5})");
  EXPECT_EQ(str(&buffer(encode, 11)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,"S",2],)"
            R"("strides":["S*12",2,12,1],"view_of":8})");
  // The merged heads m are a temp; attention writes them through a permuted view.
  EXPECT_EQ(str(&buffer(encode, 13)),
            R"({"dtype":"f32","kind":"temp","live":[1,1],"shape":["B","S",2,2]})");
  EXPECT_EQ(str(&buffer(encode, 14)),
            R"({"dtype":"f32","kind":"view","shape":["B",2,"S",2],)"
            R"("strides":["S*4",2,4,1],"view_of":13})");
  EXPECT_EQ(str((*encode.getArray("steps"))[1].getAsObject()->get("args")),
            "[10,11,12,14]");
  EXPECT_EQ(str(&buffer(encode, 15)),
            R"({"dtype":"f32","kind":"view","shape":["B","S",4],"view_of":13})");
}

TEST_F(PlanStates, HeadsThatAnotherKernelReadsDenseAreCopied) {
  // A relu of q needs it dense: q's slice, split and transpose stay kernels (the split
  // of a dense temp is a view), each with a remark naming the reader; k and v are still
  // views.
  layoutRemarks = true;
  ASSERT_TRUE(plan(packedAttention(R"mlir(
  %r = kiln.relu %q : tensor<?x2x?x2xf32>)mlir")))
      << errors;
  EXPECT_EQ(str(root().get("kernels")),
            R"(["kiln_m_k0_linear","kiln_m_k1_slice","kiln_m_k2_transpose",)"
            R"("kiln_m_k3_relu","kiln_m_k4_attention"])");
  EXPECT_NE(errors.find("'kiln.slice' is a kernel, not a view: 'kiln.relu' at "),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("'kiln.transpose' is a kernel, not a view: 'kiln.relu' at "),
            std::string::npos)
      << errors;
}

} // namespace
