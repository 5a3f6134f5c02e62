// ag-python-style-accumulation: push_back/emplace_back/insert/emplace/push_front
// on a container declared outside a staged loop, inside it: the call runs once
// while the body is traced, not once per iteration. Hint: ag::TensorArray.
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class PythonStyleAccumulationCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
