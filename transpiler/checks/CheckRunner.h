// Runs the registered checks over one translation unit: the enabled checks
// (--checks, .agc.yaml: CheckConfig, Glob), matched only over the code agc
// converts (ConvertedScope), with the findings filtered, promoted, printed
// and collected (DiagnosticCollector).
#pragma once

#include "checks/CheckOutput.h"

#include "clang/AST/ASTContext.h"

#include <vector>

namespace agc {

struct CheckRunResult {
  unsigned errors = 0;       // findings at error level, after promotion
  bool toolFailure = false;  // e.g. a malformed .agc.yaml (reported on stderr)
};

// Checks the main file of `ast`; appends what it finds to `findings`.
CheckRunResult runChecks(clang::ASTContext& ast, const CheckOptions& options,
                         std::vector<Finding>& findings);

}  // namespace agc
