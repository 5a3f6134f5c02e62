# autograph_check: lint a target's sources with `agc check` as part of its
# build (docs/architecture.md, "Build integration").
#
#   autograph_check(TARGET app)
#   autograph_check(TARGET app SARIF ${CMAKE_BINARY_DIR}/agc-check.sarif)
#
# Adds the target <t>_agc_check, which runs
#   agc check <sources> [--format=sarif -o <file>] [--werror] [--checks=<globs>] -- <flags>
# with the flags autograph_transpile uses (the target's C++ standard, include
# directories and compile definitions, through generator expressions), and
# makes <t> depend on it: building <t> (or `all`) lints first, and an
# error-level finding (agc exit code 1) or a tool failure (2) fails the build.
# Warnings are printed and do not fail it, unless WERROR. The lint re-runs
# only when a linted source, a header it includes (through a depfile, with the
# Ninja and Makefile generators) or agc changes. Run it alone with
# `cmake --build <dir> --target <t>_agc_check`.
#
# Options:
#   SOURCES <file>...    what to lint; default: the target's C++ sources at
#                        the time of the call (call it after adding them),
#                        including those given to autograph_transpile (the
#                        originals, not the generated files)
#   SARIF <file>         write the findings as SARIF 2.1.0 to <file> (for CI:
#                        github/codeql-action/upload-sarif); the file is
#                        written also when the findings fail the build
#   CHECKS <globs>       passed as --checks=<globs> (e.g. "*,-ag-some-check")
#   WERROR               warnings fail the build too
#   NO_DEPENDENCY        do not make <t> depend on the lint; only
#                        <t>_agc_check runs it
include_guard(GLOBAL)
cmake_policy(SET CMP0116 NEW)
include("${CMAKE_CURRENT_LIST_DIR}/AutographTranspile.cmake")

function(autograph_check)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "WERROR;NO_DEPENDENCY" "TARGET;SARIF;CHECKS" "SOURCES")
  if(NOT ARG_TARGET)
    message(FATAL_ERROR "autograph_check: TARGET is required")
  endif()
  if(NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "autograph_check: ${ARG_TARGET} is not a target")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "autograph_check: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(t ${ARG_TARGET})
  if(TARGET ${t}_agc_check)
    message(FATAL_ERROR "autograph_check: ${t} already has a lint target")
  endif()

  get_target_property(target_binary_dir ${t} BINARY_DIR)
  get_target_property(target_source_dir ${t} SOURCE_DIR)
  set(sources ${ARG_SOURCES})
  if(NOT sources)
    get_target_property(target_sources ${t} SOURCES)
    foreach(src IN LISTS target_sources)
      # C++ sources written by the user: no generator expressions, no output
      # of autograph_transpile.
      if(src MATCHES "\\$<" OR src MATCHES "\\.ag\\.cpp$"
         OR NOT src MATCHES "\\.(cpp|cc|cxx|c\\+\\+|C)$")
        continue()
      endif()
      list(APPEND sources "${src}")
    endforeach()
  endif()
  if(NOT sources)
    message(FATAL_ERROR "autograph_check: ${t} has no C++ sources to lint")
  endif()
  # agc runs in the top-level source directory and gets the sources relative
  # to it when they are under it, so SARIF locations are relative to the
  # repository, as code scanning wants them.
  set(abs_sources)
  set(agc_sources)
  foreach(src IN LISTS sources)
    cmake_path(ABSOLUTE_PATH src BASE_DIRECTORY "${target_source_dir}" NORMALIZE
               OUTPUT_VARIABLE src_abs)
    list(APPEND abs_sources "${src_abs}")
    cmake_path(IS_PREFIX CMAKE_SOURCE_DIR "${src_abs}" NORMALIZE under_top)
    if(under_top)
      cmake_path(RELATIVE_PATH src_abs BASE_DIRECTORY "${CMAKE_SOURCE_DIR}"
                 OUTPUT_VARIABLE src_rel)
      list(APPEND agc_sources "${src_rel}")
    else()
      list(APPEND agc_sources "${src_abs}")
    endif()
  endforeach()

  _autograph_agc_command(agc_command agc_depends autograph_check)
  _autograph_target_flags(${t} flags)
  _autograph_use_depfile(use_depfile)

  set(stamp "${target_binary_dir}/agc/${t}_agc_check.stamp")
  set(options)
  set(outputs "${stamp}")
  if(ARG_SARIF)
    cmake_path(ABSOLUTE_PATH ARG_SARIF BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE
               OUTPUT_VARIABLE sarif)
    list(APPEND options --format=sarif -o "${sarif}")
    list(APPEND outputs "${sarif}")
  endif()
  if(ARG_WERROR)
    list(APPEND options --werror)
  endif()
  if(ARG_CHECKS)
    list(APPEND options "--checks=${ARG_CHECKS}")
  endif()

  # One depfile rule per source (compiler -MM), merged into one depfile.
  set(depfile_commands)
  set(depfile_args)
  if(use_depfile)
    set(i 0)
    foreach(src IN LISTS abs_sources)
      list(APPEND depfile_commands COMMAND "${CMAKE_CXX_COMPILER}" ${flags} -MM -MT "${stamp}"
           -MF "${stamp}.${i}.d" "${src}")
      math(EXPR i "${i} + 1")
    endforeach()
    list(APPEND depfile_commands COMMAND "${CMAKE_COMMAND}" "-DPREFIX=${stamp}" "-DCOUNT=${i}"
         -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/autograph_merge_depfiles.cmake")
    set(depfile_args DEPFILE "${stamp}.d")
  endif()

  list(LENGTH abs_sources n)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${agc_command} check ${agc_sources} ${options} -- ${flags}
    ${depfile_commands}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS ${abs_sources} ${agc_depends}
    ${depfile_args}
    WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}"
    COMMENT "agc: checking ${n} source(s) of ${t}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${t}_agc_check DEPENDS ${outputs})
  if(NOT ARG_NO_DEPENDENCY)
    add_dependencies(${t} ${t}_agc_check)
  endif()
endfunction()
