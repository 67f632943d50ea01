//===- StateOpsTest.cpp - Session states and value inputs in the DSL ------===//
//
// Entry::valueInput, stateAlloc and stateRead, and the free ops stateWrite and kvAppend:
// the IR they build, the shapes that follow a step's position, and each misuse reported
// at the line that wrote it.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// An entry `start` that allocates cache `c` [B, 4, 16, 8] and writes state `mem`
/// [B, 4, S, 8] from its input, as a decoder's decode_start does.
void declareStart(ModelBuilder &m) {
  Entry start = m.entry("start");
  Tensor memory = start.input("memory", DType::F32, {dyn("B"), 4, dyn("S"), 8});
  start.stateAlloc("c", {dyn("B"), 4, 16, 8});
  stateWrite("mem", memory);
}

TEST(FrontendStates, DecodingEntriesBuildTheStateOps) {
  ModelBuilder m("dec");
  declareStart(m);
  Entry step = m.entry("step");
  Tensor x = step.input("x", DType::F32, {dyn("B"), 4, 1, 8});
  Tensor position = step.valueInput("step", dyn("P"), {0, 15});
  EXPECT_EQ(toString(position.shape()), "[]");
  EXPECT_EQ(position.dtype(), DType::I32);
  // S is bound only by the state read; src_lengths' bounds may still use it.
  Tensor lengths = step.input("src_lengths", DType::I32, {dyn("B")}, {1, "S"});
  Tensor keys = kvAppend("c", x, /*axis=*/-2, dyn("P"), 16);
  EXPECT_EQ(toString(keys.shape()), "[B, 4, P+1, 8]");
  Tensor memory = step.stateRead("mem", {dyn("B"), 4, dyn("S"), 8});
  EXPECT_EQ(toString(memory.shape()), "[B, 4, S, 8]");
  Tensor scores = matmul(x, keys, false, true);
  EXPECT_EQ(toString(scores.shape()), "[B, 4, 1, P+1]");
  Tensor mask = reshape(paddingMask(lengths, memory, 2), {0, 1, 1, -1});
  Tensor cross = softmax(matmul(x, memory, false, true) + mask);
  EXPECT_EQ(toString(cross.shape()), "[B, 4, 1, S]");
  step.output("self", matmul(softmax(scores), keys));
  step.output("cross", matmul(cross, memory));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_TRUE(contains(text,
                       "func @start(%arg0: tensor<?x4x?x8xf32> {kiln.dims = [\"B\", "
                       "\"\", \"S\", \"\"], kiln.name = \"memory\"}) {"))
      << text;
  EXPECT_TRUE(contains(text,
                       "kiln.state_alloc \"c\" {dims = [\"B\", \"\", \"\", \"\"]} : "
                       "tensor<?x4x16x8xf32>"))
      << text;
  EXPECT_TRUE(contains(text, "kiln.state_write \"mem\", %arg0 : tensor<?x4x?x8xf32>"))
      << text;
  EXPECT_TRUE(contains(text,
                       "%arg1: tensor<i32> {kiln.bounds = [\"0\", \"15\"], kiln.dims = "
                       "[], kiln.name = \"step\", kiln.value_dim = \"P\"}"))
      << text;
  EXPECT_TRUE(contains(text,
                       "kiln.bounds = [\"1\", \"S\"], kiln.dims = [\"B\"], kiln.name = "
                       "\"src_lengths\""))
      << text;
  EXPECT_TRUE(contains(text,
                       "kiln.kv_append \"c\", %arg0 {axis = 2 : i64, capacity = 16 : "
                       "i64, position = \"P\"} : (tensor<?x4x1x8xf32>) -> "
                       "tensor<?x4x?x8xf32>"))
      << text;
  EXPECT_TRUE(contains(text,
                       "kiln.state_read \"mem\" {dims = [\"B\", \"\", \"S\", \"\"]} : "
                       "tensor<?x4x?x8xf32>"))
      << text;
}

TEST(FrontendStates, AnEntryThatOnlyWritesStatesNeedsNoOutputs) {
  ModelBuilder m("start_only");
  declareStart(m);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  EXPECT_TRUE(contains(printed(model), "kiln.return\n")) << printed(model);
}

