#include "converters/Pipeline.h"

#include "analysis/Staging.h"
#include "analysis/TensorTypes.h"

#include "ag/annotate.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace agc {

using namespace clang;

namespace {

const char* jumpName(const Stmt* jump) {
  if (isa<BreakStmt>(jump)) return "break";
  if (isa<ContinueStmt>(jump)) return "continue";
  return "return";
}

class BodyPipeline {
 public:
  BodyPipeline(FileContext& file, const FunctionBody& function)
      : function_(function),
        ctx_(file, function.body, function.returnType, function.liveAtExit),
        statements_(bodyStatements(function.body)) {}

  std::optional<Text> run(bool& changed) {
    // 1. Staging: an if/while/for with a tensor (or dependent) condition.
    stageTensorConditions();
    // 2. Jumps: break/continue/return crossing staged code become flags; a
    //    lowered break or return stages its loop too. Repeats to a fixpoint.
    planJumps();
    // 3. Unsupported constructs inside staged code: goto, try/throw,
    //    coroutines, switch on a tensor, macros we cannot rewrite.
    rejectUnsupported();
    if (ctx_.failed) return std::nullopt;
    // 4. Names for the flags, free of collisions with user names.
    allocateFlags();
    if (ctx_.failed) return std::nullopt;
    // 5. Logical expressions (&&, ||, !, ?:) over tensors, as edits that the
    //    statement converters copy along.
    unsigned logicalEdits = convertLogicalExpressions(ctx_);
    // 6. Control flow: if, while, for, jumps; each converter emits its own
    //    construct and asks the context for the statements nested in it.
    for (const Stmt* stmt : ctx_.staged) ctx_.markDirty(stmt);
    for (const Stmt* jump : ctx_.lowered) ctx_.markDirty(jump);
    Text body = ctx_.lowerReturns
                    ? ctx_.emitBody(function_.body, returnPrologue(), returnEpilogue())
                    : ctx_.emit(function_.body);
    if (ctx_.failed) return std::nullopt;
    changed = ctx_.isDirty(function_.body) || logicalEdits > 0;
    return body;
  }

 private:
  void stageTensorConditions() {
    for (const Stmt* stmt : statements_)
      if (isStaged(stmt)) stage(stmt, nullptr);
  }

  // Stages `stmt`; `cause` is the jump that requires it, for diagnostics.
  void stage(const Stmt* stmt, const Stmt* cause) {
    if (ctx_.staged.contains(stmt)) return;
    if (const auto* rangeLoop = dyn_cast<CXXForRangeStmt>(stmt);
        rangeLoop && !isStagedRange(rangeLoop->getRangeInit())) {
      ctx_.error(cause->getBeginLoc(),
                 (std::string("cannot lower '") + jumpName(cause) +
                  "' out of staged code: its loop iterates over a non-tensor range"));
      ctx_.note(rangeLoop->getForLoc(),
                "iterate over a tensor or ag::range(...) to stage this loop");
      return;
    }
    ctx_.staged.insert(stmt);
    if (cause) ctx_.stagedByJump[stmt] = cause;
  }

  void planJumps() {
    std::vector<const Stmt*> jumps;
    for (const Stmt* stmt : statements_)
      if (isa<BreakStmt, ContinueStmt, ReturnStmt>(stmt)) jumps.push_back(stmt);
    for (bool changed = true; changed && !ctx_.failed;) {
      std::size_t stagedBefore = ctx_.staged.size();
      changed = false;
      for (const Stmt* jump : jumps) {
        // A lowered return stages the loops it leaves, but the one it leaves
        // with a C++ break; a jump lowered later may guard it and take that away.
        if (isa<ReturnStmt>(jump) && ctx_.lowered.contains(jump)) stageLoopsLeftBy(jump);
        if (ctx_.lowered.contains(jump) || !needsLowering(jump)) continue;
        ctx_.lowered.insert(jump);
        changed = true;
        const Stmt* target = ctx_.jumpTarget(jump);
        if (isa<ReturnStmt>(jump)) {
          ctx_.lowerReturns = true;
          stageLoopsLeftBy(jump);
        } else if (isa<SwitchStmt>(target)) {
          ctx_.error(jump->getBeginLoc(),
                     "cannot lower 'break' out of a switch from inside staged code");
          ctx_.note(target->getBeginLoc(), "replace the switch with if/else");
        } else if (isa<BreakStmt>(jump)) {
          stage(target, jump);
        }
      }
      changed = changed || ctx_.staged.size() != stagedBefore;
    }
  }

