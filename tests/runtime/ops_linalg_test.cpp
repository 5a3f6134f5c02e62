#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

TEST(MatMul, RanksMustBeAtLeastTwo) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{3}), ag::zeros(ag::Shape{3, 2})); },
      "matmul: expects two tensors of rank >= 2, got [3] and [3,2]");
}

TEST(MatMul, BatchDimensionsMustBroadcast) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{2, 3, 2}), ag::zeros(ag::Shape{3, 2, 3})); },
      "matmul: batch dimensions must be equal or 1 (they broadcast), got [2,3,2] and [3,2,3]");
}

TEST(MatMul, InnerDimensionsAfterTransposesMustMatch) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::matmul(ag::zeros(ag::Shape{3, 2}), ag::zeros(ag::Shape{2, 3}), false, true); },
      "matmul: inner dimensions must match, got [3,2] and [2,3] (after the transposes)");
}

// Element [i, j] of matrix `batch` of x (row-major [.., rows, cols]), read
// transposed when `transposed`.
template <class T>
T matrix_element(const std::vector<T>& x, int64_t batch, int64_t rows, int64_t cols, int64_t i,
                 int64_t j, bool transposed) {
  return transposed ? x[size_t(batch * rows * cols + j * cols + i)]
                    : x[size_t(batch * rows * cols + i * cols + j)];
}

struct BroadcastCase {
  ag::Shape a, b;
  bool transpose_a, transpose_b;
  ag::Shape out;
};

// [2, 1, m, k] x [3, k, n] and other broadcasts, each operand transposed or
// not, against a loop over the output's batch index.
TYPED_TEST(MatMul, BroadcastBatchDimsAndTransposesAgainstALoop) {
  using T = TypeParam;
  const std::vector<BroadcastCase> cases = {
      {{2, 1, 4, 5}, {3, 5, 6}, false, false, {2, 3, 4, 6}},
      {{2, 1, 5, 4}, {3, 5, 6}, true, false, {2, 3, 4, 6}},
      {{2, 1, 4, 5}, {3, 6, 5}, false, true, {2, 3, 4, 6}},
      {{1, 5, 4}, {2, 6, 5}, true, true, {2, 4, 6}},
      {{3, 4, 5}, {5, 6}, false, false, {3, 4, 6}},
      {{3, 4, 5}, {6, 5}, false, true, {3, 4, 6}},
      {{4, 5}, {2, 5, 6}, false, false, {2, 4, 6}},
      {{3, 2, 2}, {3, 2, 2}, true, true, {3, 2, 2}},
  };
  for (const BroadcastCase& c : cases) {
    ag::Tensor a = ag::random_uniform(c.a, -20, 20, ag::dtype_v<T>, 31);
    ag::Tensor b = ag::random_uniform(c.b, -20, 20, ag::dtype_v<T>, 32);
    ag::Tensor got = ag::matmul(a, b, c.transpose_a, c.transpose_b);
    ASSERT_EQ(got.shape(), c.out) << c.a.to_string() << " x " << c.b.to_string();
    const int ra = c.a.rank(), rb = c.b.rank(), ro = c.out.rank();
    const int64_t m = c.out[ro - 2], n = c.out[ro - 1];
    const int64_t k = c.transpose_a ? c.a[ra - 2] : c.a[ra - 1];
    const std::vector<T> av = a.to_vector<T>(), bv = b.to_vector<T>(), cv = values<T>(got);
    const int64_t batches = c.out.num_elements() / (m * n);
    for (int64_t batch = 0; batch < batches; ++batch) {
      // The operands' batch entries: the output's batch index, dims of 1 read at 0.
      int64_t rest = batch, a_batch = 0, b_batch = 0, a_step = 1, b_step = 1;
      for (int d = ro - 3; d >= 0; --d) {
        const int64_t index = rest % c.out[d];
        rest /= c.out[d];
        const int da = d - (ro - ra), db = d - (ro - rb);
        if (da >= 0) {
          a_batch += (c.a[da] == 1 ? 0 : index) * a_step;
          a_step *= c.a[da];
        }
        if (db >= 0) {
          b_batch += (c.b[db] == 1 ? 0 : index) * b_step;
          b_step *= c.b[db];
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (int64_t p = 0; p < k; ++p) {
            want +=
                double(matrix_element(av, a_batch, c.a[ra - 2], c.a[ra - 1], i, p, c.transpose_a)) *
                double(matrix_element(bv, b_batch, c.b[rb - 2], c.b[rb - 1], p, j, c.transpose_b));
          }
          ASSERT_NEAR(double(cv[size_t((batch * m + i) * n + j)]), want, 1e-3)
              << c.a.to_string() << " x " << c.b.to_string() << " at batch " << batch;
        }
      }
    }
  }
}

