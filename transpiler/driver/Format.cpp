#include "driver/Driver.h"

#include "clang/Format/Format.h"

namespace agc {

std::string formatCode(const std::string& code, const std::string& fileName) {
  llvm::Expected<clang::format::FormatStyle> style =
      clang::format::getStyle("file", fileName, "LLVM");
  if (!style) {
    llvm::consumeError(style.takeError());
    return code;
  }
  clang::tooling::Replacements replacements = clang::format::reformat(
      *style, code, {clang::tooling::Range(0, static_cast<unsigned>(code.size()))}, fileName);
  llvm::Expected<std::string> formatted = clang::tooling::applyAllReplacements(code, replacements);
  if (!formatted) {
    llvm::consumeError(formatted.takeError());
    return code;
  }
  return *formatted;
}

}  // namespace agc
