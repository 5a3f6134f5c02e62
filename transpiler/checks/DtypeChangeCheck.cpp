// ag-dtype-change. `ag::Tensor s = 0;` is an int32 tensor. Adding a C++
// float to it (`s = s + 0.5`) lifts it to float32 (ag/dtype.h, rule 2), and
// dividing it (`s = s / 2`) gives float64 (true division). Eagerly that is
// fine: each statement makes a new tensor. In a staged loop `s` is a loop
// variable, which must keep its dtype from one iteration to the next, and in
// a staged `if` both branches must give it one dtype: the traced function
// fails with a TypeError that eager mode never raises.
//
// Reported: an assignment (`=`, `+=`, `-=`, `*=`, `/=`) in staged control
// flow to a local ag::Tensor declared outside it and initialised from a C++
// integer (`= 0`, `= n`, `= ag::constant(0)`), whose value is made floating
// by a floating-point C++ scalar reached through + - * / (`s + 0.5`,
// `2.0 * s`, `s += 0.5f`, `s = 0.5`) or by dividing `s` itself. Only
// assignments agc can see the dtype of are reported: a tensor operand's dtype
// is known only when the function is traced. A staged `if` whose other
// branch assigns the variable too is not reported (both may make it float).
#include "checks/DtypeChangeCheck.h"

#include "analysis/Staging.h"
#include "analysis/TensorTypes.h"
#include "checks/StateAccess.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

bool isCxxInteger(QualType type) {
  return type->isIntegerType() && !type->isBooleanType() && !type->isEnumeralType();
}

// The C++ integer type an initialiser makes its tensor from (`ag::Tensor s =
// 0;` or `= ag::constant(n)`), or a null type.
QualType integerMadeFrom(const VarDecl* var) {
  const Expr* init = spelled(var->getInit());
  if (!init) return {};
  if (const auto* call = dyn_cast<CallExpr>(init)) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (!callee || callee->getName() != "constant" || !isInAgNamespace(callee) ||
        call->getNumArgs() == 0)
      return {};
    init = spelled(call->getArg(0));
  }
  return isCxxInteger(init->getType()) ? init->getType() : QualType();
}

// The dtype of a tensor made from a C++ integer (ag/tensor.h).
const char* dtypeOfInteger(QualType type, const ASTContext& ast) {
  return ast.getTypeSize(type) <= 32 ? "int32" : "int64";
}

// Why the value of `value`, assigned to `var`, is floating: the C++ scalar
// or the division that makes it so, through the operators + - * / and unary
// minus; null when agc cannot tell.
const Expr* floatingSource(const Expr* value, const VarDecl* var) {
  value = spelled(value);
  if (!value) return nullptr;
  if (value->getType()->isRealFloatingType()) return value;
  const auto* op = dyn_cast<CXXOperatorCallExpr>(value);
  if (!op) return nullptr;
  switch (op->getOperator()) {
    case OO_Slash:
      if (const auto* ref = dyn_cast<DeclRefExpr>(spelled(op->getArg(0)));
          ref && ref->getDecl() == var)
        return op;
      [[fallthrough]];
    case OO_Plus:
    case OO_Minus:
    case OO_Star:
      for (unsigned i = 0; i < op->getNumArgs(); ++i)
        if (const Expr* source = floatingSource(op->getArg(i), var)) return source;
      return nullptr;
    default:
      return nullptr;
  }
}

// The floating source of an assignment to `var`: its right-hand side, or for
// `s /= k` the division itself.
const Expr* floatingSourceOfAssignment(const CXXOperatorCallExpr* assign, const VarDecl* var) {
  if (assign->getOperator() == OO_SlashEqual) return assign;
  return floatingSource(assign->getArg(1), var);
}

