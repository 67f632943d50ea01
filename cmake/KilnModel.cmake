# KilnModel.cmake - compiling Kiln models to shared libraries at build time.
#
# The same file serves Kiln's own build and an installed Kiln (find_package(Kiln) includes
# it), which is why it names targets only as Kiln::...
#
#   kiln_add_model(NAME SOURCES model.cpp... [TARGET host|host-cuda|<halide target>]
#                  [WEIGHTS f32|bf16|int8])
#   kiln_add_model(NAME GENERATOR OTHER [TARGET ...] [WEIGHTS ...])
#
# builds the model compiler NAME-gen from the sources (one of which ends with
# KILN_MODEL(buildFn);), or reuses OTHER-gen of an earlier kiln_add_model (the same model
# for a second target, e.g. host-cuda, without compiling its sources again), and runs it
# at build time to produce
# ${CMAKE_CURRENT_BINARY_DIR}/NAME.so (kernel objects in NAME.kernels/), with the linear
# weights stored at WEIGHTS precision (NAME-gen's --weights; default f32). The custom
# target NAME (part of ALL) stands for the library; its path is in the variable NAME_LIBRARY
# (set in the caller's scope) and in the target property KILN_MODEL_LIBRARY, e.g.
# $<TARGET_PROPERTY:NAME,KILN_MODEL_LIBRARY> in a test's command line.
#
#   kiln_add_model_generator(NAME SOURCES model.cpp...)
#
# builds only NAME-gen (for models compiled by hand, or expected to fail).

function(kiln_add_model_generator name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_model_generator(${name}): SOURCES is required")
  endif()
  add_executable(${name}-gen ${ARG_SOURCES})
  target_link_libraries(${name}-gen PRIVATE Kiln::model_main)
  if(COMMAND kiln_share_model_headers)
    kiln_share_model_headers(${name}-gen)
  endif()
endfunction()

function(kiln_add_model name)
  cmake_parse_arguments(ARG "" "TARGET;GENERATOR;WEIGHTS" "SOURCES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model(${name}): unexpected arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET host)
  endif()
  # Only when given, so that the command (and so the build) of an f32 model is as it was.
  set(weights_option)
  set(weights_comment)
  if(ARG_WEIGHTS)
    if(NOT ARG_WEIGHTS MATCHES "^(f32|bf16|int8)$")
      message(FATAL_ERROR "kiln_add_model(${name}): WEIGHTS ${ARG_WEIGHTS}: expected f32, bf16 or int8")
    endif()
    set(weights_option --weights=${ARG_WEIGHTS})
    set(weights_comment ", ${ARG_WEIGHTS} weights")
  endif()
  if(ARG_GENERATOR AND ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_model(${name}): give SOURCES or GENERATOR, not both")
  elseif(ARG_GENERATOR)
    set(generator ${ARG_GENERATOR}-gen)
  else()
    kiln_add_model_generator(${name} SOURCES ${ARG_SOURCES})
    set(generator ${name}-gen)
  endif()

  set(library ${CMAKE_CURRENT_BINARY_DIR}/${name}.so)
  add_custom_command(
    OUTPUT ${library}
    COMMAND ${generator} -o ${CMAKE_CURRENT_BINARY_DIR} --name ${name} --target=${ARG_TARGET}
            ${weights_option}
    DEPENDS ${generator}
    COMMENT "Compiling Kiln model ${name} for ${ARG_TARGET}${weights_comment}"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${library})
  set_target_properties(${name} PROPERTIES KILN_MODEL_LIBRARY ${library})
  set(${name}_LIBRARY ${library} PARENT_SCOPE)
endfunction()
