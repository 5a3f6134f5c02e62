#include "analysis/Liveness.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace agc {

using namespace clang;

Liveness::Liveness(const Stmt* body, llvm::SmallPtrSet<const ValueDecl*, 4> liveAtExit)
    : body_(body), liveAtExit_(std::move(liveAtExit)), parents_(const_cast<Stmt*>(body)) {}

const Stmt* Liveness::parentOf(const Stmt* stmt) const {
  return stmt == body_ ? nullptr : parents_.getParent(const_cast<Stmt*>(stmt));
}

const Activity& Liveness::activity(const Stmt* stmt) const {
  std::unique_ptr<Activity>& slot = activities_[stmt];
  if (!slot) slot = std::make_unique<Activity>(stmt);
  return *slot;
}

bool Liveness::upwardExposed(const Stmt* stmt, const ValueDecl* var) const {
  if (!stmt) return false;
  if (const auto* block = dyn_cast<CompoundStmt>(stmt)) {
    for (const Stmt* child : block->body()) {
      if (killsFirst(child, var)) return false;
      if (activity(child).reads(var)) return true;
    }
    return false;
  }
  return !killsFirst(stmt, var) && activity(stmt).reads(var);
}

bool Liveness::liveIntoNextIteration(const Stmt* loop, const ValueDecl* var) const {
  auto reads = [&](const Stmt* part) { return part && activity(part).reads(var); };
  if (const auto* whileLoop = dyn_cast<WhileStmt>(loop))
    return reads(whileLoop->getCond()) || upwardExposed(whileLoop->getBody(), var);
  if (const auto* forLoop = dyn_cast<ForStmt>(loop))
    return reads(forLoop->getCond()) || reads(forLoop->getInc()) ||
           upwardExposed(forLoop->getBody(), var);
  if (const auto* rangeLoop = dyn_cast<CXXForRangeStmt>(loop))
    return upwardExposed(rangeLoop->getBody(), var);
  if (const auto* doLoop = dyn_cast<DoStmt>(loop))
    return reads(doLoop->getCond()) || upwardExposed(doLoop->getBody(), var);
  return false;
}

bool Liveness::readByOtherBranch(const IfStmt* ifStmt, const ValueDecl* var) const {
  const Stmt* branches[] = {ifStmt->getThen(), ifStmt->getElse()};
  for (const Stmt* writer : branches)
    for (const Stmt* reader : branches)
      if (writer && reader && writer != reader && activity(writer).writes(var) &&
          upwardExposed(reader, var))
        return true;
  return false;
}

bool Liveness::mayEscape(const Stmt* stmt) const {
  return mayEscape_ && mayEscape_(stmt);
}

// Whether `var` names storage that another name reaches too: a local
// reference (`T& r = box.lo;`) or a binding of a reference declaration
// (`auto& [lo, hi] = box;`). A write through it is seen through the other
// name, so its value counts as read after every statement.
static bool isAlias(const ValueDecl* var) {
  if (isa<ParmVarDecl>(var)) return false;  // the caller's: liveAtExit says
  if (const auto* binding = dyn_cast<BindingDecl>(var))
    return binding->getDecomposedDecl()->getType()->isReferenceType();
  return var->getType()->isReferenceType();
}

bool Liveness::liveAfter(const Stmt* stmt, const ValueDecl* var) const {
  if (isAlias(var)) return true;
  for (;;) {
    const Stmt* parent = parentOf(stmt);
    if (!parent) return liveAtExit_.contains(var);
    if (isa<LambdaExpr>(parent)) return false;
    if (const auto* block = dyn_cast<CompoundStmt>(parent)) {
      bool after = false;
      bool guarded = false;
      for (const Stmt* sibling : block->body()) {
        if (sibling == stmt) {
          after = true;
          guarded = mayEscape(stmt);
          continue;
        }
        if (!after) continue;
        // The statements after a jump are never reached: the value goes where
        // the jump goes (after the loop, its next iteration, the function's
        // exit), which the walk up from this block sees (for a return, more
        // than it needs: live is the safe answer).
        if (isa<BreakStmt, ContinueStmt, ReturnStmt>(sibling)) {
          if (activity(sibling).reads(var)) return true;
          break;
        }
        // A kill under a guard: the guard's skipped path keeps the value to
        // the end of the block; the reads after the kill see the new value.
        if (killsFirst(sibling, var)) {
          if (guarded) break;
          return false;
        }
        if (activity(sibling).reads(var)) return true;
        guarded = guarded || mayEscape(sibling);
      }
    } else if (isa<WhileStmt, ForStmt, CXXForRangeStmt, DoStmt>(parent)) {
      if (liveIntoNextIteration(parent, var)) return true;
    } else if (const auto* ifStmt = dyn_cast<IfStmt>(parent); ifStmt && stmt != ifStmt->getCond() &&
                                                              isStaged_ && isStaged_(ifStmt) &&
                                                              readByOtherBranch(ifStmt, var)) {
      return true;  // a staged branch ends by handing its state back
    }
    stmt = parent;
  }
}

}  // namespace agc
