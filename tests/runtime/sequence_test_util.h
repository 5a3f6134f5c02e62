// Helpers of the recurrent sequence ops' tests (lstm_sequence_test.cpp,
// rnn_sequence_test.cpp): deterministic values, comparisons to a relative
// tolerance, op counts of a graph, a tape's gradients.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace ag_test {

// Deterministic values in [-scale, scale] of `dtype`.
inline ag::Tensor wavy(const ag::Shape& shape, double scale, double phase,
                       ag::DType dtype = ag::float64) {
  std::vector<double> v(size_t(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(1.3 * double(i) + phase);
  return ag::cast(doubles(v, shape), dtype);
}

inline std::vector<double> values(const ag::Tensor& t) {
  return ag::cast(t, ag::float64).to_vector<double>();
}

// Each element of `actual` within tolerance * (1 + |expected|) of expected's.
inline void expect_near(const ag::Tensor& actual, const ag::Tensor& expected, double tolerance,
                        const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const std::vector<double> a = values(actual), e = values(expected);
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_NEAR(a[k], e[k], tolerance * (1 + std::abs(e[k]))) << what << ", element " << k;
}

inline int count_ops(const ag::Graph& g, const std::string& op) {
  const std::vector<std::string> ops = g.ops();
  return int(std::count(ops.begin(), ops.end(), op));
}

using Loss = std::function<ag::Tensor(const std::vector<ag::Tensor>&)>;

// The gradients of loss(xs) by each of xs, by a tape.
inline std::vector<ag::Tensor> tape_gradients(const Loss& loss, const std::vector<ag::Tensor>& xs) {
  ag::GradientTape tape;
  for (const ag::Tensor& x : xs) tape.watch(x);
  return tape.gradient(loss(xs), xs, ag::UnconnectedGradients::Zero);
}

// Uniform values in [-scale, scale], the same sequence on every run.
struct UniformFloats {
  std::mt19937 rng;
  std::uniform_real_distribution<float> u{-1, 1};
  explicit UniformFloats(unsigned seed) : rng(seed) {}
  std::vector<float> operator()(int64_t n, float scale = 1) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& e : v) e = scale * u(rng);
    return v;
  }
};

// Two engines' results on one problem: each element of `a` within
// 2e-5 * (1 + the largest |b|) of b's.
inline void expect_engines_agree(const std::vector<float>& a, const std::vector<float>& b,
                                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  float largest = 0;
  for (float e : b) largest = std::max(largest, std::abs(e));
  for (size_t k = 0; k < a.size(); ++k)
    ASSERT_NEAR(a[k], b[k], 2e-5f * (1 + largest)) << what << " " << k;
}

}  // namespace ag_test
