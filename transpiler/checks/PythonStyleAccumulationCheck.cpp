// ag-python-style-accumulation. A staged loop's body is traced once, whatever
// the number of iterations at run time: `results.push_back(x)` inside it runs
// once, at trace time, and stores one symbolic tensor (the TensorFlow guide's
// "accumulating values in a loop"). ag::TensorArray accumulates inside the
// graph instead.
//
// Reported: push_back, emplace_back, insert, emplace, push_front or
// emplace_front on an object of a class outside namespace ag, inside the body
// of a staged loop (analysis/Staging.h: a while, do-while or for whose
// condition is a tensor, or a range-for over a tensor), when the container is declared outside that
// loop. A container declared inside the body is scratch space for one iteration and is fine; so are
// the same calls in a plain C++ loop, or in a staged `if`.
#include "checks/PythonStyleAccumulationCheck.h"

#include "analysis/AstPredicates.h"
#include "analysis/Staging.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// The innermost staged loop whose body holds `stmt`, or null.
const Stmt* enclosingStagedLoop(ASTContext& context, const Stmt* stmt) {
  DynTypedNode node = DynTypedNode::create(*stmt);
  const Stmt* child = stmt;
  for (int steps = 0; steps < 512; ++steps) {
    auto parents = context.getParents(node);
    if (parents.empty()) return nullptr;
    node = parents[0];
    if (const auto* function = node.get<FunctionDecl>()) {
      // Go on through a lambda's call operator: the lambda runs in the loop.
      const auto* method = dyn_cast<CXXMethodDecl>(function);
      if (!method || !method->getParent()->isLambda()) return nullptr;
    }
    const auto* parent = node.get<Stmt>();
    if (!parent) continue;
    if (isLoop(parent) && isStaged(parent) && bodyOf(parent) == child) return parent;
    child = parent;
  }
  return nullptr;
}

}  // namespace

void PythonStyleAccumulationCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName("push_back", "emplace_back", "insert",
                                                        "emplace", "push_front", "emplace_front"))))
          .bind("call"),
      this);
}

void PythonStyleAccumulationCheck::check(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  if (!call || !scope().enclosingConverted(*call) || !scope().isInStagedControlFlow(*call)) return;
  const CXXRecordDecl* record = call->getRecordDecl();
  if (!record || isInAgNamespace(record)) return;
  const Stmt* loop = enclosingStagedLoop(*result.Context, call);
  if (!loop) return;
  // A container declared in the loop body lives for one iteration.
  const ValueDecl* container = storageOf(call->getImplicitObjectArgument());
  const SourceManager& sm = *result.SourceManager;
  if (const auto* var = dyn_cast_or_null<VarDecl>(container);
      var && var->hasLocalStorage() &&
      sm.isBeforeInTranslationUnit(loop->getBeginLoc(), var->getLocation()) &&
      sm.isBeforeInTranslationUnit(var->getLocation(), loop->getEndLoc()))
    return;
  std::string method = call->getMethodDecl()->getNameAsString();
  std::string what = container ? "'" + container->getNameAsString() + "'" : "a container";
  SourceLocation at = call->getExprLoc();  // the method name
  diag(at, "'" + method + "' into " + what +
               " inside a staged loop runs once, while the loop is traced, not once per "
               "iteration; accumulate into an ag::TensorArray")
      << call->getSourceRange();
  note(loop->getBeginLoc(), isa<CXXForRangeStmt>(loop)
                                ? "this loop is staged because it iterates over a tensor"
                                : "this loop is staged because its condition is a tensor");
}

}  // namespace agc
