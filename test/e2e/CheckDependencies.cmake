# CheckDependencies.cmake - passes when LIBRARY needs only the C runtime at load time
# (libc, libm, libpthread, libdl), as docs/manifest.md promises a deployed model does.
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} -d ${LIBRARY} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIBRARY} failed: ${err}")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed "${out}")
if(NOT needed)
  message(FATAL_ERROR "no NEEDED entries found in:\n${out}")
endif()
foreach(entry ${needed})
  string(REGEX REPLACE "Shared library: \\[([^]]+)\\]" "\\1" lib "${entry}")
  if(NOT lib MATCHES "^(libc|libm|libpthread|libdl)\\.so\\.[0-9]+$")
    message(FATAL_ERROR "${LIBRARY} needs ${lib} at load time:\n${out}")
  endif()
  message(STATUS "needs ${lib}")
endforeach()
