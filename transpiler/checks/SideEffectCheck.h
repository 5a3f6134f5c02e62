// ag-side-effect: I/O and other effects in converted code. They run while the
// function is traced (once per trace), not on every call of the graph.
#pragma once

#include "checks/AgCheck.h"

#include "llvm/ADT/DenseSet.h"

namespace agc {

class SideEffectCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  void checkStreamOperator(const clang::CXXOperatorCallExpr& call, clang::ASTContext& ast);
  void checkStreamMethod(const clang::CXXMemberCallExpr& call);
  void checkConstruct(const clang::CXXConstructExpr& construct);
  void checkCall(const clang::CallExpr& call);

  llvm::DenseSet<const clang::Expr*> reportedStreams_;
};

}  // namespace agc
