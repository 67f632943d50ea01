// ManifestTest.cpp - manifest validation: a good manifest parses; each class of mistake a
// compiler could make is caught with a message pointing at its JSON location.
#include "Manifest.h"
#include "Error.h"

#include <gtest/gtest.h>

using namespace kiln::rt;

namespace {

// A valid one-entry manifest: y = view(matmul(x, w)) with a temp in between. Tests break
// it with textual replacements.
const std::string kGood = R"({
  "abi_version": 5, "model": "m", "target": "host",
  "parameters": [{"name": "w", "dtype": "f32", "shape": [8, 8]}],
  "kernels": ["mm", "copy"],
  "entries": [{
    "name": "forward",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", "S", 8], "buffer": 0},
               {"name": "len", "dtype": "i32", "shape": ["B"]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": ["B*S", 8], "buffer": 3}],
    "buffers": [
      {"dtype": "f32", "shape": ["B", "S", 8], "kind": "input", "input": 0},
      {"dtype": "f32", "shape": [8, 8], "kind": "parameter", "parameter": 0},
      {"dtype": "f32", "shape": ["B", "S", 8], "kind": "temp", "live": [0, 0]},
      {"dtype": "f32", "shape": ["B*S", 8], "kind": "view", "view_of": 2}
    ],
    "steps": [{"kernel": 0, "args": [0, 1, 2]}]
  }]
})";

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "test bug: '" << from << "' not in manifest";
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

// The message of the Error parsing `text` throws (and its code).
std::pair<kiln_status_code, std::string> failure(const std::string &text) {
  try {
    parseManifest(text);
  } catch (const Error &e) {
    return {e.code(), e.what()};
  }
  ADD_FAILURE() << "manifest was accepted:\n" << text;
  return {KILN_STATUS_OK, ""};
}

void expectInvalid(const std::string &text, const std::string &message) {
  auto [code, got] = failure(text);
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL) << got;
  EXPECT_EQ(got, "invalid manifest: " + message);
}

} // namespace

TEST(Manifest, GoodManifestParses) {
  auto m = parseManifest(kGood);
  EXPECT_EQ(m->model, "m");
  ASSERT_EQ(m->entries.size(), 1u);
  const EntryDesc &e = m->entries[0];
  EXPECT_EQ(e.dimNames, (std::vector<std::string>{"B", "S"}));
  EXPECT_EQ(e.inputs[0].bindSlot, (std::vector<int>{0, 1, -1}));
  EXPECT_EQ(e.inputs[1].buffer, -1); // unused input needs no buffer
  EXPECT_EQ(e.buffers[3].root, 2);
  EXPECT_EQ(e.inputs[0].staticShape, (std::vector<int64_t>{-1, -1, 8}));
  kiln_tensor_info info = e.outputs[0].info();
  EXPECT_STREQ(info.dims[0], "B*S");
}

TEST(Manifest, StepsMayNameTheirSourceLines) {
  const std::string step = "{\"kernel\": 0, \"args\": [0, 1, 2]}";
  EXPECT_EQ(parseManifest(kGood)->entries[0].steps[0].loc, "");
  auto m = parseManifest(replaced(kGood, step,
                                  "{\"kernel\": 0, \"args\": [0, 1, 2], \"loc\": "
                                  "\"m.cpp:7\", \"locs\": [\"m.cpp:7\", \"m.cpp:9\"]}"));
  const StepDesc &s = m->entries[0].steps[0];
  EXPECT_EQ(s.loc, "m.cpp:7");
  EXPECT_EQ(s.locs, (std::vector<std::string>{"m.cpp:7", "m.cpp:9"}));
  expectInvalid(replaced(kGood, step, "{\"kernel\": 0, \"args\": [0, 1, 2], \"loc\": 7}"),
                "entries[0] ('forward').steps[0].loc: expected a string, got a number");
  expectInvalid(
      replaced(kGood, step,
               "{\"kernel\": 0, \"args\": [0, 1, 2], \"locs\": [\"a:1\", 2]}"),
      "entries[0] ('forward').steps[0].locs[1]: expected a string (\"file:line\")");
}

TEST(Manifest, RejectsNonJsonAndOtherAbi) {
  auto [code, message] = failure("{\"abi_version\": 1,");
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  EXPECT_EQ(message.rfind("invalid manifest: not valid JSON (byte ", 0), 0u) << message;
  for (int version : {1, 3, 6}) {
    auto [abiCode, abiMessage] = failure(replaced(
        kGood, "\"abi_version\": 5", "\"abi_version\": " + std::to_string(version)));
    EXPECT_EQ(abiCode, KILN_STATUS_INCOMPATIBLE) << version;
    EXPECT_EQ(abiMessage, "manifest abi_version is " + std::to_string(version) +
                              "; this runtime supports 4 to 5");
  }
}

// ABI 5 added the panels conversion and nothing else: a model of ABI 4 still loads, and
// its manifest cannot ask for panels.
TEST(Manifest, AcceptsTheEarlierAbiWithoutPanels) {
  std::string older = replaced(kGood, "\"abi_version\": 5", "\"abi_version\": 4");
  EXPECT_EQ(parseManifest(older)->abiVersion, 4);
  EXPECT_EQ(parseManifest(kGood)->abiVersion, 5);
  const std::string w = R"({"name": "w", "dtype": "f32", "shape": [8, 8]})";
  expectInvalid(
      replaced(older, w, w + R"(, {"name": "w.panels", "dtype": "f32", "shape": [2, 8, 4],
                         "source": "w", "conversion": "panels"})"),
      "parameters[1]: parameter 'w.panels' has conversion \"panels\", which needs "
      "abi_version 5; the manifest has 4");
}

