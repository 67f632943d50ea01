//===- VocabularyConfigTest.cpp - config.json read by Vocabulary ----------===//
//
// Vocabulary::fromConfig on configs written here: the values it reads are the ones the
// file holds (not defaults, not a nested object's), and every kind of bad config is an
// error naming the file and the key.
//
//===----------------------------------------------------------------------===//

#include "kiln/generate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;

class VocabularyConfig : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("kiln_vocab_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    write("words.txt", "<unk>\n<eos>\n<bos>\n<pad>\nfour\nsix\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string &name, const std::string &text) {
    std::ofstream(dir_ / name) << text;
  }

  /// config.json holding `members` (JSON object members, comma-separated).
  std::string config(const std::string &members) {
    write("config.json", "{" + members + "}");
    return (dir_ / "config.json").string();
  }

  /// The message of the kiln::Error that fromConfig(path) throws.
  static std::string errorOf(const std::string &path) {
    try {
      kiln::Vocabulary::fromConfig(path);
    } catch (const kiln::Error &e) {
      EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "fromConfig accepted " << path;
    return "";
  }

  fs::path dir_;
};

// A config whose ids are none of the defaults (pad 0, bos 1, eos 2, unk 3).
const std::string kIds = R"("pad_id": 3, "bos_id": 2, "eos_id": 1, "unk_id": 0)";
const std::string kFile = R"("vocab_file": "words.txt")";

TEST_F(VocabularyConfig, ReadsTheFilesValues) {
  kiln::Vocabulary v = kiln::Vocabulary::fromConfig(
      config(kIds + ", " + kFile +
             R"(, "max_source_len": 9, "max_target_len": 12, "vocab_size": 6)"));
  EXPECT_EQ(v.size(), 6u);
  EXPECT_EQ(v.options().padId, 3);
  EXPECT_EQ(v.options().bosId, 2);
  EXPECT_EQ(v.options().eosId, 1);
  EXPECT_EQ(v.options().unkId, 0);
  EXPECT_EQ(v.options().maxSourceLen, 9);
  EXPECT_EQ(v.options().maxTargetLen, 12);
  EXPECT_EQ(v.decodeTarget({2, 4, 3, 5, 1, 4}), "four six");
}

TEST_F(VocabularyConfig, OptionalKeysHaveDefaults) {
  write("vocab.txt", "<pad>\n<bos>\n<eos>\n<unk>\n");
  kiln::Vocabulary v = kiln::Vocabulary::fromConfig(
      config(R"("pad_id": 0, "bos_id": 1, "eos_id": 2, "unk_id": 3)"));
  EXPECT_EQ(v.size(), 4u);
  EXPECT_EQ(v.options().maxSourceLen, 0);
  EXPECT_EQ(v.options().maxTargetLen, 0);
}

TEST_F(VocabularyConfig, OnlyTopLevelKeysCount) {
  // A substring search would find the nested "eos_id" first.
  kiln::Vocabulary v = kiln::Vocabulary::fromConfig(config(
      R"("training": {"eos_id": 5, "note": "\"pad_id\": 4"}, )" + kIds + ", " + kFile));
  EXPECT_EQ(v.options().eosId, 1);
  EXPECT_EQ(v.options().padId, 3);
}

TEST_F(VocabularyConfig, BadValuesNameTheFileAndTheKey) {
  const std::string int32 = "expected an integer in [0, 2147483647]";
  const std::pair<std::string, std::string> cases[] = {
      {R"("pad_id": 3, "bos_id": 2, "unk_id": 0, )" + kFile,
       "\"eos_id\" is missing, " + int32},
      {R"("pad_id": "3", "bos_id": 2, "eos_id": 1, "unk_id": 0)",
       "\"pad_id\" is a string, " + int32},
      {R"("pad_id": 4294967296, "bos_id": 2, "eos_id": 1, "unk_id": 0)",
       "\"pad_id\" is 4294967296, " + int32},
      {kIds + R"(, "vocab_file": 7)", "\"vocab_file\" is a number, expected a string"},
      {kIds + ", " + kFile + R"(, "max_target_len": 12.5)",
       "\"max_target_len\" is 12.5, " + int32},
      {kIds + ", " + kFile + R"(, "max_target_len": 1e30)",
       "\"max_target_len\" is 1e+30, " + int32},
      {kIds + ", " + kFile + R"(, "max_source_len": -1)",
       "\"max_source_len\" is -1, expected an integer in [0, 9223372036854775807]"},
      {kIds + ", " + kFile + R"(, "vocab_size": 7)",
       "\"vocab_size\" is 7 but the vocabulary has 6 tokens"},
  };
  for (const auto &[members, error] : cases) {
    std::string path = config(members);
    EXPECT_EQ(errorOf(path), path + ": " + error) << members;
  }
}

TEST_F(VocabularyConfig, IdsMustLieInTheVocabulary) {
  std::string path =
      config(R"("pad_id": 3, "bos_id": 2, "eos_id": 60, "unk_id": 0, )" + kFile);
  EXPECT_EQ(errorOf(path), path + ": eos_id 60 is outside the 6-token vocabulary");
}

TEST_F(VocabularyConfig, NotAJsonObject) {
  write("config.json", R"({"pad_id": 3 "bos_id": 2})");
  std::string path = (dir_ / "config.json").string();
  EXPECT_EQ(errorOf(path), path + ": byte 13: expected ',' or '}'");
  write("config.json", "[1, 2]");
  EXPECT_EQ(errorOf(path), path + ": the top level is an array, expected an object");
  path = config(kIds + ", " + kIds);
  EXPECT_NE(errorOf(path).find("duplicate key \"pad_id\""), std::string::npos);
}

TEST_F(VocabularyConfig, MissingFileIsNotFound) {
  try {
    kiln::Vocabulary::fromConfig((dir_ / "none.json").string());
    ADD_FAILURE() << "no error for a missing config";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("none.json"), std::string::npos) << e.what();
  }
}

} // namespace
