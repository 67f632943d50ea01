# expect_failure.cmake - runs kiln-run (ARGS, '|'-separated) and passes when it exits with
# EXIT_CODE (default 1: the run failed; 2 is a usage error) with EXPECT (a regex) on stderr
# and nothing that looks like a crash.
if(NOT DEFINED EXIT_CODE)
  set(EXIT_CODE 1)
endif()
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${KILN_RUN} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL EXIT_CODE)
  message(FATAL_ERROR "expected exit code ${EXIT_CODE}, got '${rc}'\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match '${EXPECT}':\n${err}")
endif()
