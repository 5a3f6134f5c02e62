// Which functions of a translation unit `agc` converts.
//
// Needs: a parsed translation unit. Guarantees: the marked functions, methods
// and lambdas of the main file (those AG_FUNCTION marks: AstPredicates.h,
// isMarked), then, transitively, the functions of the main file that
// converted code calls and that take or return tensors or hold tensor control
// flow. Calls to functions with tensor control flow that are defined in
// another file (and so cannot be converted) are listed too, and so are the
// unmarked lambdas inside converted code that have tensor control flow: they
// run while their enclosing function traces, so they are converted with it.
//
// Shared by the transpiler (FunctionConverter) and `agc check` (the traversal
// scope of the checks), so that both agree on what "converted code" is.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

#include <vector>

namespace agc {

// A marked or reached piece of code to convert.
struct ConvertedUnit {
  enum Kind { FreeFunction, Method, Lambda, InPlace } kind;
  const clang::FunctionDecl* function;  // the definition; for lambdas, the call operator
  const clang::LambdaExpr* lambda = nullptr;
};

// A call from converted code to a function with tensor control flow that agc
// cannot convert, because it is defined in another file.
struct UnconvertibleCall {
  const clang::CallExpr* call;
  const clang::FunctionDecl* definition;
};

struct ConvertedFunctions {
  // Marked units first (in source order), then the reached ones in the order
  // they were found.
  std::vector<ConvertedUnit> units;
  // One entry per unconvertible definition (its first call).
  std::vector<UnconvertibleCall> unconvertible;
  // Unmarked lambdas inside converted code (outside ag::host_function) with
  // tensor control flow; converted in place, not traced on their own.
  std::vector<ConvertedUnit> nestedLambdas;
};

ConvertedFunctions findConvertedFunctions(clang::ASTContext& ast);

// Whether the function takes or returns an ag::Tensor.
bool mentionsTensor(const clang::FunctionDecl* function);

// What to do with the callee of a call made from converted code.
enum class CalleeKind {
  Ignore,          // no body, std, implicit, a lambda, or nothing to stage
  ConvertInPlace,  // in the main file, with tensors or tensor control flow
  Unconvertible,   // in another file, with tensor control flow
};
// Classifies `callee` (looking through template instantiations); `definition`
// receives the definition when there is one.
CalleeKind classifyCallee(const clang::FunctionDecl* callee, const clang::SourceManager& sm,
                          const clang::FunctionDecl*& definition);

}  // namespace agc
