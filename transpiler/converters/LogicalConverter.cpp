// Logical converter: `&&`, `||`, `!` and `?:` over tensors.
//
//   a && b      -> ag::and_(a, [&] { return b; })
//   a || b      -> ag::or_(a, [&] { return b; })
//   !a          -> ag::not_(a)
//   c ? a : b   -> ag::if_exp(c, [&] { return a; }, [&] { return b; })
//
// Needs: the staged conditions chosen by the pipeline. Guarantees: an
// expression is converted only where a tensor result is wanted: a staged
// condition, an operand of another converted expression, or a value converted
// to ag::Tensor (e.g. `return a && b;` in a function returning a tensor).
// Elsewhere (`bool ok = t1 && t2;`) C++ semantics are kept. The right operand
// stays lazy, so a plain `bool` left operand short-circuits as in C++.
// Runs before the statement converters; its edits are picked up when they copy.
#include "converters/ConversionContext.h"

#include "analysis/Staging.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/ExprCXX.h"

namespace agc {

using namespace clang;

namespace {

bool isTransparent(const Stmt* stmt) {
  return isa<ParenExpr, ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr,
             ExprWithCleanups>(stmt);
}

class LogicalRewriter {
 public:
  explicit LogicalRewriter(ConversionContext& ctx) : ctx_(ctx) {}
  unsigned edits() const { return edits_; }

  void visit(const Stmt* stmt, bool tensorWanted) {
    if (!stmt || isa<LambdaExpr>(stmt)) return;
    const auto* expr = dyn_cast<Expr>(stmt);
    bool convert = expr && isTensorLogicalExpr(expr) && isConvertible(expr, tensorWanted);
    for (const Stmt* child : stmt->children())
      visit(child, convert || (isTransparent(stmt) && tensorWanted));
    if (convert) rewrite(expr);
  }

 private:
  bool isConvertible(const Expr* expr, bool tensorWanted) const {
    if (tensorWanted || ctx_.stagedConditions.contains(expr)) return true;
    if (const auto* conditional = dyn_cast<ConditionalOperator>(expr))
      return isTensorType(conditional->getType()) ||
             (isTensorExpr(conditional->getTrueExpr()) &&
              isTensorExpr(conditional->getFalseExpr())) ||
             feedsTensorExpr(conditional);
    // Converted to a tensor right away, e.g. `return a && b;` in a tensor function.
    for (const Stmt* parent = ctx_.liveness.parentOf(expr); parent;
         parent = ctx_.liveness.parentOf(parent)) {
      if (const auto* construct = dyn_cast<CXXConstructExpr>(parent))
        return isTensorType(construct->getType());
      if (const auto* cast = dyn_cast<ImplicitCastExpr>(parent);
          cast && isTensorType(cast->getType()))
        return true;
      if (!isTransparent(parent)) return false;
    }
    return false;
  }

  // Whether `expr` is an operand of a tensor operator, as in
  // `x * (t > 0 ? 2 : 3)`: the C++ number would become a tensor there anyway.
  bool feedsTensorExpr(const Expr* expr) const {
    const Stmt* parent = ctx_.liveness.parentOf(expr);
    while (parent && isTransparent(parent)) parent = ctx_.liveness.parentOf(parent);
    const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(parent);
    return op && isTensorType(op->getType());
  }

  void rewrite(const Expr* expr) {
    CharRange range = ctx_.rangeOf(expr);
    if (!range.valid || expr->getBeginLoc().isMacroID() || expr->getEndLoc().isMacroID()) {
      ctx_.error(expr->getExprLoc(),
                 "cannot convert a tensor logical expression inside a macro expansion");
      ctx_.note(expr->getExprLoc(),
                "expand the macro by hand, or use ag::and_, ag::or_ and ag::not_");
      return;
    }
    Text out;
    if (const auto* binary = dyn_cast<BinaryOperator>(expr)) {
      out = binary->getOpcode() == BO_LAnd ? "ag::and_(" : "ag::or_(";
      out += ctx_.copy(binary->getLHS());
      out += ", [&] { return ";
      out += ctx_.copy(binary->getRHS());
      out += "; })";
    } else if (const auto* unary = dyn_cast<UnaryOperator>(expr)) {
      out = "ag::not_(";
      out += ctx_.copy(unary->getSubExpr());
      out += ")";
    } else {
      const auto* conditional = cast<ConditionalOperator>(expr);
      out = "ag::if_exp(";
      out += ctx_.copy(conditional->getCond());
      out += ", [&] { return ";
      out += ctx_.copy(conditional->getTrueExpr());
      out += "; }, [&] { return ";
      out += ctx_.copy(conditional->getFalseExpr());
      out += "; })";
    }
    ctx_.file.source.replace(range.begin, range.end, std::move(out));
    ++edits_;
  }

  ConversionContext& ctx_;
  unsigned edits_ = 0;
};

}  // namespace

unsigned convertLogicalExpressions(ConversionContext& ctx) {
  LogicalRewriter rewriter(ctx);
  rewriter.visit(ctx.body, false);
  return rewriter.edits();
}

}  // namespace agc
