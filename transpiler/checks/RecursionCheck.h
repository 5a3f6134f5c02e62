// ag-recursion: direct or mutual recursion among converted functions, with the
// call chain as notes. An error.
#pragma once

#include "checks/AgCheck.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace agc {

class RecursionCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  // The call graph is analysed once per translation unit, on the first match.
  llvm::SmallPtrSet<const clang::ASTContext*, 2> analysed_;
};

}  // namespace agc
