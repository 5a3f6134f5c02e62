#include "checks/Glob.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace agc {

bool globMatches(const std::string& pattern, const std::string& name) {
  // Iterative wildcard match with backtracking to the last `*`.
  std::size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

GlobList::GlobList(const std::string& globs) {
  llvm::SmallVector<llvm::StringRef, 8> pieces;
  llvm::StringRef(globs).split(pieces, ',', -1, false);
  for (llvm::StringRef piece : pieces) {
    llvm::SmallVector<llvm::StringRef, 4> lines;
    piece.split(lines, '\n', -1, false);
    for (llvm::StringRef item : lines) {
      item = item.trim();
      if (item.empty()) continue;
      bool positive = !item.consume_front("-");
      item = item.trim();
      if (!item.empty()) items_.push_back({positive, item.str()});
    }
  }
}

bool GlobList::contains(const std::string& name) const {
  for (auto item = items_.rbegin(); item != items_.rend(); ++item)
    if (globMatches(item->pattern, name)) return item->positive;
  return false;
}

}  // namespace agc
