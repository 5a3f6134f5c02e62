# The API reference: a `docs` target that runs Doxygen over the public
# headers include/ag/*.h (include/ag/detail/ left out), with docs/api.md as
# its front page, into <build>/docs/api/html. Not part of `all`:
#
#   cmake --build build --target docs
#
# Any Doxygen warning fails the target (docs/Doxyfile.in: WARN_AS_ERROR).
# The headers document their API in plain // comments; docs/doxygen_filter.py
# (run with Python 3 when CMake finds it) turns them into Doxygen comments.
# Without Doxygen the target exists and fails with a message saying so
# (tools/bootstrap.sh installs it). Used through add_subdirectory(), the
# target is named autograph_cpp_docs, so that it does not take the name
# `docs` from the parent project.
include_guard(GLOBAL)

if(PROJECT_IS_TOP_LEVEL)
  set(_ag_docs_target docs)
else()
  set(_ag_docs_target autograph_cpp_docs)
endif()

find_package(Doxygen 1.9 QUIET)
if(NOT DOXYGEN_FOUND)
  add_custom_target(${_ag_docs_target}
    COMMAND "${CMAKE_COMMAND}" -E echo
            "${_ag_docs_target}: Doxygen 1.9 or later was not found; install it (apt-get install doxygen) and configure again"
    COMMAND "${CMAKE_COMMAND}" -E false
    VERBATIM)
  return()
endif()

set(AG_DOXYGEN_SOURCE_DIR "${PROJECT_SOURCE_DIR}")
set(AG_DOXYGEN_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs/api")
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  set(AG_DOXYGEN_FILTER_PATTERNS
      "\"*.h=${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/doxygen_filter.py\"")
else()
  # Without the filter the reference lists the declarations without their comments.
  message(STATUS "${_ag_docs_target}: no Python 3; the API reference will not show the headers' comments")
  set(AG_DOXYGEN_FILTER_PATTERNS "")
endif()
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${PROJECT_BINARY_DIR}/docs/Doxyfile" @ONLY)

file(GLOB _ag_public_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/include/ag/*.h")
add_custom_target(${_ag_docs_target}
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${AG_DOXYGEN_OUTPUT_DIR}"
  COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  COMMAND "${CMAKE_COMMAND}" -E echo "API reference: ${AG_DOXYGEN_OUTPUT_DIR}/html/index.html"
  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
  DEPENDS "${PROJECT_BINARY_DIR}/docs/Doxyfile" "${PROJECT_SOURCE_DIR}/docs/api.md"
          "${PROJECT_SOURCE_DIR}/docs/doxygen_filter.py" ${_ag_public_headers}
  COMMENT "Doxygen: the API reference of include/ag"
  VERBATIM)
unset(_ag_public_headers)
unset(_ag_docs_target)
