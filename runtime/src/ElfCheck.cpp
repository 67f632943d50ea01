//===- ElfCheck.cpp - Checking a model library before dlopen --------------===//
//
// Reads the ELF header and program headers with pread (never mmap: a file that shrinks
// meanwhile gives a short read, not a signal) and checks every range they name against
// the file's size.
//
//===----------------------------------------------------------------------===//

#include "ElfCheck.h"

#include "Error.h"

#include "kiln/abi/Manifest.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kiln::rt {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char *kHostMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char *kHostMachineName = "AArch64";
#else
#error "ElfCheck.cpp: name this host's ELF machine"
#endif

class ElfFile {
public:
  explicit ElfFile(const std::string &path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0)
      ioError("cannot open");
    struct stat st;
    if (::fstat(fd_, &st) != 0)
      ioError("cannot stat");
    size_ = uint64_t(st.st_size);
  }
  ~ElfFile() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;

  /// Checks the file (checkElfFile) and returns its target section's text.
  std::string check() const {
    Elf64_Ehdr header{};
    size_t got = read(&header, sizeof header, 0);
    if (got < SELFMAG || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
      invalid("not an ELF file (it does not start with \\x7fELF)");
    if (got < EI_NIDENT)
      truncated(cat("the file has ", size_, " bytes, fewer than the ", int(EI_NIDENT),
                    "-byte ELF identification"));
    if (header.e_ident[EI_CLASS] != ELFCLASS64)
      invalid(header.e_ident[EI_CLASS] == ELFCLASS32
                  ? std::string("a 32-bit ELF file; this runtime loads 64-bit models")
                  : cat("unknown ELF class ", int(header.e_ident[EI_CLASS])));
    if (header.e_ident[EI_DATA] != ELFDATA2LSB)
      invalid("a big-endian ELF file; this host is little-endian");
    if (got < sizeof header)
      truncated(cat("the file has ", size_, " bytes, fewer than the ", sizeof header,
                    "-byte ELF header"));
    if (header.e_type != ET_DYN)
      invalid(cat("not a shared library (ELF type ", header.e_type, ", expected ", ET_DYN,
                  ")"));
    if (header.e_machine != kHostMachine)
      invalid(cat("built for ELF machine ", header.e_machine, "; this host is ",
                  kHostMachineName, " (", kHostMachine, ")"));
    if (header.e_phentsize != sizeof(Elf64_Phdr))
      invalid(cat("program headers of ", header.e_phentsize, " bytes, expected ",
                  sizeof(Elf64_Phdr)));
    checkInside("the program header table", header.e_phoff,
                uint64_t(header.e_phnum) * header.e_phentsize);
    std::vector<Elf64_Phdr> segments(header.e_phnum);
    uint64_t tableBytes = uint64_t(header.e_phnum) * sizeof(Elf64_Phdr);
    if (read(segments.data(), tableBytes, header.e_phoff) != tableBytes)
      truncated("the program header table could not be read whole");
    for (size_t i = 0; i < segments.size(); ++i)
      checkInside(cat("segment ", i), segments[i].p_offset, segments[i].p_filesz);
    if (header.e_shoff == 0)
      return "";
    // e_shnum 0 with a table present means more than 0xff00 sections, counted in the
    // first entry; that entry at least must be there.
    uint64_t count = header.e_shnum ? header.e_shnum : 1;
    checkInside("the section header table", header.e_shoff, count * header.e_shentsize);
    return targetSection(header);
  }

private:
  /// The text of section abi::kTargetSection, or "" when there is none. Only plain
  /// tables are searched (no extended section numbering, which a model never needs).
  std::string targetSection(const Elf64_Ehdr &header) const {
    if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
        header.e_shstrndx >= header.e_shnum)
      return "";
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    uint64_t tableBytes = uint64_t(header.e_shnum) * sizeof(Elf64_Shdr);
    if (read(sections.data(), tableBytes, header.e_shoff) != tableBytes)
      truncated("the section header table could not be read whole");
    std::string names = contents(sections[header.e_shstrndx], "section names");
    const std::string wanted = abi::kTargetSection;
    for (const Elf64_Shdr &section : sections) {
      if (section.sh_name >= names.size() ||
          names.compare(section.sh_name, wanted.size() + 1, wanted.c_str(),
                        wanted.size() + 1) != 0)
        continue;
      std::string text = contents(section, wanted);
      size_t end = text.find('\0');
      if (end == std::string::npos)
        invalid(cat("section ", wanted, " is not a NUL-terminated string"));
      return text.substr(0, end);
    }
    return "";
  }

  /// The bytes of `section` (a string table or the target; at most 1 MiB).
  std::string contents(const Elf64_Shdr &section, const std::string &what) const {
    constexpr uint64_t kMaxBytes = uint64_t(1) << 20;
    if (section.sh_type == SHT_NOBITS || section.sh_size > kMaxBytes)
      invalid(cat("section ", what, " is not ",
                  section.sh_type == SHT_NOBITS ? "in the file" : "at most 1 MiB"));
    checkInside(cat("section ", what), section.sh_offset, section.sh_size);
    std::string bytes(section.sh_size, '\0');
    if (read(bytes.data(), bytes.size(), section.sh_offset) != bytes.size())
      truncated(cat("section ", what, " could not be read whole"));
    return bytes;
  }

  [[noreturn]] void invalid(const std::string &problem) const {
    fail(KILN_STATUS_INVALID_MODEL, "cannot load model '", path_, "': ", problem);
  }
  [[noreturn]] void truncated(const std::string &problem) const {
    invalid("truncated ELF file: " + problem);
  }
  [[noreturn]] void ioError(const char *what) const {
    int err = errno;
    fail(KILN_STATUS_IO_ERROR, "cannot load model '", path_, "': ", what, ": ",
         std::strerror(err));
  }

  /// The bytes read at `offset`, up to `bytes`; fewer only at the end of the file.
  size_t read(void *out, size_t bytes, uint64_t offset) const {
    size_t done = 0;
    while (done < bytes) {
      ssize_t n = ::pread(fd_, static_cast<char *>(out) + done, bytes - done,
                          off_t(offset + done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        ioError("cannot read");
      if (n == 0)
        break;
      done += size_t(n);
    }
    return done;
  }

  void checkInside(const std::string &what, uint64_t offset, uint64_t bytes) const {
    uint64_t end;
    bool overflow = __builtin_add_overflow(offset, bytes, &end);
    if (overflow || end > size_)
      truncated(cat(what, " ends at byte ",
                    overflow ? "beyond 2^64" : std::to_string(end), ", file has ", size_,
                    " bytes"));
  }

  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

} // namespace

std::string checkElfFile(const std::string &path) { return ElfFile(path).check(); }

} // namespace kiln::rt
