#include "analysis/TraceTypes.h"

#include "analysis/AstPredicates.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclFriend.h"
#include "clang/AST/DeclTemplate.h"

namespace agc {

using namespace clang;

bool derivesFromModule(const CXXRecordDecl* record) {
  if (!record->hasDefinition()) return false;
  for (const CXXBaseSpecifier& base : record->bases()) {
    if (base.getType()->isDependentType() || isAgClass(base.getType(), "Module")) return true;
    if (const CXXRecordDecl* baseRecord = base.getType()->getAsCXXRecordDecl())
      if (derivesFromModule(baseRecord)) return true;
  }
  return false;
}

namespace {

bool isModule(const CXXRecordDecl* record) {
  return record &&
         ((record->getName() == "Module" && isInAgNamespace(record)) || derivesFromModule(record));
}

// A std:: class template specialization named one of `names`: its record.
const ClassTemplateSpecializationDecl* stdTemplate(const CXXRecordDecl* record,
                                                   std::initializer_list<llvm::StringRef> names) {
  const auto* specialization = dyn_cast_or_null<ClassTemplateSpecializationDecl>(record);
  if (!specialization || !isWithinStd(specialization)) return nullptr;
  for (llvm::StringRef name : names)
    if (specialization->getName() == name) return specialization;
  return nullptr;
}

// Whether the first `count` type arguments have trace types.
bool typeArgumentsTraceable(const ClassTemplateSpecializationDecl* specialization, unsigned count) {
  const TemplateArgumentList& args = specialization->getTemplateArgs();
  for (unsigned i = 0; i < args.size() && i < count; ++i) {
    const TemplateArgument& arg = args[i];
    if (arg.getKind() == TemplateArgument::Type && !hasTraceType(arg.getAsType())) return false;
    if (arg.getKind() == TemplateArgument::Pack)
      for (const TemplateArgument& element : arg.pack_elements())
        if (element.getKind() == TemplateArgument::Type && !hasTraceType(element.getAsType()))
          return false;
  }
  return true;
}

bool isStringLike(QualType type) {
  type = type.getNonReferenceType().getCanonicalType();
  if (const auto* pointer = type->getAs<PointerType>())
    return pointer->getPointeeType()->isCharType();
  if (type->isArrayType()) return type->getArrayElementTypeNoTypeQual()->isCharType();
  return stdTemplate(type->getAsCXXRecordDecl(), {"basic_string", "basic_string_view"}) != nullptr;
}

// An `ag_trace_type` or `ag_fields` that ADL may find for the record: one in
// its namespace, or a friend of it.
bool hasTraceHook(const CXXRecordDecl* record) {
  auto isHook = [](const NamedDecl* decl) {
    return decl->getDeclName().isIdentifier() &&
           (decl->getName() == "ag_trace_type" || decl->getName() == "ag_fields");
  };
  for (const FriendDecl* friendDecl : record->friends())
    if (const NamedDecl* declared = friendDecl->getFriendDecl(); declared && isHook(declared))
      return true;
  // lookup() sees every reopening of the namespace.
  const DeclContext* scope = record->getDeclContext()->getEnclosingNamespaceContext();
  IdentifierTable& names = record->getASTContext().Idents;
  return !scope->lookup(&names.get("ag_trace_type")).empty() ||
         !scope->lookup(&names.get("ag_fields")).empty();
}

}  // namespace

bool hasTraceType(QualType type) {
  if (type.isNull()) return false;
  type = type.getNonReferenceType().getCanonicalType().getUnqualifiedType();
  if (type->isDependentType()) return true;
  if (isAgClass(type, "Tensor") || isAgClass(type, "TensorSpec") || isAgClass(type, "Variable"))
    return true;
  if (type->isBooleanType() || type->isIntegralOrEnumerationType() || type->isRealFloatingType() ||
      isStringLike(type))
    return true;
  if (const auto* pointer = type->getAs<PointerType>()) {
    return isModule(pointer->getPointeeType()->getAsCXXRecordDecl());
  }
  const CXXRecordDecl* record = type->getAsCXXRecordDecl();
  if (!record) return false;
  if (isModule(record)) return true;
  if (const auto* sequence = stdTemplate(record, {"vector", "array"}))
    return typeArgumentsTraceable(sequence, 1);
  if (const auto* tuple = stdTemplate(record, {"tuple", "pair"}))
    return typeArgumentsTraceable(tuple, ~0u);
  if (const auto* map = stdTemplate(record, {"map", "unordered_map"}))
    return typeArgumentsTraceable(map, 2);
  return hasTraceHook(record);
}

}  // namespace agc
