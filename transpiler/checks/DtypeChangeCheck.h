// ag-dtype-change: a tensor made from a C++ integer that a staged loop or branch makes floating,
// which fails when staged
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class DtypeChangeCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