TEST(Manifest, RejectsMissingOrMistypedFields) {
  expectInvalid(replaced(kGood, "\"model\": \"m\",", ""), "manifest: missing \"model\"");
  expectInvalid(
      replaced(kGood, "\"dtype\": \"i32\"", "\"dtype\": \"int\""),
      "entries[0] ('forward').inputs[1].dtype: unknown dtype \"int\" (expected f32, "
      "i32, i64, bf16, f16 or i8)");
  expectInvalid(
      replaced(kGood, "\"kind\": \"temp\"", "\"kind\": \"scratch\""),
      "entries[0] ('forward').buffers[2].kind: unknown kind \"scratch\" (expected "
      "input, parameter, temp, view or state)");
  expectInvalid(replaced(kGood, "[\"B\", \"S\", 8], \"buffer\": 0",
                         "[\"B\", \"S\", -8], \"buffer\": 0"),
                "entries[0] ('forward').inputs[0].shape[2]: negative size -8");
  expectInvalid(
      replaced(kGood, "[\"B*S\", 8], \"buffer\": 3", "[\"B*\", 8], \"buffer\": 3"),
      "entries[0] ('forward').outputs[0].shape[0]: bad dimension expression \"B*\": "
      "unexpected end, where a number, name or '(' was expected");
  expectInvalid(replaced(kGood, "\"shape\": [8, 8]}]", "\"shape\": [\"D\", 8]}]"),
                "parameters[0].shape[0]: parameter shapes must be static, got \"D\"");
}

TEST(Manifest, RejectsBadIndices) {
  expectInvalid(
      replaced(kGood, "\"view_of\": 2", "\"view_of\": 9"),
      "entries[0] ('forward').buffers[3].view_of: index 9 out of range (4 buffers)");
  expectInvalid(
      replaced(kGood, "\"kernel\": 0", "\"kernel\": 2"),
      "entries[0] ('forward').steps[0].kernel: index 2 out of range (2 kernels)");
  expectInvalid(
      replaced(kGood, "\"args\": [0, 1, 2]", "\"args\": [0, 1, -1]"),
      "entries[0] ('forward').steps[0].args[2]: index -1 out of range (4 buffers)");
  expectInvalid(replaced(kGood, "\"parameter\": 0}", "\"parameter\": 1}"),
                "entries[0] ('forward').buffers[1].parameter: index 1 out of range (1 "
                "parameters)");
  expectInvalid(replaced(kGood, "\"view_of\": 2", "\"view_of\": 3"),
                "entries[0] ('forward').buffers[3]: view_of forms a cycle");
}

TEST(Manifest, RejectsInconsistentBuffers) {
  expectInvalid(
      replaced(kGood, "\"shape\": [8, 8], \"kind\"", "\"shape\": [8, 4], \"kind\""),
      "entries[0] ('forward').buffers[1]: buffer does not match parameter 'w' (f32 "
      "[8, 8])");
  expectInvalid(
      replaced(kGood, "{\"dtype\": \"f32\", \"shape\": [\"B*S\", 8], \"kind\"",
               "{\"dtype\": \"i32\", \"shape\": [\"B*S\", 8], \"kind\""),
      "entries[0] ('forward').buffers[3]: view is i32 but buffers[2] it views is f32");
  expectInvalid(
      replaced(kGood, "\"dtype\": \"f32\", \"shape\": [\"B*S\", 8], \"buffer\"",
               "\"dtype\": \"i32\", \"shape\": [\"B*S\", 8], \"buffer\""),
      "entries[0] ('forward').outputs[0]: output 'y' is i32 [B*S, 8] but buffers[3] "
      "is f32 of rank 2");
  expectInvalid(
      replaced(kGood, "[\"B\", \"S\", 8], \"kind\": \"input\"",
               "[\"B\", 8], \"kind\": \"input\""),
      "entries[0] ('forward').buffers[0]: buffer is f32 of rank 2 but input 'x' is f32 "
      "[B, S, 8]");
  expectInvalid(
      replaced(kGood, "[\"B*S\", 8], \"kind\"",
               "[16, 5], \"kind\": \"view\", "
               "\"view_of\": 1}, {\"dtype\": \"f32\", \"shape\": [\"B*S\", 8], \"kind\""),
      "entries[0] ('forward').buffers[3]: view has 80 elements from offset 0 but "
      "buffers[1] has 64");
  // A view may start inside what it views (a slice of leading rows), but must fit in it.
  expectInvalid(
      replaced(kGood, "[\"B*S\", 8], \"kind\"",
               "[4, 8], \"kind\": \"view\", "
               "\"view_of\": 1, \"offset\": 40}, {\"dtype\": \"f32\", \"shape\": "
               "[\"B*S\", 8], \"kind\""),
      "entries[0] ('forward').buffers[3]: view has 32 elements from offset 40 but "
      "buffers[1] has 64");
  expectInvalid(replaced(kGood, "[\"B*S\", 8], \"kind\"",
                         "[4, 8], \"kind\": \"view\", "
                         "\"view_of\": 1, \"offset\": -8}, {\"dtype\": \"f32\", "
                         "\"shape\": [\"B*S\", 8], \"kind\""),
                "entries[0] ('forward').buffers[3].offset: negative offset -8");
  // offset + count once overflowed to a negative number, and this view loaded.
  expectInvalid(replaced(kGood, "[\"B*S\", 8], \"kind\"",
                         "[4, 8], \"kind\": \"view\", "
                         "\"view_of\": 1, \"offset\": 9223372036854775807}, {\"dtype\": "
                         "\"f32\", \"shape\": [\"B*S\", 8], \"kind\""),
                "entries[0] ('forward').buffers[3]: view has 32 elements from offset "
                "9223372036854775807 but buffers[1] has 64");
}

TEST(Manifest, RejectsUnboundDimensions) {
  expectInvalid(
      replaced(kGood,
               "{\"dtype\": \"f32\", \"shape\": [\"B\", \"S\", 8], \"kind\": \"temp\", "
               "\"live\": [0, 0]}",
               "{\"dtype\": \"f32\", \"shape\": [\"B\", \"T\", 8], \"kind\": \"temp\", "
               "\"live\": [0, 0]}"),
      "entries[0] ('forward').buffers[2]: dimension 'T' in \"T\" is not bound (no "
      "input, and no state buffer without \"create\", has a shape item that is "
      "exactly 'T', and no input has \"value_dim\": \"T\")");
}

