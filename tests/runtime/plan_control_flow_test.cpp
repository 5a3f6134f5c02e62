// If and While steps of the plan on small hand-built bodies: an If's outputs
// are not copied but read where its branch left them (so its inputs live as
// long as its outputs), and a While donates its loop variables to its body,
// which may write into them in place. Each test also checks the values
// against eager execution.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "plan_test_util.h"

namespace ag {
namespace {

using namespace ag_test;

// A branch or loop body of one input `x` of type float32 `shape`.
std::shared_ptr<Body> pass_through(Shape shape) {
  BodyBuilder b;
  b.output(b.placeholder("x", float32, shape));
  return b.finish();
}

std::shared_ptr<Body> negate(Shape shape) {
  BodyBuilder b;
  b.output(b.op(OpId::Neg, {b.placeholder("x", float32, shape)}));
  return b.finish();
}

// The If's output is read by a later step: no buffer holds it in the parent
// (the mul's result is the output, a fresh tensor), yet each call reads the
// branch that ran.
TEST(PlanIf, OutputsAreWhereTheBranchLeftThem) {
  BodyBuilder b;
  ValueRef p = b.placeholder("p", bool_, {});
  ValueRef x = b.placeholder("x", float32, {3});
  ValueRef r = b.control_flow(NodeKind::If, {p, x}, {negate({3}), pass_through({3})});
  b.output(b.op(OpId::Mul, {r, b.constant(constant(2.0f))}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_steps(), 2u);
  EXPECT_EQ(plan->num_buffers(), 0u);
  Tensor input = constant({1.0f, -2.0f, 0.5f});
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(true), input})[0].values_string(),
            "[-2. 4. -1.]");
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(false), input})[0].values_string(),
            "[2. -4. 1.]");
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(true), input})[0].values_string(),
            "[-2. 4. -1.]");
}

// The then branch passes `a` through, so the If's output is a's memory: a
// must outlive the If up to the add, and 3 * x may not take its buffer.
// (With a freed at the If, both would share one buffer and the add would
// read 3 * x twice.)
TEST(PlanIf, InputsLiveAsLongAsItsOutputs) {
  BodyBuilder b;
  ValueRef p = b.placeholder("p", bool_, {});
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef a = b.op(OpId::Neg, {x});
  ValueRef r = b.control_flow(NodeKind::If, {p, a}, {pass_through({2}), negate({2})});
  ValueRef tripled = b.op(OpId::Mul, {x, b.constant(constant(3.0f))});
  b.output(b.op(OpId::Add, {r, tripled}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_buffers(), 2u);  // a and 3 * x
  Tensor input = constant({1.0f, 2.0f});
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(true), input})[0].values_string(),
            "[2. 4.]");  // -x + 3x
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(false), input})[0].values_string(),
            "[4. 8.]");  // x + 3x
}

