// The conversion pipeline for one function body, AutoGraph style: a flat list
// of steps, each one construct or one decision.
#pragma once

#include "converters/ConversionContext.h"

#include <optional>

namespace agc {

struct FunctionBody {
  const clang::Stmt* body;     // the function's CompoundStmt
  clang::QualType returnType;  // void for none
  std::string returnTypeText;  // as the user spelled it, for `R agc_retval;`
  llvm::SmallPtrSet<const clang::ValueDecl*, 4> liveAtExit;  // reference parameters
};

// The converted body text (braces included), or nullopt after an error.
// `changed` tells whether anything was converted.
std::optional<Text> convertBody(FileContext& file, const FunctionBody& function, bool& changed);

}  // namespace agc
