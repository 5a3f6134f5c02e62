// If converter: `if (c) A else B` with a tensor condition c becomes
//   ag::if_stmt(c, [&] { A }, [&] { B }, ag::state({...}, ...));
//
// An init statement or a condition variable stays in front, in a block that
// keeps its scope:
//   if (init; c) A          ->  { init; ag::if_stmt(c, ...); }
//   if (ag::Tensor t = e) A ->  { ag::Tensor t = e; ag::if_stmt(t, ...); }
//
// Needs: the pipeline decided the statement is staged (tensor or dependent
// condition). Guarantees: the state
// lists exactly the locals a branch modifies that are live after the `if` or
// into the other branch; a
// local that starts undefined and is assigned on one path only while live
// after is reported as AutoGraph reports it ("must also be initialized in the
// else branch"), at the `if`, with notes at the declaration and the use.
#include "converters/ConversionContext.h"

#include "clang/AST/Expr.h"

namespace agc {

using namespace clang;

// Reports the locals that the staged `if` would leave undefined on one path.
static void checkBothBranchesInitialize(ConversionContext& ctx, const IfStmt* stmt,
                                        const std::vector<const ValueDecl*>& state) {
  for (const ValueDecl* var : state) {
    bool inThen = ctx.liveness.activity(stmt->getThen()).writes(var);
    bool inElse = stmt->getElse() && ctx.liveness.activity(stmt->getElse()).writes(var);
    if (inThen == inElse || ctx.maybeDefinedBefore(stmt, var)) continue;
    ctx.error(stmt->getIfLoc(), ("'" + var->getName() + "' must also be initialized in the " +
                                 (inThen ? "else" : "main") + " branch")
                                    .str());
    ctx.note(var->getLocation(),
             ("'" + var->getName() + "' is declared here without a value").str());
    if (const DeclRefExpr* use = ctx.firstReadAfter(stmt, var))
      ctx.note(use->getLocation(), ("'" + var->getName() + "' is used here, after the if").str());
  }
}

Text convertIf(ConversionContext& ctx, const IfStmt* stmt) {
  Text thenBody = ctx.emitBody(stmt->getThen());
  Text elseBody = stmt->getElse() ? ctx.emitBody(stmt->getElse()) : Text("{}");
  std::vector<const ValueDecl*> state =
      ctx.stateVariables({stmt->getThen(), stmt->getElse()}, stmt, nullptr, "if",
                         /*branches=*/true);
  checkBothBranchesInitialize(ctx, stmt, state);
  std::vector<std::string> flags = ctx.modifiedFlags({stmt->getThen(), stmt->getElse()}, nullptr);

  Text out;
  const Stmt* init = stmt->getInit();
  const DeclStmt* conditionDecl = stmt->getConditionVariableDeclStmt();
  if (init || conditionDecl) out += "{ ";
  if (init) {
    out += ctx.copy(ctx.fullRangeOf(init));
    out += " ";
  }
  if (conditionDecl) {
    out += ctx.copy(conditionDecl);
    out += "; ";
  }
  out += "ag::if_stmt(";
  out += conditionDecl ? Text(stmt->getConditionVariable()->getName().str())
                       : ctx.copy(stmt->getCond());
  out += ", [&] ";
  out += thenBody;
  out += ", [&] ";
  out += elseBody;
  out += ", ";
  out += ConversionContext::stateText(state, flags);
  out += ");";
  if (init || conditionDecl) out += " }";
  return out;
}

}  // namespace agc
