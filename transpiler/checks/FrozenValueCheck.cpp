// ag-frozen-value. What converted code reads as C++ while it is traced
// becomes a constant of the graph: a later change of a global is not seen
// (the TensorFlow guide's `buggy_add`), nor a change of a plain member
// (`SimpleModel.bias`), and `rand()` returns the same number on every call
// (the TensorFlow guide's `np.random.randn`).
//
// Reported, in converted code outside ag::host_function:
//   - a read of a global, static member or static local that is not const
//     and holds a plain value (numbers, tensors, strings, std containers and
//     plain structs of them; see StateAccess.h);
//   - in a marked method (or a marked lambda in one), a read of a member of
//     `*this` that is such a value and not const (ag::Variable members are
//     read on every call, so they are fine);
//   - calls to rand() and friends, <random> engines and distributions,
//     std::shuffle/std::sample, clocks (std::chrono::*::now, time, clock,
//     gettimeofday, clock_gettime) and getenv.
// Writes are ag-global-mutation's; a read-modify-write is reported there.
#include "checks/FrozenValueCheck.h"

#include "analysis/AstPredicates.h"
#include "checks/StateAccess.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

const char* const kRandomFunctions[] = {
    "rand",    "random",  "rand_r",  "drand48",    "erand48",           "lrand48",
    "nrand48", "mrand48", "jrand48", "arc4random", "arc4random_uniform"};
const char* const kClockFunctions[] = {"time",          "clock",  "gettimeofday",
                                       "clock_gettime", "getenv", "secure_getenv"};

// A <random> engine or distribution type.
bool isRandomType(QualType type) {
  const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  if (!record || !record->isInStdNamespace()) return false;
  llvm::StringRef name = record->getName();
  return name.ends_with("_engine") || name.ends_with("_distribution") || name == "random_device" ||
         name == "seed_seq";
}

std::string exprText(const Expr* expr, const ASTContext& ast) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(expr->getSourceRange()),
                              ast.getSourceManager(), ast.getLangOpts())
      .str();
}

}  // namespace

bool FrozenValueCheck::mayChange(const ValueDecl* decl, ASTContext& ast) {
  if (const auto* var = dyn_cast<VarDecl>(decl);
      var && !var->isStaticLocal() && var->getFormalLinkage() == Linkage::External)
    return true;
  if (const auto* field = dyn_cast<FieldDecl>(decl); field && field->getAccess() == AS_public)
    return true;
  if (!mainWrites_) mainWrites_ = WriteIndex::ofMainFile(ast);
  return mainWrites_->writes(decl);
}

bool FrozenValueCheck::isExcused(const Expr& read, const ValueDecl* decl, ASTContext& ast) {
  if (isInCreateOnceGuard(read, ast)) return true;
  if (holdsTensor(decl->getType())) {
    if (!mainWrites_) mainWrites_ = WriteIndex::ofMainFile(ast);
    for (const Expr* write : mainWrites_->writesOf(decl))
      if (scope().enclosingConverted(*write)) return true;
  }
  // The full expression: `calls = calls + 1` is one finding, a write.
  const Stmt* full = &read;
  for (auto parents = ast.getParents(*full); !parents.empty() && parents[0].get<Expr>();
       parents = ast.getParents(*full))
    full = parents[0].get<Expr>();
  return WriteIndex::of(full).writes(decl);
}

void FrozenValueCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(declRefExpr(to(varDecl())).bind("ref"), this);
  finder.addMatcher(
      memberExpr(hasObjectExpression(cxxThisExpr()), member(fieldDecl())).bind("member"), this);
  finder.addMatcher(callExpr().bind("call"), this);
}

