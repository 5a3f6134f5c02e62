// ag-unconverted-call. agc converts the marked functions of a file and the
// functions of the same file that they call; a function defined elsewhere (a
// header, another .cpp) keeps its C++ `if (tensor)`, which fails on a traced
// tensor. Reported once per such function, at its first call, with a note at
// its definition.
#include "checks/UnconvertedCallCheck.h"

#include "analysis/ConvertedFunctions.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

void UnconvertedCallCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(callExpr().bind("call"), this);
}

void UnconvertedCallCheck::check(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<CallExpr>("call");
  if (!call || !scope().enclosingConverted(*call)) return;
  const FunctionDecl* callee = call->getDirectCallee();
  const FunctionDecl* definition = nullptr;
  if (!callee ||
      classifyCallee(callee, result.Context->getSourceManager(), definition) !=
          CalleeKind::Unconvertible ||
      !reported_.insert({definition, 0}).second)
    return;
  diag(call->getBeginLoc(), "call to '" + definition->getNameAsString() +
                                "', which has tensor control flow that agc cannot convert "
                                "because it is defined in another file")
      << call->getSourceRange();
  note(definition->getLocation(), "mark it AG_FUNCTION, or define it in the file that calls it");
}

}  // namespace agc