// Batch dims unknown while tracing broadcast when the graph runs; the
// gradient sums over them there too.
TEST(MatMul, BroadcastOfDimsUnknownWhileTracing) {
  auto product_and_gradients = [](const ag::Tensor& a, const ag::Tensor& b) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(a);
    tape.watch(b);
    ag::Tensor c = ag::matmul(a, b, false, true);
    return std::vector<ag::Tensor>{c, tape.gradient(ag::reduce_sum(c), a),
                                   tape.gradient(ag::reduce_sum(c), b)};
  };
  auto traced = ag::function(product_and_gradients,
                             {.input_signature = std::vector<ag::TensorSpec>{
                                  ag::TensorSpec({ag::kUnknownDim, 1, 3, 4}, ag::float64),
                                  ag::TensorSpec({ag::kUnknownDim, 5, 4}, ag::float64)}});
  ag::Tensor a = ag::random_uniform(ag::Shape{2, 1, 3, 4}, -1, 1, ag::float64, 61);
  ag::Tensor b = ag::random_uniform(ag::Shape{3, 5, 4}, -1, 1, ag::float64, 62);
  const std::vector<ag::Tensor> graph = traced(a, b), eager = product_and_gradients(a, b);
  ASSERT_EQ(graph.size(), 3u);
  EXPECT_EQ(graph[0].shape(), (ag::Shape{2, 3, 3, 5}));
  EXPECT_EQ(graph[1].shape(), a.shape());
  EXPECT_EQ(graph[2].shape(), b.shape());
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<double> g = graph[i].to_vector<double>(), e = eager[i].to_vector<double>();
    ASSERT_EQ(g.size(), e.size());
    for (size_t j = 0; j < g.size(); ++j) EXPECT_NEAR(g[j], e[j], 1e-12) << i << ", " << j;
  }
}

TEST(MatMul, TransposedOperandsOfALargeProduct) {
  ag::Tensor a = ag::random_uniform(ag::Shape{40, 30}, -1, 1, ag::float32, 41);
  ag::Tensor b = ag::random_uniform(ag::Shape{50, 40}, -1, 1, ag::float32, 42);
  const std::vector<float> got = ag::matmul(a, b, true, true).to_vector<float>();
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  ASSERT_EQ(got.size(), size_t(30 * 50));
  for (int64_t i = 0; i < 30; ++i) {
    for (int64_t j = 0; j < 50; ++j) {
      double want = 0;
      for (int64_t p = 0; p < 40; ++p)
        want += double(av[size_t(p * 30 + i)]) * bv[size_t(j * 40 + p)];
      ASSERT_NEAR(got[size_t(i * 50 + j)], want, 1e-4) << i << "," << j;
    }
  }
}

TEST(MatMul, BoolIsUnsupported) {
  ag::Tensor b = ag::constant({{true}});
  expect_error<ag::InvalidArgumentError>([&] { ag::matmul(b, b); },
                                         "matmul: unsupported dtype bool");
}

// ---- linspace ------------------------------------------------------------------

TEST(Linspace, EvenlySpacedWithBothEnds) {
  ag::Tensor x = ag::linspace(ag::Tensor(1.0), ag::Tensor(2.0), 5);
  EXPECT_EQ(x.shape(), (ag::Shape{5}));
  EXPECT_EQ(values<float>(x), (std::vector<float>{1.0f, 1.25f, 1.5f, 1.75f, 2.0f}));
  // As TensorFlow: start + i * (stop - start) / (num - 1), then stop exactly.
  const double start = 0.1, stop = 0.7;
  ag::Tensor y = ag::linspace(ag::fill({}, start, ag::float64), ag::fill({}, stop, ag::float64), 7);
  std::vector<double> want;
  for (int i = 0; i < 6; ++i) want.push_back(start + double(i) * ((stop - start) / 6));
  want.push_back(stop);
  EXPECT_EQ(values<double>(y), want);
  EXPECT_EQ(values<float>(ag::linspace(ag::Tensor(3.0), ag::Tensor(4.0), 1)),
            (std::vector<float>{3.0f}));
}

