# expect_failure.cmake - runs kiln-run (ARGS, '|'-separated) and passes when it exits 1 with
# EXPECT (a regex) on stderr and nothing that looks like a crash.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${KILN_RUN} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit code 1, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
endif()