// The staged statements whose staged parts hold `node`, innermost first,
// up to the enclosing function.
llvm::SmallVector<const Stmt*, 4> enclosingStagedStatements(ASTContext& ast, const Stmt* node) {
  llvm::SmallVector<const Stmt*, 4> found;
  const Stmt* child = node;
  for (int depth = 0; depth < 512; ++depth) {
    auto parents = ast.getParents(*child);
    if (parents.empty()) break;
    const auto* parent = parents[0].get<Stmt>();
    if (!parent || isa<LambdaExpr>(parent)) break;
    for (const Stmt* part : stagedPartsOf(parent))
      if (part == child) found.push_back(parent);
    child = parent;
  }
  return found;
}

bool contains(const SourceManager& sm, SourceRange range, SourceLocation loc) {
  return !sm.isBeforeInTranslationUnit(loc, range.getBegin()) &&
         !sm.isBeforeInTranslationUnit(range.getEnd(), loc);
}

// The staged statement that needs `var` to keep its dtype across `assign`:
// a loop, or an `if` whose other branch leaves the variable alone. Null when
// none does.
const Stmt* statementKeepingDtype(ASTContext& ast, const CXXOperatorCallExpr* assign,
                                  const VarDecl* var) {
  const SourceManager& sm = ast.getSourceManager();
  for (const Stmt* staged : enclosingStagedStatements(ast, assign)) {
    if (contains(sm, staged->getSourceRange(), var->getLocation())) return nullptr;
    if (isLoop(staged)) return staged;
    const Stmt* other = contains(sm, bodyOf(staged)->getSourceRange(), assign->getExprLoc())
                            ? elseOf(staged)
                            : bodyOf(staged);
    if (!other || !WriteIndex::of(other).writes(var->getCanonicalDecl())) return staged;
  }
  return nullptr;
}

std::string sourceText(const Expr* expr, const ASTContext& ast) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(expr->getSourceRange()),
                              ast.getSourceManager(), ast.getLangOpts())
      .str();
}

}  // namespace

void DtypeChangeCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(
      cxxOperatorCallExpr(
          hasAnyOverloadedOperatorName("=", "+=", "-=", "*=", "/="),
          hasArgument(0, ignoringParenImpCasts(declRefExpr(to(varDecl().bind("var"))))))
          .bind("assign"),
      this);
}

void DtypeChangeCheck::check(const MatchFinder::MatchResult& result) {
  const auto* assign = result.Nodes.getNodeAs<CXXOperatorCallExpr>("assign");
  const auto* var = result.Nodes.getNodeAs<VarDecl>("var");
  if (!assign || !var || !scope().enclosingConverted(*assign) ||
      !scope().isInStagedControlFlow(*assign))
    return;
  if (!var->hasLocalStorage() || isa<ParmVarDecl>(var) || !isTensorType(var->getType())) return;
  const QualType integer = integerMadeFrom(var);
  if (integer.isNull()) return;
  const Expr* source = floatingSourceOfAssignment(assign, var);
  if (!source) return;
  const Stmt* staged = statementKeepingDtype(*result.Context, assign, var);
  if (!staged) return;
  const std::string name = var->getNameAsString();
  const bool divides = !source->getType()->isRealFloatingType();
  const std::string why = divides ? "dividing it gives float64 ('/' of integers is true division)"
                                  : "the floating-point '" + sourceText(source, *result.Context) +
                                        "' lifts it to float32";
  const std::string rule = isLoop(staged) ? "a variable of a staged loop must keep its dtype"
                                          : "both branches of a staged if must give it one dtype";
  diag(assign->getOperatorLoc(), "'" + name + "' is an " +
                                     dtypeOfInteger(integer, *result.Context) +
                                     " tensor and becomes floating here: " + why + "; " + rule +
                                     ", so the traced function fails where eager mode runs")
      << assign->getSourceRange();
  note(var->getLocation(), divides ? "'" + name +
                                         "' is made from an integer here; start it as a float "
                                         "(0.0f) or use ag::floordiv for integer division"
                                   : "'" + name +
                                         "' is made from an integer here; start it as a float "
                                         "(0.0f) or ag::cast it to float32 before the " +
                                         std::string(constructName(staged)));
}

}  // namespace agc
