// ag-unrolled-loop. A C++ loop in a traced function runs while tracing: each
// iteration adds its ops to the graph again (the TensorFlow guide's "looping
// over Python data": a graph that grows with the data set, and a retrace per
// size). Loops that agc stages (analysis/Staging.h: isStaged, a tensor
// condition or range) are never reported.
//
// Reported, when the body makes or uses tensors:
//   - a range-for over a container whose elements are data (numbers, tensors,
//     and pairs, tuples, arrays or vectors of them), except a built-in array,
//     std::array or braced list of at most kMaxUnrolledIterations elements.
//     Loops over objects (layers, names, pointers) build structure, as in
//     Keras, and are left alone;
//   - a `for (int i = A; i < B; i += S)` whose trip count is a compile-time
//     constant above kMaxUnrolledIterations, `i` not written in the body.
// A for with a bound that is a C++ variable is not reported: its trip count
// is a trace-time choice the author made (and the signature traces by value).
#include "checks/UnrolledLoopCheck.h"

#include "analysis/Activity.h"
#include "analysis/Staging.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include <optional>

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// Numbers and tensors, and standard aggregates of them.
bool isDataType(QualType type, int depth = 0) {
  if (type.isNull() || depth > 4) return false;
  type = type.getNonReferenceType().getCanonicalType();
  if (type->isArithmeticType() || isTensorOrTensorArray(type)) return true;
  if (const auto* array = dyn_cast<ConstantArrayType>(type.getTypePtr()))
    return isDataType(array->getElementType(), depth + 1);
  const auto* record =
      dyn_cast_or_null<ClassTemplateSpecializationDecl>(type->getAsCXXRecordDecl());
  if (!record || !record->isInStdNamespace()) return false;
  llvm::StringRef name = record->getName();
  if (name != "pair" && name != "tuple" && name != "array" && name != "vector" && name != "complex")
    return false;
  for (const TemplateArgument& arg : record->getTemplateArgs().asArray()) {
    if (arg.getKind() == TemplateArgument::Type) {
      // std::vector's allocator is not data.
      if (name == "vector" && &arg != &record->getTemplateArgs()[0]) continue;
      if (!isDataType(arg.getAsType(), depth + 1)) return false;
    } else if (arg.getKind() == TemplateArgument::Pack) {
      for (const TemplateArgument& element : arg.pack_elements())
        if (element.getKind() != TemplateArgument::Type ||
            !isDataType(element.getAsType(), depth + 1))
          return false;
    }
  }
  return true;
}

// The element count of a range whose size the type fixes, if any.
std::optional<uint64_t> fixedSize(const Expr* range) {
  const Expr* spelledRange = range->IgnoreImplicit()->IgnoreParens();
  if (const auto* list = dyn_cast<InitListExpr>(spelledRange)) return list->getNumInits();
  if (const auto* list = dyn_cast<CXXStdInitializerListExpr>(spelledRange))
    if (const auto* init = dyn_cast<InitListExpr>(list->getSubExpr()->IgnoreImplicit()))
      return init->getNumInits();
  QualType type = range->getType().getNonReferenceType().getCanonicalType();
  if (const auto* array = dyn_cast<ConstantArrayType>(type.getTypePtr()))
    return array->getSize().getZExtValue();
  if (const auto* record =
          dyn_cast_or_null<ClassTemplateSpecializationDecl>(type->getAsCXXRecordDecl());
      record && record->isInStdNamespace() && record->getName() == "array") {
    const TemplateArgument& size = record->getTemplateArgs()[1];
    if (size.getKind() == TemplateArgument::Integral) return size.getAsIntegral().getZExtValue();
  }
  return std::nullopt;
}

// Whether the statement makes or uses tensors: an expression of tensor type
// that is not a bare name.
bool usesTensors(const Stmt* stmt) {
  if (!stmt) return false;
  if (const auto* expr = dyn_cast<Expr>(stmt); expr && !isa<DeclRefExpr>(expr) &&
                                               !expr->isTypeDependent() &&
                                               isTensorOrTensorArray(expr->getType()))
    return true;
  for (const Stmt* child : stmt->children())
    if (usesTensors(child)) return true;
  return false;
}

std::optional<int64_t> constantOf(const Expr* expr, const ASTContext& context) {
  if (!expr || expr->isValueDependent() || expr->isTypeDependent()) return std::nullopt;
  Expr::EvalResult value;
  if (!expr->EvaluateAsInt(value, context)) return std::nullopt;
  return value.Val.getInt().getExtValue();
}

const VarDecl* varOf(const Expr* expr) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(expr ? expr->IgnoreParenImpCasts() : nullptr);
  return ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
}