// Through a chain of Ifs that pass the value on, `a` lives as long as the
// last If's output.
TEST(PlanIf, ChainedIfsExtendTheFirstInputsLifetime) {
  BodyBuilder b;
  ValueRef p = b.placeholder("p", bool_, {});
  ValueRef q = b.placeholder("q", bool_, {});
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef a = b.op(OpId::Neg, {x});
  ValueRef r1 = b.control_flow(NodeKind::If, {p, a}, {pass_through({2}), negate({2})});
  ValueRef r2 = b.control_flow(NodeKind::If, {q, r1}, {pass_through({2}), negate({2})});
  ValueRef tripled = b.op(OpId::Mul, {x, b.constant(constant(3.0f))});
  b.output(b.op(OpId::Add, {r2, tripled}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_buffers(), 2u);
  for (bool pv : {true, false}) {
    for (bool qv : {true, false}) {
      SCOPED_TRACE(::testing::Message() << "p = " << pv << ", q = " << qv);
      expect_eager_values(*plan, *body, {constant(pv), constant(qv), constant({1.0f, 2.0f})});
    }
  }
}

// The loop variables (i, array) of a While counting i from its start to 4
// and writing i into the array at i. `read_after_write` makes the body read
// the old array after the write (array' = write(array, i, i) + array).
std::shared_ptr<Body> fill_loop(bool read_after_write) {
  BodyBuilder cond;
  ValueRef ci = cond.placeholder("i", int32, {});
  cond.placeholder("array", float32, {4});
  cond.output(cond.op(OpId::Less, {ci, cond.constant(constant(4))}));

  BodyBuilder body;
  ValueRef i = body.placeholder("i", int32, {});
  ValueRef array = body.placeholder("array", float32, {4});
  body.output(body.op(OpId::Add, {i, body.constant(constant(1))}));
  ValueRef written =
      body.op(OpId::TensorArrayWrite, {array, i, body.op(OpId::Cast, {i}, cast_to(float32))});
  body.output(read_after_write ? body.op(OpId::Add, {written, array}) : written);

  BodyBuilder b;
  ValueRef i0 = b.placeholder("i0", int32, {});
  ValueRef array0 = b.placeholder("array0", float32, {4});
  ValueRef loop = b.control_flow(NodeKind::While, {i0, array0}, {cond.finish(), body.finish()});
  b.output(ValueRef{loop.node, 1});
  return b.finish();
}

// The array's last use in the body is the write, and the While owns it: the
// write goes into the loop variable's memory, no copy per iteration. The
// caller's initial array is copied into the While's own memory first (the
// function's output, a fresh tensor), so it is never written.
TEST(PlanWhile, BodyWritesIntoItsDonatedLoopVariable) {
  auto body = fill_loop(false);
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_in_place_steps(), 1u);
  EXPECT_EQ(plan->num_buffers(), 1u);  // the While's loop variable i
  Tensor initial = constant({9.0f, 9.0f, 9.0f, 9.0f});
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(0), initial})[0].values_string(),
            "[0. 1. 2. 3.]");
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(2), initial})[0].values_string(),
            "[9. 9. 2. 3.]");
  EXPECT_EQ(initial.values_string(), "[9. 9. 9. 9.]");
}

// The old array is read after the write: writing in place would change it.
TEST(PlanWhile, NoInPlaceWriteWhenTheLoopVariableIsReadLater) {
  auto body = fill_loop(true);
  auto plan = plan_of(body);

  // Only the add, which reads the array last, writes into it.
  EXPECT_EQ(plan->num_in_place_steps(), 1u);
  Tensor initial = constant({1.0f, 1.0f, 1.0f, 1.0f});
  EXPECT_EQ(expect_eager_values(*plan, *body, {constant(0), initial})[0].values_string(),
            "[8. 12. 12. 11.]");
}

// Only a While body is given inputs it may overwrite: a top-level plan's
// inputs are the caller's tensors.
TEST(PlanWhile, TopLevelInPlaceOpLeavesItsInputAlone) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  ValueRef i = b.placeholder("i", int32, {});
  b.output(b.op(OpId::TensorArrayWrite, {x, i, b.constant(constant(7.0f))}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_in_place_steps(), 0u);
  Tensor input = constant({1.0f, 2.0f, 3.0f});
  EXPECT_EQ(expect_eager_values(*plan, *body, {input, constant(1)})[0].values_string(),
            "[1. 7. 3.]");
  EXPECT_EQ(input.values_string(), "[1. 2. 3.]");
}

