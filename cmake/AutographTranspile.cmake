# autograph_transpile: run agc on some sources of a target as a build step and
# compile the generated files in their place (DESIGN §5.5).
#
#   add_executable(app main.cpp model.cpp)
#   autograph_transpile(TARGET app SOURCES model.cpp)
#
# For each source, agc writes <binary dir>/agc/<path>/<name>.ag.cpp with the
# target's C++ standard, include directories and compile definitions (read
# through generator expressions, so usage requirements of linked libraries
# count). The original stays in the target as HEADER_FILE_ONLY (visible in
# IDEs, not compiled); the generated file is compiled with the original's
# directory on its include path, so `#include "local.h"` keeps working.
#
# Dependencies: the generated file depends on its source and on agc. With the
# Ninja and Makefile generators it also depends, through a depfile written by
# the C++ compiler's -MM, on every non-system header the source includes:
# touching one of them re-runs agc for that source only.
#
# Options:
#   OUTPUT_VARIABLE <var>   sets <var> to the list of generated files
#
# agc: the `agc` target when it exists in this build, else AGC_EXECUTABLE
# (found on PATH if unset).
include_guard(GLOBAL)

function(autograph_transpile)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "" "TARGET;OUTPUT_VARIABLE" "SOURCES")
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "autograph_transpile: TARGET is required")
  endif()
  if(NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "autograph_transpile: ${ARG_TARGET} is not a target")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "autograph_transpile: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()

  if(TARGET agc)
    set(agc_command "$<TARGET_FILE:agc>")
    set(agc_depends agc)
  else()
    find_program(AGC_EXECUTABLE agc DOC "The autograph-cpp transpiler")
    if(NOT AGC_EXECUTABLE)
      message(FATAL_ERROR "autograph_transpile: agc not found; set AGC_EXECUTABLE")
    endif()
    set(agc_command "${AGC_EXECUTABLE}")
    set(agc_depends "${AGC_EXECUTABLE}")
  endif()

  # The target's flags, as the compiler would see them (transitively).
  set(t ${ARG_TARGET})
  set(std "$<TARGET_PROPERTY:${t},CXX_STANDARD>")
  set(includes "$<TARGET_PROPERTY:${t},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${t},COMPILE_DEFINITIONS>")
  set(flags
      "-std=c++$<IF:$<BOOL:${std}>,${std},20>"
      "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>"
      "$<$<BOOL:${defines}>:-D$<JOIN:${defines},$<SEMICOLON>-D>>")

  # A depfile needs a generator that reads one and a compiler that writes one.
  set(use_depfile FALSE)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set(use_depfile TRUE)
  endif()

  get_target_property(target_binary_dir ${t} BINARY_DIR)
  get_target_property(target_source_dir ${t} SOURCE_DIR)
  set(generated_files)
  foreach(src IN LISTS ARG_SOURCES)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY "${target_source_dir}" NORMALIZE
               OUTPUT_VARIABLE src_abs)
    # Mirror the source's place under the target's source dir (or its name).
    cmake_path(IS_PREFIX target_source_dir "${src_abs}" NORMALIZE under_source_dir)
    if(under_source_dir)
      cmake_path(RELATIVE_PATH src_abs BASE_DIRECTORY "${target_source_dir}"
                 OUTPUT_VARIABLE rel)
    else()
      cmake_path(GET src_abs FILENAME rel)
    endif()
    cmake_path(GET rel PARENT_PATH rel_dir)
    cmake_path(GET src_abs STEM LAST_ONLY stem)
    cmake_path(GET src_abs PARENT_PATH src_dir)
    set(out_dir "${target_binary_dir}/agc/${t}")
    if(rel_dir)
      string(APPEND out_dir "/${rel_dir}")
    endif()
    set(out "${out_dir}/${stem}.ag.cpp")

    set(depfile_args)
    set(depfile_command)
    if(use_depfile)
      set(depfile "${out}.d")
      set(depfile_args DEPFILE "${depfile}")
      set(depfile_command
          COMMAND "${CMAKE_CXX_COMPILER}" ${flags} -MM -MT "${out}" -MF "${depfile}" "${src_abs}")
    endif()

    add_custom_command(
      OUTPUT "${out}"
      COMMAND ${agc_command} transpile "${src_abs}" -o "${out_dir}" -- ${flags}
      ${depfile_command}
      DEPENDS "${src_abs}" ${agc_depends}
      ${depfile_args}
      COMMENT "agc: transpiling ${rel}"
      COMMAND_EXPAND_LISTS VERBATIM)

    target_sources(${t} PRIVATE "${out}")
    set_source_files_properties("${out}" TARGET_DIRECTORY ${t}
                                PROPERTIES GENERATED TRUE INCLUDE_DIRECTORIES "${src_dir}")
    set_source_files_properties("${src_abs}" TARGET_DIRECTORY ${t}
                                PROPERTIES HEADER_FILE_ONLY TRUE)
    list(APPEND generated_files "${out}")
  endforeach()

  if(ARG_OUTPUT_VARIABLE)
    set(${ARG_OUTPUT_VARIABLE} "${generated_files}" PARENT_SCOPE)
  endif()
endfunction()
