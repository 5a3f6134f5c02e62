// The executor's plan on traced bodies: which steps become scalar steps (an
// elementwise op on static rank-0 values, run through the op's scalar kernel)
// and that they compute what eager execution computes, errors included.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "exec/plan.h"
#include "graph/graph.h"

namespace ag {
namespace {

// The plan the executor would compile from `fn`'s trace for `specs`.
template <class F, class... Specs>
std::unique_ptr<exec::Plan> plan_of(F fn, const Specs&... specs) {
  auto traced = ag::function(fn);
  auto concrete = traced.get_concrete_function(specs...);
  return std::make_unique<exec::Plan>(std::make_shared<const graph::Body>(concrete.graph().body()));
}

std::vector<Tensor> run(const exec::Plan& plan, const std::vector<Tensor>& inputs) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);
  std::vector<Tensor> outputs;
  plan.run(pointers, outputs);
  return outputs;
}

const TensorSpec kInt32Scalar({}, int32);

// A loop step's usual arithmetic: counter, condition, branchless select.
Tensor step(const Tensor& i, const Tensor& n) {
  Tensor next = i + 1;
  Tensor done = next >= n;
  return reshape(where(done, next * 2, next % 3), {1});
}

TEST(PlanScalarSteps, ScalarArithmeticBetweenStepsUsesScalarKernels) {
  auto plan = plan_of(step, kInt32Scalar, kInt32Scalar);
  EXPECT_EQ(plan->num_steps(), 6u);         // add, >=, *, %, where, reshape
  EXPECT_EQ(plan->num_scalar_steps(), 5u);  // all but the reshape
  for (int i : {-7, 1, 4, 9}) {
    Tensor a = constant(i), n = constant(5);
    std::vector<Tensor> out = run(*plan, {a, n});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].values_string(), step(a, n).values_string()) << "i = " << i;
  }
}

TEST(PlanScalarSteps, VectorsReductionsAndFunctionOutputsUseTheGeneralKernel) {
  // x * 2 is a vector, reduce_sum is no elementwise op, and s + 1 is a
  // function output (a fresh tensor): no scalar step.
  auto plan =
      plan_of([](const Tensor& x) { return reduce_sum(x * 2) + 1; }, TensorSpec({3}, float32));
  EXPECT_EQ(plan->num_scalar_steps(), 0u);
  // Once s + 1 feeds another op, it is one.
  auto squared = plan_of(
      [](const Tensor& x) {
        Tensor t = reduce_sum(x * 2) + 1;
        return t * t;
      },
      TensorSpec({3}, float32));
  EXPECT_EQ(squared->num_scalar_steps(), 1u);
  std::vector<Tensor> out = run(*squared, {constant({1.5f, -2.0f, 0.25f})});
  EXPECT_EQ(out[0].item<float>(), 0.25f);  // (3 - 4 + 0.5 + 1)^2
}

TEST(PlanScalarSteps, UnknownShapesAreNotScalarSteps) {
  auto plan = plan_of([](const Tensor& x) { return reshape(x + 1, {-1}); },
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

// A scalar step reports an error as the op's kernel does eagerly.
void expect_same_error(Tensor (*op)(const Tensor&, const Tensor&), int a, int b,
                       const std::string& message) {
  auto plan = plan_of([op](const Tensor& x, const Tensor& y) { return reshape(op(x, y), {1}); },
                      kInt32Scalar, kInt32Scalar);
  ASSERT_EQ(plan->num_scalar_steps(), 1u);
  std::string staged = error_of([&] { run(*plan, {constant(a), constant(b)}); });
  EXPECT_EQ(staged, "InvalidArgumentError: " + message);
  EXPECT_EQ(staged, error_of([&] { op(constant(a), constant(b)); }));
}

TEST(PlanScalarSteps, IntegerErrorsNameTheOp) {
  expect_same_error(floordiv, 7, 0, "floordiv: integer division by zero");
  expect_same_error(mod, 7, 0, "mod: integer division by zero");
  expect_same_error(pow, 7, -1, "pow: integers to negative integer powers are not allowed");
}

}  // namespace
}  // namespace ag