TEST(FrontendStates, AnEntryThatOnlyReadsStatesStillNeedsOutputs) {
  ModelBuilder m("reader");
  declareStart(m);
  Entry e = m.entry("read");
  e.stateRead("mem", {dyn("B"), 4, dyn("S"), 8});
  Model model = m.finish();
  ASSERT_FALSE(model.ok());
  ASSERT_EQ(model.errors().size(), 1u);
  EXPECT_TRUE(contains(model.errors()[0].message,
                       "entry point 'read' has no outputs and writes no state"))
      << model.errors()[0].str();
}

TEST(FrontendStates, ValueInputNeedsADimensionName) {
  ModelBuilder m("bad");
  declareStart(m);
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  e.valueInput("step", 3, {0, 15});
  e.output("y", e.stateRead("mem", {dyn("B"), 4, dyn("S"), 8}));
  expectOneErrorAt(
      m.finish(), line,
      "value input 'step' needs a dimension name to bind, as dyn(\"P\"), got "
      "the static size 3");
}

TEST(FrontendStates, ValueDimensionBoundByAShapeTooIsAnError) {
  ModelBuilder m("bad");
  declareStart(m);
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("T")});
  unsigned line = __LINE__ + 1;
  e.valueInput("step", dyn("T"), {0, 15});
  e.output("y", relu(x));
  expectOneErrorAt(
      m.finish(), line,
      "value input 'step' binds 'T', which the shape of input 'x' binds too; a "
      "dimension has one binding");
}

TEST(FrontendStates, ValueDimensionBoundByAStateTooIsAnError) {
  ModelBuilder m("bad");
  declareStart(m);
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  e.valueInput("step", dyn("S"), {0, 15});
  e.output("y", e.stateRead("mem", {dyn("B"), 4, dyn("S"), 8}));
  expectOneErrorAt(m.finish(), line, "which the shape of state 'mem' binds too");
}

TEST(FrontendStates, ValueInputBoundsCannotUseItsOwnDimension) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4});
  unsigned line = __LINE__ + 1;
  e.valueInput("step", dyn("P"), {0, "P"});
  e.output("y", relu(x));
  expectOneErrorAt(m.finish(), line,
                   "bounds of input 'step' use dimension 'P', which its own value binds");
}

TEST(FrontendStates, BoundsUsingANameNothingBindsAreAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor len = e.input("len", DType::I32, {dyn("B")}, {1, "S"});
  e.output("y", len);
  expectOneErrorAt(
      m.finish(), line,
      "bounds of input 'len' use dimension 'S', which entry 'f' does not bind");
}

TEST(FrontendStates, KvAppendShapeErrorsPointAtTheCall) {
  struct Case {
    std::vector<Dim> value;
    int64_t axis;
    int64_t capacity;
    const char *message;
  };
  const Case cases[] = {
      {{dyn("B"), 4, 1, 8}, 0, 16, "kv_append: kv_append axis must not be 0"},
      {{dyn("B"), 4, 1, 8},
       4,
       16,
       "kv_append axis 4 is out of range for a value of rank 4"},
      {{dyn("B"), 4, 17, 8},
       2,
       16,
       "kv_append writes 17 positions (dimension 2 of the value [B, 4, 17, 8]) from "
       "position P, but it needs 1 or more and the cache holds 16"},
      {{dyn("B"), 4, 1, 8}, 2, 0, "kv_append capacity must be positive, got 0"},
  };
  for (const Case &c : cases) {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    e.stateAlloc("c", {dyn("B"), 4, 16, 8});
    Tensor x = e.input("x", DType::F32, c.value);
    e.valueInput("step", dyn("P"), {0, 15});
    unsigned line = __LINE__ + 1;
    Tensor k = kvAppend("c", x, c.axis, dyn("P"), c.capacity);
    EXPECT_FALSE(k.valid());
    expectOneErrorAt(m.finish(), line, c.message);
  }
}

TEST(FrontendStates, KvAppendAtAStaticStartWritesABlock) {
  ModelBuilder m("prefill");
  Entry e = m.entry("prefill");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4, dyn("N"), 8});
  e.stateAlloc("c", {dyn("B"), 4, 16, 8});
  Tensor k = kvAppend("c", x, 2, 0, 16);
  ASSERT_TRUE(k.valid());
  EXPECT_EQ(toString(k.shape()), "[B, 4, N, 8]");
  Tensor three = kvAppend("c", x, 2, 3, 16);
  EXPECT_EQ(toString(three.shape()), "[B, 4, 3+N, 8]");
  e.output("k", k);
  e.output("three", three);
  // No value input: B and N come from x.
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  EXPECT_TRUE(contains(printed(model), "position = \"0\"}"));
}

