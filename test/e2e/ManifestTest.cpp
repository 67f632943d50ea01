//===- ManifestTest.cpp - What the compiled models tell the runtime -------===//
//
// The manifests embedded in the build-time models: reshapes become views with symbolic
// shapes, and an integer input's bounds reach the runtime, which enforces them.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

using namespace kiln::e2e;

namespace {

const llvm::json::Object &object(const llvm::json::Value &value) {
  return *value.getAsObject();
}

const llvm::json::Object &firstEntry(const llvm::json::Value &manifest) {
  return object((*object(manifest).getArray("entries"))[0]);
}

} // namespace

TEST(ManifestTest, ReshapesAreViewsNotKernels) {
  Harness h(modelLibrary("e2e_data_movement"), buildDataMovementModel);
  ASSERT_TRUE(h.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  for (const llvm::json::Value &k : *object(*manifest).getArray("kernels"))
    EXPECT_EQ(k.getAsString()->find("reshape"), llvm::StringRef::npos)
        << k.getAsString()->str();

  // "flat" is reshape(x, {0, -1}): a view of input buffer 0 shaped [B, S*24].
  const llvm::json::Object &entry = firstEntry(*manifest);
  bool found = false;
  for (const llvm::json::Value &out : *entry.getArray("outputs")) {
    if (object(out).getString("name") != llvm::StringRef("flat"))
      continue;
    found = true;
    const llvm::json::Object &buffer = object(
        (*entry.getArray("buffers"))[object(out).getInteger("buffer").getValueOr(-1)]);
    EXPECT_EQ(buffer.getString("kind").getValueOr(""), "view");
    EXPECT_EQ(buffer.getInteger("view_of").getValueOr(-1), 0);
    const llvm::json::Array &shape = *buffer.getArray("shape");
    ASSERT_EQ(shape.size(), 2u);
    EXPECT_EQ(shape[0].getAsString().getValueOr(""), "B");
    EXPECT_EQ(shape[1].getAsString().getValueOr(""), "S*24");
  }
  EXPECT_TRUE(found);
}

TEST(ManifestTest, LeadingRowsOfAWeightAreAViewAtAnOffset) {
  Harness h(modelLibrary("e2e_data_movement"), buildDataMovementModel);
  ASSERT_TRUE(h.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  // Only the strided column slice of x needs a kernel.
  int sliceKernels = 0;
  for (const llvm::json::Value &k : *object(*manifest).getArray("kernels"))
    sliceKernels += k.getAsString()->endswith("_slice");
  EXPECT_EQ(sliceKernels, 1);
  // slice(v, axis 0, rows 2..4) of v [6, 24]: a view of the parameter from element 48.
  const llvm::json::Object &entry = firstEntry(*manifest);
  const llvm::json::Array &buffers = *entry.getArray("buffers");
  bool found = false;
  for (const llvm::json::Value &b : buffers) {
    const llvm::json::Object &buffer = object(b);
    if (buffer.getString("kind").getValueOr("") != "view" || !buffer.get("offset"))
      continue;
    found = true;
    EXPECT_EQ(buffer.getInteger("offset").getValueOr(-1), 48);
    const llvm::json::Object &viewed =
        object(buffers[buffer.getInteger("view_of").getValueOr(-1)]);
    EXPECT_EQ(viewed.getString("kind").getValueOr(""), "parameter");
  }
  EXPECT_TRUE(found);
  // The same rows of w, the weight of a product over x's rows: their column panels.
  bool panels = false;
  for (const llvm::json::Value &p : *object(*manifest).getArray("parameters")) {
    const llvm::json::Object &parameter = object(p);
    if (parameter.getString("name").getValueOr("") != "w[2:4].panels")
      continue;
    panels = true;
    EXPECT_EQ(parameter.getString("conversion").getValueOr(""), "panels");
    EXPECT_EQ(parameter.getString("source").getValueOr(""), "w");
  }
  EXPECT_TRUE(panels);
}

TEST(ManifestTest, IntegerInputsCarryTheirBounds) {
  Harness h(modelLibrary("e2e_two_entries"), buildTwoEntriesModel);
  ASSERT_TRUE(h.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  const llvm::json::Object &lengths =
      object((*firstEntry(*manifest).getArray("inputs"))[1]);
  EXPECT_EQ(lengths.getString("name").getValueOr(""), "lengths");
  EXPECT_EQ(lengths.getString("dtype").getValueOr(""), "i32");
  const llvm::json::Array &bounds = *lengths.getArray("bounds");
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_EQ(bounds[0].getAsInteger().getValueOr(-1), 1); // a plain integer is a number
  EXPECT_EQ(bounds[1].getAsString().getValueOr(""), "S");

  // The runtime enforces them: a length of 3 when S is 2 fails before any kernel runs.
  std::vector<float> x(1 * 2 * 24, 0.5f);
  int32_t length = 3;
  int64_t xShape[] = {1, 2, 24}, lengthShape[] = {1};
  kiln_tensor inputs[] = {{"x", KILN_DTYPE_F32, 3, xShape, x.data()},
                          {"lengths", KILN_DTYPE_I32, 1, lengthShape, &length}};
  kiln_status *status = kiln_session_run(h.session(), "encode", inputs, 2);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_get_message(status)).find("lengths"),
            std::string::npos)
      << kiln_status_get_message(status);
  kiln_status_free(status);
  length = 2;
  EXPECT_TRUE(
      expectOk(kiln_session_run(h.session(), "encode", inputs, 2), "a valid run"));
}
