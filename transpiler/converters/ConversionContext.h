// What every converter of one function shares: the decisions taken by the
// pipeline (which statements are staged, which jumps are lowered to flags),
// the analyses, source ranges and text emission.
//
// Converters build `Text` for the statements they own and call `emit` for the
// statements nested inside, so each converter handles one construct only.
#pragma once

#include "analysis/Liveness.h"
#include "rewrite/SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <set>
#include <string>
#include <vector>

namespace agc {

// Diagnostics printed by Clang's engine, so they look like Clang's own.
class Diagnostics {
 public:
  explicit Diagnostics(clang::DiagnosticsEngine& engine);
  clang::DiagnosticBuilder error(clang::SourceLocation loc, llvm::StringRef text);
  clang::DiagnosticBuilder note(clang::SourceLocation loc, llvm::StringRef text);
  unsigned errorCount() const { return errors_; }

 private:
  clang::DiagnosticsEngine& engine_;
  unsigned errorId_, noteId_;
  unsigned errors_ = 0;
};

// Names agc introduces. A name is taken when any `agc_` word of the file spells
// it; then a numeric suffix is appended until it is free.
class NameAllocator {
 public:
  explicit NameAllocator(std::string_view fileText);
  // A fresh name in the scope `scope` (names in different scopes may repeat).
  std::string fresh(const std::string& base, std::set<std::string>& scope) const;

 private:
  std::set<std::string> fileWords_;
};

// Everything shared by the converters of the whole translation unit.
struct FileContext {
  clang::ASTContext& ast;
  SourceText& source;
  Diagnostics& diags;
  NameAllocator names;
  std::set<std::string> fileScopeNames;  // agc_impl_*, agc_fn_*
};

struct CharRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  bool valid = false;
};

// The flags of one loop whose break or continue is lowered.
struct LoopFlags {
  std::string breakFlag;     // empty when no break is lowered
  std::string continueFlag;  // empty when no continue is lowered
  std::string firstFlag;     // a staged do-while's first pass
};

class ConversionContext {
 public:
  ConversionContext(FileContext& file, const clang::Stmt* body, clang::QualType returnType,
                    llvm::SmallPtrSet<const clang::ValueDecl*, 4> liveAtExit);

  FileContext& file;
  const clang::Stmt* body;
  clang::QualType returnType;
  Liveness liveness;

  // --- Decisions of the pipeline -------------------------------------------
  llvm::DenseSet<const clang::Stmt*> staged;   // if/while/for/range-for
  llvm::DenseSet<const clang::Stmt*> lowered;  // break/continue/return
  llvm::DenseMap<const clang::Stmt*, LoopFlags> loopFlags;
  // Loops staged only because a lowered jump leaves them: loop -> jump.
  llvm::DenseMap<const clang::Stmt*, const clang::Stmt*> stagedByJump;
  bool lowerReturns = false;
  std::string doReturnFlag, returnValue;
  std::set<std::string> localNames;  // generated names used in this function
  bool failed = false;               // an error was reported for this function

  // --- Source ---------------------------------------------------------------
  const clang::SourceManager& sourceManager() const { return file.ast.getSourceManager(); }
  // Offset of a location's spelling in the main file (expansion for macros).
  std::size_t offsetOf(clang::SourceLocation loc) const;
  // The characters of a statement or expression; invalid across macro bounds.
  CharRange rangeOf(const clang::Stmt* stmt) const;
  // Like rangeOf, plus the `;` that ends an expression or jump statement.
  CharRange fullRangeOf(const clang::Stmt* stmt) const;
  Text copy(CharRange range) const { return file.source.copy(range.begin, range.end); }
  Text copy(const clang::Stmt* stmt) const { return copy(rangeOf(stmt)); }

  // --- Emission -------------------------------------------------------------
  // The converted text of a statement (its full range).
  Text emit(const clang::Stmt* stmt);
  // `{ prefix ... suffix }`: a body as a braced block, for a lambda.
  Text emitBody(const clang::Stmt* stmt, const Text& prefix = {}, const Text& suffix = {});
  // Whether the statement contains anything staged or lowered.
  bool isDirty(const clang::Stmt* stmt) const { return dirty_.contains(stmt); }
  void markDirty(const clang::Stmt* stmt);