TEST(Manifest, RejectsStepsThatReadUnwrittenOrWriteInputs) {
  expectInvalid(
      replaced(kGood, "\"args\": [0, 1, 2]", "\"args\": [3, 1, 2]"),
      "entries[0] ('forward').steps[0].args[0]: kernel 'mm' reads buffers[3] before "
      "any step writes it");
  expectInvalid(
      replaced(kGood, "\"args\": [0, 1, 2]", "\"args\": [0, 2, 1]"),
      "entries[0] ('forward').steps[0].args[1]: kernel 'mm' reads buffers[2] before "
      "any step writes it");
  expectInvalid(
      replaced(kGood, "\"args\": [0, 1, 2]", "\"args\": [1, 1, 0]"),
      "entries[0] ('forward').steps[0].args[2]: kernel 'mm' writes buffers[0], which "
      "is an input");
  expectInvalid(
      replaced(kGood, "\"steps\": [{\"kernel\": 0, \"args\": [0, 1, 2]}]",
               "\"steps\": []"),
      "entries[0] ('forward').outputs[0]: output 'y' is never written by any step");
}

TEST(Manifest, StepsMayWriteSeveralBuffers) {
  const std::string step = "{\"kernel\": 0, \"args\": [0, 1, 2]}";
  auto m = parseManifest(kGood);
  EXPECT_EQ(m->entries[0].steps[0].outputs, 1u) << "absent means one output";
  // A second temp that the step writes beside buffers[2].
  std::string two =
      replaced(replaced(kGood, R"("view_of": 2})", R"("view_of": 2},
      {"dtype": "f32", "shape": [8], "kind": "temp", "live": [0, 0]})"),
               step, "{\"kernel\": 0, \"args\": [0, 2, 4], \"outputs\": 2}");
  m = parseManifest(two);
  const StepDesc &parsed = m->entries[0].steps[0];
  EXPECT_EQ(parsed.outputs, 2u);
  EXPECT_EQ(firstOutput(parsed), 1u);
  // What a step with several outputs may not do.
  expectInvalid(
      replaced(kGood, step, "{\"kernel\": 0, \"args\": [0, 1, 2], \"outputs\": 2}"),
      "entries[0] ('forward').steps[0].args[1]: kernel 'mm' writes buffers[1], "
      "which is a parameter");
  expectInvalid(
      replaced(kGood, step, "{\"kernel\": 0, \"args\": [0, 2, 3], \"outputs\": 2}"),
      "entries[0] ('forward').steps[0].args[2]: kernel 'mm' writes buffers[3] and "
      "buffers[2], which share buffers[2]'s memory");
  for (const char *bad : {"0", "4", "\"2\"", "1.5"})
    expectInvalid(
        replaced(kGood, step,
                 std::string("{\"kernel\": 0, \"args\": [0, 1, 2], \"outputs\": ") + bad +
                     "}"),
        "entries[0] ('forward').steps[0].outputs: expected how many of the "
        "step's 3 args it writes: an integer from 1 to 3");
}

TEST(Manifest, RejectsDuplicates) {
  expectInvalid(replaced(kGood, "\"name\": \"len\"", "\"name\": \"x\""),
                "entries[0] ('forward').inputs[1]: duplicate input name 'x'");
  expectInvalid(replaced(kGood, "[\"mm\", \"copy\"]", "[\"mm\", \"mm\"]"),
                "kernels[1]: duplicate kernel 'mm'");
  expectInvalid(
      replaced(kGood, "\"entries\": [{",
               "\"entries\": [{\"name\": \"forward\", "
               "\"inputs\": [], \"outputs\": [], \"buffers\": [], \"steps\": []}, {"),
      "entries[0] ('forward').outputs: an entry needs at least one output, unless "
      "it creates or writes a state");
}

// Input value bounds: "bounds": [LO, HI] on integer inputs.

const std::string kLen = R"({"name": "len", "dtype": "i32", "shape": ["B"]})";

std::string withLenBounds(const std::string &bounds) {
  return replaced(kGood, kLen,
                  R"({"name": "len", "dtype": "i32", "shape": ["B"], "bounds": )" +
                      bounds + "}");
}

TEST(Manifest, BoundsParseAsIntegersOrExpressions) {
  auto m = parseManifest(withLenBounds(R"([-2, "S - 1"])"));
  const TensorDesc &len = m->entries[0].inputs[1];
  ASSERT_TRUE(len.bounds.has_value());
  EXPECT_TRUE(len.bounds->min.isConstant());
  EXPECT_EQ(len.bounds->min.constantValue(), -2);
  EXPECT_EQ(len.bounds->max.names(), (std::vector<std::string>{"S"}));
  kiln_tensor_info info = len.info();
  EXPECT_STREQ(info.bounds_min, "-2");
  EXPECT_STREQ(info.bounds_max, "S - 1");
  int64_t dims[] = {4, 9}; // B, S
  int64_t hi = 0;
  std::string error;
  ASSERT_TRUE(len.bounds->max.evaluate(dims, hi, error)) << error;
  EXPECT_EQ(hi, 8);

  // Constant expressions, negative ones included, and i64 inputs.
  m = parseManifest(replaced(withLenBounds(R"j(["0-5", "(2*3)"])j"), "\"dtype\": \"i32\"",
                             "\"dtype\": \"i64\""));
  EXPECT_EQ(m->entries[0].inputs[1].bounds->min.constantValue(), -5);
  EXPECT_EQ(m->entries[0].inputs[1].bounds->max.constantValue(), 6);

  // No bounds: none reported.
  m = parseManifest(kGood);
  EXPECT_FALSE(m->entries[0].inputs[1].bounds.has_value());
  EXPECT_EQ(m->entries[0].inputs[1].info().bounds_min, nullptr);
  EXPECT_EQ(m->entries[0].inputs[1].info().bounds_max, nullptr);
}

TEST(Manifest, BoundsAreOnlyForIntegerInputs) {
  expectInvalid(
      replaced(kGood, "[\"B\", \"S\", 8], \"buffer\": 0",
               "[\"B\", \"S\", 8], \"buffer\": 0, \"bounds\": [0, 1]"),
      "entries[0] ('forward').inputs[0].bounds: input 'x' is f32; bounds are only "
      "allowed on i32 and i64 inputs");
  expectInvalid(replaced(kGood, "[\"B*S\", 8], \"buffer\": 3",
                         "[\"B*S\", 8], \"buffer\": 3, \"bounds\": [0, 1]"),
                "entries[0] ('forward').outputs[0].bounds: only entry inputs may declare "
                "bounds, not outputs");
  expectInvalid(
      replaced(kGood, "\"shape\": [8, 8]}]", "\"shape\": [8, 8], \"bounds\": [0, 1]}]"),
      "parameters[0].bounds: only entry inputs may declare bounds, not parameters");
}

