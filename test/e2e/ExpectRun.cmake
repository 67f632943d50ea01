# ExpectRun.cmake - runs ARGS ('|'-separated) and passes when the exit code is EXIT_CODE
# and stdout + stderr match the regex EXPECT.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXIT_CODE}")
  message(FATAL_ERROR "expected exit code ${EXIT_CODE}, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match '${EXPECT}':\nstdout: ${out}\nstderr: ${err}")
endif()
