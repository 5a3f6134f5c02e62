// The diagnostic consumer of `agc check`: it sits between the checks and the
// driver's printer while the checks run. A finding (a diagnostic whose
// format is "%0 [ag-name]", see AgCheck::diag) is dropped when NOLINT
// suppresses it, when it lies in an ag::host_function lambda, or when it
// repeats one already seen; otherwise it is promoted to an error when
// WarningsAsErrors names its check, collected as a Finding (with its notes
// and fix-its) and, with printText, forwarded to the printer. Notes follow
// the fate of their finding; other diagnostics pass through.
#pragma once

#include "checks/CheckOutput.h"
#include "checks/ConvertedScope.h"
#include "checks/Glob.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/LangOptions.h"

#include <set>
#include <string>
#include <vector>

namespace agc {

class DiagnosticCollector : public clang::DiagnosticConsumer {
 public:
  DiagnosticCollector(clang::DiagnosticConsumer& next, const ConvertedScope& scope,
                      const clang::LangOptions& lang, const GlobList& warningsAsErrors,
                      bool printText, std::vector<Finding>& findings)
      : next_(next),
        scope_(scope),
        lang_(lang),
        warningsAsErrors_(warningsAsErrors),
        printText_(printText),
        findings_(findings) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override;

  unsigned errors = 0;

 private:
  enum State { Other, InFinding, Dropped };

  void forward(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info);
  void addNote(const clang::Diagnostic& info);
  void addFixes(const clang::Diagnostic& info);

  clang::DiagnosticConsumer& next_;
  const ConvertedScope& scope_;
  const clang::LangOptions& lang_;
  const GlobList& warningsAsErrors_;
  bool printText_;
  std::vector<Finding>& findings_;
  State state_ = Other;
  std::set<std::string> seen_;
};

}  // namespace agc
