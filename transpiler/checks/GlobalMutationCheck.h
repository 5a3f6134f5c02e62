// ag-global-mutation: writes to state that outlives the call (globals, statics,
// variables captured by reference from outside, members of the object of a
// marked method). In a trace they happen once, not on every call.
#pragma once

#include "checks/AgCheck.h"

#include "llvm/ADT/DenseSet.h"

#include <set>
#include <utility>

namespace agc {

class GlobalMutationCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  std::set<std::pair<const void*, unsigned>> reported_;
};

}  // namespace agc
