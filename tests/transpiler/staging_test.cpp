// Unit tests for the staging rule (analysis/Staging.h): which statements are
// staged, and their condition, parts and names.
#include "analysis/Staging.h"

#include "analysis/TensorTypes.h"
#include "parsed_code.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/StmtCXX.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

constexpr const char* kConstructs = R"(
void f(ag::Tensor t, bool b, int n) {
  if (t) { n = 1; } else { n = 2; }
  if (b) {}
  if constexpr (true) {}
  while (t > 0) {}
  while (n > 0) { --n; }
  do {} while (t > 0);
  do {} while (b);
  for (int i = 0; t > i; ++i) {}
  for (int i = 0; i < n; ++i) {}
  for (;;) { break; }
  for (ag::Tensor x : t) {}
}
)";

TEST(StagingTest, StagesConstructsWithTensorConditions) {
  ParsedCode code(kConstructs);
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  ASSERT_EQ(statements.size(), 11u);
  std::vector<bool> staged;
  std::vector<std::string> names;
  for (const Stmt* stmt : statements) {
    staged.push_back(isStaged(stmt));
    names.push_back(constructName(stmt));
  }
  EXPECT_EQ(staged, (std::vector<bool>{true, false, false, true, false, true, false, true, false,
                                       false, true}));
  EXPECT_EQ(names, (std::vector<std::string>{"if", "if", "if", "while loop", "while loop",
                                             "do-while loop", "do-while loop", "for loop",
                                             "for loop", "for loop", "for loop"}));
}

TEST(StagingTest, StagesRangeLoopsOverDatasetsOfAgDataOnly) {
  ParsedCode code(R"(
namespace ag::data {
template <class E> struct Dataset { const E* begin() const; const E* end() const; };
}
namespace other {
template <class E> struct Dataset { const E* begin() const; const E* end() const; };
}
struct Pair { ag::Tensor a, b; };
void f(ag::data::Dataset<Pair> ds, const ag::data::Dataset<ag::Tensor>& xs,
       other::Dataset<ag::Tensor> others, const Pair* pairs) {
  for (auto [a, b] : ds) {}
  for (const auto& x : xs) {}
  for (ag::Tensor x : others) {}
  for (int i = 0; i < 2; ++i) {}
}
)");
  std::vector<bool> staged;
  for (const Stmt* stmt : test::statementsOf(code.body("f"))) staged.push_back(isStaged(stmt));
  EXPECT_EQ(staged, (std::vector<bool>{true, true, false, false}));
}

TEST(StagingTest, LoopsAreLoops) {
  ParsedCode code(kConstructs);
  std::vector<bool> loops;
  for (const Stmt* stmt : test::statementsOf(code.body("f"))) loops.push_back(isLoop(stmt));
  EXPECT_EQ(loops, (std::vector<bool>{false, false, false, true, true, true, true, true, true, true,
                                      true}));
}

TEST(StagingTest, ConditionIsTheTestOrTheRange) {
  ParsedCode code(kConstructs);
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  const auto* ifStmt = cast<IfStmt>(statements[0]);
  EXPECT_EQ(conditionOf(ifStmt), ifStmt->getCond());
  const auto* rangeFor = cast<CXXForRangeStmt>(statements[10]);
  EXPECT_EQ(conditionOf(rangeFor), rangeFor->getRangeInit());
  EXPECT_EQ(conditionOf(statements[9]), nullptr);  // for (;;)
  EXPECT_FALSE(isStaged(statements[9]));
}

TEST(StagingTest, StagedPartsAreBranchesBodiesAndIncrement) {
  ParsedCode code(kConstructs);
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  const auto* ifStmt = cast<IfStmt>(statements[0]);
  auto ifParts = stagedPartsOf(ifStmt);
  ASSERT_EQ(ifParts.size(), 2u);
  EXPECT_EQ(ifParts[0], ifStmt->getThen());
  EXPECT_EQ(ifParts[1], ifStmt->getElse());
  EXPECT_EQ(elseOf(ifStmt), ifStmt->getElse());

  const auto* doStmt = cast<DoStmt>(statements[5]);
  auto doParts = stagedPartsOf(doStmt);
  ASSERT_EQ(doParts.size(), 1u);
  EXPECT_EQ(doParts[0], doStmt->getBody());

  const auto* forStmt = cast<ForStmt>(statements[7]);
  auto forParts = stagedPartsOf(forStmt);
  ASSERT_EQ(forParts.size(), 2u);
  EXPECT_EQ(forParts[0], forStmt->getBody());
  EXPECT_EQ(forParts[1], forStmt->getInc());

  EXPECT_TRUE(stagedPartsOf(statements[1]).empty());  // if (b)
  EXPECT_TRUE(stagedPartsOf(statements[8]).empty());  // for over an int
}

