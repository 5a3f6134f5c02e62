#include "checks/StateAccess.h"

#include "analysis/AstPredicates.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

namespace agc {

using namespace clang;

namespace {

bool bindsMutableReference(QualType type) {
  return type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified();
}

// Whether argument `index` of a call to `callee` binds a non-const reference.
bool argumentIsMutable(const FunctionDecl* callee, unsigned index) {
  if (!callee) return false;
  if (index < callee->getNumParams())
    return bindsMutableReference(callee->getParamDecl(index)->getType());
  return false;
}

const Stmt* parentOf(const Stmt& node, ASTContext& ast) {
  auto parents = ast.getParents(node);
  return parents.empty() ? nullptr : parents[0].get<Stmt>();
}

bool isStdRecord(const CXXRecordDecl* record) {
  return record && record->isInStdNamespace();
}

bool isPlainValueTypeImpl(QualType type, int depth) {
  if (type.isNull() || depth > 6) return false;
  type = type.getNonReferenceType().getCanonicalType();
  if (type->isArithmeticType() || type->isEnumeralType()) return true;
  if (const auto* array = dyn_cast<ArrayType>(type.getTypePtr()))
    return isPlainValueTypeImpl(array->getElementType(), depth + 1);
  if (type->isPointerType())
    return type->getPointeeType()->isArithmeticType() || type->getPointeeType()->isEnumeralType();
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition()) return false;
  if (isTensorType(type)) return true;
  if (isStdRecord(record)) {
    llvm::StringRef name = record->getName();
    if (name == "basic_string") return true;
    static const char* const kContainers[] = {"vector", "array",         "deque",   "list",
                                              "map",    "unordered_map", "set",     "unordered_set",
                                              "pair",   "tuple",         "complex", "optional"};
    if (!llvm::is_contained(kContainers, name)) return false;
    const auto* specialization = dyn_cast<ClassTemplateSpecializationDecl>(record);
    if (!specialization) return false;
    for (const TemplateArgument& argument : specialization->getTemplateArgs().asArray()) {
      if (argument.getKind() != TemplateArgument::Type) continue;
      QualType element = argument.getAsType();
      // Allocators, comparators and hashes come from std as well.
      if (const CXXRecordDecl* inner = element->getAsCXXRecordDecl();
          inner && inner->isInStdNamespace() &&
          (inner->getName() == "allocator" || inner->getName() == "less" ||
           inner->getName() == "hash" || inner->getName() == "equal_to" ||
           inner->getName() == "char_traits"))
        continue;
      if (!isPlainValueTypeImpl(element, depth + 1)) return false;
    }
    return true;
  }
  if (isInAgNamespace(record) || isInNamespace(record, "std") || isInNamespace(record, "Eigen"))
    return false;
  if (!record->isAggregate() || record->isLambda()) return false;
  for (const FieldDecl* field : record->fields())
    if (!isPlainValueTypeImpl(field->getType(), depth + 1)) return false;
  for (const CXXBaseSpecifier& base : record->bases())
    if (!isPlainValueTypeImpl(base.getType(), depth + 1)) return false;
  return true;
}

// Whether `stmt` creates an ag::Variable: constructs one (not a copy), makes
// a pointer to a new one, or emplaces one into an optional or a container.
bool createsVariable(const Stmt* stmt) {
  if (!stmt) return false;
  if (const auto* construct = dyn_cast<CXXConstructExpr>(stmt)) {
    if (isAgClass(construct->getType(), "Variable") &&
        !construct->getConstructor()->isCopyOrMoveConstructor())
      return true;
  } else if (const auto* call = dyn_cast<CXXMemberCallExpr>(stmt)) {
    const CXXMethodDecl* method = call->getMethodDecl();
    if (method && method->getIdentifier() && method->getName().starts_with("emplace") &&
        holdsVariable(call->getImplicitObjectArgument()->getType()))
      return true;
  } else if (const auto* call = dyn_cast<CallExpr>(stmt)) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (callee && callee->getIdentifier() &&
        (callee->getName() == "make_unique" || callee->getName() == "make_shared") &&
        holdsVariable(call->getType()))
      return true;
  }
  for (const Stmt* child : stmt->children())
    if (createsVariable(child)) return true;
  return false;
}

// The declarations an assignment target names: `g.a[i].b` names b, a and g.
void targetDecls(const Expr* target, llvm::SmallVectorImpl<const Decl*>& out) {
  for (const Expr* expr = target; expr;) {
    expr = expr->IgnoreParenImpCasts();
    if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
      out.push_back(ref->getDecl());
      return;
    }
    if (const auto* member = dyn_cast<MemberExpr>(expr)) {
      out.push_back(member->getMemberDecl());
      if (member->isArrow()) return;
      expr = member->getBase();
    } else if (const auto* subscript = dyn_cast<ArraySubscriptExpr>(expr)) {
      expr = subscript->getBase();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr);
               op && op->getOperator() == OO_Subscript && op->getNumArgs() > 0) {
      expr = op->getArg(0);
    } else {
      return;
    }
  }
}