// x, y = y, x: each body output is the other loop variable's memory, so the
// While holds one aside before overwriting the other. `n` is a captured value.
TEST(PlanWhile, LoopVariablesTradingValuesKeepBoth) {
  BodyBuilder cond;
  ValueRef ci = cond.placeholder("i", int32, {});
  cond.placeholder("x", float32, {2});
  cond.placeholder("y", float32, {2});
  ValueRef cn = cond.placeholder("n", int32, {});
  cond.output(cond.op(OpId::Less, {ci, cn}));

  BodyBuilder loop_body;
  ValueRef i = loop_body.placeholder("i", int32, {});
  ValueRef x = loop_body.placeholder("x", float32, {2});
  ValueRef y = loop_body.placeholder("y", float32, {2});
  loop_body.placeholder("n", int32, {});
  loop_body.output(loop_body.op(OpId::Add, {i, loop_body.constant(constant(1))}));
  loop_body.output(y);
  loop_body.output(x);

  BodyBuilder b;
  ValueRef i0 = b.placeholder("i0", int32, {});
  ValueRef x0 = b.placeholder("x0", float32, {2});
  ValueRef y0 = b.placeholder("y0", float32, {2});
  ValueRef n = b.placeholder("n", int32, {});
  ValueRef loop =
      b.control_flow(NodeKind::While, {i0, x0, y0, n}, {cond.finish(), loop_body.finish()});
  b.output(ValueRef{loop.node, 1});
  b.output(ValueRef{loop.node, 2});
  auto body = b.finish();
  auto plan = plan_of(body);

  Tensor x_initial = constant({1.0f, 2.0f}), y_initial = constant({3.0f, 4.0f});
  std::vector<Tensor> odd =
      expect_eager_values(*plan, *body, {constant(0), x_initial, y_initial, constant(3)});
  EXPECT_EQ(odd[0].values_string(), "[3. 4.]");
  EXPECT_EQ(odd[1].values_string(), "[1. 2.]");
  std::vector<Tensor> even =
      expect_eager_values(*plan, *body, {constant(0), x_initial, y_initial, constant(4)});
  EXPECT_EQ(even[0].values_string(), "[1. 2.]");
  EXPECT_EQ(even[1].values_string(), "[3. 4.]");
}

// x, y = y, x inside an If of the loop body: the body's outputs are the If's,
// and the then branch passes each variable through as the other's value.
// The While must see that through the branch and hold one aside (updating
// x first would make both x).
TEST(PlanWhile, LoopVariablesTradedByAnIfKeepBoth) {
  auto swap = [] {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", float32, {2});
    ValueRef y = b.placeholder("y", float32, {2});
    b.output(y);
    b.output(x);
    return b.finish();
  };
  auto keep = [] {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", float32, {2});
    ValueRef y = b.placeholder("y", float32, {2});
    b.output(x);
    b.output(y);
    return b.finish();
  };
  BodyBuilder cond;
  ValueRef ci = cond.placeholder("i", int32, {});
  cond.placeholder("x", float32, {2});
  cond.placeholder("y", float32, {2});
  cond.output(cond.op(OpId::Less, {ci, cond.constant(constant(3))}));

  BodyBuilder loop_body;
  ValueRef i = loop_body.placeholder("i", int32, {});
  ValueRef x = loop_body.placeholder("x", float32, {2});
  ValueRef y = loop_body.placeholder("y", float32, {2});
  ValueRef odd =
      loop_body.op(OpId::Equal, {loop_body.op(OpId::Mod, {i, loop_body.constant(constant(2))}),
                                 loop_body.constant(constant(0))});
  ValueRef traded = loop_body.control_flow(NodeKind::If, {odd, x, y}, {swap(), keep()});
  loop_body.output(loop_body.op(OpId::Add, {i, loop_body.constant(constant(1))}));
  loop_body.output(traded);
  loop_body.output(ValueRef{traded.node, 1});

  BodyBuilder b;
  ValueRef i0 = b.placeholder("i0", int32, {});
  ValueRef x0 = b.placeholder("x0", float32, {2});
  ValueRef y0 = b.placeholder("y0", float32, {2});
  ValueRef loop =
      b.control_flow(NodeKind::While, {i0, x0, y0}, {cond.finish(), loop_body.finish()});
  b.output(ValueRef{loop.node, 1});
  b.output(ValueRef{loop.node, 2});
  auto body = b.finish();
  auto plan = plan_of(body);

  Tensor x_initial = constant({1.0f, 2.0f}), y_initial = constant({3.0f, 4.0f});
  // i = 0 and 2 swap: back where they started.
  std::vector<Tensor> twice =
      expect_eager_values(*plan, *body, {constant(0), x_initial, y_initial});
  EXPECT_EQ(twice[0].values_string(), "[1. 2.]");
  EXPECT_EQ(twice[1].values_string(), "[3. 4.]");
  // i = 2 only: swapped.
  std::vector<Tensor> once = expect_eager_values(*plan, *body, {constant(1), x_initial, y_initial});
  EXPECT_EQ(once[0].values_string(), "[3. 4.]");
  EXPECT_EQ(once[1].values_string(), "[1. 2.]");
}

