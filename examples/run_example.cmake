# Runs an example and fails unless it exits 0 and its stdout is right:
#   cmake -DEXE=<program> -DEXPECTED_FILE=<file> -P run_example.cmake
#       stdout must equal the file's contents (a unified diff shows where not);
#       with the environment variable AG_UPDATE_EXPECTED=1 the file is
#       rewritten from the output instead
#   cmake -DEXE=<program> -DEXPECT=<regex> -P run_example.cmake
#       stdout must match the regular expression
#   cmake -DEXE=<program> -DEXPECTED_REGEX_FILE=<file> -P run_example.cmake
#       all of stdout must match the regular expression in the file (for
#       output whose digits depend on the machine: oneDNN and OpenBLAS pick
#       their kernels, and with them the order of a matmul's additions, by CPU)
# -DARGS="<a> <b> ..." gives the program arguments. (PASS_REGULAR_EXPRESSION
# alone would ignore the exit code.) stderr is shown but not compared.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND "${EXE}" ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(err)
  message("stderr:\n${err}")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}")
endif()

if(DEFINED EXPECTED_FILE)
  if("$ENV{AG_UPDATE_EXPECTED}" STREQUAL "1")
    file(WRITE "${EXPECTED_FILE}" "${out}")
    message("updated ${EXPECTED_FILE}")
    return()
  endif()
  if(NOT EXISTS "${EXPECTED_FILE}")
    message(FATAL_ERROR "${EXPECTED_FILE} does not exist (create it with AG_UPDATE_EXPECTED=1)")
  endif()
  file(READ "${EXPECTED_FILE}" expected)
  if(NOT out STREQUAL expected)
    string(MAKE_C_IDENTIFIER "${EXE}" exe_id)
    set(actual_file "${CMAKE_CURRENT_BINARY_DIR}/${exe_id}.actual.txt")
    file(WRITE "${actual_file}" "${out}")
    find_program(DIFF diff)
    if(DIFF)
      execute_process(COMMAND "${DIFF}" -u "${EXPECTED_FILE}" "${actual_file}"
                      OUTPUT_VARIABLE diff_out)
      message("${diff_out}")
    endif()
    message(FATAL_ERROR "${EXE}: stdout differs from ${EXPECTED_FILE} (actual output: ${actual_file})")
  endif()
elseif(DEFINED EXPECTED_REGEX_FILE)
  file(READ "${EXPECTED_REGEX_FILE}" regex)
  if(NOT out MATCHES "^${regex}$")
    message(FATAL_ERROR "${EXE}: stdout does not match the regular expression in ${EXPECTED_REGEX_FILE}")
  endif()
elseif(DEFINED EXPECT)
  if(NOT out MATCHES "${EXPECT}")
    message(FATAL_ERROR "${EXE}: output does not match '${EXPECT}'")
  endif()
else()
  message(FATAL_ERROR "run_example.cmake: give EXPECTED_FILE or EXPECT")
endif()
