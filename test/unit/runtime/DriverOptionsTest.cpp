//===- DriverOptionsTest.cpp - kiln-run's command line --------------------===//
//
// Every option value kiln-run cannot use is a usage error -- exit status 2, nothing on
// stdout, a message on stderr naming the option and the value -- raised while parsing,
// before any file is read; and the spellings README.md, tools/run-demo.sh and bench/ use
// keep working.
//
//===----------------------------------------------------------------------===//

#include "KilnRunTool.h"
#include "TestUtil.h"

using namespace kiln::test;

namespace {

/// Runs kiln-run with `args` and expects a usage error whose message holds `text`.
/// Model, weights and config paths in the tests are real or absent on purpose: a check
/// that ran after opening them would fail with status 1 instead.
void expectUsageError(const std::vector<std::string> &args, const std::string &text) {
  ToolRun run = kilnRun(args);
  std::string command = args.at(0) == "translate" ? "kiln-run translate" : "kiln-run";
  EXPECT_FALSE(run.crashed) << run.err;
  EXPECT_EQ(run.exitCode, 2) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err.rfind(command + ": error: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(text), std::string::npos)
      << "expected '" << text << "' in: " << run.err;
}

/// `kiln-run translate` on the fake model with `option value` and one TEXT.
std::vector<std::string> translateWith(const std::string &option,
                                       const std::string &value) {
  return {"translate", FAKE_MODEL,        "--weights", "/no/w.safetensors",
          "--config",  "/no/config.json", option,      value,
          "12"};
}

TEST(DriverOptions, BeamSizeIsAnIntegerInRange) {
  expectUsageError(translateWith("--beam", "abc"), "--beam: 'abc' is not an integer");
  expectUsageError(translateWith("--beam", "4x"), "--beam: '4x' is not an integer");
  expectUsageError(translateWith("--beam", "0"), "--beam: 0 is not in [1, 64]");
  expectUsageError(translateWith("--beam", "-3"), "--beam: -3 is not in [1, 64]");
  expectUsageError(translateWith("--beam", "65"), "--beam: 65 is not in [1, 64]");
}

TEST(DriverOptions, TranslateNumbersAreChecked) {
  expectUsageError(translateWith("--alpha", "x"), "--alpha: 'x' is not a number");
  expectUsageError(translateWith("--alpha", "nan"),
                   "--alpha: 'nan' is not a finite number");
  expectUsageError(translateWith("--alpha", "-0.5"), "--alpha: -0.5 is not at least 0");
  expectUsageError(translateWith("--max-len", "0"),
                   "--max-len: 0 is not in [1, 2147483647]");
  expectUsageError(translateWith("--max-len", "99999999999"),
                   "--max-len: 99999999999 is not in [1, 2147483647]");
}

TEST(DriverOptions, TranslateNeedsItsArguments) {
  expectUsageError({"translate", FAKE_MODEL, "--weights", "w", "12"},
                   "--config is required");
  expectUsageError({"translate", FAKE_MODEL, "--weights", "w", "--config", "c"},
                   "TEXT is required");
  expectUsageError(
      {"translate", FAKE_MODEL, "--weights", "w", "--config", "c", "--bogus", "12"},
      "--bogus");
  // The options of running an entry are not translate's.
  expectUsageError(translateWith("--entry", "encode"), "--entry");
}

TEST(DriverOptions, RunNumbersAreChecked) {
  expectUsageError({FAKE_MODEL, "--repeat", "x"}, "--repeat: 'x' is not an integer");
  expectUsageError({FAKE_MODEL, "--repeat", "0"}, "--repeat: 0 is not in [1, 1000000]");
  expectUsageError({FAKE_MODEL, "--seed", "-1"},
                   "--seed: -1 is not in [0, 9223372036854775807]");
  expectUsageError({FAKE_MODEL, "--seed", "0x10"}, "--seed: '0x10' is not an integer");
  expectUsageError({FAKE_MODEL, "--seed", "99999999999999999999"},
                   "--seed: 99999999999999999999 is not in [0, 9223372036854775807]");
  expectUsageError({FAKE_MODEL, "--scale", "-1"}, "--scale: -1 is not at least 0");
  expectUsageError({FAKE_MODEL, "--scale", "inf"},
                   "--scale: 'inf' is not a finite number");
}

TEST(DriverOptions, AssignmentsAreChecked) {
  expectUsageError({FAKE_MODEL, "--dim", "B=x"}, "--dim: B: 'x' is not an integer");
  expectUsageError({FAKE_MODEL, "--dim", "B=-1"},
                   "--dim: B: -1 is not in [0, 9223372036854775807]");
  expectUsageError({FAKE_MODEL, "--dim", "B"}, "--dim: expected NAME=N, got 'B'");
  expectUsageError({FAKE_MODEL, "--dim", "=3"}, "--dim: expected NAME=N, got '=3'");
  expectUsageError({FAKE_MODEL, "--input", "x"}, "--input: expected NAME=SPEC, got 'x'");
}

TEST(DriverOptions, CommandLineShapeIsChecked) {
  expectUsageError({FAKE_MODEL, "--bogus"}, "--bogus");
  expectUsageError({FAKE_MODEL, "--print", "all"},
                   "--print: all not in {summary,full,none}");
  expectUsageError({FAKE_MODEL, "--weights"}, "--weights");
  expectUsageError({FAKE_MODEL, "other.so"}, "other.so");
  expectUsageError({"--list"}, "MODEL is required");
}

TEST(DriverOptions, HelpDescribesEveryOption) {
  ToolRun run = kilnRun({"--help"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  for (const char *text :
       {"--weights FILE", "--entry NAME", "--input NAME=SPEC", "--dim NAME=N",
        "The size of a dynamic dimension", "--random", "--seed N", "--repeat N",
        "--print MODE", "--save-outputs DIR", "--list", "--init-weights OUT", "--scale S",
        "translate", "Exit status: 0 on success, 1 when the run fails, 2 for a usage"})
    EXPECT_NE(run.out.find(text), std::string::npos) << text << " in:\n" << run.out;
  run = kilnRun({"translate", "--help"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  for (const char *text :
       {"--weights FILE", "--config FILE", "--vocab FILE", "--beam K:in [1, 64]",
        "Beam search of size K", "--alpha A", "--max-len N", "--no-cache"})
    EXPECT_NE(run.out.find(text), std::string::npos) << text << " in:\n" << run.out;
}

struct DriverSpellings : ::testing::Test {
  std::mt19937 rng{7};
  FakeWeights weights{rng};

  /// stdout of a successful run, without its timing line.
  std::string outputOf(const std::vector<std::string> &args) {
    ToolRun run = kilnRun(args);
    EXPECT_EQ(run.exitCode, 0) << run.err;
    return run.out.substr(0, run.out.find("time: "));
  }
  std::string randomWiden(const std::string &seed) {
    return outputOf({FAKE_MODEL, "--weights", weights.path, "--entry", "widen",
                     "--random", "--dim", "B=3", "--dim", "T=4", "--print", "full",
                     "--seed", seed});
  }
};

TEST_F(DriverSpellings, OptionsMayComeBeforeTheModel) {
  std::string after = outputOf({FAKE_MODEL, "--list"});
  EXPECT_NE(after.find("entry widen"), std::string::npos) << after;
  EXPECT_EQ(outputOf({"--list", FAKE_MODEL}), after);
  EXPECT_EQ(
      outputOf({"--dim", "B=3", "--weights", weights.path, "--random", "--entry", "widen",
                "--dim", "T=4", "--print=full", "--seed", "10", FAKE_MODEL}),
      randomWiden("10"));
}

TEST_F(DriverSpellings, NumbersAreDecimal) {
  // A leading zero is not octal (CLI11's own conversion would read 010 as 8).
  EXPECT_EQ(randomWiden("010"), randomWiden("10"));
  EXPECT_NE(randomWiden("010"), randomWiden("8"));
}

TEST_F(DriverSpellings, ARepeatedOptionKeepsItsLastValue) {
  ToolRun run =
      kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen", "--random",
               "--dim", "B=1", "--dim", "T=1", "--repeat", "2", "--repeat", "3"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("over 3 runs"), std::string::npos) << run.out;
}

TEST_F(DriverSpellings, InitWeightsTakesItsFileFirst) {
  std::string out = tempPath("init.safetensors");
  ToolRun run =
      kilnRun({"--init-weights", out, FAKE_MODEL, "--seed", "1", "--scale", "0.5"});
  EXPECT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("wrote 2 parameters (8 values)"), std::string::npos) << run.out;
  std::remove(out.c_str());
}

} // namespace
