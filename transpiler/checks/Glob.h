// clang-tidy style check globs, as --checks, .agc.yaml and NOLINT(...) take
// them: "ag-*,-ag-unrolled-loop". No Clang types.
#pragma once

#include <string>
#include <vector>

namespace agc {

// A list of globs. Items are separated by commas or newlines; `-` negates;
// `*` matches anything; the last item that matches a name decides.
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