class WriteCollector : public RecursiveASTVisitor<WriteCollector> {
 public:
  explicit WriteCollector(WriteIndex& index) : index_(index) {}

  bool TraverseCXXConstructorDecl(CXXConstructorDecl*) { return true; }

  bool VisitBinaryOperator(BinaryOperator* op) {
    if (op->isAssignmentOp()) index_.add(op->getLHS(), op);
    return true;
  }
  bool VisitUnaryOperator(UnaryOperator* op) {
    if (op->isIncrementDecrementOp() || op->getOpcode() == UO_AddrOf)
      index_.add(op->getSubExpr(), op);
    return true;
  }
  bool VisitCallExpr(CallExpr* call) {
    const auto* callee = dyn_cast_or_null<FunctionDecl>(call->getCalleeDecl());
    const auto* method = dyn_cast_or_null<CXXMethodDecl>(callee);
    unsigned first = 0;
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
      if (op->getNumArgs() > 0 && (op->isAssignmentOp() || op->getOperator() == OO_PlusPlus ||
                                   op->getOperator() == OO_MinusMinus ||
                                   (method && !method->isConst() && !method->isStatic() &&
                                    op->getOperator() != OO_Subscript)))
        index_.add(op->getArg(0), op);
      if (method) first = 1;
    } else if (const auto* memberCall = dyn_cast<CXXMemberCallExpr>(call)) {
      if (method && !method->isConst() && !method->isStatic())
        if (const Expr* object = memberCall->getImplicitObjectArgument())
          index_.add(object, memberCall);
    }
    for (unsigned i = first; callee && i < call->getNumArgs(); ++i) {
      unsigned param = i - first;
      if (param < callee->getNumParams() &&
          bindsMutableReference(callee->getParamDecl(param)->getType()))
        index_.add(call->getArg(i), call);
    }
    return true;
  }

 private:
  WriteIndex& index_;
};

}  // namespace

bool isInCreateOnceGuard(const Stmt& node, ASTContext& ast) {
  const Stmt* child = &node;
  for (int depth = 0; depth < 64; ++depth) {
    auto parents = ast.getParents(*child);
    if (parents.empty()) return false;
    const Stmt* parent = parents[0].get<Stmt>();
    if (!parent) {
      // The condition variable of an `if`, or a declaration in a DeclStmt.
      const Decl* decl = parents[0].get<Decl>();
      if (!decl || isa<FunctionDecl>(decl)) return false;
      auto above = ast.getParents(*decl);
      if (above.empty() || !above[0].get<Stmt>()) return false;
      parent = above[0].get<Stmt>();
    }
    if (const auto* ifStmt = dyn_cast<IfStmt>(parent);
        ifStmt && child != ifStmt->getElse() && createsVariable(ifStmt->getThen()))
      return true;
    if (isa<LambdaExpr>(parent)) return false;
    child = parent;
  }
  return false;
}

WriteIndex WriteIndex::ofMainFile(ASTContext& ast) {
  WriteIndex index;
  WriteCollector collector(index);
  const SourceManager& sm = ast.getSourceManager();
  for (Decl* decl : ast.getTranslationUnitDecl()->decls()) {
    SourceLocation loc = decl->getLocation();
    if (loc.isValid() && sm.isInMainFile(sm.getExpansionLoc(loc))) collector.TraverseDecl(decl);
  }
  return index;
}

WriteIndex WriteIndex::of(const Stmt* stmt) {
  WriteIndex index;
  WriteCollector collector(index);
  collector.TraverseStmt(const_cast<Stmt*>(stmt));
  return index;
}

void WriteIndex::add(const Expr* target, const Expr* write) {
  llvm::SmallVector<const Decl*, 4> decls;
  targetDecls(target, decls);
  for (const Decl* decl : decls) writes_[decl->getCanonicalDecl()].push_back(write);
}

bool WriteIndex::writes(const Decl* decl) const {
  return writes_.count(decl->getCanonicalDecl()) != 0;
}

llvm::ArrayRef<const Expr*> WriteIndex::writesOf(const Decl* decl) const {
  auto found = writes_.find(decl->getCanonicalDecl());
  if (found == writes_.end()) return {};
  return found->second;
}

bool isPlainValueType(QualType type) {
  return isPlainValueTypeImpl(type, 0);
}

bool isMutableStaticVariable(const VarDecl* var, const SourceManager& sm) {
  if (!var || !var->hasGlobalStorage() || var->isConstexpr()) return false;
  QualType type = var->getType();
  if (type.isConstQualified() ||
      (type->isReferenceType() && type.getNonReferenceType().isConstQualified()))
    return false;
  if (const auto* array = type->getAsArrayTypeUnsafe();
      array && array->getElementType().isConstQualified())
    return false;
  if (var->isInStdNamespace() || isInAgNamespace(var) || isInNamespace(var, "Eigen")) return false;
  return !sm.isInSystemHeader(sm.getExpansionLoc(var->getLocation()));
}

