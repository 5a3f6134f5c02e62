// NOLINT suppressions, as clang-tidy reads them: `// NOLINT`, `NOLINTNEXTLINE`
// and `NOLINTBEGIN` ... `NOLINTEND`, bare or with a list of check globs in
// parentheses (`NOLINT(ag-side-effect)`). No Clang types: works on the text
// of a file.
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>

namespace agc {

// Whether a finding of `check` at byte `offset` of the file `text` is
// suppressed: by NOLINT on its line, NOLINTNEXTLINE on the line before, or an
// open NOLINTBEGIN above it.
bool isSuppressedByNolint(llvm::StringRef text, std::size_t offset, const std::string& check);

}  // namespace agc
