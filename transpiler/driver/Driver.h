// The driver: parses each file with Clang (flags from compile_commands.json or
// after `--`), runs the conversion, and sorts failures into exit codes.
// This header is Clang-free so that tools/agc/main.cpp stays cheap to compile.
#pragma once

#include "checks/CheckOutput.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
}

namespace agc {

enum ExitCode : int {
  kExitOk = 0,
  kExitUserError = 1,    // the user's code has errors (C++ or conversion)
  kExitToolFailure = 2,  // bad arguments, missing files, unusable flags
};

struct DriverOptions {
  std::vector<std::string> files;
  std::string buildDir;                    // -p: holds compile_commands.json
  std::vector<std::string> compilerFlags;  // after `--`
  bool haveCompilerFlags = false;
  std::string resourceDir;  // empty: AGC_RESOURCE_DIR, else the configured one
  bool lineDirectives = true;
  CheckOptions checks;  // `agc check`, and the checks `agc transpile` runs first
};

struct FileOutput {
  std::string file;  // as given on the command line
  std::string text;  // converted text (the input bytes when nothing is marked)
  std::map<std::string, std::string> functions;  // generated code per function
  bool changed = false;
};

struct DriverResult {
  int exitCode = kExitOk;
  std::vector<FileOutput> outputs;  // complete only when exitCode is kExitOk
  std::vector<Finding> findings;    // what the checks found, in order
};

// Called once per parsed file without C++ errors; fills `output` and returns
// false after reporting errors in the user's code through the AST's engine.
// Reusable by other commands (e.g. `agc check`).
using FileProcessor = std::function<bool(clang::ASTContext& ast, FileOutput& output)>;

// Parses each file and runs `process` on it. Diagnostics go to stderr as
// Clang prints them; the exit code sorts them (see ExitCode).
DriverResult runOnFiles(const DriverOptions& options, const FileProcessor& process);

// runOnFiles with the transpiler. The checks run first; findings at error
// level make the exit code kExitUserError.
DriverResult runTranspiler(const DriverOptions& options);

// runOnFiles with the checks and a dry run of the conversion (`agc check`):
// exit code 0 when no finding is at error level, 1 when one is, the code has
// C++ errors or `agc transpile` would reject it (its errors printed as Clang
// does), 2 when the tool fails (flags, files, a malformed .agc.yaml).
DriverResult runChecker(const DriverOptions& options);

// The resource directory used when none is given.
std::string defaultResourceDir();

// `code` formatted with the .clang-format style found from `fileName`, or
// unchanged when formatting fails.
std::string formatCode(const std::string& code, const std::string& fileName);

}  // namespace agc
