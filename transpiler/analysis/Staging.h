// The staging rule: which statements agc turns into staged control flow
// (ag::if_stmt, ag::while_stmt, ag::for_stmt), and their parts.
//
// Needs: the original AST of a function body. Guarantees one answer, shared
// by the converters (what `agc transpile` stages) and the checks (what
// `agc check` treats as staged code): an if (not `if constexpr`/`if
// consteval`), while, do-while or for loop is staged when its condition is a
// tensor (TensorTypes: isTensorExpr, so type-dependent conditions count); a
// range-for when it iterates over a tensor. A for loop without a condition is
// not staged by its condition.
//
// The pipeline stages some loops for another reason as well: a `break` or
// `return` lowered out of staged code stages the loop it leaves (see
// converters/Pipeline.cpp, step 2).
#pragma once

#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace agc {

// The condition of an if/while/do/for (the range of a range-for), or null
// (other statements, `if consteval`, a for loop without a condition).
const clang::Expr* conditionOf(const clang::Stmt* stmt);
// The then-branch of an if, the body of a loop, or null.
const clang::Stmt* bodyOf(const clang::Stmt* stmt);
// The else-branch of an if, or null.
const clang::Stmt* elseOf(const clang::Stmt* stmt);
// "if", "while loop", "do-while loop" or "for loop", for diagnostics.
const char* constructName(const clang::Stmt* stmt);
// Whether the statement is a while, do-while, for or range-for loop.
bool isLoop(const clang::Stmt* stmt);

// Whether the statement is staged because of its condition (the rule above).
bool isStaged(const clang::Stmt* stmt);
// Whether a range-for over `range` is staged: a tensor (its rows) or an
// ag::data::Dataset (its elements).
bool isStagedRange(const clang::Expr* range);

// The parts of a staged statement that run once per trace but stand for every
// branch or iteration: the then- and else-branch of an if, the body of a loop
// and the increment of a for loop. Empty when the statement is not staged.
llvm::SmallVector<const clang::Stmt*, 2> stagedPartsOf(const clang::Stmt* stmt);

// Whether the expression is a `&&`, `||`, `!` or `?:` over tensors, which the
// logical converter may turn into ag::and_, ag::or_, ag::not_ or ag::if_exp.
bool isTensorLogicalExpr(const clang::Expr* expr);

// The node above a node of a function body (null at the top).
using ParentOf = llvm::function_ref<const clang::Stmt*(const clang::Stmt*)>;

// Whether the logical converter converts this expression: a tensor logical
// expression whose value is used as a tensor. That is a condition of an
// if/while/do/for (staged by the rule above), an operand of a converted
// expression, a value converted to ag::Tensor (`ag::Tensor ok = a && b;`, an
// ag::Tensor argument, `return a && b;` in a function returning a tensor),
// the initialiser of an `auto` variable (TensorTypes: isLoweredLogicalVar),
// and in a template the initialiser of an ag::Tensor variable or a returned
// value. A `?:` is converted as well when its result is a tensor or feeds a
// tensor operator (`x * (c ? 2 : 3)`). Elsewhere the operands stay C++ bools:
// `bool ok = t1 && t2;` converts the tensors with explicit operator bool,
// which works eagerly and fails while tracing (ag-tensor-as-bool reports it).
bool isConvertedLogicalExpr(const clang::Expr* expr, ParentOf parentOf);

// The statements of a function body in preorder, outside nested lambdas.
std::vector<const clang::Stmt*> bodyStatements(const clang::Stmt* body);

// Whether the body holds a statement staged by a known (not type-dependent)
// tensor condition, or a tensor logical expression: such a function must be
// converted to run under tracing.
bool hasTensorControlFlow(const clang::Stmt* body);

}  // namespace agc
