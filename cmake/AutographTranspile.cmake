# autograph_transpile: run agc on some sources of a target as a build step and
# compile the generated files in their place (docs/architecture.md, "Build integration").
#
#   add_executable(app main.cpp model.cpp)
#   target_link_libraries(app PRIVATE autograph_cpp::runtime)
#   autograph_transpile(TARGET app SOURCES model.cpp)
#
# For each source, agc writes <binary dir>/agc/<target>/<path>/<name>.ag.cpp
# with the target's C++ standard, include directories and compile definitions
# (read through generator expressions, so usage requirements of linked
# libraries count). The original stays in the target as HEADER_FILE_ONLY
# (visible in IDEs, not compiled); the generated file is compiled with the
# original's directory on its include path, so `#include "local.h"` keeps
# working.
#
# Dependencies: the generated file depends on its source and on agc. With the
# Ninja and Makefile generators it also depends, through a depfile written by
# the C++ compiler's -MM, on every non-system header the source includes:
# touching one of them re-runs agc for that source only, and touching anything
# else re-runs no agc (tests/cmake/transpile_deps_test.sh checks both).
#
# Options:
#   OUTPUT_VARIABLE <var>   sets <var> to the list of generated files
#
# agc: the `agc` target when it exists in this build (add_subdirectory), else
# AGC_EXECUTABLE (set by find_package(autograph_cpp), or found on PATH).
#
# This module also provides autograph_check() (AutographCheck.cmake).
include_guard(GLOBAL)
# Depfile paths are rewritten for Ninja (policy CMP0116, CMake 3.20).
cmake_policy(SET CMP0116 NEW)

# Sets <command_var> to the agc command and <depends_var> to what a custom
# command running it must depend on.
function(_autograph_agc_command command_var depends_var caller)
  if(TARGET agc)
    set(${command_var} "$<TARGET_FILE:agc>" PARENT_SCOPE)
    set(${depends_var} agc PARENT_SCOPE)
    return()
  endif()
  if(NOT AGC_EXECUTABLE AND TARGET autograph_cpp::agc)
    set(${command_var} "$<TARGET_FILE:autograph_cpp::agc>" PARENT_SCOPE)
    set(${depends_var} "$<TARGET_FILE:autograph_cpp::agc>" PARENT_SCOPE)
    return()
  endif()
  find_program(AGC_EXECUTABLE agc DOC "The autograph-cpp transpiler")
  if(NOT AGC_EXECUTABLE)
    message(FATAL_ERROR "${caller}: agc not found; set AGC_EXECUTABLE or use "
                        "find_package(autograph_cpp)")
  endif()
  set(${command_var} "${AGC_EXECUTABLE}" PARENT_SCOPE)
  set(${depends_var} "${AGC_EXECUTABLE}" PARENT_SCOPE)
endfunction()

# Sets <flags_var> to the compiler flags agc needs for sources of <target>:
# its C++ standard (20 when unset), include directories and definitions.
function(_autograph_target_flags target flags_var)
  set(std "$<TARGET_PROPERTY:${target},CXX_STANDARD>")
  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(defines "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(${flags_var}
      "-std=c++$<IF:$<BOOL:${std}>,${std},20>"
      "$<$<BOOL:${includes}>:-I$<JOIN:${includes},$<SEMICOLON>-I>>"
      "$<$<BOOL:${defines}>:-D$<JOIN:${defines},$<SEMICOLON>-D>>"
      PARENT_SCOPE)
endfunction()

# A depfile needs a generator that reads one and a compiler that writes one.
function(_autograph_use_depfile out_var)
  if(CMAKE_GENERATOR MATCHES "Ninja|Makefiles" AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    set(${out_var} TRUE PARENT_SCOPE)
  else()
    set(${out_var} FALSE PARENT_SCOPE)
  endif()
endfunction()

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

  set(t ${ARG_TARGET})
  _autograph_agc_command(agc_command agc_depends autograph_transpile)
  _autograph_target_flags(${t} flags)
  _autograph_use_depfile(use_depfile)

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

include("${CMAKE_CURRENT_LIST_DIR}/AutographCheck.cmake")