  // --- Jumps ----------------------------------------------------------------
  // The loop or switch a break/continue leaves; null for return.
  const clang::Stmt* jumpTarget(const clang::Stmt* jump) const;
  // The C++ loop that a lowered `return` leaves with a plain `break` after
  // setting its flag: the innermost loop, when it is not staged and only C++
  // code (no staged construct, switch or lambda) lies between them; else null.
  // Whether the return runs is then known at trace time, as in AutoGraph's
  // unrolled Python loops.
  const clang::Stmt* loopLeftByCppBreak(const clang::Stmt* jump) const;
  // Whether a lowered jump inside the statement leaves it.
  bool mayEscape(const clang::Stmt* stmt) const;
  // Whether the statement follows, in a block inside `outer` (null: the
  // function), a statement a lowered jump may leave: it is then emitted inside
  // that jump's guard, an ag::if_stmt lambda, which C++ jumps cannot cross.
  bool isGuarded(const clang::Stmt* stmt, const clang::Stmt* outer) const;
  // Flags the statement may set whose effect reaches past it.
  std::vector<std::string> escapingFlags(const clang::Stmt* stmt) const;
  // Generated variables the statements may modify (flags, return value), minus
  // those declared inside `loop`'s body (its own continue flag).
  std::vector<std::string> modifiedFlags(llvm::ArrayRef<const clang::Stmt*> parts,
                                         const clang::Stmt* loop) const;
  // `ag::not_(f)` for one flag, `ag::not_(ag::or_(f, [&] { return g; }))` for more.
  static std::string noneOf(const std::vector<std::string>& flags);

  // --- State ----------------------------------------------------------------
  // The locals `parts` modify that are live after `anchor` (for a loop, also
  // into its next iteration; with `branches`, the parts are the branches of an
  // `if`: also into another branch), in declaration order. This is
  // AutoGraph's modified ∩ (live_in ∪ live_out), with liveness on the code as
  // lowered (analysis/Liveness.h). Reports locals that cannot be staged.
  std::vector<const clang::ValueDecl*> stateVariables(llvm::ArrayRef<const clang::Stmt*> parts,
                                                      const clang::Stmt* anchor,
                                                      const clang::Stmt* loop,
                                                      llvm::StringRef constructName,
                                                      bool branches = false);
  static Text stateText(const std::vector<const clang::ValueDecl*>& vars,
                        const std::vector<std::string>& flags);
  // Whether `var` may hold a value when `construct` starts.
  bool maybeDefinedBefore(const clang::Stmt* construct, const clang::ValueDecl* var);
  // The first read of `var` after `stmt`, for notes.
  const clang::DeclRefExpr* firstReadAfter(const clang::Stmt* stmt, const clang::ValueDecl* var);

  // Reports an error and marks the function as failed.
  clang::DiagnosticBuilder error(clang::SourceLocation loc, llvm::StringRef text);
  clang::DiagnosticBuilder note(clang::SourceLocation loc, llvm::StringRef text) {
    return file.diags.note(loc, text);
  }

 private:
  Text emitUnstaged(const clang::Stmt* stmt);
  bool containsOffset(llvm::ArrayRef<const clang::Stmt*> parts, std::size_t offset) const;
  // Reports a local of a type that cannot be staged state, modified in `parts`.
  void reportUnstageable(const clang::ValueDecl* var, llvm::ArrayRef<const clang::Stmt*> parts,
                         llvm::StringRef constructName, const clang::Stmt* loop);
  void noteFieldsHook(clang::QualType type);
  // For the counter of a C++ for loop that a lowered jump stages: the error at
  // the jump, with the tensor range loop to write instead. False otherwise.
  bool reportCounterOfLoopStagedByJump(const clang::ValueDecl* var, const clang::Stmt* loop);
  void suggestRangeLoop(const clang::ForStmt* loop, const clang::ValueDecl* var);
  // Notes why a loop is staged when a lowered jump forced it.
  void explainStagedByJump(const clang::Stmt* loop, const clang::ValueDecl* var);
  bool inOtherBranch(const clang::Stmt* stmt, const clang::Stmt* construct) const;

  llvm::DenseSet<const clang::Stmt*> dirty_;
  llvm::DenseSet<const clang::ValueDecl*> reportedVars_;
};

// --- Converters: each lives in its own file ---------------------------------
// The statement converters of analysis/StagedStatements.def.
#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  Text function(ConversionContext& ctx, const clang::Class* stmt);
#include "analysis/StagedStatements.def"
#undef AG_STAGED_STATEMENT
Text lowerJump(ConversionContext& ctx, const clang::Stmt* jump);  // JumpConverter
Text emitBlock(ConversionContext& ctx, const clang::CompoundStmt* block, const Text& prefix,
               const Text& suffix);  // JumpConverter
// Registers the edits; returns how many.
unsigned convertLogicalExpressions(ConversionContext& ctx);  // LogicalConverter

}  // namespace agc