TEST(Manifest, RejectsMalformedBounds) {
  const std::string at = "entries[0] ('forward').inputs[1].bounds";
  expectInvalid(
      withLenBounds("\"0..9\""),
      at + ": expected [LO, HI] (integers or dimension expressions), got a string");
  expectInvalid(
      withLenBounds("[0]"),
      at + ": expected [LO, HI] (integers or dimension expressions), got 1 item");
  expectInvalid(
      withLenBounds("[0, 1, 2]"),
      at + ": expected [LO, HI] (integers or dimension expressions), got 3 items");
  expectInvalid(withLenBounds("[0, 4.5]"),
                at + "[1]: expected an integer or a dimension expression, got a number");
  expectInvalid(withLenBounds("[null, 4]"),
                at + "[0]: expected an integer or a dimension expression, got null");
  expectInvalid(
      withLenBounds(R"([0, "S-"])"),
      at + "[1]: bad dimension expression \"S-\": unexpected end, where a number, "
           "name or '(' was expected");
  expectInvalid(withLenBounds(R"([0, "1/0"])"),
                at + "[1]: bad dimension expression \"1/0\": division by zero in '1/0'");
}

TEST(Manifest, RejectsBoundsOverUnboundDimsOrEmpty) {
  const std::string at = "entries[0] ('forward').inputs[1].bounds";
  expectInvalid(
      withLenBounds(R"(["T", 9])"),
      at + "[0]: dimension 'T' in \"T\" is not bound (no input, and no state "
           "buffer without \"create\", has a shape item that is exactly 'T', and no "
           "input has \"value_dim\": \"T\")");
  expectInvalid(withLenBounds(R"([5, "2+1"])"),
                at + ": bounds [5, 2+1] of input 'len' admit no value");
  // Only provably empty bounds are rejected: [S, 3] may hold for some S.
  EXPECT_NO_THROW(parseManifest(withLenBounds(R"(["S", 3])")));
}

// States, value dimensions and strided views. kStates: `start` creates the state kv
// [B, 4, 8] and writes row position 0 through a strided view; `step` binds T from the
// state's shape and P from the value of `pos`, writes position P in place and copies the
// prefix [B, P+1, 8] out of a strided view.

const std::string kStates = R"({
  "abi_version": 4, "model": "m", "kernels": ["copy"],
  "states": [{"name": "kv", "dtype": "f32", "rank": 3}],
  "entries": [
   {"name": "start",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 1, 8], "buffer": 0}],
    "outputs": [],
    "buffers": [
      {"dtype": "f32", "shape": ["B", 1, 8], "kind": "input", "input": 0},
      {"dtype": "f32", "shape": ["B", 4, 8], "kind": "state", "state": 0, "create": true},
      {"dtype": "f32", "shape": ["B", 1, 8], "kind": "view", "view_of": 1, "strides": [32, 8, 1]}],
    "steps": [{"kernel": 0, "args": [0, 2]}]},
   {"name": "step",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 1, 8], "buffer": 0},
               {"name": "pos", "dtype": "i32", "shape": [], "bounds": [0, "T-1"], "value_dim": "P"},
               {"name": "lens", "dtype": "i32", "shape": ["B"], "bounds": [1, "P+1"]}],
    "outputs": [{"name": "y", "dtype": "f32", "shape": ["B", "P+1", 8], "buffer": 4}],
    "buffers": [
      {"dtype": "f32", "shape": ["B", 1, 8], "kind": "input", "input": 0},
      {"dtype": "f32", "shape": ["B", "T", 8], "kind": "state", "state": 0},
      {"dtype": "f32", "shape": ["B", 1, 8], "kind": "view", "view_of": 1, "offset": "P*8", "strides": ["T*8", 8, 1]},
      {"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "view", "view_of": 1, "strides": ["T*8", 8, 1]},
      {"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]}],
    "steps": [{"kernel": 0, "args": [0, 2]}, {"kernel": 0, "args": [3, 4]}]}
  ]
})";

TEST(Manifest, StatesValueDimsAndStridedViewsParse) {
  auto m = parseManifest(kStates);
  ASSERT_EQ(m->states.size(), 1u);
  EXPECT_EQ(m->states[0].name, "kv");
  EXPECT_EQ(m->states[0].rank, 3u);
  EXPECT_EQ(m->states[0].creators, (std::vector<int>{0}));
  EXPECT_EQ(m->findState("kv"), 0);
  EXPECT_EQ(m->findState("nope"), -1);

  const EntryDesc &start = m->entries[0];
  EXPECT_TRUE(start.outputs.empty()); // it creates a state: no output needed
  EXPECT_EQ(start.writtenStates, (std::vector<int>{0}));
  EXPECT_TRUE(start.buffers[1].create);
  EXPECT_EQ(start.buffers[2].root, 1);

  const EntryDesc &step = m->entries[1];
  // Slots: names the inputs' shapes bind, then the state's, then the value_dim.
  EXPECT_EQ(step.dimNames, (std::vector<std::string>{"B", "T", "P"}));
  EXPECT_EQ(step.buffers[1].bindSlot, (std::vector<int>{0, 1, -1}));
  EXPECT_EQ(step.inputs[1].valueDim, "P");
  EXPECT_EQ(step.inputs[1].valueDimSlot, 2);
  EXPECT_EQ(step.inputs[1].buffer, -1);
  EXPECT_EQ(step.writtenStates, (std::vector<int>{0})); // written through a view
  EXPECT_EQ(step.buffers[2].offset.text(), "P*8");
  EXPECT_EQ(step.buffers[2].strideSource, 2);
  EXPECT_EQ(step.buffers[3].strideSource, 3);
  EXPECT_EQ(step.buffers[4].strideSource, -1);
  ASSERT_EQ(step.buffers[3].strides.size(), 3u);
  EXPECT_EQ(step.buffers[3].strides[0].text(), "T*8");

  // A view without strides of a strided view of its rank keeps that view's strides.
  m = parseManifest(replaced(
      kStates,
      R"({"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]})",
      R"({"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]},
                                {"dtype": "f32", "shape": ["B", 1, 8], "kind": "view", "view_of": 2, "offset": 8})"));
  EXPECT_EQ(m->entries[1].buffers[5].strideSource, 2);
  EXPECT_EQ(m->entries[1].buffers[5].root, 1);
}

