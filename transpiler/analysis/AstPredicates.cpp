#include "analysis/AstPredicates.h"

#include "analysis/TensorTypes.h"

#include "ag/annotate.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"

namespace agc {

using namespace clang;

bool isInNamespace(const Decl* decl, llvm::StringRef name) {
  for (const DeclContext* context = decl->getDeclContext(); context;
       context = context->getParent()) {
    const auto* ns = dyn_cast<NamespaceDecl>(context);
    if (ns && !ns->isInline() && ns->getParent()->getRedeclContext()->isTranslationUnit())
      return ns->getName() == name;
  }
  return false;
}

bool isInAgNamespace(const Decl* decl) {
  return isInNamespace(decl, "ag");
}

bool isWithinStd(const Decl* decl) {
  for (const DeclContext* context = decl->getDeclContext(); context; context = context->getParent())
    if (context->isStdNamespace()) return true;
  return false;
}

bool isInStdSubNamespace(const Decl* decl, llvm::StringRef name) {
  if (!isWithinStd(decl)) return false;
  for (const DeclContext* context = decl->getDeclContext(); context; context = context->getParent())
    if (const auto* ns = dyn_cast<NamespaceDecl>(context); ns && ns->getName() == name) return true;
  return false;
}

bool isCLibraryFunction(const FunctionDecl* function) {
  if (!function->getDeclContext()->getRedeclContext()->isTranslationUnit() ||
      !function->isExternC())
    return false;
  const SourceManager& sm = function->getASTContext().getSourceManager();
  return sm.isInSystemHeader(sm.getExpansionLoc(function->getLocation()));
}

bool isAgClass(QualType type, llvm::StringRef name) {
  if (type.isNull()) return false;
  const CXXRecordDecl* record = type.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl();
  return record && record->getName() == name && isInAgNamespace(record);
}

// A marker written on the declaration itself. Clang copies markers onto
// redeclarations (inherited ones) and onto an explicit specialization, whose
// body is the user's own and unmarked: `copied` holds the locations of its
// primary template's markers.
static bool hasMarker(const Decl* decl, const llvm::DenseSet<unsigned>& copied = {}) {
  for (const auto* attr : decl->specific_attrs<AnnotateAttr>())
    if (attr->getAnnotation() == AG_FUNCTION_ANNOTATION && !attr->isInherited() &&
        !copied.contains(attr->getLocation().getRawEncoding()))
      return true;
  return false;
}

// The locations of the markers of an explicit specialization's primary
// template, which Clang gives the specialization too.
static llvm::DenseSet<unsigned> primaryMarkers(const FunctionDecl* function) {
  llvm::DenseSet<unsigned> found;
  const FunctionTemplateDecl* primary = function->getPrimaryTemplate();
  if (!primary || function->getTemplateSpecializationKind() != TSK_ExplicitSpecialization)
    return found;
  for (const FunctionDecl* redecl : primary->getTemplatedDecl()->redecls())
    for (const auto* attr : redecl->specific_attrs<AnnotateAttr>())
      if (attr->getAnnotation() == AG_FUNCTION_ANNOTATION)
        found.insert(attr->getLocation().getRawEncoding());
  return found;
}

bool isMarked(const Decl* decl) {
  const auto* function = dyn_cast_or_null<FunctionDecl>(decl);
  if (!function) return decl && hasMarker(decl);
  if (const FunctionDecl* pattern = function->getTemplateInstantiationPattern()) function = pattern;
  llvm::DenseSet<unsigned> copied = primaryMarkers(function);
  return llvm::any_of(function->redecls(),
                      [&](const FunctionDecl* redecl) { return hasMarker(redecl, copied); });
}

bool isHostFunctionCall(const CallExpr* call) {
  const FunctionDecl* callee = call->getDirectCallee();
  return callee && callee->getIdentifier() && callee->getName() == "host_function" &&
         call->getNumArgs() > 0 && isInAgNamespace(callee);
}

bool hasTypeArgument(QualType type, llvm::function_ref<bool(QualType)> predicate) {
  if (type.isNull()) return false;
  const auto* record = dyn_cast_or_null<ClassTemplateSpecializationDecl>(
      type.getNonReferenceType().getCanonicalType()->getAsCXXRecordDecl());
  if (!record) return false;
  return llvm::any_of(record->getTemplateArgs().asArray(), [&](const TemplateArgument& arg) {
    return arg.getKind() == TemplateArgument::Type && predicate(arg.getAsType());
  });
}

static bool holdsTensorAt(QualType type, int depth) {
  if (type.isNull() || depth > 6) return false;
  type = type.getNonReferenceType().getCanonicalType();
  if (isTensorType(type) || isAgClass(type, "TensorArray")) return true;
  if (const auto* array = dyn_cast<ArrayType>(type.getTypePtr()))
    return holdsTensorAt(array->getElementType(), depth + 1);
  if (type->isPointerType()) return holdsTensorAt(type->getPointeeType(), depth + 1);
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record) return false;
  if (hasTypeArgument(type, [&](QualType argument) { return holdsTensorAt(argument, depth + 1); }))
    return true;
  if (!record->hasDefinition() || isInNamespace(record, "std") || isInAgNamespace(record))
    return false;
  for (const FieldDecl* field : record->fields())
    if (holdsTensorAt(field->getType(), depth + 1)) return true;
  return false;
}

bool holdsTensor(QualType type) {
  return holdsTensorAt(type, 0);
}

static bool holdsVariableAt(QualType type, int depth) {
  if (type.isNull() || depth > 4) return false;
  type = type.getNonReferenceType().getCanonicalType();
  if (isAgClass(type, "Variable")) return true;
  if (type->isPointerType()) return holdsVariableAt(type->getPointeeType(), depth + 1);
  return hasTypeArgument(type,
                         [&](QualType argument) { return holdsVariableAt(argument, depth + 1); });
}

bool holdsVariable(QualType type) {
  return holdsVariableAt(type, 0);
}

const ValueDecl* storageOf(const Expr* expr) {
  const ValueDecl* field = nullptr;
  while (expr) {
    expr = expr->IgnoreParenImpCasts();
    if (const auto* member = dyn_cast<MemberExpr>(expr)) {
      if (const auto* var = dyn_cast<VarDecl>(member->getMemberDecl())) return var;
      field = member->getMemberDecl();
      expr = member->getBase();
    } else if (isa<CXXThisExpr>(expr)) {
      return field;
    } else if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
      return ref->getDecl();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr)) {
      OverloadedOperatorKind kind = op->getOperator();
      if ((kind != OO_Subscript && kind != OO_Star && kind != OO_Arrow) || op->getNumArgs() < 1)
        return nullptr;
      expr = op->getArg(0);
    } else if (const auto* subscript = dyn_cast<ArraySubscriptExpr>(expr)) {
      expr = subscript->getBase();
    } else {
      return nullptr;
    }
  }
  return nullptr;
}

}  // namespace agc
