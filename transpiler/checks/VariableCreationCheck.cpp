// ag-variable-creation. A traced function may create an ag::Variable only on
// its first trace (per ag::Module instance): a variable created on every call
// would be a fresh, zero-history state each time, and the runtime refuses it
// on the second trace. The create-once pattern (the TensorFlow guide's
// `Count` module) keeps the variable in storage that outlives the call and
// creates it only when that storage is empty:
//
//   std::optional<ag::Variable> count_;
//   AG_FUNCTION ag::Tensor operator_call() {
//     if (!count_) count_.emplace(0);
//     return count_->assign_add(1);
//   }
//
// A creation is `ag::Variable(...)` (not a copy), `emplace*` on a container or
// optional of variables, or `std::make_unique/make_shared<ag::Variable>`. It
// is accepted when its target (the variable declared, the lvalue assigned, the
// object emplaced into) is a static local, or is a member, static or global
// and the creation sits in a branch of an `if` that is not staged
// (analysis/Staging.h: isStaged) and whose condition reads that target or a
// `bool` flag member, or follows such an `if` that returns. Anything else is
// reported, locals always.
#include "checks/VariableCreationCheck.h"

#include "analysis/AstPredicates.h"
#include "analysis/Staging.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

bool isVariableType(QualType type) {
  return isAgClass(type, "Variable");
}

// Storage that outlives the call: members, statics and globals.
bool outlivesCall(const ValueDecl* decl) {
  if (!decl) return false;
  if (isa<FieldDecl>(decl)) return true;
  const auto* var = dyn_cast<VarDecl>(decl);
  return var && var->hasGlobalStorage();
}

// Whether `expr` reads `target`, or a bool member/static/global (a flag).
bool readsGuard(const Stmt* stmt, const ValueDecl* target) {
  if (!stmt) return false;
  const ValueDecl* read = nullptr;
  if (const auto* member = dyn_cast<MemberExpr>(stmt)) read = member->getMemberDecl();
  if (const auto* ref = dyn_cast<DeclRefExpr>(stmt)) read = ref->getDecl();
  if (read) {
    if (target && read->getCanonicalDecl() == target->getCanonicalDecl()) return true;
    if (outlivesCall(read) && read->getType().getNonReferenceType()->isBooleanType()) return true;
  }
  for (const Stmt* child : stmt->children())
    if (readsGuard(child, target)) return true;
  return false;
}

// Whether the `if` guards a creation into `target`: it runs once per trace
// (it is not staged, by the rule of analysis/Staging.h) and its condition
// reads the target or a flag.
bool isGuardOf(const IfStmt* ifStmt, const ValueDecl* target) {
  return !isStaged(ifStmt) && readsGuard(ifStmt->getCond(), target);
}

bool containsReturn(const Stmt* stmt) {
  if (!stmt) return false;
  if (isa<ReturnStmt>(stmt)) return true;
  if (isa<LambdaExpr>(stmt)) return false;
  for (const Stmt* child : stmt->children())
    if (containsReturn(child)) return true;
  return false;
}

class Creation {
 public:
  Creation(ASTContext& context, const Expr* expr) : context_(context), expr_(expr) {}

