// ag-tensor-leak. A traced function's tensors are symbolic: they belong to the
// graph being built and mean nothing once the trace ends. Storing one where it
// outlives the call (the TensorFlow guide's `global x; x = a + 1`) leaves a
// dangling symbolic tensor behind; the runtime fails later, far from the cause.
//
// A store is an assignment (`=`, `+=`, ...) whose target or value is a tensor,
// an insertion into a container (push_back, insert, ...) with a tensor
// argument or tensor elements, or a static local initialized with a tensor.
// Its target leaks when the root of the assigned expression (through members,
// subscripts, `*`, `->` and references) is
//   - a variable with static storage (global, static local, static member);
//   - a variable of a function outside the trace (captured by a marked lambda);
//   - a non-const reference or pointer parameter of a marked function;
//   - `this`, inside a marked function or method (non-Variable members).
// In helpers that are converted because marked code calls them, reference
// parameters and `this` may well be locals of the caller, so they are not
// reported there.
#include "checks/TensorLeakCheck.h"

#include "analysis/AstPredicates.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// What an lvalue expression ultimately refers to.
struct Root {
  const VarDecl* var = nullptr;      // a variable (or static member) at the root
  const FieldDecl* field = nullptr;  // the member of `this` at the root
  bool throughThis = false;
  bool throughPointer = false;  // `*p`, `p->x` or `p[i]` on a raw pointer variable
};

Root rootOf(const Expr* expr, int depth = 0) {
  Root root;
  const FieldDecl* lastField = nullptr;
  while (expr) {
    expr = expr->IgnoreParenImpCasts();
    if (const auto* member = dyn_cast<MemberExpr>(expr)) {
      if (const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl())) {
        lastField = field;
      } else if (const auto* var = dyn_cast<VarDecl>(member->getMemberDecl())) {
        root.var = var;  // a static data member
        return root;
      }
      if (member->isArrow() && !isa<CXXThisExpr>(member->getBase()->IgnoreParenImpCasts()))
        root.throughPointer = true;
      expr = member->getBase();
    } else if (isa<CXXThisExpr>(expr)) {
      root.throughThis = true;
      root.field = lastField;
      return root;
    } else if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
      const auto* var = dyn_cast<VarDecl>(ref->getDecl());
      // A local reference stands for what it was bound to.
      if (var && var->getType()->isReferenceType() && var->hasLocalStorage() &&
          !isa<ParmVarDecl>(var) && var->getInit() && depth < 8) {
        Root bound = rootOf(var->getInit(), depth + 1);
        if (bound.var || bound.throughThis) return bound;
      }
      root.var = var;
      return root;
    } else if (const auto* subscript = dyn_cast<ArraySubscriptExpr>(expr)) {
      if (subscript->getBase()->getType()->isPointerType()) root.throughPointer = true;
      expr = subscript->getBase();
    } else if (const auto* unary = dyn_cast<UnaryOperator>(expr);
               unary && unary->getOpcode() == UO_Deref) {
      root.throughPointer = true;
      expr = unary->getSubExpr();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(expr)) {
      OverloadedOperatorKind kind = op->getOperator();
      if ((kind != OO_Subscript && kind != OO_Star && kind != OO_Arrow) || op->getNumArgs() < 1)
        return root;
      expr = op->getArg(0);
    } else if (const auto* call = dyn_cast<CXXMemberCallExpr>(expr)) {
      // v.back(), opt.value(), m.at(k): a reference into the object.
      if (!call->getType().isNull() && !call->isLValue()) return root;
      expr = call->getImplicitObjectArgument();
    } else {
      return root;
    }
  }
  return root;
}

// Whether `var` is declared in `function` or in code nested in it (lambdas).
bool isDeclaredIn(const VarDecl* var, const FunctionDecl* function) {
  const Decl* target = function->getCanonicalDecl();
  for (const DeclContext* context = var->getDeclContext(); context;
       context = context->getParent()) {
    if (const auto* decl = dyn_cast<Decl>(context); decl && decl->getCanonicalDecl() == target)
      return true;
    if (context->isFileContext()) break;
  }
  return false;
}

