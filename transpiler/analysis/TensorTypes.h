// Which types and expressions are tensors, as far as staging is concerned.
//
// A condition is a tensor when its spelled type (looking through the implicit
// `explicit operator bool` call that `if (t)` inserts) is `ag::Tensor`, when
// it is a `&&`, `||`, `!` or `?:` over tensors, which the logical converter
// turns into tensor-valued calls, or when it names an `auto` variable
// initialised with such a `&&`, `||` or `!`. Type-dependent conditions in templates count
// as tensors: the runtime's overloads resolve them at compile time.
#pragma once

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Type.h"

namespace agc {

// True for `ag::Tensor`, through references, cv-qualifiers and sugar.
bool isTensorType(clang::QualType type);
// True for `ag::Tensor` or `ag::TensorArray`, the types a tensor value lives in.
bool isTensorOrTensorArray(clang::QualType type);
// True for `ag::data::Dataset<E>`: a range-for over one is staged as one loop
// that pulls its elements.
bool isDatasetType(clang::QualType type);

// The expression as written: no implicit casts or conversion calls.
const clang::Expr* spelled(const clang::Expr* expr);

// True when the expression is (or stages to) a tensor, or is type-dependent.
bool isTensorExpr(const clang::Expr* expr);

// True for `auto ok = a && b;` (or `||`, `!`) over tensors: agc converts the
// initialiser (analysis/Staging.h), so the variable holds a tensor.
bool isLoweredLogicalVar(const clang::VarDecl* var);

// True when a variable of this type may be carried as staged state:
// tensors, tensor arrays, tuples, pairs, arrays and vectors of them, user
// structs that declare `ag_fields`, and dependent types. Scalars, pointers,
// enums, other std types and structs without the hook may not.
bool isStageableType(clang::QualType type);
// True for a user struct (not of std or ag) without an `ag_fields(S&)` hook.
bool isStructWithoutFields(clang::QualType type);

}  // namespace agc