TEST(Manifest, RejectsBadStates) {
  expectInvalid(
      replaced(kStates, R"("dtype": "f32", "rank": 3)", R"("dtype": "i32", "rank": 3)"),
      "states[0].dtype: state 'kv' is i32; states are f32");
  expectInvalid(
      replaced(kStates, R"("rank": 3)", R"("rank": 0)"),
      "states[0].rank: expected an integer rank of at least 1 (dimension 0 is the "
      "batch)");
  expectInvalid(
      replaced(kStates, R"("rank": 3)", R"("rank": "3")"),
      "states[0].rank: expected an integer rank of at least 1 (dimension 0 is the "
      "batch)");
  expectInvalid(replaced(kStates, R"({"name": "kv", "dtype": "f32", "rank": 3})",
                         R"({"name": "kv", "dtype": "f32", "rank": 3},
                            {"name": "kv", "dtype": "f32", "rank": 2})"),
                "states[1]: duplicate state name 'kv'");
  expectInvalid(replaced(kStates, R"({"name": "kv", "dtype")", R"({"name": "", "dtype")"),
                "states[0].name: empty name");
  // Read by an entry, created by none.
  expectInvalid(
      replaced(kStates, R"("state": 0, "create": true)", R"("state": 0)"),
      "states[0]: state 'kv' is used by entry 'start' but no entry creates it (a "
      "state buffer with \"create\": true)");
}

TEST(Manifest, RejectsBadStateBuffers) {
  expectInvalid(
      replaced(kStates, R"("state": 0, "create": true)", R"("state": 1, "create": true)"),
      "entries[0] ('start').buffers[1].state: index 1 out of range (1 states)");
  expectInvalid(
      replaced(kStates, R"("create": true)", R"("create": 1)"),
      "entries[0] ('start').buffers[1].create: expected true or false, got a number");
  expectInvalid(
      replaced(kStates, R"(["B", 4, 8], "kind": "state")",
               R"(["B", 32], "kind": "state")"),
      "entries[0] ('start').buffers[1]: buffer is f32 of rank 2 but state 'kv' is f32 "
      "of rank 3");
  expectInvalid(
      replaced(
          kStates,
          R"({"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]})",
          R"({"dtype": "f32", "shape": ["B", "T", 8], "kind": "state", "state": 0})"),
      "entries[1] ('step').buffers[4]: state 'kv' already has buffers[1] in this "
      "entry (an entry has at most one buffer per state)");
  // A buffer that creates its state binds nothing: its names must come from elsewhere.
  expectInvalid(
      replaced(kStates, R"(["B", 4, 8], "kind": "state")",
               R"(["B", "T", 8], "kind": "state")"),
      "entries[0] ('start').buffers[1]: dimension 'T' in \"T\" is not bound (no input, "
      "and no state buffer without \"create\", has a shape item that is exactly 'T', "
      "and no input has \"value_dim\": \"T\")");
}

TEST(Manifest, RejectsBadViewOffsetsAndStrides) {
  const std::string at = "entries[1] ('step').buffers[2]";
  expectInvalid(replaced(kStates, R"("offset": "P*8")", R"("offset": "P*")"),
                at + ".offset: bad dimension expression \"P*\": unexpected end, where a "
                     "number, name or '(' was expected");
  expectInvalid(replaced(kStates, R"("offset": "P*8")", R"("offset": "0-8")"),
                at + ".offset: \"0-8\" is negative");
  expectInvalid(
      replaced(kStates, R"("offset": "P*8")", R"("offset": 1.5)"),
      at + ".offset: expected an integer or a dimension expression, got a number");
  expectInvalid(
      replaced(kStates, R"("offset": "P*8")", R"("offset": "Q*8")"),
      at + ".offset: dimension 'Q' in \"Q*8\" is not bound (no input, and no state "
           "buffer without \"create\", has a shape item that is exactly 'Q', and no "
           "input has \"value_dim\": \"Q\")");
  expectInvalid(replaced(kStates, R"("strides": ["T*8", 8, 1])", R"("strides": 8)"),
                at + ".strides: expected an array of element strides, got a number");
  expectInvalid(replaced(kStates, R"("strides": ["T*8", 8, 1])", R"("strides": [8, 1])"),
                at + ".strides: view has rank 3 but 2 strides");
  expectInvalid(
      replaced(kStates, R"("strides": ["T*8", 8, 1])", R"("strides": ["T*8", -8, 1])"),
      at + ".strides[1]: negative stride -8");
  expectInvalid(
      replaced(kStates, R"("strides": ["T*8", 8, 1])", R"("strides": ["U*8", 8, 1])"),
      at + ".strides[0]: dimension 'U' in \"U*8\" is not bound (no input, and no "
           "state buffer without \"create\", has a shape item that is exactly 'U', "
           "and no input has \"value_dim\": \"U\")");
  // Only views have a layout of their own.
  expectInvalid(
      replaced(kStates, R"("shape": ["B", "P+1", 8], "kind": "temp")",
               R"("shape": ["B", "P+1", 8], "kind": "temp", "strides": [1, 1, 1])"),
      "entries[1] ('step').buffers[4].strides: only a view has \"strides\"");
  expectInvalid(replaced(kStates, R"("shape": ["B", "P+1", 8], "kind": "temp")",
                         R"("shape": ["B", "P+1", 8], "kind": "temp", "offset": 0)"),
                "entries[1] ('step').buffers[4].offset: only a view has \"offset\"");
}

