// The .agc.yaml configuration of `agc check`: the file nearest to a source
// file's directory (it or an ancestor), with the clang-tidy style keys
// `Checks` and `WarningsAsErrors`. No Clang types.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace agc {

struct CheckConfig {
  std::string path;  // empty: no .agc.yaml
  std::optional<std::string> checks;
  std::optional<std::string> warningsAsErrors;
  std::string error;  // why the file could not be read or parsed; empty if it could
};

// The configuration for sources in `directory` (an absolute path). Cached per
// directory for the life of the process.
const CheckConfig& checkConfigFor(llvm::StringRef directory);

}  // namespace agc
