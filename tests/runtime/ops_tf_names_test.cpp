// TensorFlow's functions of tf.signal, tf.nn, tf.linalg and tf.boolean_mask
// (ag::signal::hann_window, hamming_window, ag::nn::local_response_normalization,
// ag::linalg::det, ag::boolean_mask): against values computed here by other
// means (their formulas in loops, the Laplace expansion), eagerly and in a
// graph, their gradients against central finite differences, and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag::TensorSpec;
using ag_test::expect_error;
using Tensors = std::vector<Tensor>;

Tensor doubles(const std::vector<double>& values, const Shape& shape) {
  Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

void expect_values(const Tensor& t, const std::vector<double>& expected, double tolerance,
                   const std::string& what) {
  const std::vector<double> got = ag::cast(t, ag::float64).to_vector<double>();
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tolerance * (1 + std::abs(expected[i])))
        << what << ", element " << i;
}

// f's gradient (of sum(f(x) * w), w fixed) by a tape, eagerly and in a
// graph, against central differences.
void expect_gradient_matches_finite_differences(const std::function<Tensor(const Tensor&)>& f,
                                                const Tensor& x, double tolerance) {
  const Tensor y = f(x);
  std::vector<double> weights(size_t(y.num_elements()));
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.5 + 0.25 * double(i % 5);
  const Tensor w = doubles(weights, y.shape());
  auto gradient = [&f](const Tensor& x, const Tensor& w) {
    ag::GradientTape tape;
    tape.watch(x);
    return tape.gradient(ag::reduce_sum(f(x) * w), Tensors{x})[0];
  };
  const Tensor eager = gradient(x, w);
  const Tensor graph = ag::function(gradient)(x, w);
  const double h = 1e-6;
  const std::vector<double> at = x.to_vector<double>();
  std::vector<double> expected(at.size());
  for (size_t k = 0; k < at.size(); ++k) {
    std::vector<double> plus = at, minus = at;
    plus[k] += h;
    minus[k] -= h;
    const double up = ag::reduce_sum(f(doubles(plus, x.shape())) * w).item<double>();
    const double down = ag::reduce_sum(f(doubles(minus, x.shape())) * w).item<double>();
    expected[k] = (up - down) / (2 * h);
  }
  expect_values(eager, expected, tolerance, "eager gradient");
  expect_values(graph, eager.to_vector<double>(), 1e-12, "graph gradient");
}

// ---- tf.signal windows --------------------------------------------------------------

// a - b cos(2 pi n / N) in double, N as TensorFlow chooses it.
std::vector<double> raised_cosine(int64_t length, bool periodic, double a, double b) {
  if (length == 1) return {1.0};
  const double n_total = double(length - 1 + (periodic && length % 2 == 0 ? 1 : 0));
  std::vector<double> w;
  for (int64_t n = 0; n < length; ++n)
    w.push_back(a - b * std::cos(2 * std::numbers::pi * double(n) / n_total));
  return w;
}

TEST(SignalWindows, HannAndHammingFollowTensorFlowsRaisedCosines) {
  for (int64_t length : {0, 1, 5, 6}) {
    for (bool periodic : {true, false}) {
      const std::string what =
          "length " + std::to_string(length) + (periodic ? " periodic" : " symmetric");
      const Tensor hann = ag::signal::hann_window(length, periodic);
      EXPECT_EQ(hann.dtype(), ag::float32);
      EXPECT_EQ(hann.shape(), (Shape{length}));
      expect_values(hann, raised_cosine(length, periodic, 0.5, 0.5), 1e-6, "hann " + what);
      expect_values(ag::signal::hamming_window(length, periodic, ag::float64),
                    raised_cosine(length, periodic, 0.54, 0.46), 1e-12, "hamming " + what);
    }
  }
  // In a graph: the same values, a constant.
  auto f = ag::function([] { return ag::signal::hann_window(6); });
  EXPECT_EQ(f().to_vector<float>(), ag::signal::hann_window(6).to_vector<float>());
}

TEST(SignalWindows, ErrorsNameTheWindow) {
  expect_error<ag::InvalidArgumentError>([] { ag::signal::hann_window(4, true, ag::int32); },
                                         "hann_window: dtype must be a floating type, got int32");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::signal::hamming_window(-2); },
      "hamming_window: window_length must not be negative, got -2");
}

