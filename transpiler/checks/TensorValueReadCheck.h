// ag-tensor-value-read: item(), data() or to_vector() of a tensor in converted code: its value is
// only known when the graph runs
#pragma once

#include "checks/AgCheck.h"

namespace agc {

class TensorValueReadCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