  void stageLoopsLeftBy(const Stmt* ret) {
    const Stmt* leftByBreak = ctx_.loopLeftByCppBreak(ret);
    for (const Stmt* at = ctx_.liveness.parentOf(ret); at; at = ctx_.liveness.parentOf(at))
      if (isLoop(at) && at != leftByBreak && !ctx_.staged.contains(at)) stage(at, ret);
  }

  bool needsLowering(const Stmt* jump) const {
    if (isa<ReturnStmt>(jump) && ctx_.lowerReturns) return true;
    const Stmt* target = ctx_.jumpTarget(jump);
    if (target && ctx_.staged.contains(target)) return true;
    // After a lowered jump, the rest of the block is a guard's lambda.
    if (ctx_.isGuarded(jump, target)) return true;
    for (const Stmt* at = ctx_.liveness.parentOf(jump); at && at != target;
         at = ctx_.liveness.parentOf(at))
      if (ctx_.staged.contains(at)) return true;
    return false;
  }

  bool isInStagedCode(const Stmt* stmt) const {
    for (const Stmt* at = ctx_.liveness.parentOf(stmt); at; at = ctx_.liveness.parentOf(at))
      if (ctx_.staged.contains(at)) return true;
    return false;
  }

  void rejectUnsupported() {
    for (const Stmt* stmt : statements_) {
      // A dependent switch may well be on an integer: only a known tensor is an error.
      if (const auto* switchStmt = dyn_cast<SwitchStmt>(stmt);
          switchStmt && isTensorType(spelled(switchStmt->getCond())->getType())) {
        ctx_.error(switchStmt->getSwitchLoc(), "switch on a tensor is not supported");
        ctx_.note(switchStmt->getSwitchLoc(), "use if/else if with tensor comparisons instead");
      }
      if (ctx_.staged.contains(stmt)) rejectUnconvertibleConstruct(stmt);
      if (ctx_.lowered.contains(stmt) &&
          (stmt->getBeginLoc().isMacroID() || !ctx_.rangeOf(stmt).valid)) {
        ctx_.error(stmt->getBeginLoc(), std::string("cannot lower '") + jumpName(stmt) +
                                            "' written inside a macro expansion");
        ctx_.note(stmt->getBeginLoc(), "expand the macro by hand");
      }
      if (!isInStagedCode(stmt)) continue;
      if (isa<GotoStmt, IndirectGotoStmt>(stmt)) {
        ctx_.error(stmt->getBeginLoc(), "'goto' is not supported inside staged control flow");
        ctx_.note(stmt->getBeginLoc(), "restructure the code with if, while or break");
      } else if (isa<CXXTryStmt>(stmt)) {
        ctx_.error(stmt->getBeginLoc(), "'try' is not supported inside staged control flow");
        ctx_.note(stmt->getBeginLoc(),
                  "a graph cannot catch exceptions; move the try block out of the staged code");
      } else if (isa<CXXThrowExpr>(stmt)) {
        ctx_.error(stmt->getBeginLoc(), "'throw' is not supported inside staged control flow");
        ctx_.note(stmt->getBeginLoc(),
                  "use ag::assert_that(condition, message) to fail at run time");
      } else if (isa<CoawaitExpr, CoyieldExpr, CoreturnStmt>(stmt)) {
        ctx_.error(stmt->getBeginLoc(),
                   "coroutines (co_await, co_yield, co_return) are not supported inside "
                   "staged control flow");
        ctx_.note(stmt->getBeginLoc(), "move the coroutine code out of the staged code");
      }
    }
  }