void FrozenValueCheck::check(const MatchFinder::MatchResult& result) {
  ASTContext& ast = *result.Context;
  const SourceManager& sm = ast.getSourceManager();

  if (const auto* ref = result.Nodes.getNodeAs<DeclRefExpr>("ref")) {
    const auto* var = dyn_cast<VarDecl>(ref->getDecl());
    if (!scope().enclosingConverted(*ref) || !var || !isMutableStaticVariable(var, sm) ||
        !isPlainValueType(var->getType()) || accessOf(*ref, ast) != Access::Read ||
        !mayChange(var, ast) || isExcused(*ref, var, ast))
      return;
    unsigned line = sm.getExpansionLineNumber(ref->getBeginLoc());
    if (!reported_.insert({var, line}).second) return;
    std::string kind = var->isStaticDataMember() ? "static member"
                       : var->isStaticLocal()    ? "static variable"
                                                 : "global";
    diag(ref->getBeginLoc(), "'" + var->getNameAsString() + "' is a mutable " + kind +
                                 ": its value while tracing is frozen into the graph")
        << ref->getSourceRange();
    note(var->getLocation(),
         "make it const, pass it as an argument, or make it an ag::Variable to read its current "
         "value on every call");
    return;
  }

  if (const auto* member = result.Nodes.getNodeAs<MemberExpr>("member")) {
    const FunctionDecl* owner = scope().enclosingConverted(*member);
    const auto* field = dyn_cast<FieldDecl>(member->getMemberDecl());
    if (!owner || !field || !isMarked(owner) || field->getType().isConstQualified() ||
        !isPlainValueType(field->getType()) || accessOf(*member, ast) != Access::Read ||
        !mayChange(field, ast) || isExcused(*member, field, ast))
      return;
    unsigned line = sm.getExpansionLineNumber(member->getBeginLoc());
    if (!reported_.insert({field, line}).second) return;
    SourceLocation loc =
        member->isImplicitAccess() ? member->getMemberLoc() : member->getBeginLoc();
    diag(loc, "member '" + field->getNameAsString() +
                  "' is not an ag::Variable: its value while tracing is frozen into the graph")
        << member->getSourceRange();
    note(field->getLocation(),
         "declare it as an ag::Variable to read its current value on every call");
    return;
  }

  const auto* call = result.Nodes.getNodeAs<CallExpr>("call");
  if (!call || !scope().enclosingConverted(*call)) return;
  const FunctionDecl* function = call->getDirectCallee();
  if (!function || !function->getDeclName().isIdentifier()) {
    // A call operator (`dist(gen)`, `gen()`) on a <random> object.
    const auto* op = dyn_cast<CXXOperatorCallExpr>(call);
    if (!op || op->getOperator() != OO_Call || !isRandomType(op->getArg(0)->getType())) return;
    diag(call->getBeginLoc(), "'" + exprText(call, ast) +
                                  "' draws random values once, while tracing: they are frozen "
                                  "into the graph as constants")
        << call->getSourceRange();
    note(call->getBeginLoc(),
         "use ag::random_uniform or ag::random_normal, which draw new values on every call");
    return;
  }
  llvm::StringRef name = function->getName();
  bool random = false;
  std::string shown;
  if (isCLibraryFunction(function) && llvm::is_contained(kRandomFunctions, name)) {
    random = true;
    shown = name.str() + "()";
  } else if (isCLibraryFunction(function) && llvm::is_contained(kClockFunctions, name)) {
    shown = name.str() + "()";
  } else if (function->isInStdNamespace() && (name == "shuffle" || name == "sample") &&
             !isInStdSubNamespace(function, "ranges")) {
    random = true;
    shown = "std::" + name.str();
  } else if (name == "now" && isInStdSubNamespace(function, "chrono") &&
             isa<CXXMethodDecl>(function)) {
    shown =
        "std::chrono::" + cast<CXXMethodDecl>(function)->getParent()->getNameAsString() + "::now()";
  } else if (const auto* memberCall = dyn_cast<CXXMemberCallExpr>(call);
             memberCall && isRandomType(memberCall->getImplicitObjectArgument()->getType()) &&
             (name == "operator()" || name == "generate")) {
    random = true;
    shown = exprText(call, ast);
  } else {
    return;
  }
  if (random) {
    diag(call->getBeginLoc(), "'" + shown +
                                  "' draws random values once, while tracing: they are frozen "
                                  "into the graph as constants")
        << call->getSourceRange();
    note(call->getBeginLoc(),
         "use ag::random_uniform or ag::random_normal, which draw new values on every call");
  } else {
    diag(call->getBeginLoc(), "'" + shown +
                                  "' is read once, while tracing: its value is frozen into the "
                                  "graph as a constant")
        << call->getSourceRange();
    note(call->getBeginLoc(),
         "pass the value as an argument, or read it in ag::host_function on every call");
  }
}

}  // namespace agc
