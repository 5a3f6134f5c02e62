#include "checks/AgCheck.h"

namespace agc {

using namespace clang;

DiagnosticBuilder AgCheck::diag(SourceLocation loc, llvm::StringRef text,
                                DiagnosticIDs::Level level) {
  // One custom ID per check and level: the consumer recognises findings, and
  // their check, by the format "%0 [ag-name]".
  unsigned id = engine_.getDiagnosticIDs()->getCustomDiagID(level, "%0 [" + name_ + "]");
  return engine_.Report(loc, id) << text;
}

DiagnosticBuilder AgCheck::note(SourceLocation loc, llvm::StringRef text) {
  unsigned id = engine_.getDiagnosticIDs()->getCustomDiagID(DiagnosticIDs::Note, "%0");
  return engine_.Report(loc, id) << text;
}

}  // namespace agc