  // A staged construct whose pieces come from a macro, or a staged while that
  // declares a variable in its condition (evaluated before every iteration),
  // cannot be rewritten as lambdas.
  void rejectUnconvertibleConstruct(const Stmt* stmt) {
    SourceLocation keyword = stmt->getBeginLoc();
    bool inMacro =
        keyword.isMacroID() || stmt->getEndLoc().isMacroID() || !ctx_.rangeOf(stmt).valid;
    for (const Stmt* part :
         {static_cast<const Stmt*>(conditionOf(stmt)), bodyOf(stmt), elseOf(stmt)})
      if (part && !ctx_.rangeOf(part).valid) inMacro = true;
    if (inMacro) {
      ctx_.error(keyword, std::string("cannot convert a staged ") + constructName(stmt) +
                              " written inside a macro expansion");
      ctx_.note(keyword, "expand the macro by hand, or use ag::if_stmt/ag::while_stmt directly");
      return;
    }
    const auto* whileStmt = dyn_cast<WhileStmt>(stmt);
    if (whileStmt && whileStmt->getConditionVariable()) {
      ctx_.error(keyword, std::string("a staged ") + constructName(stmt) +
                              " cannot declare a variable in its condition");
      ctx_.note(keyword, "declare the variable before the statement");
    }
    if (const auto* rangeLoop = dyn_cast<CXXForRangeStmt>(stmt);
        rangeLoop && rangeLoop->getInit()) {
      ctx_.error(keyword, "a staged for loop cannot have an init statement");
      ctx_.note(keyword, "declare the variable before the loop");
    }
  }

  void allocateFlags() {
    int loopNumber = 0;
    for (const Stmt* stmt : statements_) {
      if (!isLoop(stmt)) continue;
      // A staged do-while runs its body once before testing: a first-pass flag.
      if (isa<DoStmt>(stmt) && ctx_.staged.contains(stmt))
        ctx_.loopFlags[stmt].firstFlag = ctx_.file.names.fresh("agc_first", ctx_.localNames);
      bool hasBreak = false, hasContinue = false;
      for (const Stmt* jump : ctx_.lowered) {
        if (ctx_.jumpTarget(jump) != stmt) continue;
        hasBreak |= isa<BreakStmt>(jump);
        hasContinue |= isa<ContinueStmt>(jump);
      }
      if (!hasBreak && !hasContinue) continue;
      std::string number = std::to_string(++loopNumber);
      LoopFlags& flags = ctx_.loopFlags[stmt];
      if (hasBreak) flags.breakFlag = ctx_.file.names.fresh("agc_break_" + number, ctx_.localNames);
      if (hasContinue)
        flags.continueFlag = ctx_.file.names.fresh("agc_continue_" + number, ctx_.localNames);
    }
    if (ctx_.lowerReturns && function_.returnType->isUndeducedType()) {
      ctx_.error(
          function_.body->getBeginLoc(),
          "cannot lower 'return' out of staged code in a function with a deduced return type");
      ctx_.note(function_.body->getBeginLoc(), "spell out the return type, e.g. ag::Tensor");
    } else if (ctx_.lowerReturns && function_.returnType->isReferenceType()) {
      // The value is kept in a local until the function ends; a reference
      // cannot be declared without what it refers to.
      ctx_.error(function_.body->getBeginLoc(),
                 "cannot lower 'return' out of staged code in a function that returns a reference");
      ctx_.note(function_.body->getBeginLoc(), "return by value, e.g. ag::Tensor");
    }
    if (ctx_.lowerReturns) {
      ctx_.doReturnFlag = ctx_.file.names.fresh("agc_do_return", ctx_.localNames);
      if (!function_.returnType->isVoidType())
        ctx_.returnValue = ctx_.file.names.fresh(AG_RETVAL_PREFIX, ctx_.localNames);
    }
  }

  Text returnPrologue() const {
    std::string prologue = " ag::Tensor " + ctx_.doReturnFlag + " = ag::constant(false);";
    if (!ctx_.returnValue.empty())
      prologue += " " + function_.returnTypeText + " " + ctx_.returnValue + ";";
    return prologue;
  }

  Text returnEpilogue() const {
    return ctx_.returnValue.empty() ? Text() : Text(" return " + ctx_.returnValue + ";");
  }

  const FunctionBody& function_;
  ConversionContext ctx_;
  std::vector<const Stmt*> statements_;  // of the body, outside lambdas
};

}  // namespace

std::optional<Text> convertBody(FileContext& file, const FunctionBody& function, bool& changed) {
  changed = false;
  return BodyPipeline(file, function).run(changed);
}

}  // namespace agc
