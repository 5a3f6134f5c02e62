#include "checks/CheckRunner.h"

#include "analysis/ConvertedFunctions.h"
#include "checks/CheckConfig.h"
#include "checks/CheckRegistry.h"
#include "checks/ConvertedScope.h"
#include "checks/DiagnosticCollector.h"
#include "checks/Glob.h"

#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace agc {

using namespace clang;

CheckRunResult runChecks(ASTContext& ast, const CheckOptions& options,
                         std::vector<Finding>& findings) {
  CheckRunResult result;
  if (!options.enabled) return result;
  const SourceManager& sm = ast.getSourceManager();

  // The configuration: "ag-*", then .agc.yaml, then --checks.
  std::string checks = "ag-*", warningsAsErrors = options.werror ? "*" : "";
  if (OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID())) {
    llvm::SmallString<256> path(main->getName());
    sm.getFileManager().makeAbsolutePath(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    const CheckConfig& config = checkConfigFor(llvm::sys::path::parent_path(path));
    if (!config.error.empty()) {
      llvm::errs() << "agc: error: " << config.error << "\n";
      result.toolFailure = true;
      return result;
    }
    if (config.checks) checks += "," + *config.checks;
    if (config.warningsAsErrors && !options.werror) warningsAsErrors = *config.warningsAsErrors;
  }
  checks += "," + options.checks;
  GlobList enabled(checks), promoted(warningsAsErrors);

  ConvertedFunctions found = findConvertedFunctions(ast);
  if (found.units.empty()) return result;
  ConvertedScope scope(ast, found);

  DiagnosticsEngine& engine = ast.getDiagnostics();
  std::vector<std::unique_ptr<AgCheck>> active;
  clang::ast_matchers::MatchFinder finder;
  for (const CheckFactory& factory : checkFactories()) {
    if (!enabled.contains(factory.name)) continue;
    active.push_back(factory.create(factory.name, engine, scope));
    active.back()->registerMatchers(finder);
  }
  if (active.empty()) return result;

  // Findings go through our consumer, then to the driver's printer.
  std::unique_ptr<DiagnosticConsumer> owner = engine.takeClient();
  DiagnosticConsumer* previous = engine.getClient();
  DiagnosticCollector consumer(*previous, scope, ast.getLangOpts(), promoted, options.printText,
                               findings);
  engine.setClient(&consumer, /*ShouldOwnClient=*/false);
  // Matching visits the converted code only, node by node, in source order
  // (MatchFinder::matchAST would walk whole declarations, and skips the body
  // of a lambda's call operator when given it as a root).
  ast.setTraversalScope(scope.roots);
  for (auto& check : active) check->onStartOfTranslationUnit();
  for (const DynTypedNode& node : scope.matchOrder) finder.match(node, ast);
  for (auto& check : active) check->onEndOfTranslationUnit();
  ast.setTraversalScope({ast.getTranslationUnitDecl()});
  engine.setClient(previous, /*ShouldOwnClient=*/false);
  if (owner) engine.setClient(owner.release(), /*ShouldOwnClient=*/true);
  result.errors = consumer.errors;
  return result;
}

}  // namespace agc
