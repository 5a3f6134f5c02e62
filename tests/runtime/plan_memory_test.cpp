// The plan's memory plan (exec/plan_compile.cpp, phase 3) on small hand-built
// bodies: values whose lifetimes do not overlap share a buffer, values alive
// at the same time never do, an elementwise op writes over an input of its
// layout that dies there, and top-level outputs are fresh tensors, not
// buffers. Each test also checks the values against eager execution.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "plan_test_util.h"

namespace ag {
namespace {

using namespace ag_test;

// neg, abs, exp, neg, add on a [4]: each value dies at the next step, which
// writes over it (an elementwise op reads each element before it writes it),
// so c1 to c4 share one buffer. c5 is the output, a fresh tensor.
TEST(PlanMemory, ChainOfFiveElementwiseOpsUsesOneBuffer) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {4});
  ValueRef c1 = b.op(OpId::Neg, {x});
  ValueRef c2 = b.op(OpId::Abs, {c1});
  ValueRef c3 = b.op(OpId::Exp, {c2});
  ValueRef c4 = b.op(OpId::Neg, {c3});
  b.output(b.op(OpId::Add, {c4, x}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_steps(), 5u);
  EXPECT_EQ(plan->num_buffers(), 1u);
  expect_eager_values(*plan, *body, {constant({-1.0f, 0.0f, 0.5f, 2.0f})});
}

// A step whose output differs from its dying input in shape or element size
// does not write over it: sum (a scalar) and the cast to int64 get buffers
// of their own; the cast to int32 (same size) writes over the float.
TEST(PlanMemory, OnlyInputsOfTheOutputsLayoutAreWrittenOver) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {4});
  ValueRef e = b.op(OpId::Exp, {x});
  ValueRef wide = b.op(OpId::Cast, {e}, cast_to(int64));
  ValueRef same = b.op(OpId::Cast, {b.op(OpId::Neg, {x})}, cast_to(int32));
  ValueRef sum = b.op(OpId::ReduceSum, {b.op(OpId::Abs, {same})});
  b.output(b.op(OpId::Add, {wide, b.op(OpId::Cast, {sum}, cast_to(int64))}));
  auto body = b.finish();
  auto plan = plan_of(body);

  // exp, then neg, its cast, abs and the sum's cast in turn in one buffer;
  // the cast to int64 in a second, the sum in a third.
  EXPECT_EQ(plan->num_buffers(), 3u);
  expect_eager_values(*plan, *body, {constant({-1.0f, 0.0f, 0.5f, 2.0f})});
}

// a feeds both b and c, which meet in d: while c is computed, a and b are
// alive, so two buffers: c writes over a (which dies there), d over b.
TEST(PlanMemory, DiamondKeepsBothArmsAliveAndUsesTwoBuffers) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  ValueRef a = b.op(OpId::Neg, {x});
  ValueRef left = b.op(OpId::Abs, {a});
  ValueRef right = b.op(OpId::Exp, {a});
  ValueRef d = b.op(OpId::Mul, {left, right});
  b.output(b.op(OpId::Neg, {d}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_buffers(), 2u);
  expect_eager_values(*plan, *body, {constant({1.0f, -2.0f, 0.25f})});
}

// A value read again much later stays alive across the steps between.
TEST(PlanMemory, LongLivedValueKeepsItsBuffer) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef kept = b.op(OpId::Neg, {x});
  ValueRef c1 = b.op(OpId::Abs, {x});
  ValueRef c2 = b.op(OpId::Neg, {c1});
  ValueRef c3 = b.op(OpId::Abs, {c2});
  b.output(b.op(OpId::Sub, {c3, kept}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_buffers(), 2u);  // kept, and c1..c3 in one
  expect_eager_values(*plan, *body, {constant({3, -5})});
}

// Values of different sizes share a buffer: it is enlarged as needed.
TEST(PlanMemory, BuffersAreSharedAcrossSizes) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef c1 = b.op(OpId::Concat, {x, x});    // [4]
  ValueRef c2 = b.op(OpId::Concat, {c1, c1});  // [8]
  ValueRef c3 = b.op(OpId::Concat, {c2, x});   // [10]
  ValueRef c4 = b.op(OpId::ReduceSum, {c3});   // []
  b.output(b.op(OpId::Add, {c4, b.op(OpId::Neg, {c2})}));
  auto body = b.finish();
  auto plan = plan_of(body);

  // c2 lives to the end. c1, c3 and neg(c2) take turns in one buffer (c1
  // dies at c2, c3 at c4), c2 has one, and c4 one.
  EXPECT_EQ(plan->num_buffers(), 3u);
  expect_eager_values(*plan, *body, {constant({1, 2})});
  expect_eager_values(*plan, *body, {constant({-7, 30})});  // the buffers are reused
}

// Top-level outputs are returned as fresh tensors; nothing else is computed.
TEST(PlanMemory, OutputsAreFreshTensorsNotBuffers) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef y = b.op(OpId::Neg, {x});
  b.output(y);
  b.output(b.op(OpId::Abs, {y}));
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_buffers(), 0u);
  std::vector<Tensor> first = expect_eager_values(*plan, *body, {constant({1.0f, -2.0f})});
  std::vector<Tensor> second = expect_eager_values(*plan, *body, {constant({3.0f, 4.0f})});
  // The first call's results are not overwritten by the second.
  EXPECT_EQ(first[0].values_string(), "[-1. 2.]");
  EXPECT_NE(first[0].raw_data(), second[0].raw_data());
}

}  // namespace
}  // namespace ag
