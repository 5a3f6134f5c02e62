#include "checks/ConvertedScope.h"

#include "analysis/AstPredicates.h"
#include "analysis/Staging.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;

ConvertedScope::ConvertedScope(ASTContext& ast, const ConvertedFunctions& found)
    : sm_(ast.getSourceManager()) {
  for (const ConvertedUnit& unit : found.units) {
    functions_.push_back(unit.function);
    converted_.insert(unit.function->getCanonicalDecl());
  }
  std::stable_sort(functions_.begin(), functions_.end(),
                   [&](const FunctionDecl* a, const FunctionDecl* b) {
                     return offsetOf(a->getBeginLoc()) < offsetOf(b->getBeginLoc());
                   });
  // Functions first, then lambdas from the outermost: a lambda already
  // walked as part of converted code is walked no more.
  std::vector<const ConvertedUnit*> order;
  for (const ConvertedUnit& unit : found.units) order.push_back(&unit);
  std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    if ((a->lambda != nullptr) != (b->lambda != nullptr)) return a->lambda == nullptr;
    return offsetOf(a->function->getBeginLoc()) < offsetOf(b->function->getBeginLoc());
  });
  std::vector<std::pair<unsigned, std::vector<DynTypedNode>>> walked;
  for (const ConvertedUnit* unit : order) {
    if (unit->lambda && owner_.count(unit->lambda)) continue;
    nodes_.clear();
    nodes_.push_back(DynTypedNode::create(*unit->function));
    for (const ParmVarDecl* param : unit->function->parameters())
      nodes_.push_back(DynTypedNode::create(*param));
    walk(unit->function->getBody(), unit->function, false, false);
    SourceLocation begin =
        unit->lambda ? unit->lambda->getBeginLoc() : unit->function->getBeginLoc();
    walked.emplace_back(offsetOf(begin), std::move(nodes_));
    addRoot(ast, begin);
  }
  // Matched in source order, so that findings come out in source order.
  std::stable_sort(walked.begin(), walked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [offset, nodes] : walked)
    matchOrder.insert(matchOrder.end(), nodes.begin(), nodes.end());
}

bool ConvertedScope::isConverted(const FunctionDecl* function) const {
  if (!function) return false;
  if (const FunctionDecl* pattern = function->getTemplateInstantiationPattern()) function = pattern;
  return converted_.contains(function->getCanonicalDecl());
}

bool ConvertedScope::inHostRange(SourceLocation loc) const {
  if (hostRanges_.empty() || loc.isInvalid()) return false;
  SourceLocation fileLoc = sm_.getExpansionLoc(loc);
  if (sm_.getFileID(fileLoc) != sm_.getMainFileID()) return false;
  unsigned offset = sm_.getFileOffset(fileLoc);
  return llvm::any_of(hostRanges_,
                      [&](auto range) { return range.first <= offset && offset < range.second; });
}

void ConvertedScope::addRoot(ASTContext& ast, SourceLocation loc) {
  unsigned offset = offsetOf(loc);
  for (Decl* decl : ast.getTranslationUnitDecl()->decls()) {
    SourceLocation begin = decl->getBeginLoc(), end = decl->getEndLoc();
    if (begin.isInvalid() || end.isInvalid() ||
        sm_.getFileID(sm_.getExpansionLoc(begin)) != sm_.getMainFileID() ||
        sm_.getFileID(sm_.getExpansionLoc(end)) != sm_.getMainFileID())
      continue;
    if (offsetOf(begin) <= offset && offset <= offsetOf(end)) {
      if (!llvm::is_contained(roots, decl)) roots.push_back(decl);
      return;
    }
  }
}

unsigned ConvertedScope::offsetOf(SourceLocation loc) const {
  return sm_.getFileOffset(sm_.getExpansionLoc(loc));
}

void ConvertedScope::walk(const Stmt* stmt, const FunctionDecl* owner, bool staged, bool host) {
  if (!stmt) return;
  if (const auto* lambda = dyn_cast<LambdaExpr>(stmt);
      lambda && isConverted(lambda->getCallOperator()))
    owner = lambda->getCallOperator();
  owner_[stmt] = owner;
  if (staged) staged_.insert(stmt);
  if (host) host_.insert(stmt);
  if (!host) {
    nodes_.push_back(DynTypedNode::create(*stmt));
    if (const auto* declStmt = dyn_cast<DeclStmt>(stmt))
      for (const Decl* decl : declStmt->decls()) nodes_.push_back(DynTypedNode::create(*decl));
  }

  if (const auto* call = dyn_cast<CallExpr>(stmt); call && !host && isHostFunctionCall(call)) {
    const Expr* fn = call->getArg(0);
    SourceLocation end = sm_.getExpansionLoc(fn->getEndLoc());
    hostRanges_.emplace_back(
        offsetOf(fn->getBeginLoc()),
        sm_.getFileOffset(end) + Lexer::MeasureTokenLength(end, sm_, LangOptions()));
    for (const Stmt* child : stmt->children()) walk(child, owner, staged, /*host=*/child == fn);
    return;
  }
  // The parts of staged control flow that run once per trace but stand
  // for every iteration or branch.
  llvm::SmallVector<const Stmt*, 2> stagedParts = stagedPartsOf(stmt);
  for (const Stmt* child : stmt->children()) {
    bool childStaged = staged || (child && llvm::is_contained(stagedParts, child));
    walk(child, owner, childStaged, host);
  }
}

}  // namespace agc
