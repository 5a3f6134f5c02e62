#include "driver/Driver.h"

#include "checks/CheckRunner.h"
#include "converters/FunctionConverter.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace agc {

using namespace clang;

namespace {

// Prints like Clang and sorts errors: those without a source location come
// from the driver or the flags (tool failure), the others from the code.
class ClassifyingPrinter : public TextDiagnosticPrinter {
 public:
  ClassifyingPrinter() : TextDiagnosticPrinter(llvm::errs(), new DiagnosticOptions()) {}

  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    TextDiagnosticPrinter::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error) return;
    // Clang's error limit stops at the user's code, not at the tool.
    if (info.getLocation().isValid() || info.getID() == diag::fatal_too_many_errors)
      codeErrors = true;
    else
      toolErrors = true;
  }

  bool codeErrors = false;
  bool toolErrors = false;
};

class ProcessingConsumer : public ASTConsumer {
 public:
  ProcessingConsumer(const FileProcessor& process, FileOutput& output, bool& processed)
      : process_(process), output_(output), processed_(processed) {}

  void HandleTranslationUnit(ASTContext& ast) override {
    if (ast.getDiagnostics().hasErrorOccurred()) return;
    processed_ = process_(ast, output_);
  }

 private:
  const FileProcessor& process_;
  FileOutput& output_;
  bool& processed_;
};

void toolError(const llvm::Twine& message) {
  llvm::errs() << "agc: error: " << message << "\n";
}

// The language standard flag of a command line as the user wrote it (the
// last -std= wins), or a phrase saying there is none.
std::string standardFlagOf(const std::vector<std::string>& args) {
  std::string flag;
  for (const std::string& arg : args) {
    llvm::StringRef text(arg);
    if (text.starts_with("-std=") || text.starts_with("--std=") || text.starts_with("/std:"))
      flag = arg;
  }
  return flag.empty() ? "no -std= flag, so the compiler's default" : "'" + flag + "'";
}

class ProcessingAction : public ASTFrontendAction {
 public:
  ProcessingAction(const FileProcessor& process, FileOutput& output, bool& processed,
                   std::string standardFlag, bool& wrongStandard)
      : process_(process),
        output_(output),
        processed_(processed),
        standardFlag_(std::move(standardFlag)),
        wrongStandard_(wrongStandard) {}

  // Code converted for C++17 or older could not compile: stop before parsing.
  bool BeginSourceFileAction(CompilerInstance& compiler) override {
    const LangOptions& language = compiler.getLangOpts();
    if (language.CPlusPlus20) return true;
    wrongStandard_ = true;
    toolError("'" + getCurrentFile() + "' is compiled as " +
              (language.CPlusPlus ? "C++17 or older" : "C") + " (" + standardFlag_ +
              "); autograph-cpp needs C++20: compile it with -std=c++20 (in CMake, "
              "target_compile_features(<target> PUBLIC cxx_std_20))");
    return false;
  }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<ProcessingConsumer>(process_, output_, processed_);
  }

 private:
  const FileProcessor& process_;
  FileOutput& output_;
  bool& processed_;
  std::string standardFlag_;
  bool& wrongStandard_;
};

std::unique_ptr<tooling::CompilationDatabase> makeDatabase(const DriverOptions& options,
                                                           const std::string& firstFile) {
  std::string error;
  if (!options.buildDir.empty()) {
    auto database = tooling::CompilationDatabase::loadFromDirectory(options.buildDir, error);
    if (!database) {
      toolError("cannot load compile_commands.json from '" + options.buildDir + "': " + error);
      return nullptr;
    }
    return tooling::inferMissingCompileCommands(std::move(database));
  }
  if (options.haveCompilerFlags)
    return std::make_unique<tooling::FixedCompilationDatabase>(".", options.compilerFlags);
  if (auto database = tooling::CompilationDatabase::autoDetectFromSource(firstFile, error))
    return database;
  return std::make_unique<tooling::FixedCompilationDatabase>(
      ".", std::vector<std::string>{"-std=c++20"});
}

std::string resourceDir(const DriverOptions& options) {
  if (!options.resourceDir.empty()) return options.resourceDir;
  if (const char* fromEnv = std::getenv("AGC_RESOURCE_DIR"); fromEnv && *fromEnv) return fromEnv;
  return defaultResourceDir();
}

std::vector<std::string> adjustedCommandLine(const tooling::CompileCommand& command,
                                             const DriverOptions& options) {
  std::vector<std::string> args = command.CommandLine;
  const std::string& file = command.Filename;
  args = tooling::getClangStripOutputAdjuster()(args, file);
  args = tooling::getClangStripDependencyFileAdjuster()(args, file);
  args = tooling::getClangSyntaxOnlyAdjuster()(args, file);
  if (!options.buildDir.empty() && options.haveCompilerFlags)
    args = tooling::getInsertArgumentAdjuster(options.compilerFlags,
                                              tooling::ArgumentInsertPosition::END)(args, file);
  bool hasResourceDir = llvm::any_of(args, [](const std::string& arg) {
    return llvm::StringRef(arg).starts_with("-resource-dir");
  });
  if (!hasResourceDir)
    args = tooling::getInsertArgumentAdjuster(("-resource-dir=" + resourceDir(options)).c_str(),
                                              tooling::ArgumentInsertPosition::BEGIN)(args, file);
  return args;
}

}  // namespace

