// Loop converter: staged `while`, C-style `for` and range `for`.
//
//   while (c) B           -> ag::while_stmt([&] { return c; }, [&] { B }, state);
//   for (I; c; S) B       -> { I ag::while_stmt([&] { return c; }, [&] { B S; }, state); }
//   for (auto i : t) B    -> ag::for_stmt(t, ag::no_extra_test, [&](ag::Tensor i) { B }, state);
//   for (auto [x, y] : ds) B   (ds an ag::data::Dataset)
//                         -> ag::for_stmt(ds, ag::no_extra_test,
//                                         [&](auto&& e) { auto [x, y] = e; B }, state);
//   do B while (c);       -> { ag::Tensor first = ag::constant(true);
//                              ag::while_stmt([&] { return ag::or_(first, [&] { return c; }); },
//                                             [&] { first = ag::constant(false); B }, state); }
//
// Needs: the pipeline decided the loop is staged (tensor condition or range,
// or a lowered break/return inside it) and allocated its flags. Guarantees:
// a lowered break or return also ends the loop (its flag joins the test), a
// lowered continue still runs the `for` step, and the state lists the locals
// the loop modifies that are live after it or into the next iteration. A local
// that is undefined before the loop but carried by it is an error, as in
// AutoGraph ("must be defined before the loop").
#include "analysis/TensorTypes.h"
#include "converters/ConversionContext.h"

#include "llvm/ADT/STLExtras.h"

#include "clang/AST/StmtCXX.h"

