// Scalar- and flat-step selection (exec/plan_compile.cpp, phase 5): which
// steps become scalar steps (an elementwise op on static rank-0 values, run
// through the op's scalar kernel) and flat steps (the same per element of a
// static vector of a few elements), on hand-built and on traced bodies, and
// that they compute what eager execution computes, errors included.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "exec/plan.h"
#include "graph/graph.h"
#include "ops/kernels.h"
#include "plan_test_util.h"

namespace ag {
namespace {

using namespace ag_test;

// The plan the executor would compile from `fn`'s trace for `specs`.
template <class F, class... Specs>
std::unique_ptr<exec::Plan> traced_plan_of(F fn, const Specs&... specs) {
  auto traced = ag::function(fn);
  auto concrete = traced.get_concrete_function(specs...);
  return std::make_unique<exec::Plan>(std::make_shared<const graph::Body>(concrete.graph().body()));
}

// ---- The selection rule, one op at a time ----------------------------------

// A body computing `op` on placeholders of the given types, its result
// reshaped to [-1] so that it is not itself an output (a top-level output is
// a fresh tensor, never a scalar step).
std::shared_ptr<Body> one_op(OpId op, const std::vector<ValueType>& inputs,
                             const Attrs& attrs = {}) {
  BodyBuilder b;
  std::vector<ValueRef> args;
  for (size_t k = 0; k < inputs.size(); ++k) {
    args.push_back(b.placeholder("x", inputs[k].dtype, inputs[k].shape));
  }
  Attrs flatten;
  flatten.ints = {-1};
  b.output(b.op(OpId::Reshape, {b.op(op, args, attrs)}, flatten));
  return b.finish();
}

// Whether the plan of one_op(...) runs `op` as a scalar step; checks the
// values on `inputs` against eager execution.
bool is_scalar_step(OpId op, const std::vector<ValueType>& types, const std::vector<Tensor>& inputs,
                    const Attrs& attrs = {}) {
  auto body = one_op(op, types, attrs);
  auto plan = plan_of(body);
  EXPECT_EQ(plan->num_steps(), 2u);
  expect_eager_values(*plan, *body, inputs);
  return plan->num_scalar_steps() == 1;
}

const ValueType kIntScalar{int32, {}};
const ValueType kFloatScalar{float32, {}};

TEST(PlanScalarSteps, StaticScalarElementwiseOpsAreScalarSteps) {
  EXPECT_TRUE(is_scalar_step(OpId::Add, {kIntScalar, kIntScalar}, {constant(2), constant(40)}));
  EXPECT_TRUE(is_scalar_step(OpId::Neg, {kFloatScalar}, {constant(1.5f)}));
  EXPECT_TRUE(is_scalar_step(OpId::Less, {kIntScalar, kIntScalar}, {constant(2), constant(3)}));
  EXPECT_TRUE(is_scalar_step(OpId::Cast, {kIntScalar}, {constant(7)}, cast_to(float64)));
  EXPECT_TRUE(is_scalar_step(OpId::Where, {{bool_, {}}, kFloatScalar, kFloatScalar},
                             {constant(false), constant(1.0f), constant(2.0f)}));
}

TEST(PlanScalarSteps, RankOneValuesAreNotScalarSteps) {
  ValueType one{int32, {1}};
  EXPECT_FALSE(is_scalar_step(OpId::Add, {one, one}, {constant({2}), constant({40})}));
  // A scalar broadcast against a [1] gives a [1].
  EXPECT_FALSE(is_scalar_step(OpId::Add, {kIntScalar, one}, {constant(2), constant({40})}));
}

TEST(PlanScalarSteps, OpsOnUnknownShapesAreNotScalarSteps) {
  EXPECT_FALSE(is_scalar_step(OpId::Add, {{int32, Shape::unknown_rank()}, kIntScalar},
                              {constant(2), constant(40)}));
  EXPECT_FALSE(is_scalar_step(OpId::Neg, {{int32, {kUnknownDim}}}, {constant({5})}));
}

TEST(PlanScalarSteps, NonElementwiseOpsAreNotScalarSteps) {
  // reduce_sum of a scalar is a static scalar, but not an elementwise op.
  EXPECT_FALSE(is_scalar_step(OpId::ReduceSum, {kIntScalar}, {constant(5)}));
}

// A top-level output is a fresh tensor; a scalar step writes it directly
// (the cache hit of a function on scalars runs no kernel context).
TEST(PlanScalarSteps, TopLevelOutputsAreScalarStepsIntoFreshTensors) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {});
  ValueRef sum = b.op(OpId::Add, {x, x});
  b.output(sum);                        // an output that a later step reads
  b.output(b.op(OpId::Mul, {sum, x}));  // an output too
  b.output(b.op(OpId::Reshape, {b.op(OpId::Sub, {sum, x})}, [] {
    Attrs flatten;
    flatten.ints = {-1};
    return flatten;
  }()));  // sub feeds the reshape: a buffer
  auto body = b.finish();
  auto plan = plan_of(body);