std::string defaultResourceDir() {
  return AG_CLANG_RESOURCE_DIR;
}

DriverResult runTranspiler(const DriverOptions& options) {
  std::vector<Finding> findings;
  bool configFailed = false;
  DriverResult result = runOnFiles(options, [&](ASTContext& ast, FileOutput& output) {
    CheckRunResult checked = runChecks(ast, options.checks, findings);
    if (checked.toolFailure) {
      configFailed = true;
      return false;
    }
    std::optional<TranspileResult> converted =
        transpileMainFile(ast, output.file, options.lineDirectives);
    if (!converted || checked.errors > 0) return false;
    output.text = std::move(converted->text);
    output.functions = std::move(converted->functions);
    output.changed = converted->changed;
    return true;
  });
  if (configFailed) result.exitCode = kExitToolFailure;
  result.findings = std::move(findings);
  return result;
}

DriverResult runChecker(const DriverOptions& options) {
  std::vector<Finding> findings;
  bool configFailed = false;
  DriverResult result = runOnFiles(options, [&](ASTContext& ast, FileOutput& output) {
    CheckRunResult checked = runChecks(ast, options.checks, findings);
    configFailed |= checked.toolFailure;
    if (checked.toolFailure) return false;
    // A dry run of the conversion: what `agc transpile` would reject is an
    // error here too (reported the same way), so a lint gate never passes
    // code that the build step refuses.
    bool converts = transpileMainFile(ast, output.file, /*lineDirectives=*/false).has_value();
    return converts && checked.errors == 0;
  });
  if (configFailed) result.exitCode = kExitToolFailure;
  result.findings = std::move(findings);
  return result;
}

DriverResult runOnFiles(const DriverOptions& options, const FileProcessor& process) {
  DriverResult result;
  for (const std::string& file : options.files) {
    if (!llvm::sys::fs::is_regular_file(file)) {
      toolError("no such file: '" + file + "'");
      result.exitCode = kExitToolFailure;
    }
  }
  if (result.exitCode != kExitOk || options.files.empty()) return result;
  std::unique_ptr<tooling::CompilationDatabase> database =
      makeDatabase(options, options.files.front());
  if (!database) {
    result.exitCode = kExitToolFailure;
    return result;
  }

  bool codeErrors = false, toolErrors = false;
  for (const std::string& file : options.files) {
    llvm::SmallString<256> absolute(file);
    llvm::sys::fs::make_absolute(absolute);
    // With flags after `--`, Clang sees the file as the user spelled it.
    std::vector<tooling::CompileCommand> commands = database->getCompileCommands(
        options.buildDir.empty() ? llvm::StringRef(file) : absolute.str());
    if (commands.empty()) {
      toolError("no compile command for '" + file + "' in the compilation database");
      toolErrors = true;
      continue;
    }
    const tooling::CompileCommand& command = commands.front();
    auto fileSystem = llvm::vfs::createPhysicalFileSystem();
    fileSystem->setCurrentWorkingDirectory(command.Directory);
    llvm::IntrusiveRefCntPtr<FileManager> files(
        new FileManager(FileSystemOptions(), std::move(fileSystem)));

    FileOutput output{file, "", {}, false};
    bool processed = false, wrongStandard = false;
    ClassifyingPrinter printer;
    std::vector<std::string> commandLine = adjustedCommandLine(command, options);
    tooling::ToolInvocation invocation(
        commandLine,
        std::make_unique<ProcessingAction>(process, output, processed, standardFlagOf(commandLine),
                                           wrongStandard),
        files.get());
    invocation.setDiagnosticConsumer(&printer);
    bool ran = invocation.run();
    if (wrongStandard) {
      toolErrors = true;
      continue;
    }
    if (printer.toolErrors)
      toolError("cannot use the compile flags for '" + file + "': fix or drop the arguments above");
    toolErrors |= printer.toolErrors;
    codeErrors |= printer.codeErrors || (ran && !processed && !printer.toolErrors);
    if (!ran && !printer.codeErrors && !printer.toolErrors) {
      toolError("could not parse '" + file + "'");
      toolErrors = true;
    }
    if (processed && !printer.toolErrors) result.outputs.push_back(std::move(output));
  }
  if (toolErrors)
    result.exitCode = kExitToolFailure;
  else if (codeErrors)
    result.exitCode = kExitUserError;
  return result;
}

}  // namespace agc
