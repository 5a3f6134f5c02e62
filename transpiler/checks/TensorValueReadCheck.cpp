// ag-tensor-value-read. While a function is traced its tensors are symbolic:
// they have no value until the graph runs, so reading one (`t.item<float>()`,
// `t.data<int>()`, `t.to_vector<double>()`) fails at trace time. Reported as
// a warning at the call in converted code; `item<bool>()` is ag-tensor-as-bool's
// (a condition agc cannot stage), and code in an ag::host_function callback
// runs eagerly (DiagnosticCollector leaves it out).
#include "checks/TensorValueReadCheck.h"

#include "analysis/TensorTypes.h"

#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

// The Tensor methods that read an eager tensor's values.
bool readsValue(const CXXMethodDecl& method) {
  return method.getDeclName().isIdentifier() &&
         llvm::is_contained(
             {"item", "data", "mutable_data", "raw_data", "raw_mutable_data", "to_vector"},
             method.getName());
}

bool isItemOfBool(const CXXMemberCallExpr& call) {
  const FunctionDecl* callee = call.getDirectCallee();
  const TemplateArgumentList* args = callee ? callee->getTemplateSpecializationArgs() : nullptr;
  return callee && callee->getName() == "item" && args && args->size() == 1 &&
         args->get(0).getKind() == TemplateArgument::Type &&
         args->get(0).getAsType()->isBooleanType();
}

}  // namespace

void TensorValueReadCheck::registerMatchers(MatchFinder& finder) {
  // Matching runs over converted code only (see AgCheck.h).
  finder.addMatcher(cxxMemberCallExpr().bind("call"), this);
}

void TensorValueReadCheck::check(const MatchFinder::MatchResult& result) {
  const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("call");
  if (!call || !scope().enclosingConverted(*call)) return;
  const CXXMethodDecl* method = call->getMethodDecl();
  const Expr* object = call->getImplicitObjectArgument();
  if (!method || !object || !isTensorType(object->getType()) || !readsValue(*method) ||
      isItemOfBool(*call))
    return;
  diag(call->getExprLoc(), ("'" + method->getName() +
                            "()' reads the tensor's value, which is only known when the graph "
                            "runs: it fails while the function is traced; keep it a tensor and "
                            "compute with ag ops, or read the value after the call returns")
                               .str())
      << call->getSourceRange();
}

}  // namespace agc
