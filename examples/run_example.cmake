# Runs an example and fails unless it exits 0 and its output matches EXPECT.
#   cmake -DEXE=<program> -DEXPECT=<regex> -P run_example.cmake
# (PASS_REGULAR_EXPRESSION alone would ignore the exit code.)
execute_process(COMMAND "${EXE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${EXE}: output does not match '${EXPECT}'")
endif()
