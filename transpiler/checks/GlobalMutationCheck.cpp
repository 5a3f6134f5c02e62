// ag-global-mutation. Converted code runs as C++ only while it is traced, so
// `++calls` on a global counts traces, not calls (the TensorFlow guide's
// "Python side effects" example). State that must change on every call is an
// ag::Variable, updated with assign()/assign_add().
//
// Reported, in converted code outside ag::host_function, when the target is a
// plain value (numbers, strings, std containers of them, plain structs; see
// StateAccess.h) and holds no tensor (storing a tensor is ag-tensor-leak):
//   - a write (`=`, `+=`, `++`, a non-const method, binding to T&) to a
//     global, a static member or a static local that is not const;
//   - a write to a local variable of another function, which a marked lambda
//     captured by reference;
//   - in a marked method (or a marked lambda in one), a write to a member of
//     `*this`.
// Not reported: writes inside a create-once guard (`if (!built_) {
// v_.emplace(...); built_ = true; }`), which are meant to happen once.
// In a helper that is converted because marked code calls it, `this` may be
// a local object of the caller, so its members are not reported there.
#include "checks/GlobalMutationCheck.h"

#include "analysis/AstPredicates.h"
#include "checks/StateAccess.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

bool isWrite(Access access) {
  return access == Access::Write || access == Access::ReadWrite;
}

// Whether `var` is declared inside `function` (or a lambda nested in it).
bool isDeclaredWithin(const VarDecl* var, const FunctionDecl* function) {
  for (const DeclContext* context = var->getDeclContext(); context; context = context->getParent())
    if (context == function) return true;
  return false;
}

std::string kindOf(const VarDecl* var) {
  if (var->isStaticDataMember()) return "static member";
  if (var->isStaticLocal()) return "static variable";
  return "global";
}

}  // namespace

void GlobalMutationCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(declRefExpr(to(varDecl())).bind("ref"), this);
  finder.addMatcher(
      memberExpr(hasObjectExpression(cxxThisExpr()), member(fieldDecl())).bind("member"), this);
}

void GlobalMutationCheck::check(const MatchFinder::MatchResult& result) {
  ASTContext& ast = *result.Context;
  const SourceManager& sm = ast.getSourceManager();
  const char* const kHint =
      "use an ag::Variable, updated with assign() or assign_add(), for state that changes on "
      "every call";

  if (const auto* ref = result.Nodes.getNodeAs<DeclRefExpr>("ref")) {
    const FunctionDecl* owner = scope().enclosingConverted(*ref);
    const auto* var = dyn_cast<VarDecl>(ref->getDecl());
    if (!owner || !var || !isPlainValueType(var->getType()) || holdsTensor(var->getType())) return;
    std::string what;
    if (isMutableStaticVariable(var, sm))
      what = kindOf(var) + " '" + var->getNameAsString() + "'";
    else if (var->isLocalVarDeclOrParm() && !isDeclaredWithin(var, owner))
      what = "'" + var->getNameAsString() + "', captured by reference,";
    else
      return;
    if (!isWrite(accessOf(*ref, ast)) || isInCreateOnceGuard(*ref, ast)) return;
    unsigned line = sm.getExpansionLineNumber(ref->getBeginLoc());
    if (!reported_.insert({var, line}).second) return;
    diag(ref->getBeginLoc(), "write to " + what + " happens once, while tracing, not on every call")
        << ref->getSourceRange();
    note(ref->getBeginLoc(), kHint);
    return;
  }

  if (const auto* member = result.Nodes.getNodeAs<MemberExpr>("member")) {
    const FunctionDecl* owner = scope().enclosingConverted(*member);
    const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl());
    if (!owner || !field || !isMarked(owner) || field->getType().isConstQualified() ||
        !isPlainValueType(field->getType()) || holdsTensor(field->getType()))
      return;
    if (!isWrite(accessOf(*member, ast)) || isInCreateOnceGuard(*member, ast)) return;
    unsigned line = sm.getExpansionLineNumber(member->getBeginLoc());
    if (!reported_.insert({field, line}).second) return;
    SourceLocation loc =
        member->isImplicitAccess() ? member->getMemberLoc() : member->getBeginLoc();
    diag(loc, "write to member '" + field->getNameAsString() +
                  "' happens once, while tracing, not on every call")
        << member->getSourceRange();
    note(loc, kHint);
  }
}

}  // namespace agc
