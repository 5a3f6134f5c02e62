#include "analysis/TensorTypes.h"

#include "analysis/AstPredicates.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclFriend.h"
#include "clang/AST/ExprCXX.h"

namespace agc {

using namespace clang;

static const CXXRecordDecl* recordOf(QualType type) {
  if (type.isNull()) return nullptr;
  return type.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl();
}

bool isTensorType(QualType type) {
  return isAgClass(type, "Tensor");
}

bool isTensorOrTensorArray(QualType type) {
  return isTensorType(type) || isAgClass(type, "TensorArray");
}

bool isDatasetType(QualType type) {
  if (!isAgClass(type, "Dataset")) return false;
  const auto* ns = dyn_cast<NamespaceDecl>(recordOf(type)->getDeclContext());
  return ns && ns->getName() == "data";
}

const Expr* spelled(const Expr* expr) {
  return expr ? expr->IgnoreUnlessSpelledInSource()->IgnoreParens() : nullptr;
}

bool isTensorExpr(const Expr* expr) {
  expr = spelled(expr);
  if (!expr) return false;
  if (expr->isTypeDependent() || isTensorType(expr->getType())) return true;
  if (const auto* binary = dyn_cast<BinaryOperator>(expr)) {
    if (binary->isLogicalOp())
      return isTensorExpr(binary->getLHS()) || isTensorExpr(binary->getRHS());
    return false;
  }
  if (const auto* unary = dyn_cast<UnaryOperator>(expr))
    return unary->getOpcode() == UO_LNot && isTensorExpr(unary->getSubExpr());
  if (const auto* conditional = dyn_cast<ConditionalOperator>(expr))
    return isTensorExpr(conditional->getTrueExpr()) && isTensorExpr(conditional->getFalseExpr());
  if (const auto* ref = dyn_cast<DeclRefExpr>(expr))
    if (const auto* var = dyn_cast<VarDecl>(ref->getDecl())) return isLoweredLogicalVar(var);
  return false;
}

bool isLoweredLogicalVar(const VarDecl* var) {
  if (!var->getType()->getContainedAutoType() || !var->hasInit()) return false;
  const Expr* init = spelled(var->getInit());
  const auto* binary = dyn_cast<BinaryOperator>(init);
  const auto* unary = dyn_cast<UnaryOperator>(init);
  return ((binary && binary->isLogicalOp()) || (unary && unary->getOpcode() == UO_LNot)) &&
         isTensorExpr(init);
}

// Whether `ag_fields(S&)` is declared for the record, where the runtime's
// call finds it: in the record's namespace (by ADL) or as a hidden friend. A
// function template of that name counts.
static bool hasFieldsHook(const CXXRecordDecl* record) {
  DeclarationName name(&record->getASTContext().Idents.get("ag_fields"));
  auto isHook = [&](const NamedDecl* decl) {
    if (!decl || decl->getDeclName() != name) return false;
    if (isa<FunctionTemplateDecl>(decl)) return true;
    const auto* function = dyn_cast<FunctionDecl>(decl);
    if (!function || function->getNumParams() != 1) return false;
    const CXXRecordDecl* param = recordOf(function->getParamDecl(0)->getType());
    return param && param->getCanonicalDecl() == record->getCanonicalDecl();
  };
  for (const NamedDecl* decl : record->getDeclContext()->getRedeclContext()->lookup(name))
    if (isHook(decl)) return true;
  if (record->hasDefinition())
    for (const FriendDecl* friendDecl : record->getDefinition()->friends())
      if (isHook(friendDecl->getFriendDecl())) return true;
  return false;
}

bool isStructWithoutFields(QualType type) {
  const CXXRecordDecl* record = recordOf(type);
  return record && !record->isInStdNamespace() && !isInAgNamespace(record) && !record->isLambda() &&
         !hasFieldsHook(record);
}

bool isStageableType(QualType type) {
  if (type.isNull()) return false;
  type = type.getNonReferenceType();
  if (type->isDependentType()) return true;
  const CXXRecordDecl* record = recordOf(type);
  if (!record) return false;
  if (record->isInStdNamespace()) {
    // Containers of stageable elements, as the runtime's collect_leaves takes
    // them: tuple and pair elementwise, array and vector by element type.
    llvm::StringRef name = record->getName();
    const auto* specialization = dyn_cast<ClassTemplateSpecializationDecl>(record);
    if (!specialization ||
        !(name == "tuple" || name == "pair" || name == "array" || name == "vector"))
      return false;
    const TemplateArgumentList& args = specialization->getTemplateArgs();
    auto stageableArgument = [](const TemplateArgument& arg) {
      if (arg.getKind() == TemplateArgument::Pack)
        return llvm::all_of(arg.pack_elements(), [](const TemplateArgument& element) {
          return isStageableType(element.getAsType());
        });
      return isStageableType(arg.getAsType());
    };
    if (name == "array" || name == "vector") return stageableArgument(args[0]);
    return llvm::all_of(args.asArray(), stageableArgument);
  }
  // ag::Tensor, ag::TensorArray and user structs with the ag_fields hook.
  if (isInAgNamespace(record))
    return record->getName() == "Tensor" || record->getName() == "TensorArray";
  return !isStructWithoutFields(type);
}

}  // namespace agc
