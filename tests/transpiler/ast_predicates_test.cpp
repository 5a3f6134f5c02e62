// Unit tests for the shared AST predicates (analysis/AstPredicates.h).
#include "analysis/AstPredicates.h"

#include "parsed_code.h"

#include "ag/annotate.h"

#include "clang/AST/ExprCXX.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

TEST(AstPredicatesTest, MarkedFunctionsCarryTheAnnotation) {
  ParsedCode code(std::string("#define AG_FUNCTION __attribute__((annotate(\"") +
                  AG_FUNCTION_ANNOTATION + R"("))) 
AG_FUNCTION ag::Tensor marked(ag::Tensor x) { return x; }
ag::Tensor plain(ag::Tensor x) { return x; }
AG_FUNCTION ag::Tensor declaredFirst(ag::Tensor x);
ag::Tensor declaredFirst(ag::Tensor x) { return x; }
template <class T> AG_FUNCTION T templ(T x) { return x; }
ag::Tensor use(ag::Tensor x) { return templ(x); }
)");
  EXPECT_TRUE(isMarked(code.function("marked")));
  EXPECT_FALSE(isMarked(code.function("plain")));
  EXPECT_TRUE(isMarked(code.function("declaredFirst")));
  const auto* call = test::all<CallExpr>(code.body("use")).front();
  EXPECT_TRUE(isMarked(call->getDirectCallee()));  // the instantiation
}

// Clang copies a template's annotation onto its explicit specializations; a
// specialization is marked only when its own declaration says so.
TEST(AstPredicatesTest, ExplicitSpecializationsAreMarkedOnlyWhereWritten) {
  ParsedCode code(std::string("#define AG_FUNCTION __attribute__((annotate(\"") +
                  AG_FUNCTION_ANNOTATION + R"("))) 
template <class T> AG_FUNCTION int size(T) { return 1; }
template <> int size<bool>(bool) { return 2; }
template <> AG_FUNCTION int size<char>(char) { return 3; }
int use() { return size(true) + size('a'); }
)");
  std::vector<const CallExpr*> calls = test::all<CallExpr>(code.body("use"));
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_FALSE(isMarked(calls[0]->getDirectCallee()));
  EXPECT_TRUE(isMarked(calls[1]->getDirectCallee()));
}

TEST(AstPredicatesTest, Namespaces) {
  ParsedCode code(R"(
namespace ag::detail { struct Inner {}; }
namespace other::ag { struct Fake {}; }
namespace std { inline namespace v1 { struct vec {}; } }
void f(ag::Tensor t, ag::detail::Inner inner, other::ag::Fake fake, std::vec v) {}
)");
  auto recordOf = [&](const char* name) {
    return code.var("f", name)->getType()->getAsCXXRecordDecl();
  };
  EXPECT_TRUE(isInAgNamespace(recordOf("t")));
  EXPECT_TRUE(isInAgNamespace(recordOf("inner")));
  EXPECT_FALSE(isInAgNamespace(recordOf("fake")));
  EXPECT_TRUE(isInNamespace(recordOf("v"), "std"));
  EXPECT_TRUE(isWithinStd(recordOf("v")));
  EXPECT_TRUE(isAgClass(code.var("f", "t")->getType(), "Tensor"));
  EXPECT_FALSE(isAgClass(code.var("f", "fake")->getType(), "Fake"));
}

// The direct callees of the calls in the body of `function`, in preorder.
std::vector<const FunctionDecl*> calleesIn(const ParsedCode& code, const std::string& function) {
  std::vector<const FunctionDecl*> callees;
  for (const CallExpr* call : test::all<CallExpr>(code.body(function)))
    callees.push_back(call->getDirectCallee());
  return callees;
}