// An If's branches run in the parent's arena: their values, and those of an
// If nested in a branch, have buffers of their own after the parent's, and
// a While in a branch gets its child arenas from the parent's arena. Each
// combination of branches, called repeatedly (the arena is reused), gives
// eager's values.
TEST(PlanIf, BranchesWithNestedIfsAndLoopsShareTheParentsArena) {
  // then: a = 3x; a + (q ? -a : a)
  BodyBuilder then_b;
  ValueRef tq = then_b.placeholder("q", bool_, {});
  ValueRef tx = then_b.placeholder("x", float32, {2});
  ValueRef a = then_b.op(OpId::Mul, {tx, then_b.constant(constant(3.0f))});
  ValueRef r = then_b.control_flow(NodeKind::If, {tq, a}, {negate({2}), pass_through({2})});
  then_b.output(then_b.op(OpId::Add, {r, a}));

  // else: x doubled three times in a While, then negated when q.
  BodyBuilder cond;
  ValueRef ci = cond.placeholder("i", int32, {});
  cond.placeholder("x", float32, {2});
  cond.output(cond.op(OpId::Less, {ci, cond.constant(constant(3))}));
  BodyBuilder loop_body;
  ValueRef li = loop_body.placeholder("i", int32, {});
  ValueRef lx = loop_body.placeholder("x", float32, {2});
  loop_body.output(loop_body.op(OpId::Add, {li, loop_body.constant(constant(1))}));
  loop_body.output(loop_body.op(OpId::Mul, {lx, loop_body.constant(constant(2.0f))}));
  BodyBuilder else_b;
  ValueRef eq = else_b.placeholder("q", bool_, {});
  ValueRef ex = else_b.placeholder("x", float32, {2});
  ValueRef loop = else_b.control_flow(NodeKind::While, {else_b.constant(constant(0)), ex},
                                      {cond.finish(), loop_body.finish()});
  else_b.output(else_b.control_flow(NodeKind::If, {eq, ValueRef{loop.node, 1}},
                                    {negate({2}), pass_through({2})}));

  BodyBuilder b;
  ValueRef p = b.placeholder("p", bool_, {});
  ValueRef q = b.placeholder("q", bool_, {});
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef y = b.op(OpId::Neg, {x});  // alive across the If, in the parent's buffer
  ValueRef out = b.control_flow(NodeKind::If, {p, q, x}, {then_b.finish(), else_b.finish()});
  b.output(b.op(OpId::Sub, {out, y}));
  auto body = b.finish();
  auto plan = plan_of(body);

  const std::map<std::pair<bool, bool>, std::string> expected = {
      {{true, true}, "[1. 2.]"},      // -3x + 3x + x
      {{true, false}, "[7. 14.]"},    // 3x + 3x + x
      {{false, true}, "[-7. -14.]"},  // -8x + x
      {{false, false}, "[9. 18.]"},   // 8x + x
  };
  for (int round = 0; round < 2; ++round) {
    for (const auto& [pq, values] : expected) {
      SCOPED_TRACE(::testing::Message() << "p = " << pq.first << ", q = " << pq.second);
      std::vector<Tensor> result = expect_eager_values(
          *plan, *body, {constant(pq.first), constant(pq.second), constant({1.0f, 2.0f})});
      EXPECT_EQ(result[0].values_string(), values);
    }
  }
}

