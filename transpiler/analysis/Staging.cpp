#include "analysis/Staging.h"

#include "analysis/TensorTypes.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace agc {

using namespace clang;

// The staged statement classes and their structure: analysis/StagedStatements.def.
#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  if (const auto* typed = dyn_cast<Class>(stmt)) return typed->condition();
const Expr* conditionOf(const Stmt* stmt) {
  if (const auto* ifStmt = dyn_cast<IfStmt>(stmt); ifStmt && ifStmt->isConsteval()) return nullptr;
#include "analysis/StagedStatements.def"
  return nullptr;
}
#undef AG_STAGED_STATEMENT

#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  if (const auto* typed = dyn_cast<Class>(stmt)) return typed->body();
const Stmt* bodyOf(const Stmt* stmt) {
#include "analysis/StagedStatements.def"
  return nullptr;
}
#undef AG_STAGED_STATEMENT

const Stmt* elseOf(const Stmt* stmt) {
  const auto* ifStmt = dyn_cast<IfStmt>(stmt);
  return ifStmt ? ifStmt->getElse() : nullptr;
}

#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  if (isa<Class>(stmt)) return construct;
const char* constructName(const Stmt* stmt) {
#include "analysis/StagedStatements.def"
  return "statement";
}
#undef AG_STAGED_STATEMENT

#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  if (isa<Class>(stmt)) return loop;
bool isLoop(const Stmt* stmt) {
#include "analysis/StagedStatements.def"
  return false;
}
#undef AG_STAGED_STATEMENT

bool isStagedRange(const Expr* range) {
  return isTensorExpr(range) || isDatasetType(spelled(range)->getType());
}

// Whether `condition`, the one of `stmt`, stages it.
static bool stagesOn(const Stmt* stmt, const Expr* condition) {
  return isa<CXXForRangeStmt>(stmt) ? isStagedRange(condition) : isTensorExpr(condition);
}

bool isStaged(const Stmt* stmt) {
  if (const auto* ifStmt = dyn_cast<IfStmt>(stmt); ifStmt && ifStmt->isConstexpr()) return false;
  const Expr* condition = conditionOf(stmt);
  return condition && stagesOn(stmt, condition);
}

llvm::SmallVector<const Stmt*, 2> stagedPartsOf(const Stmt* stmt) {
  llvm::SmallVector<const Stmt*, 2> parts;
  if (!isStaged(stmt)) return parts;
  for (const Stmt* part : {bodyOf(stmt), elseOf(stmt)})
    if (part) parts.push_back(part);
  if (const auto* loop = dyn_cast<ForStmt>(stmt); loop && loop->getInc())
    parts.push_back(loop->getInc());
  return parts;
}

bool isTensorLogicalExpr(const Expr* expr) {
  if (const auto* binary = dyn_cast<BinaryOperator>(expr))
    return binary->isLogicalOp() &&
           (isTensorExpr(binary->getLHS()) || isTensorExpr(binary->getRHS()));
  if (const auto* unary = dyn_cast<UnaryOperator>(expr))
    return unary->getOpcode() == UO_LNot && isTensorExpr(unary->getSubExpr());
  if (const auto* conditional = dyn_cast<ConditionalOperator>(expr))
    return isTensorExpr(conditional->getCond());
  return false;
}

// Nodes that pass a value on unchanged, as far as its use is concerned.
static bool isTransparent(const Stmt* stmt) {
  return isa<ParenExpr, ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
             ExprWithCleanups, ConstantExpr>(stmt);
}

bool isConvertedLogicalExpr(const Expr* expr, ParentOf parentOf) {
  if (!isTensorLogicalExpr(expr)) return false;
  const Stmt* child = expr;
  const Stmt* parent = parentOf(expr);
  for (; parent && isTransparent(parent); child = parent, parent = parentOf(parent))
    if (const auto* cast = dyn_cast<ImplicitCastExpr>(parent);
        cast && isTensorType(cast->getType()))
      return true;
  if (const auto* conditional = dyn_cast<ConditionalOperator>(expr)) {
    if (isTensorType(conditional->getType()) ||
        (isTensorExpr(conditional->getTrueExpr()) && isTensorExpr(conditional->getFalseExpr())))
      return true;
    if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(parent);
        op && isTensorType(op->getType()))
      return true;
  }
  if (!parent) return false;
  if (conditionOf(parent) == child) return !isa<CXXForRangeStmt>(parent);
  if (const auto* outer = dyn_cast<Expr>(parent); outer && isTensorLogicalExpr(outer))
    return isConvertedLogicalExpr(outer, parentOf);
  if (const auto* construct = dyn_cast<CXXConstructExpr>(parent))
    return isTensorType(construct->getType());
  if (const auto* decl = dyn_cast<DeclStmt>(parent)) {
    for (const Decl* d : decl->decls())
      if (const auto* var = dyn_cast<VarDecl>(d); var && var->getInit() == child)
        return isLoweredLogicalVar(var) ||
               (expr->isTypeDependent() && isTensorType(var->getType()));
    return false;
  }
  return isa<ReturnStmt>(parent) && expr->isTypeDependent();
}

static void collectStatements(const Stmt* stmt, std::vector<const Stmt*>& out) {
  if (!stmt || isa<LambdaExpr>(stmt)) return;
  out.push_back(stmt);
  for (const Stmt* child : stmt->children()) collectStatements(child, out);
}

std::vector<const Stmt*> bodyStatements(const Stmt* body) {
  std::vector<const Stmt*> out;
  collectStatements(body, out);
  return out;
}

bool hasTensorControlFlow(const Stmt* body) {
  for (const Stmt* stmt : bodyStatements(body)) {
    const Expr* condition = conditionOf(stmt);
    if (condition && !condition->isTypeDependent() && stagesOn(stmt, condition)) return true;
    if (const auto* expr = dyn_cast<Expr>(stmt);
        expr && !expr->isTypeDependent() && isTensorLogicalExpr(expr))
      return true;
  }
  return false;
}

}  // namespace agc
