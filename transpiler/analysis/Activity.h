// Activity analysis: which local variables a statement reads and writes.
//
// Needs: a statement of a function body (the original AST, before any
// conversion). Guarantees: every use of a local (a variable, a parameter or a
// structured binding, `auto [lo, hi] = ...`) inside it is
// classified as a read, a write, or both (`x += 1`, `x.method()` on a
// non-const object, passing `x` by non-const reference, taking its address).
// Lambda bodies count as part of the statement: they run where they are called.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace agc {

// The local that `decl` names: a variable or parameter of a function, or a
// binding of a local structured binding declaration; null for anything else.
const clang::ValueDecl* asLocal(const clang::Decl* decl);
// Whether `stmt` declares `local` (a variable, or one of a declaration's bindings).
bool declares(const clang::DeclStmt* stmt, const clang::ValueDecl* local);
// Whether `local` is a static local, or a binding of one.
bool isStaticLocal(const clang::ValueDecl* local);

struct VarUse {
  const clang::DeclRefExpr* ref;
  bool read;
  bool write;
};

class Activity {
 public:
  explicit Activity(const clang::Stmt* stmt);

  bool reads(const clang::ValueDecl* var) const;
  bool writes(const clang::ValueDecl* var) const;
  // The variables the statement writes, in order of first write.
  const llvm::SmallVector<const clang::ValueDecl*, 8>& written() const { return written_; }
  // The first write of `var`, or null.
  const clang::DeclRefExpr* firstWrite(const clang::ValueDecl* var) const;
  const llvm::SmallVector<VarUse, 16>& uses() const { return uses_; }

 private:
  llvm::SmallVector<VarUse, 16> uses_;
  llvm::SmallVector<const clang::ValueDecl*, 8> written_;
};

// True when `stmt` assigns `var` before reading it, on every path: a
// declaration of `var`, or `var = e;` where `e` does not read `var`.
bool killsFirst(const clang::Stmt* stmt, const clang::ValueDecl* var);

}  // namespace agc
