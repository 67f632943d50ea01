//===- ModelFileTest.cpp - Damaged model libraries are errors, not signals ===//
//
// A model library cut short (an interrupted copy, a full disk) or not a library at all
// must fail kiln_model_open with a message; before the ELF checks a truncated library
// raised SIGBUS inside dlopen and took the host down.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstddef>
#include <cstring>
#include <elf.h>

using namespace kiln::test;

namespace {

Result openFile(const std::string &path) {
  kiln_model *model = nullptr;
  Result r = take(kiln_model_open(path.c_str(), &model));
  EXPECT_EQ(model, nullptr) << "a damaged library opened: " << path;
  kiln_model_release(model);
  return r;
}

/// kiln_model_open's status on a file holding `bytes`.
Result openBytes(const std::string &bytes) {
  std::string path = tempPath("model.so");
  writeFile(path, bytes);
  Result r = openFile(path);
  std::remove(path.c_str());
  return r;
}

/// The problem after "cannot load model 'PATH': ", checking that prefix on the way.
std::string problem(const Result &r) {
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_MODEL) << r;
  size_t at = r.message.find("': ");
  EXPECT_EQ(r.message.rfind("cannot load model '", 0), 0u) << r;
  return at == std::string::npos ? r.message : r.message.substr(at + 3);
}

template <typename Header> Header read(const std::string &bytes, size_t offset) {
  Header h;
  std::memcpy(&h, bytes.data() + offset, sizeof h);
  return h;
}

struct ModelFile : ::testing::Test {
  std::string library = readFile(FAKE_MODEL);
  Elf64_Ehdr header = read<Elf64_Ehdr>(library, 0);

  void SetUp() override { ASSERT_GT(library.size(), sizeof(Elf64_Ehdr)); }

  /// The library with its ELF header's field at `offset` set to `value`.
  std::string patched(size_t offset, uint16_t value) const {
    std::string bytes = library;
    std::memcpy(&bytes[offset], &value, sizeof value);
    return bytes;
  }
};

} // namespace

TEST_F(ModelFile, EveryTruncationIsAnError) {
  for (size_t length = 0; length < library.size(); length += length < 128 ? 1 : 61) {
    std::string got = problem(openBytes(library.substr(0, length)));
    if (length < SELFMAG)
      EXPECT_EQ(got, "not an ELF file (it does not start with \\x7fELF)");
    else
      EXPECT_EQ(got.rfind("truncated ELF file: ", 0), 0u) << length << " bytes: " << got;
  }
}

TEST_F(ModelFile, TruncationNamesTheSegmentCut) {
  size_t last = 0;
  uint64_t end = 0;
  for (size_t i = 0; i < header.e_phnum; ++i) {
    auto segment = read<Elf64_Phdr>(library, header.e_phoff + i * sizeof(Elf64_Phdr));
    if (segment.p_offset + segment.p_filesz > end) {
      end = segment.p_offset + segment.p_filesz;
      last = i;
    }
  }
  std::string got = problem(openBytes(library.substr(0, end - 1)));
  EXPECT_EQ(got, "truncated ELF file: segment " + std::to_string(last) +
                     " ends at byte " + std::to_string(end) + ", file has " +
                     std::to_string(end - 1) + " bytes");
}

TEST_F(ModelFile, TruncatedHeaderTablesAreNamed) {
  EXPECT_EQ(
      problem(openBytes(library.substr(0, 40))),
      "truncated ELF file: the file has 40 bytes, fewer than the 64-byte ELF header");
  std::string got = problem(openBytes(library.substr(0, header.e_phoff + 8)));
  EXPECT_EQ(got.rfind("truncated ELF file: the program header table ends at byte ", 0),
            0u)
      << got;
}

TEST_F(ModelFile, SectionTableBeyondTheFile) {
  Elf64_Ehdr moved = header;
  moved.e_shoff = library.size();
  std::string bytes = library;
  std::memcpy(&bytes[0], &moved, sizeof moved);
  std::string got = problem(openBytes(bytes));
  EXPECT_EQ(got.rfind("truncated ELF file: the section header table ends at byte ", 0),
            0u)
      << got;
}

TEST_F(ModelFile, GarbageAfterAValidHeaderIsAnError) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string bytes = library;
    for (size_t i = sizeof(Elf64_Ehdr); i < bytes.size(); ++i)
      bytes[i] = char(rng());
    // Random program headers name ranges far beyond the file.
    EXPECT_EQ(problem(openBytes(bytes)).rfind("truncated ELF file: segment ", 0), 0u);
  }
}

TEST_F(ModelFile, NonElfFilesAreNamedAsSuch) {
  EXPECT_EQ(problem(openBytes("#!/bin/sh\necho not a library\n")),
            "not an ELF file (it does not start with \\x7fELF)");
  std::mt19937 rng(3);
  std::string garbage(4096, '\0');
  for (char &c : garbage)
    c = char(rng());
  garbage[0] = 'x';
  EXPECT_EQ(problem(openBytes(garbage)),
            "not an ELF file (it does not start with \\x7fELF)");
}

TEST_F(ModelFile, ThirtyTwoBitLibraryIsRejected) {
  Elf32_Ehdr h{};
  std::memcpy(h.e_ident, ELFMAG, SELFMAG);
  h.e_ident[EI_CLASS] = ELFCLASS32;
  h.e_ident[EI_DATA] = ELFDATA2LSB;
  h.e_ident[EI_VERSION] = EV_CURRENT;
  h.e_type = ET_DYN;
  h.e_machine = EM_386;
  h.e_ehsize = sizeof h;
  EXPECT_EQ(problem(openBytes(std::string(reinterpret_cast<const char *>(&h), sizeof h))),
            "a 32-bit ELF file; this runtime loads 64-bit models");
}

TEST_F(ModelFile, OtherMachineOrTypeIsRejected) {
  std::string got =
      problem(openBytes(patched(offsetof(Elf64_Ehdr, e_machine), EM_PPC64)));
  EXPECT_EQ(got.rfind("built for ELF machine 21; this host is ", 0), 0u) << got;
  EXPECT_EQ(problem(openBytes(patched(offsetof(Elf64_Ehdr, e_type), ET_EXEC))),
            "not a shared library (ELF type 2, expected 3)");
}

TEST_F(ModelFile, IntactLibraryStillOpens) {
  std::string path = tempPath("copy.so");
  writeFile(path, library);
  kiln_model *model = nullptr;
  EXPECT_OK(kiln_model_open(path.c_str(), &model));
  kiln_model_release(model);
  std::remove(path.c_str());
}
