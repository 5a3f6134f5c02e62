// The code `agc check` looks at: the converted functions of a translation
// unit (analysis/ConvertedFunctions.h), walked once. Implements CheckScope
// (which function owns a node, whether it is in staged control flow, by the
// rule of analysis/Staging.h, or in an ag::host_function lambda) and gives
// the runner the nodes to match, in source order, and the top-level
// declarations that hold them.
#pragma once

#include "analysis/ConvertedFunctions.h"
#include "checks/AgCheck.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTTypeTraits.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <utility>
#include <vector>

namespace agc {

class ConvertedScope : public CheckScope {
 public:
  ConvertedScope(clang::ASTContext& ast, const ConvertedFunctions& found);

  llvm::ArrayRef<const clang::FunctionDecl*> convertedFunctions() const override {
    return functions_;
  }

  bool isConverted(const clang::FunctionDecl* function) const override;

  const clang::FunctionDecl* enclosingConverted(const clang::Stmt& node) const override {
    if (host_.contains(&node)) return nullptr;
    return owner_.lookup(&node);
  }

  bool isInStagedControlFlow(const clang::Stmt& node) const override {
    return staged_.contains(&node);
  }
  bool isInHostFunction(const clang::Stmt& node) const override { return host_.contains(&node); }

  // Whether the expansion location of `loc` lies in a host_function lambda.
  bool inHostRange(clang::SourceLocation loc) const;

  // The top-level declarations holding converted code: the traversal scope,
  // over which the parent map (hasAncestor, getParents) is built.
  std::vector<clang::Decl*> roots;
  // Every node of converted code outside ag::host_function, in source order:
  // the unit's declaration, its parameters, then its body in preorder (with
  // the declarations of DeclStmts).
  std::vector<clang::DynTypedNode> matchOrder;

 private:
  void addRoot(clang::ASTContext& ast, clang::SourceLocation loc);
  unsigned offsetOf(clang::SourceLocation loc) const;
  void walk(const clang::Stmt* stmt, const clang::FunctionDecl* owner, bool staged, bool host);

  const clang::SourceManager& sm_;
  std::vector<const clang::FunctionDecl*> functions_;
  llvm::DenseSet<const clang::FunctionDecl*> converted_;
  llvm::DenseMap<const clang::Stmt*, const clang::FunctionDecl*> owner_;
  llvm::DenseSet<const clang::Stmt*> staged_, host_;
  std::vector<std::pair<unsigned, unsigned>> hostRanges_;
  std::vector<clang::DynTypedNode> nodes_;  // of the unit being walked
};

}  // namespace agc
