// agc: the autograph-cpp transpiler's command line (see transpiler/README.md).
//
// The only translation unit that includes CLI11. Exceptions stay here: the
// driver calls into LLVM, which is built without them.
#include "driver/Driver.h"

#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

namespace fs = std::filesystem;

namespace {

constexpr const char* kExamples = R"(Examples:
  agc transpile model.cpp -o build/gen -- -std=c++20 -Iinclude
      writes build/gen/model.ag.cpp
  agc transpile model.cpp -i -p build
      rewrites model.cpp in place, with the flags from build/compile_commands.json
  agc show model.cpp --function train -- -std=c++20 -Iinclude
      prints the code generated for train(), formatted
  agc check model.cpp --format=sarif -o agc.sarif -p build
      reports code whose behaviour changes under tracing (agc check --list-checks)

Exit codes: 0 success, 1 errors in the user's code (for check: findings at
error level), 2 tool failure.
Clang's builtin headers: --resource-dir, else $AGC_RESOURCE_DIR, else )";

// Writes `text` to `target` through a temporary file and a rename, so readers
// never see a partial file.
bool writeAtomically(const fs::path& target, const std::string& text) {
  fs::path temporary = target;
  temporary += "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::cerr << "agc: error: cannot write '" << temporary.string() << "'\n";
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return false;
    }
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    std::cerr << "agc: error: cannot replace '" << target.string() << "': " << error.message()
              << "\n";
    fs::remove(temporary, error);
    return false;
  }
  return true;
}

// `model.cpp` -> `model.ag.cpp`.
std::string defaultOutputName(const std::string& file) {
  fs::path path(file);
  return path.stem().string() + ".ag" + path.extension().string();
}

struct CommonFlags {
  std::string buildDir;
  std::string resourceDir;
};

void addCommonFlags(CLI::App& command, CommonFlags& flags) {
  command.add_option("-p,--build-dir", flags.buildDir, "Directory holding compile_commands.json");
  command.add_option("--resource-dir", flags.resourceDir,
                     "Clang resource directory (builtin headers)");
}

agc::DriverOptions driverOptions(const std::vector<std::string>& files, const CommonFlags& flags,
                                 const std::vector<std::string>& compilerFlags,
                                 bool haveCompilerFlags) {
  agc::DriverOptions options;
  options.files = files;
  options.buildDir = flags.buildDir;
  options.resourceDir = flags.resourceDir;
  options.compilerFlags = compilerFlags;
  options.haveCompilerFlags = haveCompilerFlags;
  return options;
}

int transpile(const agc::DriverOptions& options, const std::string& outputDir, bool inPlace,
              const std::string& outputName) {
  agc::DriverResult result = agc::runTranspiler(options);
  if (result.exitCode != agc::kExitOk) return result.exitCode;
  if (!outputDir.empty()) {
    std::error_code error;
    fs::create_directories(outputDir, error);
    if (error) {
      std::cerr << "agc: error: cannot create '" << outputDir << "': " << error.message() << "\n";
      return agc::kExitToolFailure;
    }
  }
  for (const agc::FileOutput& output : result.outputs) {
    if (inPlace) {
      if (output.changed && !writeAtomically(output.file, output.text))
        return agc::kExitToolFailure;
      continue;
    }
    std::string name = outputName.empty() ? defaultOutputName(output.file) : outputName;
    if (!writeAtomically(fs::path(outputDir) / name, output.text)) return agc::kExitToolFailure;
  }
  return agc::kExitOk;
}

int check(const agc::DriverOptions& options, const std::string& format,
          const std::string& outputFile) {
  agc::DriverResult result = agc::runChecker(options);
  if (format == "text" || result.exitCode == agc::kExitToolFailure) return result.exitCode;
  std::string text = format == "json" ? agc::findingsToJson(result.findings)
                                      : agc::findingsToSarif(result.findings, AGC_VERSION);
  if (outputFile.empty()) {
    std::cout << text << std::flush;
  } else {
    fs::path target(outputFile);
    if (target.has_parent_path()) {
      std::error_code error;
      fs::create_directories(target.parent_path(), error);
    }
    if (!writeAtomically(target, text)) return agc::kExitToolFailure;
  }
  return result.exitCode;
}

void listChecks() {
  std::vector<agc::CheckInfo> checks = agc::registeredChecks();
  std::size_t width = 0;
  for (const agc::CheckInfo& info : checks) width = std::max(width, info.name.size());
  for (const agc::CheckInfo& info : checks)
    std::cout << info.name << std::string(width + 2 - info.name.size(), ' ') << info.summary
              << "\n";
}

int show(const agc::DriverOptions& options, const std::string& function) {
  agc::DriverResult result = agc::runTranspiler(options);
  if (result.exitCode != agc::kExitOk) return result.exitCode;
  const agc::FileOutput& output = result.outputs.front();
  std::string code = output.text;
  if (!function.empty()) {
    auto found = output.functions.find(function);
    if (found == output.functions.end()) {
      std::cerr << "agc: error: no converted function named '" << function << "' in '"
                << output.file << "'\n";
      return agc::kExitToolFailure;
    }
    code = found->second + "\n";
  }
  std::cout << agc::formatCode(code, output.file);
  return agc::kExitOk;
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// Clang's Sema leaks the deduction-failure details of some template
// instantiations (clang::MakeDeductionFailureInfo puts a SmallVector in a bump
// allocator that never destroys it). LLVM is built without frame pointers, so
// the fast unwinder stops at the vector's growth: that frame is suppressed,
// which keeps Clang's own leak out of our ASan build's reports.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:clang::MakeDeductionFailureInfo\n"
         "leak:llvm::SmallVectorBase<unsigned int>::grow_pod\n";
}
// Quiet about it: agc's stderr is its diagnostics, compared by the tests.
extern "C" const char* __lsan_default_options() {
  return "print_suppressions=0";
}
#endif

