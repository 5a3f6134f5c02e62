#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag_test::expect_error;
using ag_test::values;

// A naive triple loop in double (for floats) or wrapping unsigned (for ints).
template <class T>
std::vector<T> naive_matmul(const std::vector<T>& a, const std::vector<T>& b, int64_t m, int64_t n,
                            int64_t k) {
  std::vector<T> c(size_t(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        U acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += U(a[size_t(i * k + p)]) * U(b[size_t(p * n + j)]);
        c[size_t(i * n + j)] = T(acc);
      } else {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += double(a[size_t(i * k + p)]) * b[size_t(p * n + j)];
        c[size_t(i * n + j)] = T(acc);
      }
    }
  }
  return c;
}

template <class T>
class MatMul : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(MatMul, NumericTypes);

TYPED_TEST(MatMul, TwoByThreeTimesThreeByTwo) {
  using T = TypeParam;
  ag::Tensor a = ag::constant({{1, 2, 3}, {4, 5, 6}}, ag::dtype_v<T>);
  ag::Tensor b = ag::constant({{7, 8}, {9, 10}, {11, 12}}, ag::dtype_v<T>);
  ag::Tensor c = ag::matmul(a, b);
  EXPECT_EQ(c.shape(), (ag::Shape{2, 2}));
  EXPECT_EQ(values<T>(c), (std::vector<T>{58, 64, 139, 154}));
}

TYPED_TEST(MatMul, TinyShapesUseTheSmallPath) {
  using T = TypeParam;
  ag::Tensor a = ag::constant({{2}}, ag::dtype_v<T>);
  EXPECT_EQ(values<T>(ag::matmul(a, ag::constant({{3, -4}}, ag::dtype_v<T>))),
            (std::vector<T>{6, -8}));
  ag::Tensor row = ag::constant({{1, 2}}, ag::dtype_v<T>);
  ag::Tensor col = ag::constant({{3}, {4}}, ag::dtype_v<T>);
  EXPECT_EQ(values<T>(ag::matmul(row, col)), (std::vector<T>{11}));
  EXPECT_EQ(values<T>(ag::matmul(col, row)), (std::vector<T>{3, 6, 4, 8}));
}

TYPED_TEST(MatMul, IdentityLeavesAMatrixUnchanged) {
  using T = TypeParam;
  ag::Tensor x = ag::cast(ag::reshape(ag::range(20), {4, 5}), ag::dtype_v<T>);
  EXPECT_EQ(values<T>(ag::matmul(ag::eye(4, ag::dtype_v<T>), x)), values<T>(x));
  EXPECT_EQ(values<T>(ag::matmul(x, ag::eye(5, ag::dtype_v<T>))), values<T>(x));
}

TYPED_TEST(MatMul, BatchedOverLeadingDims) {
  using T = TypeParam;
  ag::Tensor a = ag::constant({{{1, 0}, {0, 1}}, {{1, 2}, {3, 4}}}, ag::dtype_v<T>);
  ag::Tensor b = ag::constant({{{5, 6}, {7, 8}}, {{1, 1}, {0, 1}}}, ag::dtype_v<T>);
  ag::Tensor c = ag::matmul(a, b);
  EXPECT_EQ(c.shape(), (ag::Shape{2, 2, 2}));
  EXPECT_EQ(values<T>(c), (std::vector<T>{5, 6, 7, 8, 1, 3, 3, 7}));
}

TYPED_TEST(MatMul, RandomMatricesAgainstANaiveLoop) {
  using T = TypeParam;
  for (auto [m, n, k] : {std::tuple{10, 10, 10}, {7, 13, 5}, {33, 17, 65}, {3, 600, 200}}) {
    ag::Tensor a = ag::random_uniform(ag::Shape{m, k}, -50, 50, ag::dtype_v<T>, 11);
    ag::Tensor b = ag::random_uniform(ag::Shape{k, n}, -50, 50, ag::dtype_v<T>, 12);
    std::vector<T> got = values<T>(ag::matmul(a, b));
    std::vector<T> want = naive_matmul(a.to_vector<T>(), b.to_vector<T>(), m, n, k);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if constexpr (std::is_integral_v<T>) {
        ASSERT_EQ(got[i], want[i]) << "element " << i << " of " << m << "x" << n << "x" << k;
      } else {
        ASSERT_NEAR(got[i], want[i], 1e-5 * k * 2500) << "element " << i;
      }
    }
  }
}

