//===- ElfCheck.cpp - Checking a model library before dlopen --------------===//
//
// Reads the ELF header and program headers with pread (never mmap: a file that shrinks
// meanwhile gives a short read, not a signal) and checks every range they name against
// the file's size.
//
//===----------------------------------------------------------------------===//

#include "ElfCheck.h"

#include "Error.h"

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

  void check() const {
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
    if (header.e_shoff != 0) {
      // e_shnum 0 with a table present means more than 0xff00 sections, counted in the
      // first entry; that entry at least must be there.
      uint64_t count = header.e_shnum ? header.e_shnum : 1;
      checkInside("the section header table", header.e_shoff, count * header.e_shentsize);
    }
  }

private:
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

void checkElfFile(const std::string &path) { ElfFile(path).check(); }

} // namespace kiln::rt