TEST(StagingTest, DependentConditionsAreStagedButAreNotKnownTensorControlFlow) {
  ParsedCode code(R"(
template <class T> void g(T t) { if (t) {} }
void h(ag::Tensor t) { if (t) {} }
)");
  const Stmt* dependentIf = test::statementsOf(code.body("g"))[0];
  EXPECT_TRUE(isStaged(dependentIf));
  EXPECT_FALSE(hasTensorControlFlow(code.body("g")));
  EXPECT_TRUE(hasTensorControlFlow(code.body("h")));
}

TEST(StagingTest, TensorLogicalExpressions) {
  ParsedCode code(R"(
void f(ag::Tensor t, bool b) {
  t && b;
  b || t;
  !t;
  t ? 1 : 2;
  b && b;
  !b;
  b ? t : t;
}
)");
  std::vector<bool> logical;
  for (const Stmt* stmt : test::statementsOf(code.body("f")))
    logical.push_back(isTensorLogicalExpr(spelled(cast<Expr>(stmt))));
  EXPECT_EQ(logical, (std::vector<bool>{true, true, true, true, false, false, false}));
}

// Which tensor `&&`/`||` the logical converter turns into ag::and_/or_: one
// per line, in order; the outermost `&&`/`||` of each statement.
TEST(StagingTest, LogicalExpressionsAreConvertedWhereATensorIsWanted) {
  ParsedCode code(R"(
ag::Tensor take(ag::Tensor t);
bool keep(bool b);
ag::Tensor f(ag::Tensor t, ag::Tensor u, bool b) {
  if (t && u) {}
  while (t < u && b) {}
  ag::Tensor ok = t || u;
  auto lowered = t && b;
  take(b || t);
  ag::Tensor picked = (t && u) ? t : u;
  bool plain = t && u;
  keep(t || u);
  bool cpp = b && b;
  return t || (u && b);
}
)");
  ParentMap parents(const_cast<Stmt*>(code.body("f")));
  auto parentOf = [&](const Stmt* node) -> const Stmt* {
    return parents.getParent(const_cast<Stmt*>(node));
  };
  std::vector<bool> converted;
  for (const Stmt* statement : test::statementsOf(code.body("f"))) {
    std::vector<const BinaryOperator*> logical;
    for (const BinaryOperator* op : test::all<BinaryOperator>(statement))
      if (op->isLogicalOp()) logical.push_back(op);
    ASSERT_FALSE(logical.empty());
    converted.push_back(isConvertedLogicalExpr(logical.front(), parentOf));
  }
  EXPECT_EQ(converted,
            (std::vector<bool>{true, true, true, true, true, true, false, false, false, true}));
  // The nested `u && b` of the return is converted with it; `lowered` holds a tensor.
  const auto* inner = test::all<BinaryOperator>(test::statementsOf(code.body("f")).back()).back();
  EXPECT_TRUE(isConvertedLogicalExpr(inner, parentOf));
  EXPECT_TRUE(isLoweredLogicalVar(llvm::cast<VarDecl>(code.var("f", "lowered"))));
  EXPECT_FALSE(isLoweredLogicalVar(llvm::cast<VarDecl>(code.var("f", "plain"))));
}

TEST(StagingTest, TensorControlFlowIgnoresPlainCodeAndLambdas) {
  ParsedCode code(R"(
void plain(bool b, int n) { if (b) {} while (n > 0) --n; }
void logical(ag::Tensor t, bool b) { bool x = t && b; }
void inLambda(ag::Tensor t) { auto l = [&] { if (t) {} }; }
)");
  EXPECT_FALSE(hasTensorControlFlow(code.body("plain")));
  EXPECT_TRUE(hasTensorControlFlow(code.body("logical")));
  EXPECT_FALSE(hasTensorControlFlow(code.body("inLambda")));
  // bodyStatements stops at the lambda: the body, the DeclStmt, the lambda
  // are not walked into.
  for (const Stmt* stmt : bodyStatements(code.body("inLambda"))) EXPECT_FALSE(isa<IfStmt>(stmt));
}

}  // namespace
}  // namespace agc