TEST(FrontendStates, AnEntryMayCreateStatesSizedByAValueInputAlone) {
  ModelBuilder m("dec");
  Entry reset = m.entry("reset");
  reset.valueInput("batch", dyn("B"), {1, 64});
  reset.stateAlloc("c", {dyn("B"), 4, 16, 8});
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  EXPECT_TRUE(contains(printed(model), "kiln.value_dim = \"B\""));
}

TEST(FrontendStates, KvAppendNeedsABoundPosition) {
  {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    e.stateAlloc("c", {dyn("B"), 4, 16, 8});
    Tensor x = e.input("x", DType::F32, {dyn("B"), 4, 1, 8});
    unsigned line = __LINE__ + 1;
    e.output("k", kvAppend("c", x, 2, dyn("P"), 16));
    expectOneErrorAt(
        m.finish(), line,
        "kvAppend at position 'P', which entry 'f' does not bind: declare it "
        "with valueInput(NAME, dyn(\"P\"), BOUNDS)");
  }
}

TEST(FrontendStates, StatesAreF32) {
  {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    Tensor ids = e.input("ids", DType::I32, {dyn("B"), 1});
    unsigned line = __LINE__ + 1;
    stateWrite("s", ids);
    expectOneErrorAt(m.finish(), line,
                     "stateWrite needs an f32 tensor (states are f32), got an i32 tensor "
                     "[B, 1]");
  }
  {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    e.valueInput("step", dyn("P"), {0, 15});
    Tensor ids = e.input("ids", DType::I32, {dyn("B"), 1});
    unsigned line = __LINE__ + 1;
    kvAppend("s", ids, 1, dyn("P"), 16);
    expectOneErrorAt(m.finish(), line, "kv_append needs an f32 value (states are f32)");
  }
}

TEST(FrontendStates, StateDeclarationErrors) {
  struct Case {
    std::string name;
    std::vector<Dim> dims;
    const char *message;
  };
  const Case cases[] = {
      {"", {dyn("B")}, "a state needs a non-empty name"},
      {"s", {}, "state 's' has rank 0; a state's dimension 0 is its batch"},
      {"s", {dyn("B"), 0}, "state 's' has a dimension of size 0"},
      {"s", {dyn("B*2")}, "state 's' names a dimension \"B*2\""},
      {"s", {dyn("N"), 4}, "state 's' has dimension 'N', which entry 'f' does not bind"},
  };
  for (const Case &c : cases) {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    Tensor x = e.input("x", DType::F32, {dyn("B"), 4});
    unsigned line = __LINE__ + 1;
    e.stateAlloc(c.name, c.dims);
    stateWrite("other", x);
    expectOneErrorAt(m.finish(), line, c.message);
  }
}

TEST(FrontendStates, AStateKeepsItsRankAndStaticSizesAcrossEntries) {
  ModelBuilder m("bad");
  declareStart(m);
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor mem = e.stateRead("mem", {dyn("B"), 2, dyn("S"), 8});
  EXPECT_FALSE(mem.valid());
  e.output("y", mem);
  expectOneErrorAt(m.finish(), line,
                   "state 'mem' is used here as [B, 2, S, 8] but as [B, 4, S, 8] at ");
}

TEST(FrontendStates, ACacheMustBeAllocatedWithTheShapeItIsAppendedTo) {
  ModelBuilder m("bad");
  declareStart(m); // c is [B, 4, 16, 8]
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4, 1, 8});
  e.valueInput("step", dyn("P"), {0, 31});
  unsigned line = __LINE__ + 1;
  e.output("k", kvAppend("c", x, 2, dyn("P"), 32));
  expectOneErrorAt(m.finish(), line,
                   "state 'c' is used here as [B, 4, 32, 8] but as [B, 4, 16, 8] at ");
}

TEST(FrontendStates, AStateNoEntryCreatesIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4});
  unsigned line = __LINE__ + 1;
  Tensor typo = e.stateRead("memroy", {dyn("B"), 4});
  e.output("y", x + typo);
  expectOneErrorAt(
      m.finish(), line,
      "state 'memroy' is used, but no entry point creates it (with stateAlloc "
      "or stateWrite)");
}

} // namespace