TEST(Manifest, RejectsStridedViewsThatCannotWork) {
  // Static throughout: the last element, 64 + 7, lies past the state's 64.
  std::string fixed =
      replaced(replaced(kStates, R"(["B", 4, 8], "kind": "state")",
                        R"([2, 4, 8], "kind": "state")"),
               R"(["B", 1, 8], "kind": "view", "view_of": 1, "strides": [32, 8, 1])",
               R"([2, 1, 8], "kind": "view", "view_of": 1, "strides": [64, 8, 1])");
  expectInvalid(fixed,
                "entries[0] ('start').buffers[2]: strided view [2, 1, 8] with strides "
                "[64, 8, 1] from offset 0 reaches element 71 but buffers[1] has 64");
  EXPECT_NO_THROW(parseManifest(replaced(fixed, "[64, 8, 1]", "[32, 8, 1]")));
  // A view without strides of a strided view of another rank.
  expectInvalid(
      replaced(
          kStates,
          R"({"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]})",
          R"({"dtype": "f32", "shape": ["B", "P+1", 8], "kind": "temp", "live": [1, 1]},
                            {"dtype": "f32", "shape": ["B", 8], "kind": "view", "view_of": 2})"),
      "entries[1] ('step').buffers[5]: view of rank 2 without strides views "
      "buffers[2], a strided view of rank 3; give it its own strides");
  // Outputs are dense tensors.
  expectInvalid(
      replaced(kStates, R"("buffer": 4}])", R"("buffer": 3}])"),
      "entries[1] ('step').outputs[0]: output 'y' is buffers[3], a strided view; "
      "outputs are dense (copy it into a temp)");
}

TEST(Manifest, RejectsBadValueDims) {
  const std::string at = "entries[1] ('step').inputs[1]";
  expectInvalid(replaced(kStates, R"("value_dim": "P")", R"("value_dim": 3)"),
                at + ".value_dim: expected a dimension name, got a number");
  expectInvalid(replaced(kStates, R"("value_dim": "P")", R"("value_dim": "P+1")"),
                at + ".value_dim: \"P+1\" is not a dimension name");
  expectInvalid(replaced(kStates,
                         R"("dtype": "i32", "shape": [], "bounds": [0, "T-1"], )",
                         R"("dtype": "f32", "shape": [], )"),
                at + ".value_dim: input 'pos' is f32; a value_dim input is i32 or i64");
  expectInvalid(
      replaced(kStates, R"("shape": [], "bounds")", R"("shape": [1], "bounds")"),
      at + ".value_dim: input 'pos' has shape [1]; a value_dim input has rank 0 (one "
           "element)");
  expectInvalid(
      replaced(kStates, R"("value_dim": "P")", R"("value_dim": "B")"),
      at + ".value_dim: dimension 'B' is also bound by input 'x'; a value_dim names a "
           "dimension that no shape binds");
  expectInvalid(replaced(kStates, R"("value_dim": "P")", R"("value_dim": "T")"),
                at + ".value_dim: dimension 'T' is also bound by buffers[1] (state); a "
                     "value_dim names a dimension that no shape binds");
  expectInvalid(
      replaced(
          kStates, R"("value_dim": "P"},)",
          R"("value_dim": "P"}, {"name": "p2", "dtype": "i64", "shape": [], "value_dim": "P"},)"),
      "entries[1] ('step').inputs[2].value_dim: dimension 'P' is also bound by the "
      "value of input 'pos'; a value_dim names a dimension that no shape binds");
  // A value_dim's bounds are checked before any value_dim is bound.
  expectInvalid(
      replaced(kStates, R"("bounds": [0, "T-1"])", R"("bounds": [0, "P"])"),
      at + ".bounds[1]: bounds of value_dim input 'pos' use dimension 'P', which is "
           "itself a value_dim; they may only use dimensions that shapes bind");
}

TEST(Manifest, StepsMayReadAndWriteStates) {
  // A state holds data before the first step: a step may read it straight away.
  EXPECT_NO_THROW(parseManifest(replaced(
      replaced(kStates, R"({"kernel": 0, "args": [0, 2]}, {"kernel": 0, "args": [3, 4]})",
               R"({"kernel": 0, "args": [3, 4]})"),
      R"("live": [1, 1])", R"("live": [0, 0])")));
  // An entry that only creates its state (zero-filled) needs no output and no step.
  auto m = parseManifest(replaced(
      kStates, R"("steps": [{"kernel": 0, "args": [0, 2]}]},)", R"("steps": []},)"));
  EXPECT_EQ(m->entries[0].writtenStates, (std::vector<int>{0}));
  // One that neither creates nor writes a state needs an output.
  expectInvalid(
      replaced(
          replaced(
              kStates,
              R"("outputs": [{"name": "y", "dtype": "f32", "shape": ["B", "P+1", 8], "buffer": 4}],)",
              R"("outputs": [],)"),
          R"("steps": [{"kernel": 0, "args": [0, 2]}, {"kernel": 0, "args": [3, 4]}]})",
          R"("steps": [{"kernel": 0, "args": [3, 4]}]})"),
      "entries[1] ('step').outputs: an entry needs at least one output, unless it "
      "creates or writes a state");
}

// Temps share arena bytes by their live ranges, so a range that misses a use would let
// two live temporaries overlap: the parser rejects it.
TEST(Manifest, RejectsLiveRangesThatMissAUse) {
  const std::string temp = R"("kind": "temp", "live": [0, 0]})";
  expectInvalid(replaced(kGood, temp, R"("kind": "temp"})"),
                "entries[0] ('forward').buffers[2]: missing \"live\"");
  expectInvalid(replaced(kGood, temp, R"("kind": "temp", "live": [0]})"),
                "entries[0] ('forward').buffers[2].live: expected [first step, last "
                "step] (abi_version 2 gives every temp its live range)");
  expectInvalid(replaced(kGood, temp, R"("kind": "temp", "live": [0, 1]})"),
                "entries[0] ('forward').buffers[2].live: live range [0, 1] ends past the "
                "last step (the entry has 1 steps)");
  expectInvalid(replaced(kGood, temp, R"("kind": "temp", "live": [1, 0]})"),
                "entries[0] ('forward').buffers[2].live: first step 1 is after last "
                "step 0");
  expectInvalid(replaced(kGood, R"("kind": "input", "input": 0})",
                         R"("kind": "input", "input": 0, "live": [0, 0]})"),
                "entries[0] ('forward').buffers[0].live: only a temp has a live range");
  expectInvalid(replaced(kStates, R"("kind": "temp", "live": [1, 1]})",
                         R"("kind": "temp", "live": [0, 0]})"),
                "entries[1] ('step').buffers[4].live: live range [0, 0] does not cover "
                "steps[1], which uses buffers[4]");
  // The output y views temp 2; a later step must not be allowed to reuse its bytes.
  std::string twoSteps = replaced(
      replaced(kGood, R"({"kernel": 0, "args": [0, 1, 2]}])",
               R"({"kernel": 0, "args": [0, 1, 2]}, {"kernel": 1, "args": [0, 4]}])"),
      R"("kind": "view", "view_of": 2})",
      R"("kind": "view", "view_of": 2},
         {"dtype": "f32", "shape": ["B", "S", 8], "kind": "temp", "live": [1, 1]})");
  expectInvalid(twoSteps, "entries[0] ('forward').buffers[2].live: live range [0, 0] "
                          "does not cover the last step (steps[1]) for output 'y', "
                          "which uses buffers[3]");
  EXPECT_NO_THROW(
      parseManifest(replaced(twoSteps, temp, R"("kind": "temp", "live": [0, 1]})")));
}