TEST(Linspace, BroadcastStartAndStopAlongAnAxis) {
  ag::Tensor start = ag::constant({0.0f, 10.0f});
  ag::Tensor x = ag::linspace(start, ag::Tensor(20.0), 3, -1);
  EXPECT_EQ(x.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(values<float>(x), (std::vector<float>{0, 10, 20, 10, 15, 20}));
  EXPECT_EQ(values<float>(ag::linspace(start, ag::Tensor(20.0), 3)),
            (std::vector<float>{0, 10, 10, 15, 20, 20}));
}

TEST(Linspace, Errors) {
  expect_error<ag::InvalidArgumentError>([] { ag::linspace(ag::Tensor(0.0), ag::Tensor(1.0), 0); },
                                         "linspace: num must be at least 1, got 0");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::linspace(ag::Tensor(0), ag::Tensor(1), 3); },
      "linspace: start and stop must be of one floating dtype (float32 or float64), got int32 "
      "and int32");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::linspace(ag::Tensor(0.0), ag::Tensor(1.0), 3, 2); },
      "linspace: axis 2 is out of range for a result of rank 1");
}

// ---- norm ----------------------------------------------------------------------

// A float64 tensor (ag::constant makes C++ doubles float32, as TensorFlow).
ag::Tensor doubles(const std::vector<double>& v, const ag::Shape& shape) {
  ag::Tensor t = ag::empty(shape, ag::float64);
  std::copy(v.begin(), v.end(), t.mutable_data<double>());
  return t;
}

TEST(Norm, VectorNormsAgainstLoops) {
  const std::vector<double> v = {3, -4, 1.5, 0, -2};
  ag::Tensor x = doubles(v, ag::Shape{5});
  double squares = 0, abs_sum = 0, abs_max = 0, cubes = 0;
  for (double e : v) {
    squares += e * e;
    abs_sum += std::abs(e);
    abs_max = std::max(abs_max, std::abs(e));
    cubes += std::pow(std::abs(e), 3);
  }
  EXPECT_DOUBLE_EQ(ag::norm(x).item<double>(), std::sqrt(squares));
  EXPECT_DOUBLE_EQ(ag::norm(x, 2).item<double>(), std::sqrt(squares));
  EXPECT_DOUBLE_EQ(ag::norm(x, 1).item<double>(), abs_sum);
  EXPECT_DOUBLE_EQ(ag::norm(x, INFINITY).item<double>(), abs_max);
  EXPECT_NEAR(ag::norm(x, 3).item<double>(), std::cbrt(cubes), 1e-12);
}

TEST(Norm, AlongAxesWithKeepdims) {
  ag::Tensor x = ag::constant({{1.0f, -2.0f, 2.0f}, {-3.0f, 0.0f, 4.0f}});
  EXPECT_EQ(values<float>(ag::norm(x, "euclidean", {1})), (std::vector<float>{3, 5}));
  ag::Tensor kept = ag::norm(x, 1, {0}, true);
  EXPECT_EQ(kept.shape(), (ag::Shape{1, 3}));
  EXPECT_EQ(values<float>(kept), (std::vector<float>{4, 2, 6}));
  // No axis: x as one vector (the Frobenius norm of a matrix).
  EXPECT_FLOAT_EQ(ag::norm(x).item<float>(), std::sqrt(34.0f));
}

TEST(Norm, MatrixNormsAgainstLoops) {
  // Two 2x3 matrices: 'fro', 1 (largest column sum of |x|), inf (largest row sum).
  const std::vector<double> v = {1, -2, 3, -4, 5, -6, 0.5, 0, -1, 2, 2, 2};
  ag::Tensor x = doubles(v, ag::Shape{2, 2, 3});
  std::vector<double> fro, one, inf;
  for (int b = 0; b < 2; ++b) {
    double squares = 0, best_col = 0, best_row = 0;
    for (int j = 0; j < 3; ++j) {
      double col = 0;
      for (int i = 0; i < 2; ++i) col += std::abs(v[size_t(b * 6 + i * 3 + j)]);
      best_col = std::max(best_col, col);
    }
    for (int i = 0; i < 2; ++i) {
      double row = 0;
      for (int j = 0; j < 3; ++j) {
        const double e = v[size_t(b * 6 + i * 3 + j)];
        row += std::abs(e);
        squares += e * e;
      }
      best_row = std::max(best_row, row);
    }
    fro.push_back(std::sqrt(squares));
    one.push_back(best_col);
    inf.push_back(best_row);
  }
  EXPECT_EQ(values<double>(ag::norm(x, "fro", {1, 2})), fro);
  EXPECT_EQ(values<double>(ag::norm(x, "euclidean", {-2, -1})), fro);
  EXPECT_EQ(values<double>(ag::norm(x, 1, {1, 2})), one);
  EXPECT_EQ(values<double>(ag::norm(x, INFINITY, {1, 2})), inf);
  EXPECT_EQ(ag::norm(x, 1, {1, 2}, true).shape(), (ag::Shape{2, 1, 1}));
  // Axes given in the other order: rows and columns swap.
  EXPECT_EQ(values<double>(ag::norm(x, 1, {2, 1})), inf);
}