  EXPECT_EQ(plan->num_steps(), 4u);
  EXPECT_EQ(plan->num_scalar_steps(), 3u);  // all but the reshape
  std::vector<Tensor> first = expect_eager_values(*plan, *body, {constant(6)});
  expect_eager_values(*plan, *body, {constant(-1)});
  // Each call's outputs are its own tensors: the second call wrote others.
  EXPECT_EQ(first[0].item<int32_t>(), 12);
  EXPECT_EQ(first[1].item<int32_t>(), 72);
  EXPECT_EQ(first[2].values_string(), "[6]");
}

// ---- Flat steps: small static vectors ------------------------------------------

// The message of the InvalidArgumentError that running `plan` throws.
std::string error_of_plan(const exec::Plan& plan, const std::vector<Tensor>& inputs) {
  try {
    run(plan, inputs);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "no InvalidArgumentError";
}

// Whether the plan of one_op(...) runs `op` as a flat step; checks the
// values on `inputs` against eager execution, bit for bit.
bool is_flat_step(OpId op, const std::vector<ValueType>& types, const std::vector<Tensor>& inputs,
                  const Attrs& attrs = {}) {
  auto body = one_op(op, types, attrs);
  auto plan = plan_of(body);
  EXPECT_EQ(plan->num_steps(), 2u);
  EXPECT_EQ(plan->num_scalar_steps(), 0u);
  expect_eager_values(*plan, *body, inputs);
  return plan->num_flat_steps() == 1;
}

TEST(PlanFlatSteps, SmallStaticVectorsAreFlatSteps) {
  const ValueType two{int32, {2}};
  EXPECT_TRUE(is_flat_step(OpId::Add, {two, two}, {constant({27, 97}), constant({1, -5})}));
  EXPECT_TRUE(is_flat_step(OpId::FloorDiv, {two, kIntScalar}, {constant({27, -97}), constant(2)}));
  EXPECT_TRUE(is_flat_step(OpId::Mul, {kIntScalar, two}, {constant(3), constant({27, 97})}));
  EXPECT_TRUE(is_flat_step(OpId::Greater, {two, kIntScalar}, {constant({1, 97}), constant(1)}));
  const ValueType matrix{float32, {2, 3}};
  EXPECT_TRUE(is_flat_step(
      OpId::Tanh, {matrix},
      {constant(std::vector<float>{0.5f, -1.0f, 2.0f, 0.0f, 3.5f, -0.25f}, Shape{2, 3})}));
  EXPECT_TRUE(is_flat_step(OpId::Cast, {two}, {constant({7, -1})}, cast_to(float64)));
  EXPECT_TRUE(
      is_flat_step(OpId::Where, {{bool_, {3}}, {float32, {3}}, kFloatScalar},
                   {constant({true, false, true}), constant({1.0f, 2.0f, 3.0f}), constant(-1.0f)}));
  // A [1] broadcast against a [4] is one element, read for each.
  EXPECT_TRUE(is_flat_step(OpId::Sub, {{int32, {1}}, {int32, {4}}},
                           {constant({10}), constant({1, 2, 3, 4})}));
}

TEST(PlanFlatSteps, LargerVectorsAndOtherBroadcastsUseTheGeneralKernel) {
  const ValueType seventeen{int32, {17}};
  std::vector<int32_t> values(17, 3);
  EXPECT_FALSE(is_flat_step(OpId::Add, {seventeen, seventeen},
                            {constant(values, Shape{17}), constant(values, Shape{17})}));
  // [2, 1] against [1, 2]: neither input has one element or the output's 4.
  EXPECT_FALSE(is_flat_step(OpId::Add, {{int32, {2, 1}}, {int32, {1, 2}}},
                            {constant(std::vector<int32_t>{1, 2}, Shape{2, 1}),
                             constant(std::vector<int32_t>{10, 20}, Shape{1, 2})}));
  EXPECT_FALSE(is_flat_step(OpId::Neg, {{int32, {kUnknownDim}}}, {constant({5, 6})}));
}

Attrs over_axes(std::vector<int64_t> axes, bool keepdims = false) {
  Attrs attrs;
  attrs.ints = std::move(axes);
  attrs.keepdims = keepdims;
  return attrs;
}

// A loop condition on a small state vector (collatz's reduce_max(x) > 1):
// integer and bool reductions to one element fold the elements with the
// reducer's scalar kernel, from the reduction of no elements; exact, so
// bit-identical to the kernel in any order.
TEST(PlanFlatSteps, SmallIntegerReductionsToOneElementAreFlatSteps) {
  const ValueType two{int32, {2}};
  EXPECT_TRUE(is_flat_step(OpId::ReduceMax, {two}, {constant({27, 97})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceMax, {two}, {constant({-5, -9})}));  // not from 0
  EXPECT_TRUE(is_flat_step(OpId::ReduceMin, {two}, {constant({27, -97})}));
  // Wrapping, as the kernel's sum and product.
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {{int32, {3}}}, {constant({2147483647, 1, 5})}));
  EXPECT_TRUE(
      is_flat_step(OpId::ReduceProd, {{int64, {4}}},
                   {constant(std::vector<int64_t>{1 << 20, 1 << 21, 1 << 22, -3}, Shape{4})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceAny, {{bool_, {3}}}, {constant({false, true, false})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceAll, {{bool_, {3}}}, {constant({true, true, false})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceAll, {{bool_, {3}}}, {constant({true, true, true})}));
  // All axes named, or kept as size 1: still one element.
  const ValueType matrix{int32, {2, 3}};
  const Tensor m = constant(std::vector<int32_t>{4, -8, 15, 16, 23, -42}, Shape{2, 3});
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {matrix}, {m}, over_axes({0, 1})));
  EXPECT_TRUE(is_flat_step(OpId::ReduceMax, {matrix}, {m}, over_axes({}, true)));
}

// A float fold's bits depend on the order of its operations. Below
// ops::kInOrderReduceElements the kernel folds in order, as the flat step
// does: the values are chosen so that another order rounds differently.
TEST(PlanFlatSteps, SmallFloatReductionsToOneElementAreFlatSteps) {
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {{float32, {3}}}, {constant({0.1f, 0.2f, 0.3f})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {{float32, {4}}},
                           {constant({1e8f, 1.0f, -1e8f, 1.0f})}));  // 1, not 2 or 0
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {{float64, {7}}},
                           {constant({1e17, 1.0, 1.0, -1e17, 0.5, 0.25, 3.0}, float64)}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceMax, {{float32, {2}}}, {constant({1.0f, 2.0f})}));
  EXPECT_TRUE(is_flat_step(OpId::ReduceMin, {{float32, {3}}}, {constant({-0.0f, 0.0f, 5.0f})}));
  EXPECT_TRUE(
      is_flat_step(OpId::ReduceProd, {{float64, {3}}}, {constant({1e300, 1e10, 1e-300}, float64)}));
  const Tensor m = constant(std::vector<float>{0.1f, -0.7f, 1e7f, 0.3f, -1e7f, 0.2f}, Shape{2, 3});
  EXPECT_TRUE(is_flat_step(OpId::ReduceSum, {{float32, {2, 3}}}, {m}, over_axes({0, 1})));
}