// Reduced-precision parameters: the combinations kiln.parameter's verifier accepts, and
// the dtypes only weights may have.
TEST(Manifest, ConvertedParametersParse) {
  const std::string w = R"({"name": "w", "dtype": "f32", "shape": [8, 8]})";
  auto m = parseManifest(replaced(
      replaced(kGood, w,
               w + R"(, {"name": "w[2:6]", "dtype": "i8", "shape": [4, 8], "source": "w",
                  "conversion": "int8", "rows": [2, 6]},
                 {"name": "w[2:6].scale", "dtype": "f32", "shape": [4], "source": "w",
                  "conversion": "int8_scale", "rows": [2, 6]},
                 {"name": "w.bf16", "dtype": "bf16", "shape": [8, 8], "source": "w",
                  "conversion": "bf16"})"),
      "\"target\": \"host\",", "\"target\": \"host\", \"weights\": \"int8\","));
  EXPECT_EQ(m->weights, "int8");
  ASSERT_EQ(m->parameters.size(), 4u);
  EXPECT_FALSE(m->parameters[0].source);
  const ParameterSource &q = *m->parameters[1].source;
  EXPECT_EQ(q.tensor, "w");
  EXPECT_EQ(q.conversion, Conversion::Int8);
  EXPECT_EQ(q.rows, std::make_pair(int64_t(2), int64_t(6)));
  EXPECT_EQ(scalePartner(m->parameters, 1), 2);
  EXPECT_EQ(scalePartner(m->parameters, 2), 1);
  EXPECT_EQ(m->parameters[3].source->conversion, Conversion::BF16);
  EXPECT_EQ(parseManifest(kGood)->weights, "f32");
}

TEST(Manifest, RejectsConversionsTheVerifierRejects) {
  const std::string w = R"({"name": "w", "dtype": "f32", "shape": [8, 8]})";
  // A parameter beside w, and the message it gets.
  const std::pair<std::string, std::string> cases[] = {
      {R"({"name": "q", "dtype": "bf16", "shape": [8, 8]})",
       "parameters[1].dtype: parameter 'q' is bf16 without a \"conversion\" (checkpoints "
       "hold f32, f16 or bf16)"},
      {R"({"name": "h", "dtype": "f16", "shape": [8]})",
       "parameters[1].dtype: parameter 'h' is f16; f16 is a checkpoint's dtype, "
       "converted "
       "at load, never a model's"},
      {R"({"name": "q", "dtype": "f32", "shape": [8], "source": "w"})",
       "parameters[1].source: parameter 'q' has \"source\" but no \"conversion\""},
      {R"({"name": "q", "dtype": "bf16", "shape": [8, 8], "source": "w",
           "conversion": "fp8"})",
       "parameters[1].conversion: unknown conversion \"fp8\" (expected bf16, int8, "
       "int8_scale or panels)"},
      {R"({"name": "q", "dtype": "bf16", "shape": [8, 8], "conversion": "bf16"})",
       "parameters[1]: parameter 'q' has conversion \"bf16\" but no \"source\" tensor"},
      {R"({"name": "q", "dtype": "f32", "shape": [8, 8], "source": "w",
           "conversion": "int8"})",
       "parameters[1].dtype: parameter 'q' is f32 [8, 8]; conversion \"int8\" makes i8 "
       "of rank 1 or more"},
      {R"({"name": "q", "dtype": "bf16", "shape": [4, 8], "source": "w",
           "conversion": "bf16", "rows": [2, 7]})",
       "parameters[1].rows: rows [2, 7) of parameter 'q' do not fit its shape [4, 8]: "
       "expected [start, start + dimension 0)"},
      {R"({"name": "q", "dtype": "i8", "shape": [8, 8], "source": "w",
           "conversion": "int8"})",
       "parameters[1]: parameter 'q' (int8 of 'w') needs exactly one int8_scale "
       "parameter of the same source rows, found none"}};
  for (const auto &[parameter, message] : cases)
    expectInvalid(replaced(kGood, w, w + ", " + parameter), message);
}

// Panels: [P, K, W] f32 from a [R, K] source, (P - 1) * W < R <= P * W. Neither needs
// nor takes an int8_scale partner.
TEST(Manifest, PanelsParametersParse) {
  const std::string w = R"({"name": "w", "dtype": "f32", "shape": [8, 8]})";
  auto m = parseManifest(replaced(
      kGood, w,
      w + R"(, {"name": "w.panels", "dtype": "f32", "shape": [2, 8, 4], "source": "w",
                "conversion": "panels"},
               {"name": "w[1:6].panels", "dtype": "f32", "shape": [2, 8, 4],
                "source": "w", "conversion": "panels", "rows": [1, 6]},
               {"name": "w[0:1].panels", "dtype": "f32", "shape": [1, 8, 64],
                "source": "w", "conversion": "panels", "rows": [0, 1]})"));
  ASSERT_EQ(m->parameters.size(), 4u);
  const ParameterSource &all = *m->parameters[1].source;
  EXPECT_EQ(all.conversion, Conversion::Panels);
  EXPECT_EQ(all.tensor, "w");
  EXPECT_FALSE(all.rows);
  EXPECT_EQ(m->parameters[2].source->rows, std::make_pair(int64_t(1), int64_t(6)));
  for (size_t i = 1; i < 4; ++i)
    EXPECT_EQ(scalePartner(m->parameters, i), -1) << i;
  EXPECT_STREQ(kiln::abi::conversionName(Conversion::Panels), "panels");
}

