// The registry of checks, built from Checks.def.
#pragma once

#include "checks/AgCheck.h"

#include <memory>

namespace agc {

struct CheckFactory {
  const char* name;     // "ag-side-effect"
  const char* summary;  // one line
  std::unique_ptr<AgCheck> (*create)(llvm::StringRef name, clang::DiagnosticsEngine& engine,
                                     const CheckScope& scope);
};

// Every registered check, in the order of Checks.def.
llvm::ArrayRef<CheckFactory> checkFactories();

}  // namespace agc
