//===- KilnRunTest.cpp - kiln-run translate with the CUDA translator -------===//

#include "KilnRunTool.h"

#include <gtest/gtest.h>

using kiln::test::kilnRun;
using kiln::test::ToolRun;

TEST(GpuKilnRun, TranslatesWithTheCudaTranslator) {
  for (const char *beam : {"1", "4"}) {
    ToolRun run = kilnRun({"translate", "models/translator_cuda.so", "--weights",
                           "translator/translator.safetensors", "--config",
                           "translator/config.json", "--beam", beam, "4096", "31415926"});
    EXPECT_EQ(run.exitCode, 0) << "beam " << beam << ": " << run.err;
    EXPECT_NE(run.out.find("4096\tfour thousand ninety six\t"), std::string::npos)
        << run.out;
    EXPECT_NE(run.out.find("31415926\tthirty one million four hundred fifteen thousand "
                           "nine hundred twenty six\t"),
              std::string::npos)
        << run.out;
  }
}
