// Helpers shared by the layer tests: values to feed layers, comparisons,
// gradients against central finite differences, eager against traced.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace layers_test {

using Vec = std::vector<double>;

// Distinct, smoothly varying values (no ties for a max pool to choose from).
inline Vec wavy_values(int64_t n, double scale, double phase) {
  Vec v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = scale * std::sin(1.3 * double(i) + phase) + 1e-3 * double(i);
  return v;
}

inline ag::Tensor wavy(const ag::Shape& shape, double scale = 1.0, double phase = 0.3,
                       ag::DType dtype = ag::float32) {
  Vec v = wavy_values(shape.num_elements(), scale, phase);
  if (dtype == ag::float64) return ag_test::doubles(v, shape);
  return ag::constant(std::vector<float>(v.begin(), v.end()), shape);
}

inline Vec as_doubles(const ag::Tensor& t) {
  return t.to_vector<double>();
}

inline void expect_near(const Vec& actual, const Vec& expected, double tolerance,
                        const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k)
    EXPECT_NEAR(actual[k], expected[k], tolerance * (1 + std::abs(expected[k])))
        << what << ", element " << k;
}

// Bit-for-bit equality of two tensors' shapes and values.
inline void expect_same(const ag::Tensor& actual, const ag::Tensor& expected,
                        const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  EXPECT_EQ(as_doubles(actual), as_doubles(expected)) << what;
}

// The gradients of sum(sin(layer(x))) by x and by each trainable variable
// of the layer, from a tape eagerly and inside a traced function, against
// central finite differences. x and the layer's weights are float64.
inline void check_gradients(ag::layers::Layer& layer, const ag::Tensor& x, bool training = false,
                            double tolerance = 1e-6) {
  auto loss = [&](const ag::Tensor& in) { return ag::reduce_sum(ag::sin(layer(in, training))); };
  loss(x);  // builds the layer
  const std::vector<ag::Variable> vars = layer.trainable_variables();
  auto grads = [&](const ag::Tensor& in) {
    ag::GradientTape tape(/*persistent=*/true);
    tape.watch(in);
    ag::Tensor y = loss(in);
    std::vector<ag::Tensor> sources_grads = tape.gradient(y, vars);
    std::vector<ag::Tensor> out = {tape.gradient(y, std::vector<ag::Tensor>{in})[0]};
    out.insert(out.end(), sources_grads.begin(), sources_grads.end());
    return out;
  };
  auto traced = ag::function([&](ag::Tensor in) { return grads(in); });
  // Training may change state (BatchNormalization's moving statistics): the
  // finite differences then use that state, so every run starts from it.
  std::vector<ag::Tensor> saved;
  for (const ag::Variable& v : layer.non_trainable_variables()) saved.push_back(v.read());
  auto restore = [&] {
    auto nt = layer.non_trainable_variables();
    for (size_t i = 0; i < nt.size(); ++i) nt[i].assign(saved[i]);
  };
  restore();
  const std::vector<ag::Tensor> eager = grads(x);
  restore();
  const std::vector<ag::Tensor> graph = traced(x);
  ASSERT_EQ(eager.size(), vars.size() + 1);
  ASSERT_EQ(graph.size(), vars.size() + 1);

  const double h = 1e-6;
  auto value_at = [&](const ag::Tensor& in) {
    restore();
    return loss(in).item<double>();
  };
  for (size_t i = 0; i <= vars.size(); ++i) {
    const std::string which = i == 0 ? "the input" : vars[i - 1].name();
    const Vec base = as_doubles(i == 0 ? x : vars[i - 1].read());
    const ag::Shape shape = i == 0 ? x.shape() : vars[i - 1].shape();
    Vec expected(base.size());
    for (size_t k = 0; k < base.size(); ++k) {
      Vec up = base, down = base;
      up[k] += h;
      down[k] -= h;
      if (i == 0) {
        expected[k] =
            (value_at(ag_test::doubles(up, shape)) - value_at(ag_test::doubles(down, shape))) /
            (2 * h);
      } else {
        ag::Variable v = vars[i - 1];
        v.assign(ag_test::doubles(up, shape));
        double value_up = value_at(x);
        v.assign(ag_test::doubles(down, shape));
        double value_down = value_at(x);
        v.assign(ag_test::doubles(base, shape));
        expected[k] = (value_up - value_down) / (2 * h);
      }
    }
    expect_near(as_doubles(eager[i]), expected, tolerance, which + ": eager vs finite differences");
    expect_near(as_doubles(graph[i]), as_doubles(eager[i]), 1e-12, which + ": traced vs eager");
  }
  restore();
}

}  // namespace layers_test
