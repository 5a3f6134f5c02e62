// Jump converter: `break`, `continue` and `return` inside staged control flow.
//
//   break;       -> agc_break_1 = ag::constant(true);
//   continue;    -> agc_continue_1 = ag::constant(true);
//   return e;    -> agc_retval = e; agc_do_return = ag::constant(true);
//                   and `break;` out of a C++ loop it leaves through C++ code
//                   only (ConversionContext::loopLeftByCppBreak)
//
// and the statements after a statement that may have jumped are guarded:
//   S; REST      -> S; ag::if_stmt(ag::not_(flag), [&] { REST }, [&] {}, state);
//
// Needs: the pipeline lowered the jump (a staged construct lies between it
// and its target) and allocated the flags. Guarantees: once a flag is set, no
// further statement of the loop body or function runs; the loop converter
// adds the flag to the loop test, and the function converter declares
// `agc_do_return`/`agc_retval` and ends the function with `return agc_retval;`.
#include "converters/ConversionContext.h"

#include "clang/AST/StmtCXX.h"

namespace agc {

using namespace clang;

Text lowerJump(ConversionContext& ctx, const Stmt* jump) {
  if (const auto* ret = dyn_cast<ReturnStmt>(jump)) {
    Text out;
    if (const Expr* value = ret->getRetValue()) {
      if (ctx.returnValue.empty()) {
        out += ctx.copy(value);  // `return f();` in a void function
        out += "; ";
      } else {
        out += ctx.returnValue + " = ";
        out += ctx.copy(value);
        out += "; ";
      }
    }
    out += ctx.doReturnFlag + " = ag::constant(true);";
    if (ctx.loopLeftByCppBreak(jump)) {
      Text block = "{ ";
      block += out;
      block += " break; }";
      return block;
    }
    return out;
  }
  const LoopFlags& flags = ctx.loopFlags.find(ctx.jumpTarget(jump))->second;
  const std::string& flag = isa<BreakStmt>(jump) ? flags.breakFlag : flags.continueFlag;
  return Text(flag + " = ag::constant(true);");
}

// The statements `children[first..]` of `block`, from `position` to the
// closing brace, guarded after each statement that may jump.
static Text emitStatements(ConversionContext& ctx, const CompoundStmt* block,
                           llvm::ArrayRef<const Stmt*> children, std::size_t position) {
  std::size_t closing = ctx.offsetOf(block->getRBracLoc());
  Text out;
  for (std::size_t i = 0; i < children.size(); ++i) {
    CharRange range = ctx.fullRangeOf(children[i]);
    out += ctx.file.source.copy(position, range.begin);
    out += ctx.emit(children[i]);
    position = range.end;
    std::vector<std::string> flags = ctx.escapingFlags(children[i]);
    llvm::ArrayRef<const Stmt*> rest = children.drop_front(i + 1);
    bool restHasCode = llvm::any_of(rest, [](const Stmt* s) { return !isa<NullStmt>(s); });
    if (flags.empty() || !restHasCode) continue;
    std::vector<const ValueDecl*> state =
        ctx.stateVariables(rest, children.back(), nullptr, "block (it follows a staged jump)");
    Text guarded = " ag::if_stmt(" + ConversionContext::noneOf(flags) + ", [&] {";
    guarded += emitStatements(ctx, block, rest, position);
    guarded += "}, [&] {}, ";
    guarded += ConversionContext::stateText(state, ctx.modifiedFlags(rest, nullptr));
    guarded += ");";
    return out + guarded;
  }
  out += ctx.file.source.copy(position, closing);
  return out;
}

Text emitBlock(ConversionContext& ctx, const CompoundStmt* block, const Text& prefix,
               const Text& suffix) {
  std::size_t open = ctx.offsetOf(block->getLBracLoc());
  std::size_t close = ctx.offsetOf(block->getRBracLoc());
  std::vector<const Stmt*> children(block->body_begin(), block->body_end());
  Text out = ctx.file.source.copy(open, open + 1);
  out += prefix;
  out += emitStatements(ctx, block, children, open + 1);
  out += suffix;
  out += ctx.file.source.copy(close, close + 1);
  return out;
}

}  // namespace agc
