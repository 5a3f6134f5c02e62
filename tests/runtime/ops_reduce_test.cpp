#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

template <class T>
class Reduce : public ::testing::Test {
 protected:
  // [[1, 2, 3], [4, 5, 6]]
  ag::Tensor m = ag::constant({{1, 2, 3}, {4, 5, 6}}, ag::dtype_v<T>);
};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(Reduce, NumericTypes);

TYPED_TEST(Reduce, SumOverAllAndEachAxis) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::reduce_sum(this->m)), (std::vector<T>{21}));
  EXPECT_EQ(ag::reduce_sum(this->m).shape(), ag::Shape{});
  EXPECT_EQ(values<T>(ag::reduce_sum(this->m, {0})), (std::vector<T>{5, 7, 9}));
  EXPECT_EQ(values<T>(ag::reduce_sum(this->m, {1})), (std::vector<T>{6, 15}));
  EXPECT_EQ(values<T>(ag::reduce_sum(this->m, {-1})), (std::vector<T>{6, 15}));
  EXPECT_EQ(values<T>(ag::reduce_sum(this->m, {0, 1})), (std::vector<T>{21}));
}

TYPED_TEST(Reduce, KeepDims) {
  using T = TypeParam;
  ag::Tensor r = ag::reduce_sum(this->m, {1}, /*keepdims=*/true);
  EXPECT_EQ(r.shape(), (ag::Shape{2, 1}));
  EXPECT_EQ(values<T>(r), (std::vector<T>{6, 15}));
  EXPECT_EQ(ag::reduce_max(this->m, {}, true).shape(), (ag::Shape{1, 1}));
}

TYPED_TEST(Reduce, ProdMaxMin) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::reduce_prod(this->m)), (std::vector<T>{720}));
  EXPECT_EQ(values<T>(ag::reduce_prod(this->m, {0})), (std::vector<T>{4, 10, 18}));
  EXPECT_EQ(values<T>(ag::reduce_max(this->m)), (std::vector<T>{6}));
  EXPECT_EQ(values<T>(ag::reduce_max(this->m, {0})), (std::vector<T>{4, 5, 6}));
  EXPECT_EQ(values<T>(ag::reduce_min(this->m, {1})), (std::vector<T>{1, 4}));
  EXPECT_EQ(values<T>(ag::reduce_min(-this->m)), (std::vector<T>{-6}));
}

TYPED_TEST(Reduce, Mean) {
  using T = TypeParam;
  EXPECT_EQ(values<T>(ag::reduce_mean(this->m, {0})), (std::vector<T>{T(2.5), T(3.5), T(4.5)}));
  EXPECT_EQ(values<T>(ag::reduce_mean(this->m, {1})), (std::vector<T>{2, 5}));
  EXPECT_EQ(values<T>(ag::reduce_mean(this->m)), (std::vector<T>{T(3.5)}));
}

