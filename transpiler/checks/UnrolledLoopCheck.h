// ag-unrolled-loop: a C++ loop in converted code that unrolls into the graph: a
// range-for over a container of data (not a tensor, not ag::range) or a for
// loop with a constant trip count above kMaxUnrolledIterations, whose body
// makes tensors.
#pragma once

#include "checks/AgCheck.h"

#include <cstdint>

namespace agc {

class UnrolledLoopCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  // A for loop with a constant trip count is reported above this many
  // iterations; small unrolled loops (over x, y, z; over 3 layers) are fine.
  static constexpr int64_t kMaxUnrolledIterations = 16;

  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;
};

}  // namespace agc
