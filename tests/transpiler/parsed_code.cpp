#include "parsed_code.h"

#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Tooling/Tooling.h"

#include <gtest/gtest.h>

namespace agc::test {

using namespace clang;

ParsedCode::ParsedCode(const std::string& code)
    : unit_(tooling::buildASTFromCodeWithArgs(std::string(kAgPrelude) + code,
                                              {"-std=c++20", "-Wno-unused-value"}, "input.cc")) {
  EXPECT_TRUE(unit_);
  if (unit_) {
    EXPECT_FALSE(unit_->getDiagnostics().hasErrorOccurred()) << "the snippet has errors";
  }
}

namespace {

class FunctionFinder : public RecursiveASTVisitor<FunctionFinder> {
 public:
  explicit FunctionFinder(const std::string& name) : name_(name) {}
  bool shouldVisitTemplateInstantiations() const { return false; }
  bool VisitFunctionDecl(FunctionDecl* function) {
    if (!found && function->doesThisDeclarationHaveABody() && function->getNameAsString() == name_)
      found = function;
    return true;
  }
  const FunctionDecl* found = nullptr;

 private:
  std::string name_;
};

}  // namespace

const FunctionDecl* ParsedCode::function(const std::string& name) const {
  FunctionFinder finder(name);
  finder.TraverseDecl(ast().getTranslationUnitDecl());
  EXPECT_TRUE(finder.found) << "no function " << name;
  return finder.found;
}

const Stmt* ParsedCode::body(const std::string& name) const {
  const FunctionDecl* found = function(name);
  return found ? found->getBody() : nullptr;
}

const ValueDecl* ParsedCode::var(const std::string& functionName, const std::string& name) const {
  const FunctionDecl* found = function(functionName);
  if (!found) return nullptr;
  for (const ParmVarDecl* param : found->parameters())
    if (param->getName() == name) return param;
  for (const DeclStmt* declStmt : all<DeclStmt>(found->getBody()))
    for (const Decl* decl : declStmt->decls())
      for (const ValueDecl* local : localsDeclaredBy(decl))
        if (local->getName() == name) return local;
  ADD_FAILURE() << "no variable " << name << " in " << functionName;
  return nullptr;
}

std::vector<const ValueDecl*> localsDeclaredBy(const Decl* decl) {
  if (const auto* decomposition = dyn_cast<DecompositionDecl>(decl))
    return {decomposition->bindings().begin(), decomposition->bindings().end()};
  if (const auto* var = dyn_cast<VarDecl>(decl)) return {var};
  return {};
}

std::vector<const Stmt*> statementsOf(const Stmt* compound) {
  const auto* block = dyn_cast_or_null<CompoundStmt>(compound);
  EXPECT_TRUE(block) << "not a compound statement";
  if (!block) return {};
  return {block->body_begin(), block->body_end()};
}

std::vector<std::string> namesOf(llvm::ArrayRef<const ValueDecl*> vars) {
  std::vector<std::string> names;
  for (const ValueDecl* var : vars) names.push_back(var->getNameAsString());
  return names;
}

}  // namespace agc::test
