// ag-tensor-leak: a tensor stored into storage that outlives the traced call (a
// global, a static, a member, an outer container, an out-parameter, a variable
// captured by reference from outside the trace). An error.
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class TensorLeakCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
