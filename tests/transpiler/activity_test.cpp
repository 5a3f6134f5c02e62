// Unit tests for the activity analysis (analysis/Activity.h): which local
// variables a statement reads and writes.
#include "analysis/Activity.h"

#include "parsed_code.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

constexpr const char* kCode = R"(
void set(int& target);
void show(const int& value);
struct Box { int x; void bump(); void look() const; };
void f(ag::Tensor a, ag::Tensor b, int n, int m, Box box) {
  ag::Tensor c = a + b;
  c += a;
  n = m;
  set(m);
  show(n);
  box.bump();
  box.look();
  box.x = 1;
  int* p = &n;
  ++m;
  auto l = [&] { a = b; };
}
)";

struct Uses {
  std::vector<std::string> reads, writes;
};

Uses usesOf(const ParsedCode& code, const Stmt* stmt) {
  Activity activity(stmt);
  Uses out;
  for (const char* name : {"a", "b", "c", "n", "m", "box", "p"}) {
    const ValueDecl* var = code.var("f", name);
    if (activity.reads(var)) out.reads.push_back(name);
    if (activity.writes(var)) out.writes.push_back(name);
  }
  return out;
}

using Names = std::vector<std::string>;

TEST(ActivityTest, ReadsAndWritesPerStatement) {
  ParsedCode code(kCode);
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  ASSERT_EQ(statements.size(), 11u);
  std::vector<Uses> uses;
  for (const Stmt* stmt : statements) uses.push_back(usesOf(code, stmt));
  // A declaration is not a use of the declared variable.
  EXPECT_EQ(uses[0].reads, (Names{"a", "b"}));
  EXPECT_EQ(uses[0].writes, Names{});
  // Compound assignment reads and writes.
  EXPECT_EQ(uses[1].reads, (Names{"a", "c"}));
  EXPECT_EQ(uses[1].writes, (Names{"c"}));
  // Plain assignment only writes its target.
  EXPECT_EQ(uses[2].reads, (Names{"m"}));
  EXPECT_EQ(uses[2].writes, (Names{"n"}));
  // A non-const reference argument may be written; a const one is read.
  EXPECT_EQ(uses[3].writes, (Names{"m"}));
  EXPECT_EQ(uses[4].reads, (Names{"n"}));
  EXPECT_EQ(uses[4].writes, Names{});
  // A non-const method writes the object; a const one reads it.
  EXPECT_EQ(uses[5].writes, (Names{"box"}));
  EXPECT_EQ(uses[6].reads, (Names{"box"}));
  EXPECT_EQ(uses[6].writes, Names{});
  // A write to a field writes the object.
  EXPECT_EQ(uses[7].writes, (Names{"box"}));
  // Taking the address counts as a write; increments read and write.
  EXPECT_EQ(uses[8].writes, (Names{"n"}));
  EXPECT_EQ(uses[9].reads, (Names{"m"}));
  EXPECT_EQ(uses[9].writes, (Names{"m"}));
  // A lambda's body counts as part of the statement.
  EXPECT_TRUE(llvm::is_contained(uses[10].reads, "b"));
  EXPECT_EQ(uses[10].writes, (Names{"a"}));
}

TEST(ActivityTest, WrittenInOrderOfFirstWrite) {
  ParsedCode code(kCode);
  Activity activity(code.body("f"));
  EXPECT_EQ(test::namesOf(activity.written()), (Names{"c", "n", "m", "box", "a"}));
  const ValueDecl* n = code.var("f", "n");
  ASSERT_NE(activity.firstWrite(n), nullptr);
  EXPECT_EQ(activity.firstWrite(n)->getDecl(), n);
  EXPECT_EQ(activity.firstWrite(code.var("f", "b")), nullptr);
}

TEST(ActivityTest, KillsFirst) {
  ParsedCode code(R"(
void f(int x, int y) {
  x = y;
  x = x + 1;
  int z = 0;
  y += 1;
}
)");
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  const ValueDecl* x = code.var("f", "x");
  const ValueDecl* y = code.var("f", "y");
  const ValueDecl* z = code.var("f", "z");
  EXPECT_TRUE(killsFirst(statements[0], x));   // assigned without reading x
  EXPECT_FALSE(killsFirst(statements[1], x));  // reads x first
  EXPECT_TRUE(killsFirst(statements[2], z));   // the declaration
  EXPECT_FALSE(killsFirst(statements[3], y));  // compound assignment reads
  EXPECT_FALSE(killsFirst(statements[0], y));
}

// Structured bindings are locals like any other: to an aggregate (a member of
// the hidden object) and to a tuple-like type (a reference variable), by value
// and by reference.
TEST(ActivityTest, StructuredBindingsAreLocals) {
  ParsedCode code(R"(
struct Bracket { ag::Tensor lo, hi; };
Bracket bracket(ag::Tensor c);
struct Pair { ag::Tensor first, second; template <int I> ag::Tensor& get(); };
namespace std {
template <class T> struct tuple_size;
template <int I, class T> struct tuple_element;
}
template <> struct std::tuple_size<Pair> { static constexpr int value = 2; };
template <int I> struct std::tuple_element<I, Pair> { using type = ag::Tensor; };
Pair make_pair(ag::Tensor c);
void assign(ag::Tensor& target);
void f(ag::Tensor c, Bracket b) {
  auto [lo, hi] = bracket(c);
  hi = lo + c;
  auto& [first, second] = b;
  assign(first);
  auto [x, y] = make_pair(c);
  y += x;
}
)");
  std::vector<const Stmt*> statements = test::statementsOf(code.body("f"));
  ASSERT_EQ(statements.size(), 6u);
  const ValueDecl* lo = code.var("f", "lo");
  const ValueDecl* hi = code.var("f", "hi");
  ASSERT_TRUE(lo && hi);
  EXPECT_TRUE(isa<BindingDecl>(lo));
  EXPECT_EQ(asLocal(lo), lo);
  EXPECT_TRUE(killsFirst(statements[0], lo));  // the declaration
  EXPECT_TRUE(killsFirst(statements[1], hi));  // assigned without reading hi
  Activity assignHi(statements[1]);
  EXPECT_TRUE(assignHi.reads(lo));
  EXPECT_EQ(test::namesOf(assignHi.written()), Names{"hi"});
  // A binding by reference passed by non-const reference.
  EXPECT_EQ(test::namesOf(Activity(statements[3]).written()), Names{"first"});
  // A tuple-like binding, compound-assigned.
  Activity compound(statements[5]);
  EXPECT_EQ(test::namesOf(compound.written()), Names{"y"});
  EXPECT_TRUE(compound.reads(code.var("f", "x")));
  EXPECT_TRUE(compound.reads(code.var("f", "y")));
  EXPECT_FALSE(isStaticLocal(hi));
}

}  // namespace
}  // namespace agc