// A branch node whose outputs are the If's outputs k, k + 1, ... computes
// them in the If's slots (no move after the branch); others are moved: an
// output computed twice, a nested If's outputs in another order, a
// pass-through. Each call must read the branch that ran.
TEST(PlanIf, OutputsComputedInTheIfsSlotsOrMovedThere) {
  // then: (x + 1, 2x, x + 1)
  BodyBuilder then_b;
  then_b.placeholder("q", bool_, {});
  ValueRef tx = then_b.placeholder("x", float32, {2});
  ValueRef plus = then_b.op(OpId::Add, {tx, then_b.constant(constant(1.0f))});
  then_b.output(plus);
  then_b.output(then_b.op(OpId::Mul, {tx, then_b.constant(constant(2.0f))}));
  then_b.output(plus);
  // else: an If of (-x, x) or (x, -x), its outputs swapped, then x.
  auto inner_branch = [](bool negate_first) {
    BodyBuilder b;
    ValueRef x = b.placeholder("x", float32, {2});
    ValueRef negated = b.op(OpId::Neg, {x});
    b.output(negate_first ? negated : x);
    b.output(negate_first ? x : negated);
    return b.finish();
  };
  BodyBuilder else_b;
  ValueRef eq = else_b.placeholder("q", bool_, {});
  ValueRef ex = else_b.placeholder("x", float32, {2});
  ValueRef inner =
      else_b.control_flow(NodeKind::If, {eq, ex}, {inner_branch(true), inner_branch(false)});
  else_b.output(ValueRef{inner.node, 1});
  else_b.output(ValueRef{inner.node, 0});
  else_b.output(ex);
  const std::shared_ptr<Body> else_body = else_b.finish();
  // The same nested If, its outputs in order, as outputs 1 and 2.
  BodyBuilder in_order_b;
  ValueRef oq = in_order_b.placeholder("q", bool_, {});
  ValueRef ox = in_order_b.placeholder("x", float32, {2});
  ValueRef in_order =
      in_order_b.control_flow(NodeKind::If, {oq, ox}, {inner_branch(true), inner_branch(false)});
  in_order_b.output(ox);
  in_order_b.output(ValueRef{in_order.node, 0});
  in_order_b.output(ValueRef{in_order.node, 1});

  BodyBuilder b;
  ValueRef p = b.placeholder("p", bool_, {});
  ValueRef q = b.placeholder("q", bool_, {});
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef first = b.control_flow(NodeKind::If, {p, q, x}, {then_b.finish(), else_body});
  ValueRef second = b.control_flow(NodeKind::If, {p, q, x}, {in_order_b.finish(), else_body});
  for (int k = 0; k < 3; ++k) b.output(ValueRef{first.node, k});
  for (int k = 0; k < 3; ++k) b.output(ValueRef{second.node, k});
  auto body = b.finish();
  auto plan = plan_of(body);

  const std::map<std::pair<bool, bool>, std::string> expected = {
      {{true, true}, "[2. 3.] [2. 4.] [2. 3.] [1. 2.] [-1. -2.] [1. 2.]"},
      {{true, false}, "[2. 3.] [2. 4.] [2. 3.] [1. 2.] [1. 2.] [-1. -2.]"},
      {{false, true}, "[1. 2.] [-1. -2.] [1. 2.] [1. 2.] [-1. -2.] [1. 2.]"},
      {{false, false}, "[-1. -2.] [1. 2.] [1. 2.] [-1. -2.] [1. 2.] [1. 2.]"},
  };
  for (int round = 0; round < 2; ++round) {
    for (const auto& [pq, values] : expected) {
      SCOPED_TRACE(::testing::Message() << "p = " << pq.first << ", q = " << pq.second);
      std::vector<Tensor> result = expect_eager_values(
          *plan, *body, {constant(pq.first), constant(pq.second), constant({1.0f, 2.0f})});
      std::string all;
      for (const Tensor& t : result) all += (all.empty() ? "" : " ") + t.values_string();
      EXPECT_EQ(all, values);
    }
  }
}

// A host function in a branch gets the branch's input, not the function's
// input of the same number (the branch's slots are in the top-level arena,
// whose inputs are the call's tensors).
TEST(PlanIf, HostFunctionInABranchGetsTheBranchsInput) {
  auto f = ag::function([](Tensor a, Tensor b) {
    Tensor r = ag::constant(0);
    ag::if_stmt(
        a > 0,
        [&] {
          r = ag::host_function([](const std::vector<Tensor>& in) { return in; }, {b},
                                {ag::TensorSpec({}, ag::int32)})[0];
        },
        [&] { r = a; }, ag::state({"r"}, r));
    return r;
  });
  EXPECT_EQ(f(ag::constant(1), ag::constant(42)).item<int>(), 42);
  EXPECT_EQ(f(ag::constant(-5), ag::constant(42)).item<int>(), -5);
}

}  // namespace
}  // namespace ag
