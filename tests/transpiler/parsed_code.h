// Test support for the analysis unit tests: parses a snippet (with a minimal
// stand-in for the runtime's ag:: types in front of it) and finds its
// functions, statements and variables by name or kind.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Stmt.h"
#include "clang/Frontend/ASTUnit.h"

#include <memory>
#include <string>
#include <vector>

namespace agc::test {

// What the predicates look at: classes named Tensor, TensorArray and Variable
// in the top-level namespace ag, a Tensor's explicit operator bool, and its
// begin/end for range-for loops.
inline constexpr const char* kAgPrelude = R"(
namespace ag {
struct Tensor {
  Tensor(double value = 0);
  explicit operator bool() const;
  Tensor& operator+=(const Tensor& other);
  const Tensor* begin() const;
  const Tensor* end() const;
};
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
struct TensorArray {};
struct Variable {};
}  // namespace ag
)";

class ParsedCode {
 public:
  // Parses kAgPrelude + `code` as C++20; fails the test on errors.
  explicit ParsedCode(const std::string& code);

  clang::ASTContext& ast() const { return unit_->getASTContext(); }
  // The definition of the function `name` (first found), or null.
  const clang::FunctionDecl* function(const std::string& name) const;
  // The body of that function.
  const clang::Stmt* body(const std::string& name) const;
  // The local variable or parameter `name` of the function (first found).
  // A parameter, local variable or structured binding of `function`.
  const clang::ValueDecl* var(const std::string& function, const std::string& name) const;

 private:
  std::unique_ptr<clang::ASTUnit> unit_;
};

// The statements of `root` of kind T, in preorder (lambdas included).
template <class T>
std::vector<const T*> all(const clang::Stmt* root) {
  std::vector<const T*> out;
  std::vector<const clang::Stmt*> stack{root};
  while (!stack.empty()) {
    const clang::Stmt* stmt = stack.back();
    stack.pop_back();
    if (!stmt) continue;
    if (const auto* match = llvm::dyn_cast<T>(stmt)) out.push_back(match);
    std::vector<const clang::Stmt*> children(stmt->child_begin(), stmt->child_end());
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  return out;
}

// The statements directly in a compound statement.
std::vector<const clang::Stmt*> statementsOf(const clang::Stmt* compound);

// The names of the variables, in order.
std::vector<std::string> namesOf(llvm::ArrayRef<const clang::ValueDecl*> vars);
// The locals a declaration introduces: the variable, or a decomposition's bindings.
std::vector<const clang::ValueDecl*> localsDeclaredBy(const clang::Decl* decl);

}  // namespace agc::test
