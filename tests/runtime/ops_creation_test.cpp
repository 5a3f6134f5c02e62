#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops/dispatch.h"
#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

// ---- range ---------------------------------------------------------------------

template <class T>
class Range : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(Range, NumericTypes);

TYPED_TEST(Range, StartLimitDelta) {
  using T = TypeParam;
  auto scalar = [](int v) { return ag::cast(ag::constant(v), ag::dtype_v<T>); };
  EXPECT_EQ(values<T>(ag::range(scalar(5))), (std::vector<T>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values<T>(ag::range(scalar(2), scalar(9), scalar(3))), (std::vector<T>{2, 5, 8}));
  EXPECT_EQ(values<T>(ag::range(scalar(3), scalar(-3), scalar(-2))), (std::vector<T>{3, 1, -1}));
  EXPECT_EQ(ag::range(scalar(3), scalar(3)).shape(), (ag::Shape{0}));
  EXPECT_EQ(ag::range(scalar(5), scalar(1)).shape(), (ag::Shape{0}));
}

TEST(Range, ScalarArgumentsGiveTheirDtype) {
  EXPECT_EQ(ag::range(5).dtype(), ag::int32);
  EXPECT_EQ(ag::range(int64_t{5}).dtype(), ag::int64);
  EXPECT_EQ(ag::range(0, 5, 1).dtype(), ag::int32);
  EXPECT_EQ(ag::range(0, 2.5, 1).dtype(), ag::float32);
  EXPECT_EQ(values<float>(ag::range(0, 2.5, 1)), (std::vector<float>{0, 1, 2}));
}

TEST(Range, FractionalDeltaCountsInTheDtype) {
  ag::Tensor r = ag::range(0.0, 1.0, 0.25);
  EXPECT_EQ(values<float>(r), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(ag::range(0.0, 1.0, 0.1).shape(), (ag::Shape{10}));
}

TEST(Range, Errors) {
  expect_error<ag::InvalidArgumentError>([] { ag::range(0, 5, 0); },
                                         "range: delta must not be zero");
  expect_error<ag::InvalidArgumentError>([] { ag::range(ag::constant({1, 2})); },
                                         "range: start, limit and delta must be scalars");
  expect_error<ag::InvalidArgumentError>(
      [] {
        ag::Tensor t = ag::constant(true);
        ag::range(t, t, t);
      },
      "range: unsupported dtype bool");
}

TEST(Range, ExtremeIntegerBoundsDoNotOverflow) {
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  ag::Tensor r = ag::range(ag::Tensor(lo), ag::Tensor(hi), ag::Tensor(hi));
  EXPECT_EQ(values<int64_t>(r), (std::vector<int64_t>{lo, -1, hi - 1}));
}

// ---- zeros, ones, fill, eye ----------------------------------------------------------

TEST(Fill, EveryDtype) {
  EXPECT_EQ(values<double>(ag::fill(ag::Shape{2}, 0.5, ag::float64)),
            (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(values<int32_t>(ag::zeros(ag::Shape{3}, ag::int32)), (std::vector<int32_t>(3, 0)));
  EXPECT_EQ(values<bool>(ag::ones(ag::Shape{2}, ag::bool_)), (std::vector<bool>{true, true}));
  EXPECT_EQ(values<int64_t>(ag::eye(2, 3, ag::int64)), (std::vector<int64_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(ag::zeros_like(ag::constant({{1.0}})).shape(), (ag::Shape{1, 1}));
}

// ---- the zeros op (a TensorArray's initial rows) ---------------------------------

TEST(ZerosOp, EveryDtypeEmptyShapesAndAClearError) {
  EXPECT_EQ(values<float>(ag::ops::zeros_op(ag::Shape{2, 2}, ag::float32)),
            (std::vector<float>(4, 0.0f)));
  EXPECT_EQ(values<int64_t>(ag::ops::zeros_op(ag::Shape{3}, ag::int64)),
            (std::vector<int64_t>(3, 0)));
  EXPECT_EQ(values<bool>(ag::ops::zeros_op(ag::Shape{2}, ag::bool_)),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(ag::ops::zeros_op(ag::Shape{}, ag::float64).item<double>(), 0.0);
  EXPECT_EQ(ag::ops::zeros_op(ag::Shape{0, 5}, ag::int32).shape(), (ag::Shape{0, 5}));
  expect_error<ag::InvalidArgumentError>(
      [] { ag::ops::zeros_op(ag::Shape{ag::kUnknownDim, 2}, ag::float32); },
      "zeros: the shape must be fully defined");
}

// Traced, the zeros are a node (also with no symbolic input), of the
// array's empty or large shape; the graph gives eager's values.
TEST(ZerosOp, ArraysOfNoAndOfManyElementsTraceAsZerosNodes) {
  for (int64_t size : {0, 2000}) {
    auto unwritten = [size] {
      return ag::TensorArray(ag::int32, size, false, ag::Shape{3}).stack();
    };
    auto traced = ag::function(unwritten);
    EXPECT_EQ(traced.get_concrete_function().graph().ops(),
              (std::vector<std::string>{"zeros", "Identity"}));
    const ag::Tensor got = traced();
    EXPECT_EQ(got.shape(), (ag::Shape{size, 3}));
    EXPECT_EQ(values<int32_t>(got), values<int32_t>(unwritten()));
  }
}

// zeros_like of a traced tensor: the zeros op when its shape is static (no
// read of the tensor), else staged from the tensor (its dims known only at
// run time). Eager's values either way, NaN included.
TEST(ZerosOp, ZerosLikeOfAStaticShapeIsTheZerosOp) {
  auto like = [](const ag::Tensor& x) { return ag::zeros_like(x * 2.0f); };
  const ag::Tensor x = ag::constant({1.0f, NAN, -3.0f});
  auto fixed = ag::function(like);
  EXPECT_EQ(values<float>(fixed(x)), values<float>(like(x)));
  const auto ops = fixed.get_concrete_function(x).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "zeros"), ops.end());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "logical_and"), ops.end());
  const ag::TensorSpec any_length({ag::kUnknownDim}, ag::float32);
  auto relaxed = ag::function(like, {.input_signature = std::vector{any_length}});
  EXPECT_EQ(values<float>(relaxed(x)), values<float>(like(x)));
  const ag::Graph staged = relaxed.get_concrete_function(any_length).graph();
  const auto staged_ops = staged.ops();
  EXPECT_EQ(std::find(staged_ops.begin(), staged_ops.end(), "zeros"), staged_ops.end())
      << staged.to_string();
}

// ones_like likewise: a one broadcast to a static shape (folded to a constant
// when small, a fill when large), never a read of the tensor; staged from the
// tensor where its dims are unknown while tracing.
TEST(OnesLike, OfAStaticShapeIsABroadcastOne) {
  for (int64_t size : {3, 3000}) {
    auto like = [](const ag::Tensor& x) { return ag::ones_like(x * 2.0); };
    const ag::Tensor x = ag::cast(ag::range(size), ag::float64) - 1.5;
    auto fixed = ag::function(like);
    EXPECT_EQ(values<double>(fixed(x)), values<double>(like(x)));
    const auto ops = fixed.get_concrete_function(x).graph().ops();
    EXPECT_NE(std::find(ops.begin(), ops.end(), "broadcast_to"), ops.end());
    EXPECT_EQ(std::find(ops.begin(), ops.end(), "logical_or"), ops.end());
    const auto optimized = fixed.get_concrete_function(x).optimized_graph().ops();
    EXPECT_EQ(std::find(optimized.begin(), optimized.end(), "broadcast_to") != optimized.end(),
              size > 1024);
  }
  const ag::TensorSpec any_length({ag::kUnknownDim}, ag::int32);
  auto relaxed = ag::function([](const ag::Tensor& x) { return ag::ones_like(x); },
                              {.input_signature = std::vector{any_length}});
  EXPECT_EQ(values<int32_t>(relaxed(ag::constant({4, 0, -2}))), (std::vector<int32_t>{1, 1, 1}));
}

// ---- random ----------------------------------------------------------------------

TEST(Random, SeededCallsAreReproducibleAfterSetRandomSeed) {
  ag::set_random_seed(7);
  std::vector<float> a = ag::random_uniform(ag::Shape{5}, 0, 1, ag::float32, 99).to_vector<float>();
  std::vector<float> b = ag::random_uniform(ag::Shape{5}, 0, 1, ag::float32, 99).to_vector<float>();
  EXPECT_NE(a, b) << "a seeded op continues its sequence";
  ag::set_random_seed(7);
  EXPECT_EQ(ag::random_uniform(ag::Shape{5}, 0, 1, ag::float32, 99).to_vector<float>(), a);
  EXPECT_EQ(ag::random_uniform(ag::Shape{5}, 0, 1, ag::float32, 99).to_vector<float>(), b);
}

TEST(Random, UnseededCallsFollowTheGlobalSeed) {
  ag::set_random_seed(3);
  std::vector<double> a = ag::random_normal(ag::Shape{4}, 0, 1, ag::float64).to_vector<double>();
  ag::set_random_seed(3);
  EXPECT_EQ(ag::random_normal(ag::Shape{4}, 0, 1, ag::float64).to_vector<double>(), a);
  ag::set_random_seed(4);
  EXPECT_NE(ag::random_normal(ag::Shape{4}, 0, 1, ag::float64).to_vector<double>(), a);
}

TEST(Random, DifferentSeedsDiffer) {
  EXPECT_NE(ag::random_uniform(ag::Shape{8}, 0, 1, ag::float32, 1).to_vector<float>(),
            ag::random_uniform(ag::Shape{8}, 0, 1, ag::float32, 2).to_vector<float>());
}

template <class T>
class RandomUniform : public ::testing::Test {};
TYPED_TEST_SUITE(RandomUniform, NumericTypes);

TYPED_TEST(RandomUniform, StaysInRangeAndCoversIt) {
  using T = TypeParam;
  ag::Tensor r = ag::random_uniform(ag::Shape{20, 50}, -2, 3, ag::dtype_v<T>, 5);
  EXPECT_EQ(r.shape(), (ag::Shape{20, 50}));
  std::vector<T> v = values<T>(r);
  T lo = *std::min_element(v.begin(), v.end()), hi = *std::max_element(v.begin(), v.end());
  EXPECT_GE(lo, T(-2));
  EXPECT_LT(hi, T(3));
  EXPECT_LT(lo, T(-1.9));
  EXPECT_GT(hi, T(1.9));
  if constexpr (std::is_integral_v<T>) {
    EXPECT_EQ(std::set<T>(v.begin(), v.end()), (std::set<T>{-2, -1, 0, 1, 2}));
  } else {
    double mean = 0;
    for (T x : v) mean += double(x) / double(v.size());
    EXPECT_NEAR(mean, 0.5, 0.1);
  }
}

template <class T>
class RandomNormal : public ::testing::Test {};
using FloatingTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RandomNormal, FloatingTypes);

TYPED_TEST(RandomNormal, MeanAndStddev) {
  using T = TypeParam;
  // An odd count exercises the unpaired last draw.
  std::vector<T> v = values<T>(ag::random_normal(ag::Shape{20001}, 3.0, 2.0, ag::dtype_v<T>, 8));
  double mean = 0, var = 0;
  for (T x : v) mean += double(x) / double(v.size());
  for (T x : v) var += (double(x) - mean) * (double(x) - mean) / double(v.size());
  EXPECT_NEAR(mean, 3.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.05);
  for (T x : v) ASSERT_TRUE(std::isfinite(x));
}

TEST(Random, Errors) {
  expect_error<ag::InvalidArgumentError>([] { ag::random_normal(ag::Shape{2}, 0, 1, ag::int32); },
                                         "random_normal: unsupported dtype int32");
  expect_error<ag::InvalidArgumentError>([] { ag::random_uniform(ag::Shape{2}, 0, 1, ag::bool_); },
                                         "random_uniform: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([] { ag::random_uniform(ag::Shape{2}, 5, 5, ag::int64); },
                                         "random_uniform: Need minval < maxval: 5 >= 5");
  expect_error<ag::InvalidArgumentError>([] { ag::random_uniform(ag::Shape{ag::kUnknownDim}); },
                                         "random_uniform: shape (None,) must be fully defined");
}

TEST(Random, EmptyShape) {
  EXPECT_EQ(ag::random_normal(ag::Shape{0, 3}).shape(), (ag::Shape{0, 3}));
  EXPECT_EQ(ag::random_uniform(ag::Shape{}).shape(), ag::Shape{});
}

}  // namespace