TYPED_TEST(Reduce, ArgMaxArgMinGiveInt64AndTheFirstTie) {
  using T = TypeParam;
  ag::Tensor x = ag::constant({{3, 9, 9}, {7, -1, 7}}, ag::dtype_v<T>);
  EXPECT_EQ(values<int64_t>(ag::argmax(x, 1)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(ag::argmin(x, 1)), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(values<int64_t>(ag::argmax(x, 0)), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(values<int64_t>(ag::argmin(x)), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(values<int64_t>(ag::argmax(x, -1)), (std::vector<int64_t>{1, 0}));
}

TYPED_TEST(Reduce, ThreeDimensionalAxisSets) {
  using T = TypeParam;
  // x[i][j][k] = 100 i + 10 j + k, shape [2, 3, 4].
  std::vector<T> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back(T(100 * i + 10 * j + k));
  ag::Tensor x =
      ag::cast(ag::constant(std::vector<int64_t>(v.begin(), v.end()), {2, 3, 4}), ag::dtype_v<T>);
  // Middle axis: [outer, reduced, inner].
  EXPECT_EQ(values<T>(ag::reduce_sum(x, {1})),
            (std::vector<T>{30, 33, 36, 39, 330, 333, 336, 339}));
  // Two reduced groups: the general path.
  EXPECT_EQ(values<T>(ag::reduce_sum(x, {0, 2})), (std::vector<T>{412, 492, 572}));
  ag::Tensor kept = ag::reduce_max(x, {0, 2}, true);
  EXPECT_EQ(kept.shape(), (ag::Shape{1, 3, 1}));
  EXPECT_EQ(values<T>(kept), (std::vector<T>{103, 113, 123}));
  // Leading axes merge into one reduced group.
  EXPECT_EQ(values<T>(ag::reduce_min(x, {0, 1})), (std::vector<T>{0, 1, 2, 3}));
  EXPECT_EQ(values<T>(ag::reduce_sum(x, {2, 1})), (std::vector<T>{138, 1338}));
}

TEST(Reduce, SizeOneAxesAndScalars) {
  ag::Tensor x = ag::reshape(ag::range(6), {1, 2, 1, 3});
  EXPECT_EQ(values<int32_t>(ag::reduce_sum(x, {0, 2})), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(values<int32_t>(ag::reduce_sum(x, {0, 3})), (std::vector<int32_t>{3, 12}));
  EXPECT_EQ(values<int32_t>(ag::reduce_sum(x, {1, 3})), (std::vector<int32_t>{15}));
  EXPECT_EQ(values<int32_t>(ag::reduce_sum(ag::constant(5))), (std::vector<int32_t>{5}));
}

TEST(Reduce, LongRunsMatchASequentialLoop) {
  std::vector<int64_t> v(1003);
  int64_t expected = 0, expected_max = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = int64_t((i * 7919) % 1009) - 500;
    expected += v[i];
    expected_max = std::max(expected_max, v[i]);
  }
  ag::Tensor x = ag::constant(v, ag::Shape{1003});
  EXPECT_EQ(ag::reduce_sum(x).item<int64_t>(), expected);
  EXPECT_EQ(ag::reduce_max(x).item<int64_t>(), expected_max);
  EXPECT_EQ(ag::reduce_sum(ag::reshape(x, {17, 59}), {1}).to_vector<int64_t>().size(), 17u);
  EXPECT_EQ(ag::reduce_sum(ag::reduce_sum(ag::reshape(x, {17, 59}), {0})).item<int64_t>(),
            expected);
}

TEST(Reduce, IntegerMeanTruncatesLikeTensorFlow) {
  // The MSE of the TensorFlow guide: squared differences 49, 81, 36, 1, 4.
  ag::Tensor y = ag::constant({2, 0, 7, 2, 3}), p = ag::constant({9, 9, 1, 1, 5});
  ag::Tensor mse = ag::reduce_mean(ag::square(y - p));
  EXPECT_EQ(mse.dtype(), ag::int32);
  EXPECT_EQ(mse.item<int32_t>(), 34);
  EXPECT_EQ(ag::reduce_mean(ag::constant({-3, -4})).item<int32_t>(), -3);
}

TEST(Reduce, IntegerSumWraps) {
  ag::Tensor x = ag::constant(std::vector<int32_t>{std::numeric_limits<int32_t>::max(), 1}, {2});
  EXPECT_EQ(ag::reduce_sum(x).item<int32_t>(), std::numeric_limits<int32_t>::min());
}

TEST(Reduce, BoolMaxIsAnyAndMinIsAll) {
  ag::Tensor b = ag::constant({{true, false}, {false, false}});
  EXPECT_EQ(values<bool>(ag::reduce_max(b, {1})), (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(ag::reduce_min(b, {0})), (std::vector<bool>{false, false}));
  EXPECT_EQ(values<bool>(ag::reduce_min(ag::constant({true, true}))), (std::vector<bool>{true}));
}

TEST(Reduce, AnyAndAllOverBool) {
  ag::Tensor b = ag::constant({{true, false}, {false, false}});
  EXPECT_EQ(values<bool>(ag::reduce_any(b, {1})), (std::vector<bool>{true, false}));
  EXPECT_EQ(values<bool>(ag::reduce_all(b, {0})), (std::vector<bool>{false, false}));
  EXPECT_EQ(values<bool>(ag::reduce_any(b)), (std::vector<bool>{true}));
  EXPECT_EQ(values<bool>(ag::reduce_all(ag::constant({true, true}))), (std::vector<bool>{true}));
  EXPECT_EQ(ag::reduce_any(b, {0}, /*keepdims=*/true).shape(), (ag::Shape{1, 2}));
  ag::Tensor none = ag::zeros(ag::Shape{0}, ag::bool_);
  EXPECT_FALSE(ag::reduce_any(none).item<bool>());
  EXPECT_TRUE(ag::reduce_all(none).item<bool>());
  ag::Tensor ints = ag::constant({1, 2});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reduce_any(ints); },
      "reduce_any: needs a bool tensor, got int32; compare first, e.g. ag::reduce_any(x > 0)");
}

TEST(Reduce, EmptyInputsGiveTheIdentity) {
  ag::Tensor e = ag::zeros(ag::Shape{0, 2});
  EXPECT_EQ(values<float>(ag::reduce_sum(e, {0})), (std::vector<float>{0, 0}));
  EXPECT_EQ(values<float>(ag::reduce_prod(e, {0})), (std::vector<float>{1, 1}));
  EXPECT_EQ(values<float>(ag::reduce_max(e)),
            (std::vector<float>{-std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(values<float>(ag::reduce_min(e)),
            (std::vector<float>{std::numeric_limits<float>::infinity()}));
  EXPECT_TRUE(std::isnan(ag::reduce_mean(e).item<float>()));
  EXPECT_EQ(ag::reduce_sum(e, {1}).shape(), (ag::Shape{0}));
  EXPECT_EQ(values<int32_t>(ag::reduce_max(ag::zeros(ag::Shape{0}, ag::int32))),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
}

TEST(Reduce, MeanOfNoIntegersIsAnError) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::reduce_mean(ag::zeros(ag::Shape{0}, ag::int32)); },
      "reduce_mean: the mean of no integer elements is undefined");
}

TEST(Reduce, AxisErrors) {
  ag::Tensor m = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reduce_sum(m, {2}); }, "reduce_sum: axis 2 is out of range for a tensor of rank 2");
  expect_error<ag::InvalidArgumentError>([&] { ag::reduce_max(m, {-3}); },
                                         "reduce_max: axis -3 is out of range");
  std::vector<int64_t> repeated = {1, -1};
  expect_error<ag::InvalidArgumentError>([&] { ag::reduce_sum(m, repeated); },
                                         "reduce_sum: axis -1 appears twice");
  expect_error<ag::InvalidArgumentError>([&] { ag::argmax(m, 2); },
                                         "argmax: axis 2 is out of range for a tensor of rank 2");
}

TEST(Reduce, DtypeErrors) {
  ag::Tensor b = ag::constant({true});
  expect_error<ag::InvalidArgumentError>([&] { ag::reduce_sum(b); },
                                         "reduce_sum: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::reduce_mean(b); },
                                         "reduce_mean: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([&] { ag::argmin(b); }, "argmin: unsupported dtype bool");
}

TEST(Reduce, ArgMaxNeedsANonEmptyAxisOfRankOne) {
  expect_error<ag::InvalidArgumentError>([] { ag::argmax(ag::zeros(ag::Shape{0})); },
                                         "argmax: cannot reduce an empty axis");
  expect_error<ag::InvalidArgumentError>([] { ag::argmax(ag::constant(1)); },
                                         "argmax: needs a tensor of rank at least 1");
}

TEST(Reduce, ArgMaxOfAMiddleAxis) {
  ag::Tensor x = ag::constant({{{0, 3}, {2, 0}, {4, 2}}, {{1, 4}, {3, 1}, {0, 3}}});
  EXPECT_EQ(values<int64_t>(ag::argmax(x, 1)), (std::vector<int64_t>{2, 0, 1, 0}));
  EXPECT_EQ(values<int64_t>(ag::argmin(x, 1)), (std::vector<int64_t>{0, 1, 2, 1}));
}

TEST(Reduce, OneAxisAsAPlainInteger) {
  ag::Tensor b = ag::constant({{true, false}, {true, true}});
  EXPECT_EQ(values<bool>(ag::reduce_all(b, 1)), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<bool>(ag::reduce_any(b, -2)), (std::vector<bool>{true, true}));
  EXPECT_EQ(ag::reduce_all(b, 0, /*keepdims=*/true).shape(), (ag::Shape{1, 2}));
  ag::Tensor m = ag::constant({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(values<int32_t>(ag::reduce_sum(m, 1)), (std::vector<int32_t>{6, 15}));
  EXPECT_EQ(values<int32_t>(ag::reduce_max(m, int64_t{0})), (std::vector<int32_t>{4, 5, 6}));
  // {} still means every axis.
  EXPECT_EQ(ag::reduce_sum(m, {}, true).shape(), (ag::Shape{1, 1}));
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reduce_any(b, 2); }, "reduce_any: axis 2 is out of range for a tensor of rank 2");
}

TEST(Reduce, AnyAndAllOverAxisSetsOfThreeDims) {
  // b[i][j][k] = (i + j + k) % 3 == 0, shape [2, 3, 2].
  std::vector<int32_t> bits;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) bits.push_back((i + j + k) % 3 == 0);
  ag::Tensor b = ag::cast(ag::constant(bits, ag::Shape{2, 3, 2}), ag::bool_);
  ag::Tensor any02 = ag::reduce_any(b, {0, 2}, /*keepdims=*/true);
  EXPECT_EQ(any02.shape(), (ag::Shape{1, 3, 1}));
  EXPECT_EQ(values<bool>(any02), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(values<bool>(ag::reduce_all(ag::logical_not(b), {-1})),
            (std::vector<bool>{false, true, false, true, false, false}));
  EXPECT_EQ(values<bool>(ag::reduce_any(b, {1, 2})), (std::vector<bool>{true, true}));
}

TEST(Reduce, ArgMinOfNegativeAxesAndItsErrors) {
  ag::Tensor x = ag::constant({{{0, 3}, {2, 0}, {4, 2}}, {{1, 4}, {3, 1}, {0, 3}}});
  EXPECT_EQ(values<int64_t>(ag::argmin(x, -1)), (std::vector<int64_t>{0, 1, 1, 0, 1, 0}));
  EXPECT_EQ(values<int64_t>(ag::argmin(x, -3)), (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));
  expect_error<ag::InvalidArgumentError>([] { ag::argmin(ag::zeros(ag::Shape{2, 0}), 1); },
                                         "argmin: cannot reduce an empty axis");
  expect_error<ag::InvalidArgumentError>([] { ag::argmin(ag::constant(1.0)); },
                                         "argmin: needs a tensor of rank at least 1");
  expect_error<ag::InvalidArgumentError>([&] { ag::argmin(x, -4); },
                                         "argmin: axis -4 is out of range for a tensor of rank 3");
}

// ---- cumsum -------------------------------------------------------------------------

TYPED_TEST(Reduce, CumsumExclusiveAndReverse) {
  using T = TypeParam;
  ag::Tensor x = ag::constant({1, 2, 3, 4}, ag::dtype_v<T>);
  EXPECT_EQ(values<T>(ag::cumsum(x)), (std::vector<T>{1, 3, 6, 10}));
  EXPECT_EQ(values<T>(ag::cumsum(x, 0, /*exclusive=*/true)), (std::vector<T>{0, 1, 3, 6}));
  EXPECT_EQ(values<T>(ag::cumsum(x, 0, false, /*reverse=*/true)), (std::vector<T>{10, 9, 7, 4}));
  EXPECT_EQ(values<T>(ag::cumsum(x, 0, true, true)), (std::vector<T>{9, 7, 4, 0}));
}

TYPED_TEST(Reduce, CumsumAlongEachAxis) {
  using T = TypeParam;
  // [[1, 2, 3], [4, 5, 6]]
  EXPECT_EQ(values<T>(ag::cumsum(this->m, 0)), (std::vector<T>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values<T>(ag::cumsum(this->m, 1)), (std::vector<T>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values<T>(ag::cumsum(this->m, -1, true, true)), (std::vector<T>{5, 3, 0, 11, 6, 0}));
  EXPECT_EQ(ag::cumsum(this->m, -2).shape(), (ag::Shape{2, 3}));
}

TEST(Reduce, CumsumOfEmptyTensorsAndWrapping) {
  EXPECT_EQ(ag::cumsum(ag::zeros(ag::Shape{0})).shape(), ag::Shape{0});
  EXPECT_EQ(ag::cumsum(ag::zeros(ag::Shape{2, 0}), 1).shape(), (ag::Shape{2, 0}));
  EXPECT_EQ(ag::cumsum(ag::zeros(ag::Shape{0, 3}), 1, true).shape(), (ag::Shape{0, 3}));
  ag::Tensor x = ag::constant(std::vector<int32_t>{std::numeric_limits<int32_t>::max(), 1}, {2});
  EXPECT_EQ(values<int32_t>(ag::cumsum(x)),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min()}));
  EXPECT_TRUE(std::isnan(values<float>(ag::cumsum(ag::constant({1.0f, NAN, 2.0f})))[2]));
}

TEST(Reduce, CumsumErrors) {
  expect_error<ag::InvalidArgumentError>([] { ag::cumsum(ag::constant({true})); },
                                         "cumsum: unsupported dtype bool");
  expect_error<ag::InvalidArgumentError>([] { ag::cumsum(ag::constant(3)); },
                                         "cumsum: axis 0 is out of range for a tensor of rank 0");
  expect_error<ag::InvalidArgumentError>([] { ag::cumsum(ag::zeros(ag::Shape{2, 3}), -3); },
                                         "cumsum: axis -3 is out of range for a tensor of rank 2");
}

// ---- reduce_sum_to ----------------------------------------------------------------

TYPED_TEST(Reduce, SumToTheShapeOfABroadcastOperand) {
  using T = TypeParam;
  ag::Tensor row = ag::zeros(ag::Shape{1, 3}, ag::dtype_v<T>);
  EXPECT_EQ(values<T>(ag::reduce_sum_to(this->m, row)), (std::vector<T>{5, 7, 9}));
  EXPECT_EQ(ag::reduce_sum_to(this->m, row).shape(), (ag::Shape{1, 3}));
  EXPECT_EQ(values<T>(ag::reduce_sum_to(this->m, ag::zeros(ag::Shape{2, 1}))),
            (std::vector<T>{6, 15}));
  EXPECT_EQ(values<T>(ag::reduce_sum_to(this->m, ag::zeros(ag::Shape{3}))),
            (std::vector<T>{5, 7, 9}));
  EXPECT_EQ(values<T>(ag::reduce_sum_to(this->m, ag::zeros(ag::Shape{}))), (std::vector<T>{21}));
  EXPECT_EQ(values<T>(ag::reduce_sum_to(this->m, this->m)), (std::vector<T>{1, 2, 3, 4, 5, 6}));
}

TEST(Reduce, SumToErrors) {
  ag::Tensor m = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reduce_sum_to(m, ag::zeros(ag::Shape{2})); },
      "reduce_sum_to: cannot sum a tensor of shape [2,3] to shape [2], which does not "
      "broadcast to it");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::reduce_sum_to(m, ag::zeros(ag::Shape{1, 2, 3})); },
      "reduce_sum_to: cannot sum a tensor of shape [2,3] to shape [1,2,3]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::reduce_sum_to(ag::constant({true}), ag::constant({true})); },
      "reduce_sum_to: unsupported dtype bool");
}

}  // namespace
