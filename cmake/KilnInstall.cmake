# KilnInstall.cmake - where an installed Kiln puts things, and how a library gets there.
#
# Two install components: `runtime` (libkiln_runtime, libkiln_generate, kiln-run, their
# headers, the package files and kiln-runtime.pc: what a deployment machine needs) and
# `compiler` (the compiler's static libraries and headers, kiln-compile, KilnModel.cmake).
#
#   cmake --install build --prefix P                        # everything
#   cmake --install build --prefix P --component runtime    # a deployment install
#
# Each component's targets go to an export set of its own (KilnRuntimeTargets,
# KilnCompilerTargets), so that KilnConfig.cmake of a runtime-only install needs neither
# MLIR nor Halide.

include(GNUInstallDirs)

# The install tree's directories relative to one another: installed files find each other
# through these ($ORIGIN RPATHs, ${pcfiledir}), never through the prefix given at configure
# time, because `cmake --install --prefix P` chooses the prefix later.
file(RELATIVE_PATH KILN_BIN_TO_LIB
  /prefix/${CMAKE_INSTALL_BINDIR} /prefix/${CMAKE_INSTALL_LIBDIR})
set(KILN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Kiln)

# kiln_install_compiler_library(TARGET EXPORT_NAME [HEADERS dir...])
#
# Installs the static library TARGET as Kiln::EXPORT_NAME (and makes that name an alias in
# the build tree too, so that cmake/KilnModel.cmake spells targets the same way in both),
# with the headers under each dir's kiln/ folder: .h files, the .h.inc files that tablegen
# generates for them, and the .td files they come from.
function(kiln_install_compiler_library target export_name)
  cmake_parse_arguments(ARG "" "" "HEADERS" ${ARGN})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  add_library(Kiln::${export_name} ALIAS ${target})
  install(TARGETS ${target} EXPORT KilnCompilerTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT compiler
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  foreach(dir IN LISTS ARG_HEADERS)
    install(DIRECTORY ${dir}/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
      COMPONENT compiler
      FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc" PATTERN "*.td")
  endforeach()
endfunction()