// TensorFlow's gradient at zero: NaN for the euclidean norm, 0 for ord 1.
TEST(Norm, GradientAtZeroIsTensorFlows) {
  ag::Tensor x = ag::zeros(ag::Shape{3}, ag::float64);
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  ag::Tensor euclidean = ag::norm(x), l1 = ag::norm(x, 1);
  for (double g : tape.gradient(euclidean, x).to_vector<double>()) EXPECT_TRUE(std::isnan(g));
  EXPECT_EQ(tape.gradient(l1, x).to_vector<double>(), (std::vector<double>{0, 0, 0}));
}

TEST(Norm, Errors) {
  ag::Tensor x = ag::zeros(ag::Shape{2, 3});
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, "max"); },
                                         "norm: ord must be 'euclidean', 'fro' or a number");
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, -1, {1}); },
                                         "norm: ord must be 'euclidean', 'fro', inf or a number "
                                         "> 0, got -1");
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, "fro", {1}); },
                                         "norm: 'fro' is a matrix norm");
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, 3, {0, 1}); },
                                         "norm: matrix norms are of ord 'euclidean', 'fro', 1, 2 "
                                         "or inf, got 3");
  expect_error<ag::UnimplementedError>([&] { ag::norm(x, 2, {0, 1}); }, "norm: ord 2 of a matrix");
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, "euclidean", {2}); },
                                         "norm: axis 2 is out of range for x of rank 2");
  expect_error<ag::InvalidArgumentError>([&] { ag::norm(x, "euclidean", {1, -1}); },
                                         "norm: the two axes of a matrix norm are one");
  expect_error<ag::InvalidArgumentError>([] { ag::norm(ag::constant({1, 2})); },
                                         "norm: x must be float32 or float64, got int32");
}

// ---- dropout -------------------------------------------------------------------

TEST(Dropout, KeepsAndScalesWithAReproducibleMask) {
  ag::Tensor x = ag::random_uniform(ag::Shape{1000}, 1, 2, ag::float32, 51);
  ag::set_random_seed(7);
  const std::vector<float> first = ag::dropout(x, 0.25, 99).to_vector<float>();
  const std::vector<float> xv = x.to_vector<float>();
  int kept = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    if (first[i] != 0) {
      ++kept;
      EXPECT_EQ(first[i], xv[i] * (1.0f / 0.75f)) << i;
    }
  }
  EXPECT_GT(kept, 700);
  EXPECT_LT(kept, 800);
  // The seed's sequence moves on; set_random_seed restarts it.
  EXPECT_NE(ag::dropout(x, 0.25, 99).to_vector<float>(), first);
  ag::set_random_seed(7);
  EXPECT_EQ(ag::dropout(x, 0.25, 99).to_vector<float>(), first);
  // The first mask of a seed is the same in a graph.
  ag::set_random_seed(7);
  auto traced = ag::function([](const ag::Tensor& t) { return ag::dropout(t, 0.25, 99); });
  EXPECT_EQ(traced(x).to_vector<float>(), first);
}

TEST(Dropout, NotTrainingOrRateZeroIsTheIdentity) {
  ag::Tensor x = ag::constant({1.0f, -2.0f, 3.0f});
  EXPECT_EQ(ag::dropout(x, 0.5, 1, false).to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(ag::dropout(x, 0.0, 1).to_vector<float>(), x.to_vector<float>());
}

TEST(Dropout, GradientIsTheSameMask) {
  ag::Tensor x = ag::random_uniform(ag::Shape{200}, 1, 2, ag::float64, 52);
  ag::GradientTape tape;
  tape.watch(x);
  ag::Tensor y = ag::dropout(x, 0.5, 5);
  const std::vector<double> grad = tape.gradient(ag::reduce_sum(y), x).to_vector<double>();
  const std::vector<double> yv = y.to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_EQ(grad[i], yv[i] == 0 ? 0.0 : 2.0) << i;
}

TEST(Dropout, Errors) {
  ag::Tensor x = ag::zeros(ag::Shape{2});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::dropout(x, 1.0); },
      "dropout: rate must be in [0, 1) (the probability of dropping an element), got 1");
  expect_error<ag::InvalidArgumentError>([&] { ag::dropout(x, -0.1); },
                                         "dropout: rate must be in [0, 1) (the probability of "
                                         "dropping an element), got -0.1");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::dropout(ag::constant({1, 2}), 0.5); },
      "dropout: x must be float32 or float64 (it is scaled by 1 / (1 - rate)), got int32");
}

}  // namespace
