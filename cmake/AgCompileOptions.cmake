# Warning flags, sanitizers and -march=native for our own targets.
# Third-party headers (LLVM, Clang, Eigen) are included as SYSTEM, so the
# warnings apply to our code only.
add_library(ag_compile_options INTERFACE)
target_compile_options(ag_compile_options INTERFACE -Wall -Wextra)
if(AG_NATIVE)
  target_compile_options(ag_compile_options INTERFACE -march=native)
endif()
if(AG_SANITIZE)
  target_compile_options(ag_compile_options INTERFACE -fsanitize=${AG_SANITIZE} -fno-omit-frame-pointer
                                                      -fno-sanitize-recover=all)
  target_link_options(ag_compile_options INTERFACE -fsanitize=${AG_SANITIZE})
endif()

# Test programs are compiled without optimisation: the code they test
# (ag_runtime, ag_transpiler, ag_onnx) keeps the build's flags, the tests run
# in seconds either way, and -O0 halves the time to compile them.
add_library(ag_test_options INTERFACE)
target_compile_options(ag_test_options INTERFACE -O0)