// Widths up to 16 take a kernel per width; 17 takes the general loop.
TYPED_TEST(MatMul, EveryNarrowWidthAgainstANaiveLoop) {
  using T = TypeParam;
  for (int64_t n = 1; n <= 17; ++n) {
    const int64_t m = 3, k = 9;
    ag::Tensor a = ag::random_uniform(ag::Shape{2, m, k}, -50, 50, ag::dtype_v<T>, 21);
    ag::Tensor b = ag::random_uniform(ag::Shape{2, k, n}, -50, 50, ag::dtype_v<T>, 22);
    std::vector<T> got = values<T>(ag::matmul(a, b));
    std::vector<T> av = a.to_vector<T>(), bv = b.to_vector<T>();
    for (int64_t batch = 0; batch < 2; ++batch) {
      std::vector<T> want = naive_matmul(
          std::vector<T>(av.begin() + batch * m * k, av.begin() + (batch + 1) * m * k),
          std::vector<T>(bv.begin() + batch * k * n, bv.begin() + (batch + 1) * k * n), m, n, k);
      for (int64_t i = 0; i < m * n; ++i) {
        ASSERT_NEAR(double(got[size_t(batch * m * n + i)]), double(want[size_t(i)]),
                    std::is_integral_v<T> ? 0.0 : 1e-5 * k * 2500)
            << "element " << i << " of batch " << batch << ", width " << n;
      }
    }
  }
}

TYPED_TEST(MatMul, EmptyInnerDimensionGivesZeros) {
  using T = TypeParam;
  ag::Tensor c = ag::matmul(ag::zeros(ag::Shape{2, 0}, ag::dtype_v<T>),
                            ag::zeros(ag::Shape{0, 3}, ag::dtype_v<T>));
  EXPECT_EQ(c.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<T>(c), std::vector<T>(6, T(0)));
  EXPECT_EQ(ag::matmul(ag::zeros(ag::Shape{0, 4}, ag::dtype_v<T>),
                       ag::zeros(ag::Shape{4, 3}, ag::dtype_v<T>))
                .shape(),
            (ag::Shape{0, 3}));
}

TEST(MatMul, Int32RandomTenByTenAgainstNaiveLoop) {
  ag::Tensor a = ag::random_uniform(ag::Shape{10, 10}, -1000, 1000, ag::int32, 2024);
  ag::Tensor b = ag::random_uniform(ag::Shape{10, 10}, -1000, 1000, ag::int32, 2025);
  std::vector<int32_t> av = a.to_vector<int32_t>(), bv = b.to_vector<int32_t>();
  std::vector<int32_t> want(100, 0);
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int p = 0; p < 10; ++p)
        want[size_t(i * 10 + j)] += av[size_t(i * 10 + p)] * bv[size_t(p * 10 + j)];
  EXPECT_EQ(values<int32_t>(ag::matmul(a, b)), want);
}

TEST(MatMul, IntegerOverflowWraps) {
  int32_t big = std::numeric_limits<int32_t>::max();
  ag::Tensor a = ag::constant(std::vector<int32_t>{big, big}, ag::Shape{1, 2});
  ag::Tensor b = ag::constant(std::vector<int32_t>{2, 1}, ag::Shape{2, 1});
  // big * 2 + big * 1 wraps modulo 2^32.
  EXPECT_EQ(values<int32_t>(ag::matmul(a, b)), (std::vector<int32_t>{int32_t(uint32_t(big) * 3u)}));
}

TEST(MatMul, InnerDimensionsMustMatch) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{3, 2}), ag::zeros(ag::Shape{3, 2})); },
      "matmul: inner dimensions must match, got [3,2] and [3,2]");
}

TEST(MatMul, RanksMustBeEqualAndAtLeastTwo) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{3}), ag::zeros(ag::Shape{3, 2})); },
      "matmul: expects two tensors of equal rank >= 2, got [3] and [3,2]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{2, 3, 2}), ag::zeros(ag::Shape{2, 2})); },
      "matmul: expects two tensors of equal rank >= 2");
}

TEST(MatMul, BatchDimensionsMustMatch) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{2, 3, 2}), ag::zeros(ag::Shape{3, 2, 3})); },
      "matmul: batch dimensions must match, got [2,3,2] and [3,2,3]");
}

TEST(MatMul, BoolIsUnsupported) {
  ag::Tensor b = ag::constant({{true}});
  expect_error<ag::InvalidArgumentError>([&] { ag::matmul(b, b); },
                                         "matmul: unsupported dtype bool");
}

}  // namespace