TEST(AstPredicatesTest, StdSubNamespaces) {
  ParsedCode code(R"(
namespace std {
namespace chrono { struct steady_clock { static int now(); }; }
namespace ranges { inline namespace cpo { int shuffle(); } }
namespace filesystem { inline namespace v1 { int remove(); } }
int shuffle();
}
namespace chrono { int now(); }
namespace mine::filesystem { int remove(); }
void use() {
  std::chrono::steady_clock::now();
  std::ranges::shuffle();
  std::filesystem::remove();
  std::shuffle();
  chrono::now();
  mine::filesystem::remove();
}
)");
  std::vector<const FunctionDecl*> callees = calleesIn(code, "use");
  ASSERT_EQ(callees.size(), 6u);
  EXPECT_TRUE(isInStdSubNamespace(callees[0], "chrono"));  // a static method of a class in it
  EXPECT_FALSE(isInStdSubNamespace(callees[0], "ranges"));
  EXPECT_TRUE(isInStdSubNamespace(callees[1], "ranges"));  // through an inline namespace
  EXPECT_TRUE(isInStdSubNamespace(callees[2], "filesystem"));
  EXPECT_FALSE(isInStdSubNamespace(callees[3], "ranges"));  // std itself
  EXPECT_FALSE(isInStdSubNamespace(callees[4], "chrono"));  // not in std
  EXPECT_FALSE(isInStdSubNamespace(callees[5], "filesystem"));
}

TEST(AstPredicatesTest, CLibraryFunctions) {
  // The line markers put the first declarations in a system header (flag 3),
  // as <stdio.h> and <stdlib.h> would.
  ParsedCode code(R"(
# 1 "/usr/include/libc.h" 1 3
extern "C" {
int printf(const char*, ...);
int rand();
}
namespace std { using ::printf; }
int notExternC();
# 40 "input.cc" 2
extern "C" int puts(const char*);
namespace mine { int rand(); }
void use() {
  printf("x");
  std::printf("x");
  rand();
  notExternC();
  puts("x");
  mine::rand();
}
)");
  std::vector<bool> library;
  for (const FunctionDecl* callee : calleesIn(code, "use"))
    library.push_back(isCLibraryFunction(callee));
  // printf, std::printf and rand are the library's; a C++ function of a
  // system header, an extern "C" function of the user and a namespace's
  // function are not.
  EXPECT_EQ(library, (std::vector<bool>{true, true, true, false, false, false}));
}

TEST(AstPredicatesTest, HoldsTensorAndVariable) {
  ParsedCode code(R"(
template <class T> struct Box { T value; };
struct Pair { int a; ag::Tensor b; };
void f(Box<ag::Tensor> box, Pair pair, ag::Tensor* p, ag::TensorArray array, int n,
       Box<int> ints, Box<ag::Variable> variables, Box<Box<ag::Variable>*> nested,
       ag::Variable v) {}
)");
  auto typeOf = [&](const char* name) { return code.var("f", name)->getType(); };
  EXPECT_TRUE(holdsTensor(typeOf("box")));
  EXPECT_TRUE(holdsTensor(typeOf("pair")));
  EXPECT_TRUE(holdsTensor(typeOf("p")));
  EXPECT_TRUE(holdsTensor(typeOf("array")));
  EXPECT_FALSE(holdsTensor(typeOf("n")));
  EXPECT_FALSE(holdsTensor(typeOf("ints")));
  EXPECT_TRUE(holdsVariable(typeOf("variables")));
  EXPECT_TRUE(holdsVariable(typeOf("nested")));
  EXPECT_TRUE(holdsVariable(typeOf("v")));
  EXPECT_FALSE(holdsVariable(typeOf("box")));
  auto isVariable = [](QualType type) { return isAgClass(type, "Variable"); };
  EXPECT_TRUE(hasTypeArgument(typeOf("variables"), isVariable));
  EXPECT_FALSE(hasTypeArgument(typeOf("nested"), isVariable));  // not directly
  EXPECT_FALSE(hasTypeArgument(typeOf("v"), isVariable));
}

TEST(AstPredicatesTest, StorageOfAnLvalue) {
  ParsedCode code(R"(
struct Inner { int x; };
struct S {
  Inner m;
  static int shared;
  int arr[3];
  Inner& get();
  void f(Inner local, S other, int i) {
    local.x;
    m.x;
    this->m.x;
    other.shared;
    arr[i];
    get().x;
  }
};
)");
  std::vector<std::string> roots;
  for (const Stmt* stmt : test::statementsOf(code.body("f"))) {
    const ValueDecl* root = storageOf(cast<Expr>(stmt));
    roots.push_back(root ? root->getNameAsString() : "null");
  }
  EXPECT_EQ(roots, (std::vector<std::string>{"local", "m", "m", "shared", "arr", "null"}));
}

}  // namespace
}  // namespace agc
