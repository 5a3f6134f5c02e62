// Runs the registered checks over one translation unit: the enabled checks
// (--checks, .agc.yaml), matched only over the code agc converts, with the
// findings filtered (NOLINT, ag::host_function bodies, duplicates), promoted
// (--werror, WarningsAsErrors), printed as Clang prints them and collected.
#pragma once

#include "checks/CheckOutput.h"

#include "clang/AST/ASTContext.h"

#include <string>
#include <vector>

namespace agc {

struct CheckRunResult {
  unsigned errors = 0;       // findings at error level, after promotion
  bool toolFailure = false;  // e.g. a malformed .agc.yaml (reported on stderr)
};

// Checks the main file of `ast`; appends what it finds to `findings`.
CheckRunResult runChecks(clang::ASTContext& ast, const CheckOptions& options,
                         std::vector<Finding>& findings);

// clang-tidy style globs: "ag-*,-ag-unrolled-loop". Items are separated by
// commas or newlines; `-` negates; `*` matches anything; the last item that
// matches a name decides.
class GlobList {
 public:
  explicit GlobList(const std::string& globs);
  bool contains(const std::string& name) const;

 private:
  struct Item {
    bool positive;
    std::string pattern;
  };
  std::vector<Item> items_;
};

// Whether a glob (with `*`) matches `name`.
bool globMatches(const std::string& pattern, const std::string& name);

}  // namespace agc