Access accessOf(const Expr& expr, ASTContext& ast) {
  const Stmt* child = &expr;
  while (const Stmt* parent = parentOf(*child, ast)) {
    if (isa<ParenExpr, ExprWithCleanups, MaterializeTemporaryExpr, CXXBindTemporaryExpr>(parent)) {
      child = parent;
      continue;
    }
    if (const auto* cast = dyn_cast<ImplicitCastExpr>(parent)) {
      if (cast->getCastKind() == CK_LValueToRValue) return Access::Read;
      if (cast->getCastKind() == CK_NoOp || cast->getCastKind() == CK_DerivedToBase ||
          cast->getCastKind() == CK_UncheckedDerivedToBase ||
          cast->getCastKind() == CK_ArrayToPointerDecay) {
        child = parent;
        continue;
      }
      return Access::Read;
    }
    if (const auto* member = dyn_cast<MemberExpr>(parent)) {
      if (member->getBase() != child) return Access::Read;
      if (isa<FieldDecl>(member->getMemberDecl())) {
        // `g.x`: what happens to the field happens to `g`. Through a pointer
        // (`p->x`), the pointer itself is only read.
        if (member->isArrow()) return Access::Read;
        child = parent;
        continue;
      }
      // `g.method()`: a non-const method may modify `g`.
      const auto* method = dyn_cast<CXXMethodDecl>(member->getMemberDecl());
      return method && !method->isConst() && !method->isStatic() ? Access::ReadWrite : Access::Read;
    }
    if (const auto* subscript = dyn_cast<ArraySubscriptExpr>(parent)) {
      if (subscript->getBase() != child) return Access::Read;
      if (subscript->getBase()->getType()->isPointerType() &&
          !isa<ImplicitCastExpr>(child))  // a pointer variable is only read
        return Access::Read;
      child = parent;
      continue;
    }
    if (const auto* binary = dyn_cast<BinaryOperator>(parent)) {
      if (binary->getLHS() == child && binary->isAssignmentOp())
        return binary->isCompoundAssignmentOp() ? Access::ReadWrite : Access::Write;
      return Access::Read;
    }
    if (const auto* unary = dyn_cast<UnaryOperator>(parent)) {
      if (unary->isIncrementDecrementOp()) return Access::ReadWrite;
      if (unary->getOpcode() == UO_AddrOf) return Access::Escape;
      return Access::Read;
    }
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(parent)) {
      const auto* callee = dyn_cast_or_null<FunctionDecl>(op->getCalleeDecl());
      bool isMember = isa_and_nonnull<CXXMethodDecl>(callee);
      // `v[i]` on a non-const object: what happens to the element.
      if (isMember && op->getOperator() == OO_Subscript && op->getNumArgs() > 0 &&
          op->getArg(0) == child && !cast<CXXMethodDecl>(callee)->isConst()) {
        child = parent;
        continue;
      }
      for (unsigned i = 0; i < op->getNumArgs(); ++i) {
        if (op->getArg(i) != child) continue;
        if (i == 0) {
          OverloadedOperatorKind kind = op->getOperator();
          if (kind == OO_Equal) return Access::Write;
          if (op->isAssignmentOp() || kind == OO_PlusPlus || kind == OO_MinusMinus)
            return Access::ReadWrite;
          if (kind == OO_Subscript) return Access::Read;
          if (isMember) {
            const auto* method = cast<CXXMethodDecl>(callee);
            return !method->isConst() && !method->isStatic() ? Access::ReadWrite : Access::Read;
          }
        }
        unsigned param = isMember ? i - 1 : i;
        return argumentIsMutable(callee, param) ? Access::ReadWrite : Access::Read;
      }
      return Access::Read;
    }
    if (const auto* call = dyn_cast<CXXMemberCallExpr>(parent)) {
      for (unsigned i = 0; i < call->getNumArgs(); ++i)
        if (call->getArg(i) == child)
          return argumentIsMutable(call->getDirectCallee(), i) ? Access::ReadWrite : Access::Read;
      return Access::Read;
    }
    if (const auto* call = dyn_cast<CallExpr>(parent)) {
      for (unsigned i = 0; i < call->getNumArgs(); ++i)
        if (call->getArg(i) == child)
          return argumentIsMutable(call->getDirectCallee(), i) ? Access::ReadWrite : Access::Read;
      return Access::Read;
    }
    if (const auto* construct = dyn_cast<CXXConstructExpr>(parent)) {
      for (unsigned i = 0; i < construct->getNumArgs(); ++i)
        if (construct->getArg(i) == child)
          return argumentIsMutable(construct->getConstructor(), i) ? Access::ReadWrite
                                                                   : Access::Read;
      return Access::Read;
    }
    break;
  }
  // A reference bound to it, `auto& r = g;`, or a range-for over it.
  auto parents = ast.getParents(*child);
  if (!parents.empty()) {
    // (The implicit `auto&& __range = g;` of a range-for only reads `g`.)
    if (const auto* var = parents[0].get<VarDecl>();
        var && !var->isImplicit() && bindsMutableReference(var->getType()))
      return Access::Escape;
  }
  return Access::Read;
}

}  // namespace agc