// The trip count of `for (i = A; i op B; i += S)` with constant A, B, S.
std::optional<int64_t> tripCount(const ForStmt* loop, const ASTContext& context) {
  // Init: `int i = A` or `i = A`.
  const VarDecl* var = nullptr;
  std::optional<int64_t> start;
  if (const auto* decl = dyn_cast_or_null<DeclStmt>(loop->getInit());
      decl && decl->isSingleDecl()) {
    var = dyn_cast<VarDecl>(decl->getSingleDecl());
    if (var && var->getInit()) start = constantOf(var->getInit(), context);
  } else if (const auto* assign = dyn_cast_or_null<BinaryOperator>(loop->getInit());
             assign && assign->getOpcode() == BO_Assign) {
    var = varOf(assign->getLHS());
    start = constantOf(assign->getRHS(), context);
  }
  if (!var || !start || !var->getType()->isIntegerType()) return std::nullopt;
  // Condition: `i op B` or `B op i`.
  const auto* cond = dyn_cast_or_null<BinaryOperator>(
      loop->getCond() ? loop->getCond()->IgnoreParenImpCasts() : nullptr);
  if (!cond || !cond->isComparisonOp()) return std::nullopt;
  BinaryOperatorKind op = cond->getOpcode();
  std::optional<int64_t> bound;
  if (varOf(cond->getLHS()) == var) {
    bound = constantOf(cond->getRHS(), context);
  } else if (varOf(cond->getRHS()) == var) {
    bound = constantOf(cond->getLHS(), context);
    op = BinaryOperator::reverseComparisonOp(op);
  }
  if (!bound) return std::nullopt;
  // Step: ++i, i++, --i, i--, i += S, i -= S.
  std::optional<int64_t> step;
  const Expr* inc = loop->getInc() ? loop->getInc()->IgnoreParenImpCasts() : nullptr;
  if (const auto* unary = dyn_cast_or_null<UnaryOperator>(inc);
      unary && varOf(unary->getSubExpr()) == var)
    step = unary->isIncrementOp() ? 1 : unary->isDecrementOp() ? -1 : 0;
  if (const auto* compound = dyn_cast_or_null<CompoundAssignOperator>(inc);
      compound && varOf(compound->getLHS()) == var) {
    std::optional<int64_t> amount = constantOf(compound->getRHS(), context);
    if (amount && compound->getOpcode() == BO_AddAssign) step = *amount;
    if (amount && compound->getOpcode() == BO_SubAssign) step = -*amount;
  }
  if (!step || *step == 0) return std::nullopt;
  // The body must not move `i` itself.
  if (Activity(loop->getBody()).writes(var)) return std::nullopt;
  int64_t from = *start, to = *bound, by = *step;
  if (by < 0) {  // count down as a count up
    from = -from;
    to = -to;
    by = -by;
    op = BinaryOperator::reverseComparisonOp(op);  // i < b  <=>  -i > -b
  }
  // Now `i` grows by `by` from `from`, and the condition is `i op to`.
  switch (op) {
    case BO_LT:
      return to <= from ? 0 : (to - from + by - 1) / by;
    case BO_LE:
      return to < from ? 0 : (to - from) / by + 1;
    case BO_NE:
      if (to < from || (to - from) % by != 0) return std::nullopt;  // never stops
      return (to - from) / by;
    default:
      return std::nullopt;  // runs forever or not at all: not this check's business
  }
}

std::string rangeName(const Expr* range) {
  const Expr* spelledRange = range->IgnoreImplicit()->IgnoreParens();
  if (const auto* ref = dyn_cast<DeclRefExpr>(spelledRange))
    return "'" + ref->getDecl()->getNameAsString() + "'";
  if (const auto* member = dyn_cast<MemberExpr>(spelledRange))
    return "'" + member->getMemberDecl()->getNameAsString() + "'";
  return "a container";
}

}  // namespace

void UnrolledLoopCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(cxxForRangeStmt().bind("range"), this);
  finder.addMatcher(forStmt().bind("for"), this);
}

void UnrolledLoopCheck::check(const MatchFinder::MatchResult& result) {
  if (const auto* loop = result.Nodes.getNodeAs<CXXForRangeStmt>("range")) {
    const Expr* range = loop->getRangeInit();
    if (!range || !scope().enclosingConverted(*loop) || isStaged(loop)) return;
    const VarDecl* element = loop->getLoopVariable();
    if (!element || element->getType()->isDependentType() || !isDataType(element->getType()))
      return;
    if (std::optional<uint64_t> size = fixedSize(range); size && *size <= kMaxUnrolledIterations)
      return;
    if (!usesTensors(loop->getBody())) return;
    diag(loop->getForLoc(), "loop over " + rangeName(range) +
                                " is unrolled into the graph, one copy of its body per "
                                "element; iterate over a tensor to stage it")
        << SourceRange(loop->getForLoc(), loop->getRParenLoc());
    return;
  }
  const auto* loop = result.Nodes.getNodeAs<ForStmt>("for");
  if (!loop || !loop->getCond() || !scope().enclosingConverted(*loop) || isStaged(loop)) return;
  std::optional<int64_t> trips = tripCount(loop, *result.Context);
  if (!trips || *trips <= kMaxUnrolledIterations || !usesTensors(loop->getBody())) return;
  diag(loop->getForLoc(), "loop with " + std::to_string(*trips) +
                              " iterations is unrolled into the graph, one copy of its body "
                              "per iteration; loop over 'ag::range(" +
                              std::to_string(*trips) + ")' to stage it")
      << SourceRange(loop->getForLoc(), loop->getRParenLoc());
}

}  // namespace agc
