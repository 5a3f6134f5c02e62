// ag-tensor-as-bool. A traced tensor has no value yet, so turning it into a
// C++ bool fails while tracing ("run agc or use ag::cond"). agc stages the
// conditions it sees: `if (t)`, `while (t)`, `for (...; t; ...)`, and `&&`,
// `||`, `!`, `?:` over tensors. An explicit conversion hides the tensor from
// it: `static_cast<bool>(t)`, `(bool)t`, `bool(t)`, `bool b(t);`,
// `t.item<bool>()`, and `assert(t)` (which casts). These are errors.
#include "checks/TensorAsBoolCheck.h"

#include "analysis/TensorTypes.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// The node above `expr`, through implicit nodes and parentheses.
DynTypedNode parentThroughImplicit(const Expr& expr, ASTContext& ast, const Stmt*& child) {
  child = &expr;
  while (true) {
    auto parents = ast.getParents(*child);
    if (parents.empty()) return DynTypedNode();
    const Stmt* parent = parents[0].get<Stmt>();
    if (parent && isa<ImplicitCastExpr, ParenExpr, ExprWithCleanups, MaterializeTemporaryExpr,
                      CXXBindTemporaryExpr, ConstantExpr>(parent)) {
      child = parent;
      continue;
    }
    return parents[0];
  }
}

bool isStagedCondition(const Stmt* parent, const Stmt* child, ASTContext& ast);

// Whether agc stages the `?:` whose condition is a tensor: it does when the
// result is a tensor or feeds one (a tensor operator or constructor);
// `int k = t ? 1 : 2;` stays C++.
bool isStagedConditional(const ConditionalOperator& conditional, ASTContext& ast) {
  if (isTensorType(conditional.getType())) return true;
  const Stmt* child = nullptr;
  DynTypedNode above = parentThroughImplicit(conditional, ast, child);
  const Expr* parent = above.get<Expr>();
  if (parent && isa<CXXOperatorCallExpr, CXXConstructExpr>(parent))
    return isTensorType(parent->getType());
  // An operand of a tensor &&, ||, ! or ?:, which agc converts as a whole.
  if (const auto* outer = dyn_cast_or_null<ConditionalOperator>(parent))
    return isStagedConditional(*outer, ast);
  return parent && isa<BinaryOperator, UnaryOperator>(parent) &&
         isStagedCondition(parent, child, ast);
}

// Whether the conversion is a condition agc stages.
bool isStagedCondition(const Stmt* parent, const Stmt* child, ASTContext& ast) {
  if (!parent) return false;
  if (const auto* ifStmt = dyn_cast<IfStmt>(parent))
    return ifStmt->getCond() == child && !ifStmt->isConstexpr();
  if (const auto* loop = dyn_cast<WhileStmt>(parent)) return loop->getCond() == child;
  if (const auto* loop = dyn_cast<ForStmt>(parent)) return loop->getCond() == child;
  if (const auto* loop = dyn_cast<DoStmt>(parent)) return loop->getCond() == child;
  if (const auto* unary = dyn_cast<UnaryOperator>(parent)) return unary->getOpcode() == UO_LNot;
  if (const auto* binary = dyn_cast<BinaryOperator>(parent)) return binary->isLogicalOp();
  if (const auto* conditional = dyn_cast<ConditionalOperator>(parent))
    return conditional->getCond() == child && isStagedConditional(*conditional, ast);
  return false;
}

bool isInAssert(SourceLocation loc, const SourceManager& sm, const LangOptions& lang) {
  for (; loc.isMacroID(); loc = sm.getImmediateMacroCallerLoc(loc)) {
    llvm::StringRef macro = Lexer::getImmediateMacroName(loc, sm, lang);
    if (macro == "assert") return true;
  }
  return false;
}

}  // namespace

void TensorAsBoolCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(cxxMemberCallExpr().bind("call"), this);
}

void TensorAsBoolCheck::check(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  if (!call || !scope().enclosingConverted(*call)) return;
  const CXXMethodDecl* method = call->getMethodDecl();
  const Expr* object = call->getImplicitObjectArgument();
  if (!method || !object || !isTensorType(object->getType())) return;
  ASTContext& ast = *result.Context;
  const SourceManager& sm = ast.getSourceManager();
  const char* const kHint =
      "use the tensor itself as the condition of an if or while, which agc stages, or ag::cond "
      "or ag::where";

  // `t.item<bool>()`.
  if (method->getIdentifier() && method->getName() == "item") {
    const TemplateArgumentList* args = method->getTemplateSpecializationArgs();
    if (!args || args->size() != 1 || args->get(0).getKind() != TemplateArgument::Type ||
        !args->get(0).getAsType()->isBooleanType())
      return;
    if (!reported_.insert({call, 0}).second) return;
    diag(call->getExprLoc(),
         "'item<bool>()' reads the value of a tensor, which a traced tensor "
         "does not have",
         DiagnosticIDs::Error)
        << call->getSourceRange();
    note(call->getExprLoc(), kHint);
    return;
  }

  const auto* conversion = dyn_cast<CXXConversionDecl>(method);
  if (!conversion || !conversion->getConversionType()->isBooleanType()) return;
  const Stmt* child = nullptr;
  DynTypedNode above = parentThroughImplicit(*call, ast, child);
  const Stmt* parent = above.get<Stmt>();
  if (isStagedCondition(parent, child, ast)) return;

  SourceLocation loc = call->getBeginLoc();
  SourceRange range = call->getSourceRange();
  std::string what = "conversion of a tensor to bool";
  if (const auto* cast = dyn_cast_or_null<ExplicitCastExpr>(parent)) {
    loc = cast->getBeginLoc();
    range = cast->getSourceRange();
    what = "explicit conversion of a tensor to bool";
  } else if (const auto* var = above.get<VarDecl>()) {
    loc = var->getLocation();
    range = var->getSourceRange();
    what = "conversion of a tensor to bool in the declaration of '" + var->getNameAsString() + "'";
  }
  if (!reported_.insert({call, 0}).second) return;
  bool inAssert = isInAssert(call->getBeginLoc(), sm, ast.getLangOpts());
  diag(loc, what + " cannot be staged: it fails on a traced tensor", DiagnosticIDs::Error) << range;
  note(loc,
       inAssert ? "use ag::assert_that(condition, message), which checks on every call" : kHint);
}

}  // namespace agc
