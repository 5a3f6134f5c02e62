// The AST predicates the converters, the analyses and the checks share: where
// a declaration lives (ag, std, the C library), which code AG_FUNCTION marks,
// which types hold tensors or variables, and which storage an expression
// names. One definition each, so that all of agc agrees on them. The contract
// names (the annotation string) come from <ag/annotate.h>, the one header agc
// shares with the runtime.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace agc {

// Whether the declaration lies in the top-level namespace `name` (`ag`,
// `std`, `Eigen`), directly or in a namespace, class or function nested in it
// (`ag::detail::f`, `ag::Tensor::Iterator`). Inline namespaces are looked
// through (`std::__1`).
bool isInNamespace(const clang::Decl* decl, llvm::StringRef name);
// isInNamespace(decl, "ag"): the runtime's own declarations.
bool isInAgNamespace(const clang::Decl* decl);
// Whether any enclosing context is namespace std (std::chrono::steady_clock::now).
bool isWithinStd(const clang::Decl* decl);
// Whether the declaration lies in std and, at any depth inside it, in a
// namespace `name`: "chrono" for std::chrono::steady_clock::now, "filesystem",
// "this_thread", "ranges".
bool isInStdSubNamespace(const clang::Decl* decl, llvm::StringRef name);

// Whether the function is the C library's (printf, rand, time, ...): extern
// "C", at global scope, declared in a system header. `std::printf` names the
// same declaration; a user's function of the same name is not the library's.
bool isCLibraryFunction(const clang::FunctionDecl* function);

// True for a class `ag::<name>` (Tensor, TensorArray, Variable, Module),
// through references, cv-qualifiers and sugar.
bool isAgClass(clang::QualType type, llvm::StringRef name);

// Whether `decl` carries AG_FUNCTION's annotation (AG_FUNCTION_ANNOTATION).
// For a function: on any of its redeclarations, or on the template it was
// instantiated from.
bool isMarked(const clang::Decl* decl);

// Whether `call` is ag::host_function(fn, ...), whose fn runs at execution time.
bool isHostFunctionCall(const clang::CallExpr* call);

// Whether the type is a class template specialization with a type argument
// for which `predicate` holds (std::vector<ag::Tensor>, std::optional<ag::Variable>).
bool hasTypeArgument(clang::QualType type, llvm::function_ref<bool(clang::QualType)> predicate);

// Whether the type is or holds, through template arguments, fields of user
// classes, arrays and pointers, an ag::Tensor or ag::TensorArray.
bool holdsTensor(clang::QualType type);
// Whether the type is or holds, through template arguments and pointers, an
// ag::Variable (std::optional<ag::Variable>, std::unique_ptr<ag::Variable>).
bool holdsVariable(clang::QualType type);

// The storage at the root of an lvalue expression, through members,
// subscripts (built-in and overloaded), `*` and `->`: the variable for `v`,
// `s.v` and `v[i]`, the member of `this` for `m`, `this->m.x`, and a static
// member for `s.staticMember`. Null when the root is anything else (a call,
// a temporary).
const clang::ValueDecl* storageOf(const clang::Expr* expr);

}  // namespace agc
