// ag-unconverted-call: a call from converted code to a function with tensor
// control flow that agc cannot convert (it is defined in another file).
#pragma once

#include "checks/AgCheck.h"

#include "llvm/ADT/DenseSet.h"

#include <set>
#include <utility>

namespace agc {

class UnconvertedCallCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  std::set<std::pair<const void*, unsigned>> reported_;
};

}  // namespace agc
