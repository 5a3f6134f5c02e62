#include "analysis/ConvertedFunctions.h"

#include "analysis/AstPredicates.h"
#include "analysis/Staging.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseSet.h"

namespace agc {

using namespace clang;

namespace {

class MarkedFinder : public RecursiveASTVisitor<MarkedFinder> {
 public:
  MarkedFinder(const SourceManager& sm, std::vector<ConvertedUnit>& units)
      : sm_(sm), units_(units) {}

  bool VisitFunctionDecl(FunctionDecl* function) {
    if (!function->doesThisDeclarationHaveABody() || !isMarked(function) ||
        !sm_.isInMainFile(sm_.getExpansionLoc(function->getLocation())) ||
        function->isTemplateInstantiation())
      return true;
    if (const auto* method = dyn_cast<CXXMethodDecl>(function)) {
      if (method->getParent()->isLambda()) return true;  // found through VisitLambdaExpr
      units_.push_back({ConvertedUnit::Method, function});
    } else {
      units_.push_back({ConvertedUnit::FreeFunction, function});
    }
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr* lambda) {
    const CXXMethodDecl* callOperator = lambda->getCallOperator();
    if (isMarked(callOperator) && sm_.isInMainFile(sm_.getExpansionLoc(lambda->getBeginLoc())))
      units_.push_back({ConvertedUnit::Lambda, callOperator, lambda});
    return true;
  }

 private:
  const SourceManager& sm_;
  std::vector<ConvertedUnit>& units_;
};

// The direct callees of a body, including calls inside lambdas.
void collectCallees(const Stmt* stmt,
                    std::vector<std::pair<const CallExpr*, const FunctionDecl*>>& out) {
  if (!stmt) return;
  if (const auto* call = dyn_cast<CallExpr>(stmt))
    if (const FunctionDecl* callee = call->getDirectCallee()) out.emplace_back(call, callee);
  for (const Stmt* child : stmt->children()) collectCallees(child, out);
}

// Whether the lambda's body (or, for a generic lambda, one of its
// instantiations) has an if/while/for on a tensor.
bool lambdaHasTensorControlFlow(const LambdaExpr* lambda) {
  const CXXMethodDecl* callOperator = lambda->getCallOperator();
  if (hasTensorControlFlow(callOperator->getBody())) return true;
  if (const FunctionTemplateDecl* templ = callOperator->getDescribedFunctionTemplate())
    for (const FunctionDecl* instance : templ->specializations())
      if (hasTensorControlFlow(instance->getBody())) return true;
  return false;
}

// The unmarked lambdas under `stmt` with tensor control flow, outermost first,
// skipping the functions given to ag::host_function.
void collectNestedLambdas(const Stmt* stmt, std::vector<const LambdaExpr*>& out) {
  if (!stmt) return;
  if (const auto* call = dyn_cast<CallExpr>(stmt); call && isHostFunctionCall(call)) {
    for (unsigned i = 1; i < call->getNumArgs(); ++i) collectNestedLambdas(call->getArg(i), out);
    return;
  }
  if (const auto* lambda = dyn_cast<LambdaExpr>(stmt);
      lambda && !isMarked(lambda->getCallOperator()) && lambdaHasTensorControlFlow(lambda))
    out.push_back(lambda);
  for (const Stmt* child : stmt->children()) collectNestedLambdas(child, out);
}

}  // namespace

bool mentionsTensor(const FunctionDecl* function) {
  if (isTensorType(function->getReturnType())) return true;
  return llvm::any_of(function->parameters(),
                      [](const ParmVarDecl* p) { return isTensorType(p->getType()); });
}

CalleeKind classifyCallee(const FunctionDecl* callee, const SourceManager& sm,
                          const FunctionDecl*& definition) {
  definition = nullptr;
  // A template is converted as written (its pattern), when the instantiation
  // called here takes tensors or stages on them.
  const FunctionDecl* instance = callee;
  if (const FunctionDecl* pattern = callee->getTemplateInstantiationPattern()) callee = pattern;
  if (!callee->hasBody(definition) || definition->isImplicit() || definition->isInStdNamespace())
    return CalleeKind::Ignore;
  if (const auto* method = dyn_cast<CXXMethodDecl>(definition);
      method && method->getParent()->isLambda())
    return CalleeKind::Ignore;
  bool inMainFile = sm.isInMainFile(sm.getExpansionLoc(definition->getLocation()));
  bool tensorFlow = hasTensorControlFlow(definition->getBody());
  bool tensors = mentionsTensor(definition);
  if (instance != callee && instance->hasBody()) {
    tensorFlow = tensorFlow || hasTensorControlFlow(instance->getBody());
    tensors = tensors || mentionsTensor(instance);
  }
  if (inMainFile && (tensors || tensorFlow)) return CalleeKind::ConvertInPlace;
  if (!inMainFile && tensorFlow) return CalleeKind::Unconvertible;
  return CalleeKind::Ignore;
}

ConvertedFunctions findConvertedFunctions(ASTContext& ast) {
  ConvertedFunctions result;
  std::vector<ConvertedUnit>& units = result.units;
  const SourceManager& sm = ast.getSourceManager();
  // Only the main file's top-level declarations: marked code lives there, and
  // the headers (Eigen, the standard library) are never walked.
  MarkedFinder finder(sm, units);
  for (Decl* decl : ast.getTranslationUnitDecl()->decls()) {
    SourceLocation loc = decl->getLocation();
    if (loc.isInvalid() || !sm.isInMainFile(sm.getExpansionLoc(loc))) continue;
    finder.TraverseDecl(decl);
  }
  if (units.empty()) return result;

  llvm::DenseSet<const FunctionDecl*> queued, reported;
  for (const ConvertedUnit& unit : units) queued.insert(unit.function);
  // What converted code calls from this file, transitively.
  for (std::size_t i = 0; i < units.size(); ++i) {
    std::vector<std::pair<const CallExpr*, const FunctionDecl*>> calls;
    collectCallees(units[i].function->getBody(), calls);
    for (auto [call, callee] : calls) {
      const FunctionDecl* definition = nullptr;
      CalleeKind kind = classifyCallee(callee, sm, definition);
      if (kind == CalleeKind::Ignore || queued.contains(definition)) continue;
      if (kind == CalleeKind::ConvertInPlace) {
        queued.insert(definition);
        units.push_back({ConvertedUnit::InPlace, definition});
      } else if (reported.insert(definition).second) {
        result.unconvertible.push_back({call, definition});
      }
    }
  }
  // Lambdas inside converted code; marked ones are units already.
  llvm::DenseSet<const LambdaExpr*> nested;
  for (const ConvertedUnit& unit : units) {
    std::vector<const LambdaExpr*> lambdas;
    collectNestedLambdas(unit.function->getBody(), lambdas);
    for (const LambdaExpr* lambda : lambdas)
      if (nested.insert(lambda).second)
        result.nestedLambdas.push_back({ConvertedUnit::Lambda, lambda->getCallOperator(), lambda});
  }
  return result;
}

}  // namespace agc
