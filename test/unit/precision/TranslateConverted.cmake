# TranslateConverted.cmake - converts the translator's fp32 checkpoint to MODEL's
# precision with kiln-run --convert-weights (OUT), then translates the same inputs from
# both files: the translations and their scores must be the same.
function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${ARGN}' failed (${rc}):\n${out}${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE ${OUT})
run(ignored ${KILN_RUN} --convert-weights ${OUT} ${MODEL}
    --weights ${DIR}/translator.safetensors)
set(inputs 4096 073812 7 90017 12000345)
foreach(weights ${DIR}/translator.safetensors ${OUT})
  run(out ${KILN_RUN} translate ${MODEL} --weights ${weights}
      --config ${DIR}/config.json ${inputs})
  # The timing line differs from run to run.
  string(REGEX REPLACE "\n[0-9]+ inputs, [^\n]*" "" out "${out}")
  list(APPEND translations "${out}")
endforeach()
list(GET translations 0 from_fp32)
list(GET translations 1 from_converted)
if(NOT from_fp32 STREQUAL from_converted)
  message(FATAL_ERROR "converted at load:\n${from_fp32}\npre-converted:\n${from_converted}")
endif()
if(NOT from_fp32 MATCHES "4096\tfour thousand ninety six\t")
  message(FATAL_ERROR "unexpected translations:\n${from_fp32}")
endif()
message(STATUS "same translations from both files:\n${from_fp32}")