TEST(PlanFlatSteps, FloatLargerAndPartialReductionsUseTheKernel) {
  // From kInOrderReduceElements on, the kernel folds in lanes.
  std::vector<float> eight(ops::kInOrderReduceElements, 0.1f);
  EXPECT_FALSE(is_flat_step(OpId::ReduceSum, {{float32, {ops::kInOrderReduceElements}}},
                            {constant(eight, Shape{ops::kInOrderReduceElements})}));
  std::vector<int32_t> values(17, 3);
  EXPECT_FALSE(is_flat_step(OpId::ReduceSum, {{int32, {17}}}, {constant(values, Shape{17})}));
  const Tensor m = constant(std::vector<int32_t>{4, -8, 15, 16, 23, -42}, Shape{2, 3});
  EXPECT_FALSE(is_flat_step(OpId::ReduceSum, {{int32, {2, 3}}}, {m}, over_axes({1})));
  // Mean divides: not a fold.
  EXPECT_FALSE(is_flat_step(OpId::ReduceMean, {{int32, {2}}}, {constant({3, 4})}));
}

TEST(PlanFlatSteps, ErrorsNameTheOp) {
  auto plan =
      traced_plan_of([](const Tensor& x, const Tensor& y) { return reshape(floordiv(x, y), {-1}); },
                     TensorSpec({2}, int32), TensorSpec({2}, int32));
  ASSERT_EQ(plan->num_flat_steps(), 1u);
  std::string staged = error_of_plan(*plan, {constant({7, 8}), constant({1, 0})});
  EXPECT_EQ(staged.substr(0, staged.find('\n')),
            "InvalidArgumentError: floordiv: integer division by zero");
  EXPECT_NE(staged.find("in op floordiv"), std::string::npos) << staged;
}

