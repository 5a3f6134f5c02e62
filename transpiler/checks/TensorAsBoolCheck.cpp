// ag-tensor-as-bool. A traced tensor has no value yet, so turning it into a
// C++ bool fails while tracing ("run agc or use ag::cond"). agc stages the
// conditions it sees: `if (t)`, `while (t)`, `for (...; t; ...)`, and `&&`,
// `||`, `!`, `?:` over tensors where their value is used as a tensor (the
// rule of analysis/Staging.h). An explicit conversion hides the tensor from
// it: `static_cast<bool>(t)`, `(bool)t`, `bool(t)`, `bool b(t);`,
// `t.item<bool>()`, and `assert(t)` (which casts); so does a `&&` whose result
// must be a C++ bool (`bool ok = t1 && t2;`, one finding per expression).
// These are errors.
#include "checks/TensorAsBoolCheck.h"

#include "analysis/Staging.h"
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

// The statement above `node` in the function body, through the declarations
// of DeclStmts (the parent map of analysis/Staging.h's rule).
const Stmt* parentStmt(const Stmt* node, ASTContext& ast) {
  DynTypedNodeList parents = ast.getParents(*node);
  while (!parents.empty()) {
    if (const auto* stmt = parents[0].get<Stmt>()) return stmt;
    const auto* var = parents[0].get<VarDecl>();
    if (!var) return nullptr;
    parents = ast.getParents(*var);
  }
  return nullptr;
}

bool isLogicalOperator(const Stmt* stmt) {
  if (const auto* binary = dyn_cast_or_null<BinaryOperator>(stmt)) return binary->isLogicalOp();
  const auto* unary = dyn_cast_or_null<UnaryOperator>(stmt);
  return unary && unary->getOpcode() == UO_LNot;
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
  auto parentOf = [&](const Stmt* node) { return parentStmt(node, ast); };
  // A staged condition, or an operand of a `&&`, `||`, `!` or `?:` that agc converts.
  if (parent && conditionOf(parent) == child && isStaged(parent)) return;
  if (const auto* user = dyn_cast_or_null<Expr>(parent);
      user && isConvertedLogicalExpr(user, parentOf))
    return;

  SourceLocation loc = call->getBeginLoc();
  SourceRange range = call->getSourceRange();
  std::string what = "conversion of a tensor to bool";
  const char* hint = kHint;
  const void* finding = call;
  if (isLogicalOperator(parent)) {
    // `bool ok = t1 && t2;`: one finding for the whole logical expression.
    const Stmt* outer = parent;
    while (true) {
      above = parentThroughImplicit(*cast<Expr>(outer), ast, child);
      if (!isLogicalOperator(above.get<Stmt>())) break;
      outer = above.get<Stmt>();
    }
    const auto* binary = dyn_cast<BinaryOperator>(outer);
    std::string op = binary ? binary->getOpcodeStr().str() : "!";
    loc = binary ? binary->getOperatorLoc() : outer->getBeginLoc();
    range = outer->getSourceRange();
    what = "'" + op + "' on tensors with a C++ bool result";
    if (const auto* var = above.get<VarDecl>())
      what += " in the declaration of '" + var->getNameAsString() + "'";
    hint =
        "agc stages '&&', '||' and '!' where the result is an ag::Tensor: declare it as "
        "ag::Tensor or auto; for elementwise values use ag::logical_and or ag::logical_or";
    finding = outer;
  } else if (const auto* cast = dyn_cast_or_null<ExplicitCastExpr>(parent)) {
    loc = cast->getBeginLoc();
    range = cast->getSourceRange();
    what = "explicit conversion of a tensor to bool";
  } else if (const auto* var = above.get<VarDecl>()) {
    loc = var->getLocation();
    range = var->getSourceRange();
    what = "conversion of a tensor to bool in the declaration of '" + var->getNameAsString() + "'";
  }
  if (!reported_.insert({finding, 0}).second) return;
  bool inAssert = isInAssert(call->getBeginLoc(), sm, ast.getLangOpts());
  diag(loc, what + " cannot be staged: it fails on a traced tensor", DiagnosticIDs::Error) << range;
  note(loc,
       inAssert ? "use ag::assert_that(condition, message), which checks on every call" : hint);
}

}  // namespace agc
