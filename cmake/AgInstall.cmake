# Install and package (docs/architecture.md, "Build integration"): `cmake --install build --prefix <dir>`
# installs
#   bin/agc                                    (when AG_BUILD_TRANSPILER)
#   bin/ag-onnx, lib/libag_onnx.a               (when AG_BUILD_ONNX)
#   lib/libag_distribute.a                      (when MPI was found)
#   include/ag/*.h, include/ag/ops.def (the op table ag/ops.h reads)
#   lib/libag_runtime.a
#   lib/cmake/autograph_cpp/                   autograph_cppConfig.cmake, its
#       version file, the exported targets and the CMake modules
# so that a separate project can write
#   find_package(autograph_cpp 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE autograph_cpp::runtime)
#   autograph_transpile(TARGET app SOURCES model.cpp)
# Exported targets: autograph_cpp::runtime (the static runtime with its usage
# requirements: C++20, the headers, Eigen, OpenBLAS, threads) and the imported
# executable autograph_cpp::agc, and autograph_cpp::ag_onnx (ag/onnx.h: ONNX
# export and import; its package config finds ONNX and Protobuf, which it
# links), and autograph_cpp::ag_distribute (ag/distribute.h on Open MPI;
# its package config finds MPI). The same names exist as aliases in this
# build, so a project that uses add_subdirectory() writes the same lines.
include_guard(GLOBAL)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(AG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/autograph_cpp"
    CACHE STRING "Where autograph_cppConfig.cmake is installed, relative to the prefix")

# The runtime: consumers compile its headers, so they need C++20 too.
target_compile_features(ag_runtime PUBLIC cxx_std_20)
set_target_properties(ag_runtime PROPERTIES EXPORT_NAME runtime)
add_library(autograph_cpp::runtime ALIAS ag_runtime)
install(TARGETS ag_runtime EXPORT autograph_cppTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/ag" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")

set(AG_PACKAGE_HAS_AGC FALSE)
if(TARGET agc)
  set(AG_PACKAGE_HAS_AGC TRUE)
  # The installed agc keeps its run path to LLVM's libraries (/usr/lib/llvm-19/lib).
  set_target_properties(agc PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
  add_executable(autograph_cpp::agc ALIAS agc)
  install(TARGETS agc EXPORT autograph_cppTargets RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

set(AG_PACKAGE_HAS_ONNX FALSE)
if(TARGET ag_onnx)
  set(AG_PACKAGE_HAS_ONNX TRUE)
  install(TARGETS ag_onnx EXPORT autograph_cppTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS ag-onnx RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

set(AG_PACKAGE_HAS_DISTRIBUTE FALSE)
if(TARGET ag_distribute)
  set(AG_PACKAGE_HAS_DISTRIBUTE TRUE)
  install(TARGETS ag_distribute EXPORT autograph_cppTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()

install(EXPORT autograph_cppTargets NAMESPACE autograph_cpp::
        DESTINATION "${AG_INSTALL_CMAKEDIR}")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/autograph_cppConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/autograph_cppConfig.cmake"
  INSTALL_DESTINATION "${AG_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR)
# 0.x: a minor version may break compatibility.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/autograph_cppConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/autograph_cppConfig.cmake"
              "${PROJECT_BINARY_DIR}/autograph_cppConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/AutographTranspile.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/AutographCheck.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/autograph_merge_depfiles.cmake"
        DESTINATION "${AG_INSTALL_CMAKEDIR}")
