# KilnPackage.cmake - the files that make an installed Kiln usable from outside: the
# exported targets, KilnConfig.cmake and its version file for find_package(Kiln),
# kiln_add_model() (KilnModel.cmake), and kiln-runtime.pc for pkg-config. Included once,
# after every target exists (see cmake/KilnInstall.cmake for the components).

include(CMakePackageConfigHelpers)

install(EXPORT KilnRuntimeTargets NAMESPACE Kiln::
  DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT runtime)
if(NOT KILN_RUNTIME_ONLY)
  install(EXPORT KilnCompilerTargets NAMESPACE Kiln::
    DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT compiler)
  install(FILES ${PROJECT_SOURCE_DIR}/cmake/KilnModel.cmake
    DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT compiler)
endif()

# KilnConfig.cmake looks for the compiler's dependencies where this build found them
# first (Debian's MLIR 14 is not on CMake's default search path).
set(KILN_MLIR_DIR "${MLIR_DIR}")
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/KilnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/KilnConfig.cmake
  INSTALL_DESTINATION ${KILN_INSTALL_CMAKEDIR})
# 0.x releases make no promise across minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/KilnConfig.cmake ${PROJECT_BINARY_DIR}/KilnConfigVersion.cmake
  DESTINATION ${KILN_INSTALL_CMAKEDIR} COMPONENT runtime)

# pkg-config: the C runtime only (a C program needs nothing else). Paths are relative to
# the .pc file, so the install prefix can be chosen at install time or moved later.
file(RELATIVE_PATH KILN_PKGCONFIG_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" KILN_PKGCONFIG_TO_PREFIX "${KILN_PKGCONFIG_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/kiln-runtime.pc.in
  ${PROJECT_BINARY_DIR}/kiln-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kiln-runtime.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT runtime)