// ---- tf.nn.local_response_normalization -------------------------------------------

// The NHWC formula in loops over a [1, 1, rows, depth] input.
std::vector<double> lrn_expected(const std::vector<double>& x, int64_t rows, int64_t depth,
                                 int64_t radius, double bias, double alpha, double beta) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = 0; d < depth; ++d) {
      double sum = 0;
      for (int64_t k = std::max<int64_t>(0, d - radius); k <= std::min(depth - 1, d + radius); ++k)
        sum += x[size_t(r * depth + k)] * x[size_t(r * depth + k)];
      out.push_back(x[size_t(r * depth + d)] / std::pow(bias + alpha * sum, beta));
    }
  }
  return out;
}

TEST(LocalResponseNormalization, SumsTheSquaresOfTheDepthWindow) {
  std::vector<double> values;
  for (int i = 0; i < 14; ++i) values.push_back(0.3 * double(i % 5) - 0.5 + 0.1 * i);
  const Tensor x = doubles(values, {1, 1, 2, 7});
  const Tensor eager = ag::nn::local_response_normalization(x, 2, 1.5, 0.3, 0.75);
  expect_values(eager, lrn_expected(values, 2, 7, 2, 1.5, 0.3, 0.75), 1e-12, "eager");
  // TensorFlow's defaults: radius 5, bias 1, alpha 1, beta 0.5.
  expect_values(ag::nn::local_response_normalization(ag::cast(x, ag::float32)),
                lrn_expected(values, 2, 7, 5, 1, 1, 0.5), 1e-6, "defaults");
  auto f = ag::function(
      [](const Tensor& x) { return ag::nn::local_response_normalization(x, 2, 1.5, 0.3, 0.75); });
  f.get_concrete_function(TensorSpec({ag::kUnknownDim, 1, 2, 7}, ag::float64));
  expect_values(f(x), eager.to_vector<double>(), 1e-12, "graph");
  expect_gradient_matches_finite_differences(
      [](const Tensor& x) { return ag::nn::local_response_normalization(x, 1, 1.5, 0.3, 0.75); }, x,
      1e-6);
}

TEST(LocalResponseNormalization, TakesFourDimensionalFloatingInputs) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::nn::local_response_normalization(ag::ones({2, 3}, ag::float32)); },
      "local_response_normalization: input must be 4-D [batch, height, width, depth], got "
      "shape [2,3]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::nn::local_response_normalization(ag::ones({1, 1, 1, 3}, ag::int32)); },
      "local_response_normalization: input must be floating, got int32");
}

// ---- tf.linalg.det ------------------------------------------------------------------

// The Laplace expansion along the first row of the n x n matrix m.
double laplace(const std::vector<double>& m, int64_t n) {
  if (n == 1) return m[0];
  double sum = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < n; ++r)
      for (int64_t c = 0; c < n; ++c)
        if (c != j) minor.push_back(m[size_t(r * n + c)]);
    sum += (j % 2 == 0 ? 1 : -1) * m[size_t(j)] * laplace(minor, n - 1);
  }
  return sum;
}

// Entries with no exploitable structure: sines of their positions.
std::vector<double> matrix_entries(int64_t count, int salt) {
  std::vector<double> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(std::sin(double(i * 7 + salt) * 0.9) * 2);
  return v;
}

TEST(LinalgDet, MatchesTheLaplaceExpansionEagerlyAndInAGraph) {
  for (int64_t n : {1, 2, 3, 5}) {
    const std::vector<double> a = matrix_entries(n * n, 1), b = matrix_entries(n * n, 4);
    std::vector<double> both = a;
    both.insert(both.end(), b.begin(), b.end());
    const Tensor x = doubles(both, {2, n, n});
    const std::vector<double> expected = {laplace(a, n), laplace(b, n)};
    const std::string what = std::to_string(n) + " x " + std::to_string(n);
    const Tensor eager = ag::linalg::det(x);
    EXPECT_EQ(eager.shape(), (Shape{2})) << what;
    expect_values(eager, expected, 1e-10, what);
    auto f = ag::function([](const Tensor& x) { return ag::linalg::det(x); });
    f.get_concrete_function(TensorSpec({ag::kUnknownDim, n, n}, ag::float64));
    expect_values(f(x), eager.to_vector<double>(), 1e-12, what + " in a graph");
  }
  // Swapped rows flip the sign; a singular matrix gives 0; no rows give 1.
  expect_values(ag::linalg::det(doubles({0, 1, 1, 0}, {2, 2})), {-1}, 0, "swap");
  expect_values(ag::linalg::det(doubles({1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3})), {0}, 0, "singular");
  expect_values(ag::linalg::det(ag::zeros({3, 0, 0}, ag::float32)), {1, 1, 1}, 0, "empty");
}

