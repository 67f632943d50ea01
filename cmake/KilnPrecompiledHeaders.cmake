# KilnPrecompiledHeaders.cmake - one precompiled header per heavy target.
#
# Most of a compiler-side translation unit's build time is GCC parsing the same headers:
# kiln/ir/KilnOps.h with MLIR behind it (about 4 s), Halide.h (about 2.5 s), gtest,
# pybind11. A target that compiles many such units parses them once instead:
#
#   kiln_precompile_headers(TARGET [MLIR] [HALIDE] [GTEST] [HEADERS <h>...])
#
# MLIR, HALIDE and GTEST name the sets the target's sources include anyway (the target
# must already see their include directories); HEADERS adds others. Off with
# -DKILN_PRECOMPILED_HEADERS=OFF, e.g. to check that each source includes what it uses.

option(KILN_PRECOMPILED_HEADERS "Precompile the heavy headers of Kiln's larger targets" ON)

function(kiln_precompile_headers target)
  cmake_parse_arguments(ARG "MLIR;HALIDE;GTEST" "" "HEADERS" ${ARGN})
  if(NOT KILN_PRECOMPILED_HEADERS)
    return()
  endif()
  set(headers <algorithm> <cmath> <map> <memory> <optional> <string> <vector>)
  if(ARG_MLIR)
    list(APPEND headers <kiln/ir/KilnOps.h> <mlir/IR/Builders.h> <mlir/IR/BuiltinOps.h>
      <llvm/ADT/STLExtras.h> <llvm/Support/raw_ostream.h>)
  endif()
  if(ARG_HALIDE)
    list(APPEND headers <Halide.h>)
  endif()
  if(ARG_GTEST)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  list(APPEND headers ${ARG_HEADERS})
  # C++ targets only: CMake would precompile the same list for a C source's language too.
  target_precompile_headers(${target} PRIVATE ${headers})
  kiln_quiet_precompiled_libstdcxx(${target})
endfunction()

# GCC 12 warns, wrongly, about the memcpy of std::string's insert and replace when it
# inlines them at -O3 (a bound that "exceeds maximum object size"; -Wrestrict's regions
# that "may overlap" are the same case). It says nothing of them in a system header, but
# the libstdc++ headers read back from a precompiled header no longer count as such, so
# units that concatenate strings would print them. (kiln-run has no precompiled header
# and builds with -Wall; its units append to strings instead of concatenating "literal" +
# std::string, which draws the -Wrestrict one.)
function(kiln_quiet_precompiled_libstdcxx target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-stringop-overread
      -Wno-restrict)
  endif()
endfunction()

# The model compilers NAME-gen (kiln_add_model_generator, KilnModel.cmake) are one small
# unit each, a model's build function, which spends most of its ~4.5 s parsing the DSL's
# headers: with them precompiled it takes ~1 s. One precompiled header, made for the first
# model compiler and reused by the others (their flags are the same: Kiln::model_main's),
# since making it takes ~9 s. Kiln's own build only: an installed KilnModel.cmake has no
# such function and builds its models as they are.
function(kiln_share_model_headers target)
  if(NOT KILN_PRECOMPILED_HEADERS)
    return()
  endif()
  get_property(donor GLOBAL PROPERTY KILN_MODEL_HEADERS_DONOR)
  if(donor)
    target_precompile_headers(${target} REUSE_FROM ${donor})
  else()
    target_precompile_headers(${target} PRIVATE <kiln/frontend/Kiln.h>
      <kiln/frontend/Registry.h> <kiln/frontend/nn/Bert.h> <kiln/frontend/nn/DecoderOnly.h>
      <kiln/frontend/nn/Transformer.h>)
    set_property(GLOBAL PROPERTY KILN_MODEL_HEADERS_DONOR ${target})
  endif()
  kiln_quiet_precompiled_libstdcxx(${target})
endfunction()