// "global variable 'x'" and friends, or empty when the store does not leak.
std::string leakTarget(const Root& root, const FunctionDecl* function, const Decl*& declared) {
  declared = nullptr;
  bool marked = isMarked(function);
  if (const VarDecl* var = root.var) {
    declared = var;
    std::string name = "'" + var->getNameAsString() + "'";
    if (var->isStaticDataMember()) return "static member " + name;
    if (var->isStaticLocal()) return "static variable " + name;
    if (var->hasGlobalStorage()) return "global variable " + name;
    if (!isDeclaredIn(var, function)) return name + ", captured from outside the traced function,";
    const auto* param = dyn_cast<ParmVarDecl>(var);
    if (!param || !marked || param->getDeclContext() != function) return "";
    QualType type = param->getType();
    bool outRef = type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified();
    bool outPointer = root.throughPointer && type->isPointerType();
    return outRef || outPointer ? "out-parameter " + name : "";
  }
  if (root.throughThis && marked) {
    if (!root.field) return "'*this'";
    if (isAgClass(root.field->getType(), "Variable")) return "";
    declared = root.field;
    return "member '" + root.field->getNameAsString() + "'";
  }
  return "";
}

}  // namespace

void TensorLeakCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(binaryOperator(isAssignmentOperator()).bind("assign"), this);
  finder.addMatcher(cxxOperatorCallExpr(isAssignmentOperator()).bind("assign"), this);
  finder.addMatcher(
      cxxMemberCallExpr(callee(cxxMethodDecl(hasAnyName(
                            "push_back", "emplace_back", "push_front", "emplace_front", "insert",
                            "emplace", "insert_or_assign", "try_emplace", "push", "assign"))))
          .bind("insert"),
      this);
  finder.addMatcher(varDecl(isStaticLocal(), hasInitializer(expr())).bind("static"), this);
}

void TensorLeakCheck::check(const MatchFinder::MatchResult& result) {
  const Expr* store = nullptr;
  const Expr* target = nullptr;
  bool insertion = false;
  if (const auto* binary = result.Nodes.getNodeAs<BinaryOperator>("assign")) {
    store = binary;
    target = binary->getLHS();
    if (!isTensorOrTensorArray(binary->getLHS()->getType()) &&
        !isTensorOrTensorArray(binary->getRHS()->getType()))
      return;
  } else if (const auto* op = result.Nodes.getNodeAs<CXXOperatorCallExpr>("assign")) {
    if (op->getNumArgs() != 2) return;
    store = op;
    target = op->getArg(0);
    if (!isTensorOrTensorArray(op->getArg(0)->getType()) &&
        !isTensorOrTensorArray(op->getArg(1)->getType()))
      return;
  } else if (const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("insert")) {
    store = call;
    target = call->getImplicitObjectArgument();
    insertion = true;
    if (!target) return;
    // ag::Variable::assign and friends are the right way to keep state, and
    // so are containers of variables.
    const CXXRecordDecl* record = call->getRecordDecl();
    if (!record || isInAgNamespace(record) ||
        hasTypeArgument(target->getType(), [](QualType t) { return isAgClass(t, "Variable"); }))
      return;
    bool tensorArg = llvm::any_of(
        call->arguments(), [](const Expr* arg) { return isTensorOrTensorArray(arg->getType()); });
    if (!tensorArg && !hasTypeArgument(target->getType(), isTensorOrTensorArray)) return;
  } else if (const auto* var = result.Nodes.getNodeAs<VarDecl>("static")) {
    if (!isTensorOrTensorArray(var->getType()) &&
        !hasTypeArgument(var->getType(), isTensorOrTensorArray))
      return;
    const Expr* init = var->getInit();
    if (const auto* construct = dyn_cast<CXXConstructExpr>(init->IgnoreImplicit());
        construct && construct->getNumArgs() == 0)
      return;  // default-constructed: nothing stored yet
    const FunctionDecl* function = scope().enclosingConverted(*init);
    if (!function) return;
    diag(var->getLocation(),
         "tensor stored in static variable '" + var->getNameAsString() +
             "' outlives the traced call; return it instead",
         DiagnosticIDs::Error)
        << SourceRange(var->getBeginLoc(), var->getEndLoc());
    return;
  }
  if (!store || !target) return;
  const FunctionDecl* function = scope().enclosingConverted(*store);
  if (!function) return;
  const Decl* declared = nullptr;
  std::string where = leakTarget(rootOf(target), function, declared);
  if (where.empty()) return;
  std::string text = std::string(insertion ? "tensor added to " : "tensor stored in ") + where +
                     " outlives the traced call; ";
  text += declared && isa<FieldDecl>(declared) ? "return it, or keep the state in an ag::Variable"
                                               : "return it instead";
  diag(store->getBeginLoc(), text, DiagnosticIDs::Error) << store->getSourceRange();
  if (declared)
    note(declared->getLocation(),
         "'" + cast<NamedDecl>(declared)->getNameAsString() + "' is declared here");
}

}  // namespace agc