namespace agc {

using namespace clang;

namespace {

// Declarations placed before the loop (break flag) and at the top of its body
// (continue flag).
struct LoopFlagCode {
  std::vector<std::string> exitFlags;  // break flag and do-return flag
  Text beforeLoop;
  Text bodyPrefix;
};

LoopFlagCode flagCode(ConversionContext& ctx, const Stmt* loop) {
  LoopFlagCode code;
  auto found = ctx.loopFlags.find(loop);
  if (found != ctx.loopFlags.end()) {
    const LoopFlags& flags = found->second;
    if (!flags.breakFlag.empty()) {
      code.exitFlags.push_back(flags.breakFlag);
      code.beforeLoop = "ag::Tensor " + flags.breakFlag + " = ag::constant(false); ";
    }
    if (!flags.continueFlag.empty())
      code.bodyPrefix = " ag::Tensor " + flags.continueFlag + " = ag::constant(false);";
  }
  // A lowered return inside the loop ends it too.
  if (ctx.lowerReturns && llvm::is_contained(ctx.escapingFlags(loop), ctx.doReturnFlag))
    code.exitFlags.push_back(ctx.doReturnFlag);
  return code;
}

void checkDefinedBeforeLoop(ConversionContext& ctx, const Stmt* loop,
                            const std::vector<const ValueDecl*>& state) {
  for (const ValueDecl* var : state) {
    if (ctx.maybeDefinedBefore(loop, var)) continue;
    ctx.error(loop->getBeginLoc(),
              ("'" + var->getName() + "' must be defined before the loop").str());
    ctx.note(var->getLocation(),
             ("'" + var->getName() + "' is declared here without a value").str());
  }
}

Text wrapInBlock(const Text& beforeLoop, const Text& loop) {
  if (beforeLoop.segments().empty()) return loop;
  return Text("{ ") + beforeLoop + loop + Text(" }");
}

// `[&] { return TEST; }` where the test also stops on the exit flags.
Text loopTest(const std::vector<std::string>& exitFlags, const Text& condition) {
  Text test = "[&] { return ";
  if (exitFlags.empty()) {
    test += condition;
  } else {
    test += "ag::and_(" + ConversionContext::noneOf(exitFlags) + ", [&] { return ";
    test += condition;
    test += "; })";
  }
  test += "; }";
  return test;
}

}  // namespace

Text convertWhile(ConversionContext& ctx, const WhileStmt* stmt) {
  LoopFlagCode flags = flagCode(ctx, stmt);
  Text body = ctx.emitBody(stmt->getBody(), flags.bodyPrefix);
  std::vector<const ValueDecl*> state =
      ctx.stateVariables({stmt->getCond(), stmt->getBody()}, stmt, stmt, "while loop");
  checkDefinedBeforeLoop(ctx, stmt, state);
  Text out = "ag::while_stmt(";
  out += loopTest(flags.exitFlags, ctx.copy(stmt->getCond()));
  out += ", [&] ";
  out += body;
  out += ", ";
  out += ConversionContext::stateText(state, ctx.modifiedFlags({stmt->getBody()}, stmt));
  out += ");";
  return wrapInBlock(flags.beforeLoop, out);
}

Text convertFor(ConversionContext& ctx, const ForStmt* stmt) {
  LoopFlagCode flags = flagCode(ctx, stmt);
  Text init;
  if (const Stmt* initStmt = stmt->getInit()) {
    init = ctx.copy(ctx.fullRangeOf(initStmt));
    if (!isa<DeclStmt>(initStmt)) init += ";";
    init += " ";
  }
  Text body = ctx.emitBody(stmt->getBody(), flags.bodyPrefix);
  Text step;
  if (const Expr* inc = stmt->getInc()) {
    step = ctx.copy(inc);
    step += ";";
    if (!flags.exitFlags.empty()) {
      // A break or return skips the step, as in C++.
      std::vector<const ValueDecl*> stepState = ctx.stateVariables({inc}, inc, stmt, "for loop");
      Text guarded = "ag::if_stmt(" + ConversionContext::noneOf(flags.exitFlags) + ", [&] { ";
      guarded += step;
      guarded += " }, [&] {}, ";
      guarded += ConversionContext::stateText(stepState, {});
      guarded += ");";
      step = guarded;
    }
  }
  std::vector<const ValueDecl*> state = ctx.stateVariables(
      {stmt->getCond(), stmt->getBody(), stmt->getInc()}, stmt, stmt, "for loop");
  checkDefinedBeforeLoop(ctx, stmt, state);
  Text condition = stmt->getCond() ? ctx.copy(stmt->getCond()) : Text("true");

  Text out = "{ ";
  out += flags.beforeLoop;
  out += init;
  out += "ag::while_stmt(";
  out += loopTest(flags.exitFlags, condition);
  out += ", [&] { ";
  out += body;
  out += " ";
  out += step;
  out += " }, ";
  out += ConversionContext::stateText(state, ctx.modifiedFlags({stmt->getBody()}, stmt));
  out += "); }";
  return out;
}

// The loop variable's declaration as written, up to the colon: `auto [x, y]`,
// `const auto& e`.
Text loopVariableText(ConversionContext& ctx, const CXXForRangeStmt* stmt) {
  std::string_view text = ctx.file.source.buffer();
  std::size_t begin = ctx.offsetOf(stmt->getLoopVariable()->getBeginLoc());
  std::size_t end = ctx.offsetOf(stmt->getColonLoc());
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
  return ctx.copy(CharRange{begin, end, true});
}

Text convertRangeFor(ConversionContext& ctx, const CXXForRangeStmt* stmt) {
  LoopFlagCode flags = flagCode(ctx, stmt);
  // A dataset's element may be a tuple: the lambda takes it whole and the
  // loop variable's own declaration unpacks it.
  const bool overDataset = isDatasetType(stmt->getRangeInit()->getType());
  std::string element;
  Text prefix = flags.bodyPrefix;
  if (overDataset) {
    element = ctx.file.names.fresh("agc_element", ctx.localNames);
    prefix =
        Text(" ") + loopVariableText(ctx, stmt) + Text(" = " + element + ";") + flags.bodyPrefix;
  }
  Text body = ctx.emitBody(stmt->getBody(), prefix);
  std::vector<const ValueDecl*> state =
      ctx.stateVariables({stmt->getBody()}, stmt, stmt, "for loop");
  checkDefinedBeforeLoop(ctx, stmt, state);

  Text out = "ag::for_stmt(";
  out += ctx.copy(stmt->getRangeInit());
  out += ", ";
  out += flags.exitFlags.empty()
             ? Text("ag::no_extra_test")
             : Text("[&] { return " + ConversionContext::noneOf(flags.exitFlags) + "; }");
  out += overDataset ? ", [&](auto&& " + element + ") "
                     : ", [&](ag::Tensor " + stmt->getLoopVariable()->getName().str() + ") ";
  out += body;
  out += ", ";
  out += ConversionContext::stateText(state, ctx.modifiedFlags({stmt->getBody()}, stmt));
  out += ");";
  return wrapInBlock(flags.beforeLoop, out);
}

Text convertDo(ConversionContext& ctx, const DoStmt* stmt) {
  LoopFlagCode flags = flagCode(ctx, stmt);
  const std::string& first = ctx.loopFlags[stmt].firstFlag;
  Text body = ctx.emitBody(stmt->getBody(),
                           Text(" " + first + " = ag::constant(false);") + flags.bodyPrefix);
  std::vector<const ValueDecl*> state =
      ctx.stateVariables({stmt->getCond(), stmt->getBody()}, stmt, stmt, "do-while loop");
  checkDefinedBeforeLoop(ctx, stmt, state);
  std::vector<std::string> stateFlags = ctx.modifiedFlags({stmt->getBody()}, stmt);
  stateFlags.insert(stateFlags.begin(), first);
  Text condition = "ag::or_(" + first + ", [&] { return ";
  condition += ctx.copy(stmt->getCond());
  condition += "; })";

  Text out = "{ ";
  out += flags.beforeLoop;
  out += "ag::Tensor " + first + " = ag::constant(true); ";
  out += "ag::while_stmt(";
  out += loopTest(flags.exitFlags, condition);
  out += ", [&] ";
  out += body;
  out += ", ";
  out += ConversionContext::stateText(state, stateFlags);
  out += "); }";
  return out;
}

}  // namespace agc
