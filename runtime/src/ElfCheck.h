//===- ElfCheck.h - Checking a model library before dlopen ------*- C++ -*-===//
//
// The structural checks a model library passes before it reaches dlopen.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ELFCHECK_H
#define KILN_RUNTIME_ELFCHECK_H

#include <string>

namespace kiln::rt {

/// Throws Error (INVALID_MODEL, "cannot load model 'PATH': ...") unless `path` is a
/// 64-bit ELF shared library for this host whose header tables and segments all lie
/// inside the file. dlopen maps segments without checking them against the file's size,
/// so a truncated library would raise SIGBUS inside the loader instead of failing.
/// Returns the Halide target string in the library's abi::kTargetSection, or "" when it
/// has none (a library linked without it, or with its section headers stripped).
std::string checkElfFile(const std::string &path);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ELFCHECK_H
