// ag-frozen-value: values read while tracing that become constants of the graph:
// mutable globals and statics, members that are not ag::Variable, rand(),
// <random> engines and distributions, clocks.
#pragma once

#include "checks/AgCheck.h"
#include "checks/StateAccess.h"

#include "llvm/ADT/DenseSet.h"

#include <optional>
#include <set>
#include <utility>

namespace agc {

class FrozenValueCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  // Whether the value of `decl` may differ between calls: something writes it
  // (outside constructors), or code outside this file may (external linkage,
  // public members).
  bool mayChange(const clang::ValueDecl* decl, clang::ASTContext& ast);
  // Whether the read is left to another check or is the point of the code:
  // a read-modify-write (ag-global-mutation), a tensor that converted code
  // stores there (ag-tensor-leak), a create-once guard.
  bool isExcused(const clang::Expr& read, const clang::ValueDecl* decl, clang::ASTContext& ast);

  std::set<std::pair<const void*, unsigned>> reported_;
  std::optional<WriteIndex> mainWrites_;
};

}  // namespace agc
