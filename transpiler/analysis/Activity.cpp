#include "analysis/Activity.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "llvm/ADT/STLExtras.h"

namespace agc {

using namespace clang;

namespace {

bool isNonConstLValueRef(QualType type) {
  return type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified();
}

// Whether argument `index` of a call binds to a non-const reference.
bool bindsMutableRef(const FunctionDecl* callee, unsigned index) {
  if (!callee) return false;
  if (index < callee->getNumParams())
    return isNonConstLValueRef(callee->getParamDecl(index)->getType());
  return false;
}

const Stmt* skipParensAndCasts(const Stmt* child, llvm::ArrayRef<const Stmt*> ancestors,
                               std::size_t& level) {
  while (level > 0 &&
         (isa<ParenExpr>(ancestors[level - 1]) ||
          (isa<ImplicitCastExpr>(ancestors[level - 1]) &&
           cast<ImplicitCastExpr>(ancestors[level - 1])->getCastKind() != CK_LValueToRValue))) {
    child = ancestors[--level];
  }
  return child;
}

// How `child` (an lvalue naming a variable, or a member of one) is used by the
// expression above it. `ancestors` ends with the direct parent of `child`.
VarUse classifyLValue(const Stmt* child, llvm::ArrayRef<const Stmt*> ancestors) {
  std::size_t level = ancestors.size();
  child = skipParensAndCasts(child, ancestors, level);
  if (level == 0) return {nullptr, true, false};
  const Stmt* parent = ancestors[level - 1];
  if (const auto* cast = dyn_cast<ImplicitCastExpr>(parent);
      cast && cast->getCastKind() == CK_LValueToRValue)
    return {nullptr, true, false};
  if (const auto* binary = dyn_cast<BinaryOperator>(parent)) {
    if (binary->getLHS() == child && binary->isAssignmentOp())
      return {nullptr, binary->isCompoundAssignmentOp(), true};
    return {nullptr, true, false};
  }
  if (const auto* unary = dyn_cast<UnaryOperator>(parent)) {
    if (unary->isIncrementDecrementOp() || unary->getOpcode() == UO_AddrOf)
      return {nullptr, true, true};
    return {nullptr, true, false};
  }
  if (const auto* op = dyn_cast<CXXOperatorCallExpr>(parent)) {
    if (op->getNumArgs() > 0 && op->getArg(0) == child) {
      if (op->getOperator() == OO_Equal) return {nullptr, false, true};
      if (op->isAssignmentOp() || op->getOperator() == OO_PlusPlus ||
          op->getOperator() == OO_MinusMinus)
        return {nullptr, true, true};
      if (const auto* method = dyn_cast_or_null<CXXMethodDecl>(op->getDirectCallee()))
        return {nullptr, true, !method->isConst() && !method->isStatic()};
    }
    for (unsigned i = 0; i < op->getNumArgs(); ++i) {
      if (op->getArg(i) != child) continue;
      const auto* callee = op->getDirectCallee();
      // A member operator's first argument is the object, handled above.
      unsigned paramIndex = isa_and_nonnull<CXXMethodDecl>(callee) ? i - 1 : i;
      return {nullptr, true, bindsMutableRef(callee, paramIndex)};
    }
    return {nullptr, true, false};
  }
  if (const auto* member = dyn_cast<MemberExpr>(parent)) {
    if (member->getBase() != child) return {nullptr, true, false};
    // `x.f()` with a non-const method, or a write to a field `x.a = ...`.
    if (level >= 2) {
      if (const auto* call = dyn_cast<CXXMemberCallExpr>(ancestors[level - 2]);
          call && call->getCallee() == member) {
        const CXXMethodDecl* method = call->getMethodDecl();
        return {nullptr, true, method && !method->isConst()};
      }
    }
    VarUse fieldUse = classifyLValue(member, ancestors.take_front(level - 1));
    return {nullptr, true, fieldUse.write};
  }
  if (const auto* call = dyn_cast<CallExpr>(parent)) {
    for (unsigned i = 0; i < call->getNumArgs(); ++i)
      if (call->getArg(i) == child)
        return {nullptr, true, bindsMutableRef(call->getDirectCallee(), i)};
    return {nullptr, true, false};
  }
  if (const auto* construct = dyn_cast<CXXConstructExpr>(parent)) {
    for (unsigned i = 0; i < construct->getNumArgs(); ++i)
      if (construct->getArg(i) == child)
        return {nullptr, true, bindsMutableRef(construct->getConstructor(), i)};
  }
  return {nullptr, true, false};
}

class UseCollector {
 public:
  explicit UseCollector(llvm::SmallVector<VarUse, 16>& uses) : uses_(uses) {}

