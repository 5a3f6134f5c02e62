// Unit tests for the liveness analysis (analysis/Liveness.h): which local
// variables may be read after a statement, or by a loop's next iteration.
#include "analysis/Liveness.h"

#include "parsed_code.h"

#include <gtest/gtest.h>

namespace agc {
namespace {

using namespace clang;
using test::ParsedCode;

constexpr const char* kCode = R"(
void f(ag::Tensor x, ag::Tensor& out, bool b) {
  ag::Tensor y = x + x;
  x = y;
  y = ag::Tensor(1.0);
  if (b) { out = x; }
  while (x > 0) {
    y = x;
    x = x - y;
  }
  out = x;
}
)";

// The names among x, out, b and y that are live after `stmt`.
std::vector<std::string> liveAfter(const ParsedCode& code, const Liveness& liveness,
                                   const Stmt* stmt) {
  std::vector<std::string> live;
  for (const char* name : {"x", "out", "b", "y"})
    if (liveness.liveAfter(stmt, code.var("f", name))) live.push_back(name);
  return live;
}

using Names = std::vector<std::string>;

TEST(LivenessTest, LiveAfterEachStatement) {
  ParsedCode code(kCode);
  const Stmt* body = code.body("f");
  Liveness liveness(body, {code.var("f", "out")});
  std::vector<const Stmt*> statements = test::statementsOf(body);
  ASSERT_EQ(statements.size(), 6u);
  // y is read by `x = y`, b by the if; x is reassigned before any read, and
  // out on every path (the last statement) before the caller sees it.
  EXPECT_EQ(liveAfter(code, liveness, statements[0]), (Names{"b", "y"}));
  // y is reassigned before it is read again; the if reads x.
  EXPECT_EQ(liveAfter(code, liveness, statements[1]), (Names{"x", "b"}));
  // After the loop, only x is read (by `out = x`).
  EXPECT_EQ(liveAfter(code, liveness, statements[4]), (Names{"x"}));
  // At the end only the reference parameter is live.
  EXPECT_EQ(liveAfter(code, liveness, statements[5]), (Names{"out"}));
}

TEST(LivenessTest, WithoutLiveAtExitNothingIsLiveAtTheEnd) {
  ParsedCode code(kCode);
  const Stmt* body = code.body("f");
  Liveness liveness(body, {});
  EXPECT_EQ(liveAfter(code, liveness, test::statementsOf(body)[5]), Names{});
}

TEST(LivenessTest, LoopCarriedVariables) {
  ParsedCode code(kCode);
  const Stmt* body = code.body("f");
  Liveness liveness(body, {code.var("f", "out")});
  const Stmt* loop = test::statementsOf(body)[4];
  // The test reads x; the body writes y before reading it.
  EXPECT_TRUE(liveness.liveIntoNextIteration(loop, code.var("f", "x")));
  EXPECT_FALSE(liveness.liveIntoNextIteration(loop, code.var("f", "y")));
  const Stmt* loopBody = cast<WhileStmt>(loop)->getBody();
  EXPECT_TRUE(liveness.upwardExposed(loopBody, code.var("f", "x")));
  EXPECT_FALSE(liveness.upwardExposed(loopBody, code.var("f", "y")));
  // Inside the body, after `y = x`, y is live (read by `x = x - y`).
  const Stmt* first = test::statementsOf(loopBody)[0];
  EXPECT_TRUE(liveness.liveAfter(first, code.var("f", "y")));
  EXPECT_EQ(liveness.parentOf(first), loopBody);
}

// A staged return lowers to a flag, and the statements after it run under a
// guard whose skipped path keeps every value: on the code as lowered, a kill
// after a statement that may jump out no longer ends liveness.
constexpr const char* kJumpCode = R"(
ag::Tensor g(ag::Tensor x, ag::Tensor v, bool b) {
  if (b) {
    v = v + 1;
    if (v > 7) return v;
    v = x;
    x = v;
  }
  return v;
}
)";

TEST(LivenessTest, AKillAfterALoweredJumpIsGuarded) {
  ParsedCode code(kJumpCode);
  const Stmt* body = code.body("g");
  const ValueDecl* v = code.var("g", "v");
  const Stmt* branch = cast<IfStmt>(test::statementsOf(body)[0])->getThen();
  std::vector<const Stmt*> statements = test::statementsOf(branch);
  const Stmt* mayReturn = statements[1];

  Liveness original(body, {});
  EXPECT_FALSE(original.liveAfter(mayReturn, v));

  Liveness lowered(body, {});
  lowered.setMayEscape([&](const Stmt* stmt) { return stmt == mayReturn; });
  // `v = x` runs under the guard: when the guard is skipped, v reaches
  // `return v` unchanged. The read by `x = v` sees the new value.
  EXPECT_TRUE(lowered.liveAfter(mayReturn, v));
  EXPECT_TRUE(lowered.liveAfter(statements[0], v));
  // Without a jump before it, the kill still ends liveness.
  EXPECT_FALSE(lowered.liveAfter(branch, code.var("g", "b")));
}

// A staged if whose branches share a local: the then-branch writes `w`, the
// else-branch reads it first, so the if's state carries `w` and each branch
// hands it back at its end, although nothing reads `w` after the if
// (found by the fuzzer: an inner if then left `w` out of its own state).
constexpr const char* kBranchCode = R"(
ag::Tensor h(ag::Tensor x, ag::Tensor w) {
  if (x > 0) {
    w = x;
  } else {
    if (x < -5) {
      w = x + 1;
    }
    x = w;
  }
  return x;
}
)";

TEST(LivenessTest, AStagedBranchHandsBackWhatTheOtherBranchReads) {
  ParsedCode code(kBranchCode);
  const Stmt* body = code.body("h");
  const ValueDecl* w = code.var("h", "w");
  const auto* outer = cast<IfStmt>(test::statementsOf(body)[0]);
  const Stmt* inner = test::statementsOf(outer->getElse())[0];
  const Stmt* assignInThen = test::statementsOf(outer->getThen())[0];

  Liveness liveness(body, {});
  EXPECT_TRUE(liveness.readByOtherBranch(outer, w));
  EXPECT_FALSE(liveness.readByOtherBranch(cast<IfStmt>(inner), w));
  // Unstaged, `w` is dead after the outer if, so dead at the end of its then-branch.
  EXPECT_FALSE(liveness.liveAfter(assignInThen, w));

  liveness.setIsStaged([&](const Stmt* stmt) { return stmt == outer || stmt == inner; });
  EXPECT_TRUE(liveness.liveAfter(assignInThen, w));
  // The inner if writes `w`, which the outer if's state hands back: live after it.
  EXPECT_TRUE(liveness.liveAfter(inner, w));
}

// A kill after a C++ `break` is never reached: the value lives on to where the
// break goes (found by the fuzzer: `v = ...` after a break left `v` out of the
// state of the staged if before the break, and its new value leaked).
constexpr const char* kDeadCode = R"(
ag::Tensor k(ag::Tensor x, ag::Tensor v) {
  for (int i = 0; i < 3; ++i) {
    v = x + 1;
    break;
    v = x;
  }
  return v;
}
)";

TEST(LivenessTest, AKillAfterABreakIsNeverReached) {
  ParsedCode code(kDeadCode);
  const Stmt* body = code.body("k");
  const Stmt* loop = test::statementsOf(body)[0];
  const Stmt* assign = test::statementsOf(cast<ForStmt>(loop)->getBody())[0];
  Liveness liveness(body, {});
  EXPECT_TRUE(liveness.liveAfter(assign, code.var("k", "v")));
}

}  // namespace
}  // namespace agc
