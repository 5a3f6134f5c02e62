// The base of every `agc check` check, modelled on clang-tidy's ClangTidyCheck:
// a check registers AST matchers, and its `check` callback reports findings
// through `diag`, which appends the check name in brackets.
//
// Matching runs only over the code `agc` converts: the marked functions and
// the functions they reach (see CheckScope). The framework hands every node of
// that code (statements, the declarations in them, the function and its
// parameters) to MatchFinder::match, in source order, with the AST's traversal
// scope set to the top-level declarations holding them (so hasAncestor works).
// A check never pays for Eigen's headers, and never sees code outside
// converted functions or inside lambdas given to ag::host_function. Matchers
// that need descendants (has, hasDescendant) still work; a check is also
// called on the nested nodes themselves. onStartOfTranslationUnit and
// onEndOfTranslationUnit are called around the matching.
//
// Adding a check: `tools/new-check.sh ag-foo-bar "summary"` writes what a
// check costs (see transpiler/README.md): checks/FooBarCheck.h and .cpp
// (`class FooBarCheck : public AgCheck` with `using AgCheck::AgCheck;`; in
// registerMatchers, `finder.addMatcher(matcher, this)`: an AgCheck is a
// MatchCallback whose run() calls check()), one AG_CHECK line in
// checks/Checks.def (CMake reads it for the registry's includes and globs the
// sources), tests/checks/ag-foo-bar/{positive,negative}.cpp with .expected
// files (tools/update-check-goldens.sh writes them), and a section in
// docs/checks.md.
//
// What the framework does around a check: it runs only checks enabled by
// --checks and .agc.yaml; it drops findings suppressed by // NOLINT(ag-name)
// or NOLINTNEXTLINE, findings inside lambdas given to ag::host_function (they
// run at execution time), and exact duplicates; --werror and WarningsAsErrors
// turn warnings into errors. Notes follow the fate of their finding.
#pragma once

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace agc {

// What the checks may ask about the translation unit.
class CheckScope {
 public:
  virtual ~CheckScope() = default;
  // The functions `agc transpile` would convert: marked free functions,
  // methods and lambda call operators of the main file, and what they call
  // from it (transitively), in source order.
  virtual llvm::ArrayRef<const clang::FunctionDecl*> convertedFunctions() const = 0;
  // Whether `function` (or its template pattern) is one of them.
  virtual bool isConverted(const clang::FunctionDecl* function) const = 0;
  // The converted function whose body holds `node`, or null. For code in a
  // lambda that is not itself converted, the enclosing converted function.
  virtual const clang::FunctionDecl* enclosingConverted(const clang::Stmt& node) const = 0;
  // Whether `node` lies in a staged part of staged control flow (the rule of
  // analysis/Staging.h: the branches of an if, the body of a while, do-while,
  // for or range-for, the increment of a for): code that runs once per trace
  // but stands for every branch or iteration.
  virtual bool isInStagedControlFlow(const clang::Stmt& node) const = 0;
  // Whether `node` lies in a lambda given to ag::host_function, which runs at
  // execution time, on every call (its findings are dropped anyway).
  virtual bool isInHostFunction(const clang::Stmt& /*node*/) const { return false; }
};

class AgCheck : public clang::ast_matchers::MatchFinder::MatchCallback {
 public:
  AgCheck(llvm::StringRef name, clang::DiagnosticsEngine& engine, const CheckScope& scope)
      : name_(name), engine_(engine), scope_(scope) {}
  virtual ~AgCheck() = default;

  virtual void registerMatchers(clang::ast_matchers::MatchFinder& finder) = 0;
  virtual void check(const clang::ast_matchers::MatchFinder::MatchResult& result) = 0;

  llvm::StringRef name() const { return name_; }

  // MatchCallback: matches registered with `this` go to check().
  void run(const clang::ast_matchers::MatchFinder::MatchResult& result) final { check(result); }
  llvm::StringRef getID() const override { return name_; }

 protected:
  // A finding: "text [name]". Lowercase text, clang style; `level` is Warning
  // or Error (--werror turns warnings into errors later, in the consumer).
  clang::DiagnosticBuilder diag(clang::SourceLocation loc, llvm::StringRef text,
                                clang::DiagnosticIDs::Level level = clang::DiagnosticIDs::Warning);
  // A note attached to the preceding finding.
  clang::DiagnosticBuilder note(clang::SourceLocation loc, llvm::StringRef text);

  const CheckScope& scope() const { return scope_; }

 private:
  std::string name_;
  clang::DiagnosticsEngine& engine_;
  const CheckScope& scope_;
};

}  // namespace agc
