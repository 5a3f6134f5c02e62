// Liveness of local variables in structured code.
//
// Needs: a function body without `goto` (the pipeline rejects `goto` inside
// staged control flow first). Guarantees a conservative answer: a variable is
// reported dead only when every path reassigns it before reading it, or never
// reads it again. Reference parameters are live at the function's exit;
// local references and bindings of a reference declaration (`auto& [a, b] =
// s;`) are live after every statement, as another name may read what they
// write.
//
// Liveness is that of the code as lowered: after a statement from which a
// lowered `break`, `continue` or `return` may escape, the rest of the block
// runs under a guard whose skipped path keeps every variable's value, so a
// later assignment there no longer ends the variable's liveness.
#pragma once

#include "analysis/Activity.h"
#include "clang/AST/ParentMap.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <functional>
#include <memory>

namespace agc {

class Liveness {
 public:
  // `liveAtExit`: variables whose value the caller sees (reference parameters).
  Liveness(const clang::Stmt* body, llvm::SmallPtrSet<const clang::ValueDecl*, 4> liveAtExit);

  // Whether `var` may be read after `stmt` completes, before being reassigned.
  bool liveAfter(const clang::Stmt* stmt, const clang::ValueDecl* var) const;
  // Whether the loop's next test, increment or iteration may read `var`
  // before reassigning it.
  bool liveIntoNextIteration(const clang::Stmt* loop, const clang::ValueDecl* var) const;
  // Whether `stmt` may read `var` before assigning it.
  bool upwardExposed(const clang::Stmt* stmt, const clang::ValueDecl* var) const;
  // Whether one branch of `ifStmt` writes `var` and another reads it first:
  // then a staged `if` carries `var` in its state (AutoGraph's modified and
  // live in), and its branches hand `var` back at their end.
  bool readByOtherBranch(const clang::IfStmt* ifStmt, const clang::ValueDecl* var) const;

  // Statements from which a lowered jump may escape (set by the converter
  // once it has decided which jumps are lowered; none by default).
  void setMayEscape(std::function<bool(const clang::Stmt*)> mayEscape) {
    mayEscape_ = std::move(mayEscape);
  }
  // Which `if` statements are staged (set by the converter; none by default).
  void setIsStaged(std::function<bool(const clang::Stmt*)> isStaged) {
    isStaged_ = std::move(isStaged);
  }

  const clang::Stmt* parentOf(const clang::Stmt* stmt) const;
  const Activity& activity(const clang::Stmt* stmt) const;

 private:
  const clang::Stmt* body_;
  llvm::SmallPtrSet<const clang::ValueDecl*, 4> liveAtExit_;
  bool mayEscape(const clang::Stmt* stmt) const;

  clang::ParentMap parents_;
  std::function<bool(const clang::Stmt*)> mayEscape_;
  std::function<bool(const clang::Stmt*)> isStaged_;
  mutable llvm::DenseMap<const clang::Stmt*, std::unique_ptr<Activity>> activities_;
};

}  // namespace agc
