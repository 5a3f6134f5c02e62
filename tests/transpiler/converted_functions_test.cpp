// Unit tests for which functions agc converts (analysis/ConvertedFunctions.h):
// the marked functions, methods and lambdas, the helpers they reach, the
// lambdas converted with them, and the calls into other files.
#include "analysis/ConvertedFunctions.h"

#include "parsed_code.h"

#include "ag/annotate.h"

#include "clang/AST/ParentMapContext.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

// AG_FUNCTION as the runtime's header defines it under Clang, then `code`.
std::string withMarker(const char* code) {
  return std::string("#define AG_FUNCTION __attribute__((annotate(\"") + AG_FUNCTION_ANNOTATION +
         "\")))\n" + code;
}

// A lambda is named by the variable that holds it ("lambda scale"), any
// other function by its qualified name ("Model::call").
std::string nameOf(const ConvertedUnit& unit, ASTContext& ast) {
  if (!unit.lambda) return unit.function->getQualifiedNameAsString();
  DynTypedNodeList parents = ast.getParents(*unit.lambda);
  while (!parents.empty() && parents[0].get<Expr>()) parents = ast.getParents(parents[0]);
  const auto* var = parents.empty() ? nullptr : parents[0].get<VarDecl>();
  return "lambda " + (var ? var->getNameAsString() : std::string("without a variable"));
}

std::vector<std::string> namesOf(const std::vector<ConvertedUnit>& units, ASTContext& ast) {
  std::vector<std::string> names;
  for (const ConvertedUnit& unit : units) names.push_back(nameOf(unit, ast));
  return names;
}