TEST(Manifest, RejectsPanelsThatCannotHoldTheirRows) {
  const std::string w = R"({"name": "w", "dtype": "f32", "shape": [8, 8]})";
  const std::string makes = "; conversion \"panels\" makes f32 of rank 3, [panels, K, "
                            "width] with panels and width >= 1";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"name": "q", "dtype": "bf16", "shape": [2, 8, 4], "source": "w",
           "conversion": "panels"})",
       "parameters[1].dtype: parameter 'q' is bf16 [2, 8, 4]" + makes},
      {R"({"name": "q", "dtype": "f32", "shape": [8, 8], "source": "w",
           "conversion": "panels"})",
       "parameters[1].dtype: parameter 'q' is f32 [8, 8]" + makes},
      {R"({"name": "q", "dtype": "f32", "shape": [2, 8, 0], "source": "w",
           "conversion": "panels"})",
       "parameters[1].dtype: parameter 'q' is f32 [2, 8, 0]" + makes},
      // 3 rows need one panel of 4, 9 rows three.
      {R"({"name": "q", "dtype": "f32", "shape": [2, 8, 4], "source": "w",
           "conversion": "panels", "rows": [0, 3]})",
       "parameters[1].rows: rows [0, 3) of parameter 'q' do not fit its shape [2, 8, 4]: "
       "3 rows fill 1 panel of 4 rows, not 2"},
      {R"({"name": "q", "dtype": "f32", "shape": [2, 8, 4], "source": "w",
           "conversion": "panels", "rows": [0, 9]})",
       "parameters[1].rows: rows [0, 9) of parameter 'q' do not fit its shape [2, 8, 4]: "
       "9 rows fill 3 panels of 4 rows, not 2"},
      {R"({"name": "q", "dtype": "f32", "shape": [0, 8, 4], "source": "w",
           "conversion": "panels"})",
       "parameters[1].dtype: parameter 'q' is f32 [0, 8, 4]" + makes},
      {R"({"name": "q", "dtype": "f32", "shape": [1, 8, 4], "source": "w",
           "conversion": "panels", "rows": [2, 2]})",
       "parameters[1].rows: rows [2, 2) of parameter 'q': expected 0 <= start < end"},
      {R"({"name": "q", "dtype": "f32", "shape": [2, 8, 4], "source": "w",
           "conversion": "panels", "rows": [-1, 6]})",
       "parameters[1].rows: rows [-1, 6) of parameter 'q': expected 0 <= start < end"},
      {R"({"name": "q", "dtype": "f32", "shape": [2, 8, 4], "conversion": "panels"})",
       "parameters[1]: parameter 'q' has conversion \"panels\" but no \"source\" "
       "tensor"}};
  for (const auto &[parameter, message] : cases)
    expectInvalid(replaced(kGood, w, w + ", " + parameter), message);
}

TEST(Manifest, OnlyParametersMayHaveWeightDTypes) {
  expectInvalid(replaced(kGood, R"({"name": "len", "dtype": "i32")",
                         R"({"name": "len", "dtype": "i8")"),
                "entries[0] ('forward').inputs[1].dtype: input 'len' is i8; only "
                "parameters may be i8");
  expectInvalid(
      replaced(kGood, "\"target\": \"host\",",
               "\"target\": \"host\", \"weights\": \"fp8\","),
      "manifest.weights: unknown weight precision \"fp8\" (expected f32, bf16 or "
      "int8)");
}

// "trim": the runtime may cut dimension S to the longest of the lengths, so the lengths
// must be bounded by S, and every input and output must hold S as whole positions.
TEST(Manifest, TrimNamesABoundDimensionAndItsLengths) {
  const std::string steps = "\"steps\": [{\"kernel\": 0, \"args\": [0, 1, 2]}]";
  auto withTrim = [&](const std::string &text, const std::string &trim) {
    return replaced(text, steps, steps + ", \"trim\": " + trim);
  };
  std::string bounded = replaced(kGood, "\"shape\": [\"B\"]}",
                                 "\"shape\": [\"B\"], \"bounds\": [1, \"S\"]}");
  std::string whole = replaced(bounded, "\"shape\": [\"B*S\", 8], \"buffer\": 3}",
                               "\"shape\": [\"B\", \"S\", 8], \"buffer\": 2}");
  auto m = parseManifest(withTrim(whole, R"({"dim": "S", "lengths": "len"})"));
  const EntryDesc &e = m->entries[0];
  EXPECT_EQ(e.trimSlot, 1);
  EXPECT_EQ(e.trimLengths, 1);
  EXPECT_EQ(e.trimInputAxes, (std::vector<std::vector<size_t>>{{1}, {}}));
  EXPECT_EQ(e.trimOutputAxes, (std::vector<std::vector<size_t>>{{1}}));
  EXPECT_EQ(parseManifest(whole)->entries[0].trimSlot, -1);

  expectInvalid(withTrim(whole, R"({"dim": "T", "lengths": "len"})"),
                "entries[0] ('forward').trim.dim: 'T' is not a dimension an input's "
                "shape binds");
  expectInvalid(withTrim(whole, R"({"dim": "S", "lengths": "x"})"),
                "entries[0] ('forward').trim.lengths: 'x' is not a rank-1 i32 input of "
                "the entry");
  expectInvalid(withTrim(kGood, R"({"dim": "S", "lengths": "len"})"),
                "entries[0] ('forward').trim.lengths: input 'len' must be bounded above "
                "by S");
  expectInvalid(withTrim(bounded, R"({"dim": "S", "lengths": "len"})"),
                "entries[0] ('forward').trim: output 'y' dim 0 (B*S) is not 'S' alone");
  expectInvalid(withTrim(whole, R"(["S", "len"])"),
                "entries[0] ('forward').trim: expected an object with \"dim\" and "
                "\"lengths\"");
}
