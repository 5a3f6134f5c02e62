// ag-python-style-accumulation. A staged loop's body is traced once, whatever
// the number of iterations at run time: `results.push_back(x)` inside it runs
// once, at trace time, and stores one symbolic tensor (the seed's "accumulating
// values in a loop"). ag::TensorArray accumulates inside the graph instead.
//
// Reported: push_back, emplace_back, insert, emplace, push_front or
// emplace_front on an object of a class outside namespace ag, inside the body
// of a staged loop (a while or for whose condition is a tensor, or a range-for
// over a tensor), when the container is declared outside that loop. A
// container declared inside the body is scratch space for one iteration and is
// fine; so are the same calls in a plain C++ loop, or in a staged `if`.
#include "checks/PythonStyleAccumulationCheck.h"

#include "analysis/TensorTypes.h"

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

// The body of `loop` when it is a staged loop, else null.
const Stmt* stagedBody(const Stmt* loop) {
  if (const auto* whileStmt = dyn_cast<WhileStmt>(loop))
    return isTensorExpr(whileStmt->getCond()) ? whileStmt->getBody() : nullptr;
  if (const auto* forStmt = dyn_cast<ForStmt>(loop))
    return forStmt->getCond() && isTensorExpr(forStmt->getCond()) ? forStmt->getBody() : nullptr;
  if (const auto* rangeFor = dyn_cast<CXXForRangeStmt>(loop))
    return isTensorExpr(rangeFor->getRangeInit()) ? rangeFor->getBody() : nullptr;
  if (const auto* doStmt = dyn_cast<DoStmt>(loop))
    return isTensorExpr(doStmt->getCond()) ? doStmt->getBody() : nullptr;
  return nullptr;
}

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
    if (const Stmt* body = stagedBody(parent); body && body == child) return parent;
    child = parent;
  }
  return nullptr;
}

// The variable at the root of an object expression (`v`, `this->m`, `s.v`).
const ValueDecl* containerOf(const Expr* expr) {
  const ValueDecl* field = nullptr;
  while (expr) {
    expr = expr->IgnoreParenImpCasts();
    if (const auto* member = dyn_cast<MemberExpr>(expr)) {
      field = member->getMemberDecl();
      expr = member->getBase();
    } else if (isa<CXXThisExpr>(expr)) {
      return field;
    } else if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
      return ref->getDecl();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr);
               op && op->getNumArgs() >= 1 &&
               (op->getOperator() == OO_Subscript || op->getOperator() == OO_Star ||
                op->getOperator() == OO_Arrow)) {
      expr = op->getArg(0);
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

bool isAgRecord(const CXXRecordDecl* record) {
  const DeclContext* context = record->getDeclContext()->getRedeclContext();
  const auto* ns = dyn_cast<NamespaceDecl>(context);
  return ns && ns->getName() == "ag";
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
  if (!record || isAgRecord(record)) return;
  const Stmt* loop = enclosingStagedLoop(*result.Context, call);
  if (!loop) return;
  // A container declared in the loop body lives for one iteration.
  const ValueDecl* container = containerOf(call->getImplicitObjectArgument());
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
