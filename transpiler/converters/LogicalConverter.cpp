// Logical converter: `&&`, `||`, `!` and `?:` over tensors.
//
//   a && b      -> ag::and_(a, [&] { return b; })
//   a || b      -> ag::or_(a, [&] { return b; })
//   !a          -> ag::not_(a)
//   c ? a : b   -> ag::if_exp(c, [&] { return a; }, [&] { return b; })
//
// Needs: the function body's parent map. Guarantees: exactly the expressions
// of analysis/Staging.h's isConvertedLogicalExpr are converted, the ones
// whose value is used as a tensor; elsewhere (`bool ok = t1 && t2;`) C++
// semantics are kept. The right operand stays lazy, so `&&` and `||`
// short-circuit as in C++, eagerly and in a graph.
// Runs before the statement converters; its edits are picked up when they copy.
#include "converters/ConversionContext.h"

#include "analysis/Staging.h"

#include "clang/AST/ExprCXX.h"

namespace agc {

using namespace clang;

namespace {

class LogicalRewriter {
 public:
  explicit LogicalRewriter(ConversionContext& ctx) : ctx_(ctx) {}
  unsigned edits() const { return edits_; }

  // Post-order, so that an outer expression copies its converted operands.
  void visit(const Stmt* stmt) {
    if (!stmt || isa<LambdaExpr>(stmt)) return;
    for (const Stmt* child : stmt->children()) visit(child);
    const auto* expr = dyn_cast<Expr>(stmt);
    auto parentOf = [&](const Stmt* node) { return ctx_.liveness.parentOf(node); };
    if (expr && isConvertedLogicalExpr(expr, parentOf)) rewrite(expr);
  }

 private:
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
  rewriter.visit(ctx.body);
  return rewriter.edits();
}

}  // namespace agc