// d det / dA = det * A^-T, through the elimination's ops.
TEST(LinalgDet, GradientMatchesFiniteDifferences) {
  expect_gradient_matches_finite_differences([](const Tensor& x) { return ag::linalg::det(x); },
                                             doubles(matrix_entries(2 * 4 * 4, 3), {2, 4, 4}),
                                             1e-6);
}

TEST(LinalgDet, TakesSquareFloatingMatrices) {
  expect_error<ag::InvalidArgumentError>([] { ag::linalg::det(ag::ones({2, 3}, ag::float32)); },
                                         "det: input must be square matrices [..., M, M], got "
                                         "shape [2,3]");
  expect_error<ag::InvalidArgumentError>([] { ag::linalg::det(ag::ones({2, 2}, ag::int32)); },
                                         "det: input must be floating, got int32");
}

// ---- tf.boolean_mask ----------------------------------------------------------------

TEST(BooleanMask, KeepsTheSlicesWhereTheMaskIsTrue) {
  const Tensor x = ag::reshape(ag::range(Tensor(0), Tensor(12)), {2, 3, 2});
  const Tensor mask = ag::constant({{true, false, true}, {false, false, true}});
  const Tensor rows = ag::boolean_mask(x, mask);
  EXPECT_EQ(rows.shape(), (Shape{3, 2}));
  EXPECT_EQ(rows.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 4, 5, 10, 11}));
  const Tensor columns = ag::boolean_mask(x, ag::constant({false, true, true}), 1);
  EXPECT_EQ(columns.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(columns.to_vector<int32_t>(), (std::vector<int32_t>{2, 3, 4, 5, 8, 9, 10, 11}));
  EXPECT_EQ(ag::boolean_mask(x, ag::zeros({2}, ag::bool_)).shape(), (Shape{0, 3, 2}));
  // In a graph, the mask's values and x's first dim unknown while tracing:
  // the count of trues is read when it runs.
  auto f = ag::function([](const Tensor& x, const Tensor& m) { return ag::boolean_mask(x, m); });
  auto concrete = f.get_concrete_function(TensorSpec({ag::kUnknownDim, 3, 2}, ag::int32),
                                          TensorSpec({ag::kUnknownDim, 3}, ag::bool_));
  const std::string type = concrete.function_type();
  EXPECT_NE(type.find("-> TensorSpec(shape=(None, 2), dtype=int32)"), std::string::npos) << type;
  EXPECT_EQ(f(x, mask).to_vector<int32_t>(), rows.to_vector<int32_t>());
  EXPECT_EQ(f(x, mask).shape(), (Shape{3, 2}));
}

TEST(BooleanMask, GradientReachesTheKeptElements) {
  const Tensor mask = ag::constant({true, false, true, true});
  expect_gradient_matches_finite_differences(
      [&](const Tensor& x) { return ag::boolean_mask(x, mask, 1) * x[0][0]; },
      doubles(matrix_entries(8, 2), {2, 4}), 1e-6);
}

TEST(BooleanMask, TheMaskMustFitTheTensor) {
  const Tensor x = ag::ones({2, 3}, ag::float32);
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::boolean_mask(x, ag::constant({true, false, true})); },
      "boolean_mask: the mask's shape [3] does not match the tensor's dims from axis 0 (tensor "
      "shape [2,3])");
  expect_error<ag::InvalidArgumentError>([&] { ag::boolean_mask(x, ag::constant({1, 0, 1}), 1); },
                                         "boolean_mask: mask must be bool, got int32");
}

}  // namespace