TEST(ConvertedFunctionsTest, FindsMarkedFunctionsMethodsAndLambdas) {
  ParsedCode code(withMarker(R"(
AG_FUNCTION ag::Tensor marked(ag::Tensor x) { return x; }
ag::Tensor unmarked(ag::Tensor x) { return x; }
struct Model {
  AG_FUNCTION ag::Tensor inClass(ag::Tensor x) { return x; }
  AG_FUNCTION ag::Tensor outOfClass(ag::Tensor x);
  ag::Tensor plainMethod(ag::Tensor x) { return x; }
};
ag::Tensor Model::outOfClass(ag::Tensor x) { return x; }
template <class T> AG_FUNCTION T markedTemplate(T x) { return x; }
ag::Tensor useTemplate(ag::Tensor x) { return markedTemplate(x); }
void host() {
  auto scale = [](ag::Tensor x) AG_FUNCTION { return x + x; };
  auto plain = [](ag::Tensor x) { return x; };
}
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  // A template once, as written; its instantiation is not a unit of its own.
  EXPECT_EQ(namesOf(found.units, code.ast()),
            (std::vector<std::string>{"marked", "Model::inClass", "Model::outOfClass",
                                      "markedTemplate", "lambda scale"}));
  std::vector<ConvertedUnit::Kind> kinds;
  for (const ConvertedUnit& unit : found.units) kinds.push_back(unit.kind);
  EXPECT_EQ(kinds, (std::vector<ConvertedUnit::Kind>{
                       ConvertedUnit::FreeFunction, ConvertedUnit::Method, ConvertedUnit::Method,
                       ConvertedUnit::FreeFunction, ConvertedUnit::Lambda}));
  EXPECT_TRUE(found.unconvertible.empty());
  EXPECT_TRUE(found.nestedLambdas.empty());
}

// The header/source split: the unit is the definition outside the class.
TEST(ConvertedFunctionsTest, OutOfClassMethodIsItsDefinition) {
  ParsedCode code(withMarker(R"(
struct Model {
  AG_FUNCTION ag::Tensor call(ag::Tensor x);
};
ag::Tensor Model::call(ag::Tensor x) { return x; }
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  ASSERT_EQ(found.units.size(), 1u);
  EXPECT_EQ(found.units[0].kind, ConvertedUnit::Method);
  EXPECT_TRUE(found.units[0].function->isThisDeclarationADefinition());
  EXPECT_TRUE(found.units[0].function->isOutOfLine());
}

TEST(ConvertedFunctionsTest, ReachesHelpersTransitively) {
  ParsedCode code(withMarker(R"(
ag::Tensor leaf(ag::Tensor x) { return x + x; }
ag::Tensor middle(ag::Tensor x) { return leaf(x); }
template <class T> T twice(T x) { return x + x; }
int steps(int n) {
  ag::Tensor t = n;
  while (t < ag::Tensor(3)) t = t + ag::Tensor(1);
  return n;
}
int count(int n) { return n + 1; }
ag::Tensor neverCalled(ag::Tensor x) { return x; }
ag::Tensor onlyFromUnconverted(ag::Tensor x) { return x; }
ag::Tensor unconverted(ag::Tensor x) { return onlyFromUnconverted(x); }
ag::Tensor declaredOnly(ag::Tensor x);
AG_FUNCTION ag::Tensor entry(ag::Tensor x) {
  count(steps(1));
  declaredOnly(x);
  return middle(twice(x));
}
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  // Marked first, then in the order found: entry's callees in preorder, then
  // middle's. `steps` stages on a tensor without taking one; `count` has no
  // tensors; `declaredOnly` has no body.
  EXPECT_EQ(namesOf(found.units, code.ast()),
            (std::vector<std::string>{"entry", "steps", "middle", "twice", "leaf"}));
  for (std::size_t i = 1; i < found.units.size(); ++i)
    EXPECT_EQ(found.units[i].kind, ConvertedUnit::InPlace) << nameOf(found.units[i], code.ast());
  // A template is converted as written.
  EXPECT_TRUE(found.units[3].function->isTemplated());
}

TEST(ConvertedFunctionsTest, ConvertsUnmarkedLambdasWithTensorControlFlowInConvertedCode) {
  ParsedCode code(withMarker(R"(
namespace ag {
template <class F> int host_function(F f) { return 0; }
}
ag::Tensor helper(ag::Tensor x) {
  auto inHelper = [](ag::Tensor v) { if (v > ag::Tensor(0)) v = v + v; return v; };
  return inHelper(x);
}
AG_FUNCTION ag::Tensor outer(ag::Tensor x) {
  auto stagedInside = [](ag::Tensor v) { if (v > ag::Tensor(0)) v = v - ag::Tensor(1); return v; };
  auto plainInside = [](ag::Tensor v) { return v + v; };
  auto markedInside = [](ag::Tensor v) AG_FUNCTION { if (v > ag::Tensor(0)) v = v + v; return v; };
  auto genericInside = [](auto v) { if (v > ag::Tensor(0)) v = v + v; return v; };
  ag::host_function([](ag::Tensor v) { if (v > ag::Tensor(0)) v = v + v; return v; });
  return helper(stagedInside(plainInside(markedInside(genericInside(x)))));
}
void unconverted() {
  auto stagedOutside = [](ag::Tensor v) { if (v > ag::Tensor(0)) v = v + v; return v; };
}
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  EXPECT_EQ(namesOf(found.units, code.ast()),
            (std::vector<std::string>{"outer", "lambda markedInside", "helper"}));
  // The generic lambda stages on a tensor in its instantiation; the lambda
  // given to ag::host_function runs at execution time, and is not converted.
  EXPECT_EQ(
      namesOf(found.nestedLambdas, code.ast()),
      (std::vector<std::string>{"lambda stagedInside", "lambda genericInside", "lambda inHelper"}));
  for (const ConvertedUnit& unit : found.nestedLambdas) {
    EXPECT_EQ(unit.kind, ConvertedUnit::Lambda);
    EXPECT_EQ(unit.function, unit.lambda->getCallOperator());
  }
}

TEST(ConvertedFunctionsTest, ListsCallsToTensorControlFlowInOtherFiles) {
  // The line markers put the first two functions in another file, other.h.
  ParsedCode code(withMarker(R"(
# 1 "other.h" 1
inline ag::Tensor stagedElsewhere(ag::Tensor x) {
  if (x > ag::Tensor(0)) x = x - ag::Tensor(1);
  return x;
}
inline ag::Tensor plainElsewhere(ag::Tensor x) { return x + x; }
# 30 "input.cc" 2
AG_FUNCTION ag::Tensor first(ag::Tensor x) { return stagedElsewhere(plainElsewhere(x)); }
AG_FUNCTION ag::Tensor second(ag::Tensor x) { return stagedElsewhere(x); }
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  EXPECT_EQ(namesOf(found.units, code.ast()), (std::vector<std::string>{"first", "second"}));
  ASSERT_EQ(found.unconvertible.size(), 1u);  // one entry per definition
  EXPECT_EQ(found.unconvertible[0].definition->getNameAsString(), "stagedElsewhere");
  // Its first call: the outer call in `first`.
  EXPECT_EQ(found.unconvertible[0].call, test::all<CallExpr>(code.body("first")).front());
}

TEST(ConvertedFunctionsTest, FindsNothingWithoutMarks) {
  ParsedCode code(withMarker(R"(
ag::Tensor f(ag::Tensor x) {
  if (x > ag::Tensor(0)) x = x + x;
  return x;
}
)"));
  ConvertedFunctions found = findConvertedFunctions(code.ast());
  EXPECT_TRUE(found.units.empty());
  EXPECT_TRUE(found.unconvertible.empty());
  EXPECT_TRUE(found.nestedLambdas.empty());
}

}  // namespace
}  // namespace agc
