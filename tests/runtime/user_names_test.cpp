// A program's own functions named like ag's ops (the TensorFlow guide's `add` and
// `dense_layer`, a `square`), called unqualified on tensors: they are the
// program's, not ambiguous with ag::add and ag::square, because
// argument-dependent lookup on ag types finds only the operators (the
// namespace rule in ag/tensor.h). The functions are global, as in the
// TensorFlow guide; `static` keeps them out of other test files' way.
#include <gtest/gtest.h>

#include <vector>

#include <ag/ag.h>

static int g_user_calls = 0;

static ag::Tensor add(ag::Tensor a, ag::Tensor b) {
  ++g_user_calls;
  return a + b;
}

static ag::Tensor square(ag::Tensor x) {
  ++g_user_calls;
  return x * x + 1;  // not ag::square: the test sees which one ran
}

static ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  return add(ag::matmul(x, w), b);
}

// A name of another op, with ag::where's parameter list.
static ag::Tensor where(ag::Tensor cond, ag::Tensor x, ag::Tensor y) {
  ++g_user_calls;
  return ag::where(cond, y, x);  // the other way round, so the test sees which one ran
}

namespace {

TEST(UserNames, GuideFunctionsRunEagerly) {
  g_user_calls = 0;
  ag::Tensor y = dense_layer(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2}));
  EXPECT_EQ(y.shape(), ag::Shape({3, 2}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(6, 3.0f));
  EXPECT_EQ(square(ag::constant(3)).item<int>(), 10);
  EXPECT_EQ(where(ag::constant(true), ag::constant(4), ag::constant(5)).item<int>(), 5);
  EXPECT_EQ(g_user_calls, 3);
  // The ops are still there, qualified.
  EXPECT_EQ(ag::square(ag::constant(3)).item<int>(), 9);
  EXPECT_EQ(ag::add(ag::constant(1), 2).item<int>(), 3);
}

TEST(UserNames, GuideFunctionsTrace) {
  g_user_calls = 0;
  auto traced = ag::function(
      [](ag::Tensor x, ag::Tensor w, ag::Tensor b) { return square(dense_layer(x, w, b)); },
      {.name = "dense_square", .arg_names = {"x", "w", "b"}});
  ag::Tensor y = traced(ag::ones({1, 2}), ag::ones({2, 1}), ag::ones({1}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>{10.0f});
  traced(ag::ones({1, 2}), ag::ones({2, 1}), ag::ones({1}));
  EXPECT_EQ(g_user_calls, 2);  // add and square, once each, while tracing
  EXPECT_EQ(traced.tracing_count(), 1);
}

TEST(UserNames, VariablesFindTheProgramsFunctionsToo) {
  ag::Variable v(ag::constant(2));
  g_user_calls = 0;
  EXPECT_EQ(add(v, ag::constant(3)).item<int>(), 5);
  EXPECT_EQ(square(v).item<int>(), 5);
  EXPECT_EQ(g_user_calls, 2);
  EXPECT_EQ((v + 1).item<int>(), 3);  // operators still come from namespace ag
}

}  // namespace
