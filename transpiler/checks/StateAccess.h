// Helpers shared by the checks about state that outlives a trace
// (ag-global-mutation, ag-frozen-value, ag-side-effect): how an expression
// uses the object it names, and which declarations and types are the user's
// plain values. (Predicates of the whole of agc: analysis/AstPredicates.h.)
#pragma once

#include "analysis/AstPredicates.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace agc {

enum class Access {
  Read,       // the value is read
  Write,      // the object is assigned (`g = 1`)
  ReadWrite,  // read and modified (`g += 1`, `++g`, `g.push_back(1)`, bound to T&)
  Escape,     // its address or a non-const reference is kept (`int& r = g`, `&g`)
};

// How the expression above `expr` (a DeclRefExpr or MemberExpr naming an
// object) uses it. A write to a part of an object (`g.x = 1`, `g[0] = 1`)
// is a write to the object. Uses the parent map of `ast`.
Access accessOf(const clang::Expr& expr, clang::ASTContext& ast);

// The user's plain values, whose copies behave like the value: arithmetic,
// enums, pointers to them, ag::Tensor, std::string, std containers and arrays
// of those, and aggregates whose fields are all such values. Not:
// ag::Variable, modules, functions, streams, or anything holding them.
bool isPlainValueType(clang::QualType type);

// Whether `node` lies in the condition or the then-branch of an `if` whose
// then-branch creates an ag::Variable: the create-once guard (`if (!built_) {
// v_.emplace(...); built_ = true; }`), where reading and writing the flag once
// per trace is the point.
bool isInCreateOnceGuard(const clang::Stmt& node, clang::ASTContext& ast);

// The writes to variables and fields in a piece of code: assignments,
// increments, non-const method calls, arguments bound to non-const references
// and addresses taken, on the object or on a part of it (`g.x = 1` writes
// both `x` and `g`). Keys are canonical declarations.
class WriteIndex {
 public:
  // Everything in the main file, outside constructors.
  static WriteIndex ofMainFile(clang::ASTContext& ast);
  static WriteIndex of(const clang::Stmt* stmt);

  bool writes(const clang::Decl* decl) const;
  // The written expressions (the assignment, call, ...), in traversal order.
  llvm::ArrayRef<const clang::Expr*> writesOf(const clang::Decl* decl) const;

  void add(const clang::Expr* target, const clang::Expr* write);

 private:
  llvm::DenseMap<const clang::Decl*, llvm::SmallVector<const clang::Expr*, 2>> writes_;
};

// A variable with static storage the user may change: a global, a static
// member or a static local, not const or constexpr, not in std:: or ag::,
// not declared in a system header.
bool isMutableStaticVariable(const clang::VarDecl* var, const clang::SourceManager& sm);

}  // namespace agc
