// Unit tests for the tensor-type analysis (analysis/TensorTypes.h): which
// types and expressions are tensors, and which types may be staged state.
#include "analysis/TensorTypes.h"

#include "parsed_code.h"

#include "clang/AST/Expr.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

constexpr const char* kTypes = R"(
namespace other { struct Tensor {}; }
struct User { ag::Tensor a; };
ag::Tensor& ag_fields(User& u);
namespace hooked {
struct Friend { ag::Tensor a; friend ag::Tensor& ag_fields(Friend& f) { return f.a; } };
struct Templated { ag::Tensor a; };
template <class S> ag::Tensor& ag_fields(S& s);
}
namespace bare {
struct Bare { ag::Tensor a; };
ag::Tensor& ag_fields(User& u);  // not Bare's
}
using Alias = ag::Tensor;
enum Color { Red };
void f(ag::Tensor t, const ag::Tensor& ref, Alias alias, other::Tensor notAg, int n, double* p,
       Color c, User u, ag::TensorArray array, ag::Variable v, ag::Tensor* pointer,
       hooked::Friend fr, hooked::Templated tm, bare::Bare bare) {}
)";

TEST(TensorTypesTest, TensorTypesThroughReferencesAndSugar) {
  ParsedCode code(kTypes);
  auto typeOf = [&](const char* name) { return code.var("f", name)->getType(); };
  EXPECT_TRUE(isTensorType(typeOf("t")));
  EXPECT_TRUE(isTensorType(typeOf("ref")));
  EXPECT_TRUE(isTensorType(typeOf("alias")));
  EXPECT_FALSE(isTensorType(typeOf("notAg")));
  EXPECT_FALSE(isTensorType(typeOf("n")));
  EXPECT_FALSE(isTensorType(typeOf("pointer")));
  EXPECT_FALSE(isTensorType(typeOf("array")));
  EXPECT_TRUE(isTensorOrTensorArray(typeOf("array")));
  EXPECT_FALSE(isTensorOrTensorArray(typeOf("v")));
}

TEST(TensorTypesTest, StageableTypes) {
  ParsedCode code(kTypes);
  auto stageable = [&](const char* name) {
    return isStageableType(code.var("f", name)->getType());
  };
  EXPECT_TRUE(stageable("t"));
  EXPECT_TRUE(stageable("ref"));
  EXPECT_TRUE(stageable("array"));
  // User structs with an ag_fields hook where the runtime's call finds it: in
  // their namespace, as a hidden friend, or a template there.
  EXPECT_TRUE(stageable("u"));
  EXPECT_TRUE(stageable("fr"));
  EXPECT_TRUE(stageable("tm"));
  EXPECT_FALSE(stageable("bare"));   // no hook takes it
  EXPECT_FALSE(stageable("notAg"));  // a struct without a hook
  EXPECT_TRUE(isStructWithoutFields(code.var("f", "bare")->getType()));
  EXPECT_FALSE(isStructWithoutFields(code.var("f", "u")->getType()));
  EXPECT_FALSE(stageable("n"));
  EXPECT_FALSE(stageable("p"));
  EXPECT_FALSE(stageable("c"));
  EXPECT_FALSE(stageable("v"));
  EXPECT_FALSE(stageable("pointer"));
}

TEST(TensorTypesTest, TensorExpressions) {
  ParsedCode code(R"(
void f(ag::Tensor t, bool b, int n) {
  t;
  t > 1;
  !t;
  t && b;
  b || t;
  b ? t : t;
  (t);
  b;
  n > 1;
  !b;
  b ? n : 1;
}
)");
  std::vector<bool> tensors;
  for (const Stmt* stmt : test::statementsOf(code.body("f")))
    tensors.push_back(isTensorExpr(cast<Expr>(stmt)));
  EXPECT_EQ(tensors, (std::vector<bool>{true, true, true, true, true, true, true, false, false,
                                        false, false}));
}

TEST(TensorTypesTest, ConditionsAreSeenAsSpelled) {
  ParsedCode code(R"(
void f(ag::Tensor t) { if (t) {} }
template <class T> void g(T x) { if (x) {} }
)");
  const auto* ifStmt = cast<IfStmt>(test::statementsOf(code.body("f"))[0]);
  // `if (t)` calls the explicit operator bool; the condition as spelled is `t`.
  EXPECT_FALSE(isTensorType(ifStmt->getCond()->getType()));
  EXPECT_TRUE(isa<DeclRefExpr>(spelled(ifStmt->getCond())));
  EXPECT_TRUE(isTensorExpr(ifStmt->getCond()));
  // Type-dependent conditions count as tensors.
  const auto* dependentIf = cast<IfStmt>(test::statementsOf(code.body("g"))[0]);
  EXPECT_TRUE(isTensorExpr(dependentIf->getCond()));
}

}  // namespace
}  // namespace agc