int main(int argc, char** argv) {
  // Everything after `--` is compiler flags, not ours.
  std::vector<std::string> compilerFlags;
  bool haveCompilerFlags = false;
  int ownArgc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      haveCompilerFlags = true;
      compilerFlags.assign(argv + i + 1, argv + argc);
      ownArgc = i;
      break;
    }
  }

  CLI::App app{"agc: stages the tensor control flow of AG_FUNCTION code for autograph-cpp"};
  app.set_version_flag("--version",
                       std::string("agc ") + AGC_VERSION + " (LLVM " + AG_LLVM_VERSION + ")");
  app.footer(std::string(kExamples) + agc::defaultResourceDir());
  app.require_subcommand(1);

  CommonFlags transpileFlags;
  std::vector<std::string> transpileFiles;
  std::string outputDir, outputName;
  bool inPlace = false;
  CLI::App* transpileCommand =
      app.add_subcommand("transpile", "Convert files, writing NAME.ag.cpp or in place");
  transpileCommand->add_option("files", transpileFiles, "C++ files to convert")
      ->required()
      ->check(CLI::ExistingFile);
  auto* outputDirOption =
      transpileCommand->add_option("-o,--output-dir", outputDir, "Directory for the output");
  auto* inPlaceFlag = transpileCommand->add_flag("-i,--in-place", inPlace,
                                                 "Rewrite the files in place (atomically)");
  outputDirOption->excludes(inPlaceFlag);
  transpileCommand
      ->add_option("--output", outputName, "Output file name (one input only; default NAME.ag.cpp)")
      ->excludes(inPlaceFlag);
  addCommonFlags(*transpileCommand, transpileFlags);

  std::string transpileChecks;
  transpileCommand->add_option("--checks", transpileChecks,
                               "Checks to run first, as clang-tidy globs (--checks=-* for none)");

  CommonFlags checkFlags;
  std::vector<std::string> checkFiles;
  std::string checkFormat = "text", checkOutput, checkGlobs;
  bool werror = false, listChecksFlag = false;
  CLI::App* checkCommand = app.add_subcommand(
      "check", "Report code whose behaviour changes under tracing (lint), as Clang does");
  checkCommand->add_option("files", checkFiles, "C++ files to check")->check(CLI::ExistingFile);
  checkCommand
      ->add_option("--format", checkFormat,
                   "text (stderr, like clang), json or sarif (SARIF 2.1.0; stdout or --output)")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  checkCommand->add_option("-o,--output", checkOutput, "Write the json or sarif output to FILE");
  checkCommand->add_flag("--werror", werror, "Make every finding an error (exit code 1)");
  checkCommand->add_option("--checks", checkGlobs,
                           "Checks to enable or disable, clang-tidy globs applied after the "
                           ".agc.yaml ones: --checks=-*,ag-side-effect");
  checkCommand->add_flag("--list-checks", listChecksFlag, "Print the checks and exit");
  addCommonFlags(*checkCommand, checkFlags);

  CommonFlags showFlags;
  std::string showFile, functionName;
  CLI::App* showCommand = app.add_subcommand("show", "Print the generated code, formatted");
  showCommand->add_option("file", showFile, "C++ file to convert")
      ->required()
      ->check(CLI::ExistingFile);
  showCommand->add_option("--function", functionName,
                          "Print only the code generated for this function");
  addCommonFlags(*showCommand, showFlags);

  try {
    app.parse(ownArgc, argv);
    if (transpileCommand->parsed()) {
      if (outputDir.empty() && !inPlace) throw CLI::RequiredError("one of -o DIR or -i");
      if (!outputName.empty() && transpileFiles.size() != 1)
        throw CLI::ValidationError("--output", "needs exactly one input file");
    }
    if (checkCommand->parsed() && !listChecksFlag) {
      if (checkFiles.empty()) throw CLI::RequiredError("files");
      if (!checkOutput.empty() && checkFormat == "text")
        throw CLI::ValidationError("--output", "needs --format=json or --format=sarif");
    }
  } catch (const CLI::Error& error) {
    int code = app.exit(error);
    return code == 0 ? agc::kExitOk : agc::kExitToolFailure;
  }

  if (transpileCommand->parsed()) {
    agc::DriverOptions options =
        driverOptions(transpileFiles, transpileFlags, compilerFlags, haveCompilerFlags);
    options.checks.checks = transpileChecks;
    return transpile(options, outputDir, inPlace, outputName);
  }
  if (checkCommand->parsed()) {
    if (listChecksFlag) {
      listChecks();
      return agc::kExitOk;
    }
    agc::DriverOptions options =
        driverOptions(checkFiles, checkFlags, compilerFlags, haveCompilerFlags);
    options.checks.checks = checkGlobs;
    options.checks.werror = werror;
    options.checks.printText = checkFormat == "text";
    return check(options, checkFormat, checkOutput);
  }
  agc::DriverOptions options =
      driverOptions({showFile}, showFlags, compilerFlags, haveCompilerFlags);
  options.lineDirectives = false;  // for reading, not for compiling
  return show(options, functionName);
}
