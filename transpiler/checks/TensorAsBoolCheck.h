// ag-tensor-as-bool: a tensor turned into a C++ bool where agc cannot stage the
// condition (static_cast<bool>(t), bool b(t), assert(t)). An error: it fails
// on a traced tensor.
#pragma once

#include "checks/AgCheck.h"

#include "llvm/ADT/DenseSet.h"

#include <set>
#include <utility>

namespace agc {

class TensorAsBoolCheck : public AgCheck {
 public:
  using AgCheck::AgCheck;
  void registerMatchers(clang::ast_matchers::MatchFinder& finder) override;
  void check(const clang::ast_matchers::MatchFinder::MatchResult& result) override;

 private:
  std::set<std::pair<const void*, unsigned>> reported_;
};

}  // namespace agc