// ---- Traced functions -------------------------------------------------------

const TensorSpec kInt32Scalar({}, int32);

// A loop step's usual arithmetic: counter, condition, branchless select.
Tensor step(const Tensor& i, const Tensor& n) {
  Tensor next = i + 1;
  Tensor done = next >= n;
  return reshape(where(done, next * 2, next % 3), {1});
}

TEST(PlanScalarSteps, ScalarArithmeticBetweenStepsUsesScalarKernels) {
  auto plan = traced_plan_of(step, kInt32Scalar, kInt32Scalar);
  EXPECT_EQ(plan->num_steps(), 6u);         // add, >=, *, %, where, reshape
  EXPECT_EQ(plan->num_scalar_steps(), 5u);  // all but the reshape
  for (int i : {-7, 1, 4, 9}) {
    Tensor a = constant(i), n = constant(5);
    std::vector<Tensor> out = run(*plan, {a, n});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].values_string(), step(a, n).values_string()) << "i = " << i;
  }
}

TEST(PlanScalarSteps, VectorsAndReductionsUseTheGeneralKernel) {
  // x * 2 is a vector and reduce_sum is no elementwise op: only s + 1, the
  // function's output on scalars, is a scalar step.
  auto plan = traced_plan_of([](const Tensor& x) { return reduce_sum(x * 2) + 1; },
                             TensorSpec({3}, float32));
  EXPECT_EQ(plan->num_scalar_steps(), 1u);
  EXPECT_EQ(run(*plan, {constant({1.5f, -2.0f, 0.25f})})[0].item<float>(), 0.5f);
  // Once s + 1 feeds another op, both are.
  auto squared = traced_plan_of(
      [](const Tensor& x) {
        Tensor t = reduce_sum(x * 2) + 1;
        return t * t;
      },
      TensorSpec({3}, float32));
  EXPECT_EQ(squared->num_scalar_steps(), 2u);
  std::vector<Tensor> out = run(*squared, {constant({1.5f, -2.0f, 0.25f})});
  EXPECT_EQ(out[0].item<float>(), 0.25f);  // (3 - 4 + 0.5 + 1)^2
}

TEST(PlanScalarSteps, UnknownShapesAreNotScalarSteps) {
  auto plan = traced_plan_of([](const Tensor& x) { return reshape(x + 1, {-1}); },
                             TensorSpec(Shape::unknown_rank(), int32));
  EXPECT_EQ(plan->num_scalar_steps(), 0u);
  EXPECT_EQ(run(*plan, {constant(41)})[0].values_string(), "[42]");
}

// The message of the InvalidArgumentError that `f` throws.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "no InvalidArgumentError";
}

// A scalar step reports an error as the op's kernel does eagerly (followed,
// on the next line, by where the node was defined).
void expect_same_error(Tensor (*op)(const Tensor&, const Tensor&, CallSite), int a, int b,
                       const std::string& message) {
  auto plan =
      traced_plan_of([op](const Tensor& x, const Tensor& y) { return reshape(op(x, y, {}), {1}); },
                     kInt32Scalar, kInt32Scalar);
  ASSERT_EQ(plan->num_scalar_steps(), 1u);
  std::string staged = error_of([&] { run(*plan, {constant(a), constant(b)}); });
  std::string first_line = staged.substr(0, staged.find('\n'));
  EXPECT_EQ(first_line, "InvalidArgumentError: " + message);
  EXPECT_EQ(first_line, error_of([&] { op(constant(a), constant(b), {}); }));
}

TEST(PlanScalarSteps, IntegerErrorsNameTheOp) {
  expect_same_error(floordiv, 7, 0, "floordiv: integer division by zero");
  expect_same_error(mod, 7, 0, "mod: integer division by zero");
  expect_same_error(pow, 7, -1, "pow: integers to negative integer powers are not allowed");
}

}  // namespace
}  // namespace ag