  // The storage the created variable goes into, and whether a local does.
  void findTarget() {
    DynTypedNode node = DynTypedNode::create(*expr_);
    const Expr* child = expr_;
    for (int steps = 0; steps < 16; ++steps) {
      auto parents = context_.getParents(node);
      if (parents.empty()) return;
      node = parents[0];
      if (const auto* var = node.get<VarDecl>()) {
        target_ = var;
        return;
      }
      const auto* parent = node.get<Expr>();
      if (!parent) return;
      if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
              CXXFunctionalCastExpr, ParenExpr, CXXNewExpr, CXXConstructExpr, InitListExpr>(
              parent)) {
        child = parent;
        continue;
      }
      if (const auto* op = dyn_cast<CXXOperatorCallExpr>(parent);
          op && op->isAssignmentOp() && op->getNumArgs() == 2 && op->getArg(1) == child) {
        target_ = storageOf(op->getArg(0));
        return;
      }
      if (const auto* binary = dyn_cast<BinaryOperator>(parent);
          binary && binary->isAssignmentOp() && binary->getRHS() == child) {
        target_ = storageOf(binary->getLHS());
        return;
      }
      if (const auto* call = dyn_cast<CXXMemberCallExpr>(parent)) {
        target_ = storageOf(call->getImplicitObjectArgument());
        return;
      }
      return;
    }
  }

  void setTarget(const ValueDecl* target) { target_ = target; }

  bool createdOnce() const {
    if (const auto* var = dyn_cast_or_null<VarDecl>(target_); var && var->isStaticLocal())
      return true;
    if (!outlivesCall(target_)) return false;
    // Walk out to the function body, looking for the guard.
    DynTypedNode node = DynTypedNode::create(*expr_);
    const Stmt* child = expr_;
    for (int steps = 0; steps < 256; ++steps) {
      auto parents = context_.getParents(node);
      if (parents.empty()) return false;
      node = parents[0];
      if (node.get<FunctionDecl>()) return false;
      const auto* parent = node.get<Stmt>();
      if (!parent) continue;
      if (const auto* ifStmt = dyn_cast<IfStmt>(parent);
          ifStmt && (child == ifStmt->getThen() || child == ifStmt->getElse()) &&
          isGuardOf(ifStmt, target_))
        return true;
      if (const auto* block = dyn_cast<CompoundStmt>(parent)) {
        // `if (v_) return ...;` earlier in the block.
        for (const Stmt* sibling : block->body()) {
          if (sibling == child) break;
          const auto* ifStmt = dyn_cast<IfStmt>(sibling);
          if (ifStmt && isGuardOf(ifStmt, target_) && containsReturn(ifStmt->getThen()))
            return true;
        }
      }
      child = parent;
    }
    return false;
  }

 private:
  ASTContext& context_;
  const Expr* expr_;
  const ValueDecl* target_ = nullptr;
};

}  // namespace

void VariableCreationCheck::registerMatchers(MatchFinder& finder) {
  auto variable = cxxRecordDecl(hasName("::ag::Variable"));
  finder.addMatcher(
      cxxConstructExpr(hasDeclaration(cxxConstructorDecl(ofClass(variable)))).bind("construct"),
      this);
  finder.addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName("emplace", "emplace_back", "emplace_front",
                                                        "emplace_hint", "try_emplace"))))
          .bind("emplace"),
      this);
  finder.addMatcher(
      callExpr(callee(functionDecl(hasAnyName("::std::make_unique", "::std::make_shared"))))
          .bind("make"),
      this);
}

void VariableCreationCheck::check(const MatchFinder::MatchResult& result) {
  const Expr* creation = nullptr;
  const ValueDecl* target = nullptr;
  bool haveTarget = false;
  if (const auto* construct = result.Nodes.getNodeAs<CXXConstructExpr>("construct")) {
    const CXXConstructorDecl* constructor = construct->getConstructor();
    if (!constructor || constructor->isCopyOrMoveConstructor()) return;
    creation = construct;
  } else if (const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("emplace")) {
    const Expr* object = call->getImplicitObjectArgument();
    if (!object || !hasTypeArgument(object->getType(), isVariableType)) return;
    // emplace(other_variable) copies; only a construction creates.
    if (call->getNumArgs() == 1 && isVariableType(call->getArg(0)->getType())) return;
    creation = call;
    target = storageOf(object);
    haveTarget = true;
  } else if (const auto* call = result.Nodes.getNodeAs<CallExpr>("make")) {
    if (!hasTypeArgument(call->getType(), isVariableType)) return;
    if (call->getNumArgs() == 1 && isVariableType(call->getArg(0)->getType())) return;
    creation = call;
  }
  if (!creation) return;
  const FunctionDecl* function = scope().enclosingConverted(*creation);
  if (!function) return;
  Creation site(*result.Context, creation);
  if (haveTarget)
    site.setTarget(target);
  else
    site.findTarget();
  if (site.createdOnce()) return;
  std::string name = function->getNameAsString();
  if (const auto* method = dyn_cast<CXXMethodDecl>(function);
      method && method->getParent()->isLambda())
    name = "lambda";
  diag(creation->getBeginLoc(),
       "ag::Variable created on every trace of '" + name +
           "'; create it once, in a member guarded by 'if (!var_) var_.emplace(...)', or "
           "outside the function",
       DiagnosticIDs::Error)
      << creation->getSourceRange();
}

}  // namespace agc