  void visit(const Stmt* stmt) {
    if (!stmt) return;
    if (const auto* ref = dyn_cast<DeclRefExpr>(stmt)) {
      if (asLocal(ref->getDecl())) {
        VarUse use = classifyLValue(ref, ancestors_);
        use.ref = ref;
        uses_.push_back(use);
      }
    }
    ancestors_.push_back(stmt);
    if (const auto* declStmt = dyn_cast<DeclStmt>(stmt)) {
      // Initializers are reached through the declarations.
      for (const Decl* decl : declStmt->decls())
        if (const auto* var = dyn_cast<VarDecl>(decl); var && var->getInit()) visit(var->getInit());
    } else {
      for (const Stmt* child : stmt->children()) visit(child);
    }
    ancestors_.pop_back();
  }

 private:
  llvm::SmallVector<VarUse, 16>& uses_;
  llvm::SmallVector<const Stmt*, 32> ancestors_;
};

}  // namespace

const ValueDecl* asLocal(const Decl* decl) {
  if (const auto* var = dyn_cast_or_null<VarDecl>(decl))
    return var->isLocalVarDeclOrParm() ? var : nullptr;
  if (const auto* binding = dyn_cast_or_null<BindingDecl>(decl))
    return asLocal(binding->getDecomposedDecl()) ? binding : nullptr;
  return nullptr;
}

bool declares(const DeclStmt* stmt, const ValueDecl* local) {
  return llvm::any_of(stmt->decls(), [&](const Decl* decl) {
    if (decl == local) return true;
    const auto* decomposition = dyn_cast<DecompositionDecl>(decl);
    return decomposition && llvm::is_contained(decomposition->bindings(), local);
  });
}

bool isStaticLocal(const ValueDecl* local) {
  if (const auto* binding = dyn_cast<BindingDecl>(local)) local = binding->getDecomposedDecl();
  const auto* var = dyn_cast_or_null<VarDecl>(local);
  return var && var->isStaticLocal();
}

Activity::Activity(const Stmt* stmt) {
  UseCollector(uses_).visit(stmt);
  for (const VarUse& use : uses_) {
    const ValueDecl* var = use.ref->getDecl();
    if (use.write && !llvm::is_contained(written_, var)) written_.push_back(var);
  }
}

bool Activity::reads(const ValueDecl* var) const {
  return llvm::any_of(uses_,
                      [&](const VarUse& use) { return use.read && use.ref->getDecl() == var; });
}

bool Activity::writes(const ValueDecl* var) const {
  return llvm::is_contained(written_, var);
}

const DeclRefExpr* Activity::firstWrite(const ValueDecl* var) const {
  for (const VarUse& use : uses_)
    if (use.write && use.ref->getDecl() == var) return use.ref;
  return nullptr;
}

bool killsFirst(const Stmt* stmt, const ValueDecl* var) {
  if (const auto* declStmt = dyn_cast<DeclStmt>(stmt)) return declares(declStmt, var);
  const Expr* expr = dyn_cast<Expr>(stmt);
  if (!expr) return false;
  expr = expr->IgnoreImplicit();
  const Expr* target = nullptr;
  const Expr* value = nullptr;
  if (const auto* binary = dyn_cast<BinaryOperator>(expr);
      binary && binary->getOpcode() == BO_Assign) {
    target = binary->getLHS();
    value = binary->getRHS();
  } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr);
             op && op->getOperator() == OO_Equal) {
    target = op->getArg(0);
    value = op->getArg(1);
  }
  if (!target) return false;
  const auto* ref = dyn_cast<DeclRefExpr>(target->IgnoreParenImpCasts());
  return ref && ref->getDecl() == var && !Activity(value).reads(var);
}

}  // namespace agc
