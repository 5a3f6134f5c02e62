// ag-variable-creation: an ag::Variable constructed in converted code outside the
// create-once pattern (a member or static created under a guard that tests it,
// e.g. `if (!count_) count_.emplace(0);`). An error.
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class VariableCreationCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
