#include "checks/Nolint.h"

#include "checks/Glob.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cctype>

namespace agc {
namespace {

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether `line` holds the marker `kind` (NOLINT, NOLINTNEXTLINE, NOLINTBEGIN,
// NOLINTEND) for `check`: bare, or with a list of globs in parentheses.
bool hasMarker(llvm::StringRef line, llvm::StringRef kind, const std::string& check) {
  for (std::size_t at = line.find(kind); at != llvm::StringRef::npos;
       at = line.find(kind, at + 1)) {
    std::size_t after = at + kind.size();
    if ((at > 0 && isIdentifierChar(line[at - 1])) ||
        (after < line.size() && isIdentifierChar(line[after])))
      continue;
    if (after >= line.size() || line[after] != '(') return true;
    std::size_t close = line.find(')', after);
    if (close == llvm::StringRef::npos) continue;
    llvm::SmallVector<llvm::StringRef, 4> globs;
    line.slice(after + 1, close).split(globs, ',', -1, false);
    for (llvm::StringRef glob : globs)
      if (globMatches(glob.trim().str(), check)) return true;
  }
  return false;
}

}  // namespace

bool isSuppressedByNolint(llvm::StringRef text, std::size_t offset, const std::string& check) {
  std::size_t lineBegin = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  lineBegin = (lineBegin == llvm::StringRef::npos || offset == 0) ? 0 : lineBegin + 1;
  std::size_t lineEnd = std::min(text.find('\n', offset), text.size());
  if (hasMarker(text.slice(lineBegin, lineEnd), "NOLINT", check)) return true;
  if (lineBegin > 0) {
    std::size_t previousEnd = lineBegin - 1;  // the '\n' ending the previous line
    std::size_t previousBegin =
        previousEnd == 0 ? llvm::StringRef::npos : text.rfind('\n', previousEnd - 1);
    previousBegin = previousBegin == llvm::StringRef::npos ? 0 : previousBegin + 1;
    if (hasMarker(text.slice(previousBegin, previousEnd), "NOLINTNEXTLINE", check)) return true;
  }
  if (text.find("NOLINTBEGIN") == llvm::StringRef::npos) return false;
  int depth = 0;
  llvm::StringRef before = text.take_front(lineEnd);
  while (!before.empty()) {
    auto [line, rest] = before.split('\n');
    if (hasMarker(line, "NOLINTBEGIN", check)) ++depth;
    if (hasMarker(line, "NOLINTEND", check) && depth > 0) --depth;
    before = rest;
  }
  return depth > 0;
}

}  // namespace agc
