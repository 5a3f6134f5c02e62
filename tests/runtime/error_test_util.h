// Helpers shared by the runtime tests: checking error messages, making float64
// tensors, central differences.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <ag/ag.h>

namespace ag_test {

// The message of the ag::Error that `f` throws, or "<no error>".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "<no error>";
}

// A float64 tensor of `shape` holding `values` (row-major).
inline ag::Tensor doubles(const std::vector<double>& values, const ag::Shape& shape) {
  ag::Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

// The gradients of the scalar loss(xs) by each of the float64 tensors xs,
// by central differences of step h.
inline std::vector<ag::Tensor> finite_differences(
    const std::function<ag::Tensor(const std::vector<ag::Tensor>&)>& loss,
    const std::vector<ag::Tensor>& xs, double h = 1e-6) {
  std::vector<ag::Tensor> grads;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::vector<double> base = xs[i].to_vector<double>();
    std::vector<double> g(base.size());
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<ag::Tensor> plus = xs, minus = xs;
      std::vector<double> up = base, down = base;
      up[k] += h;
      down[k] -= h;
      plus[i] = doubles(up, xs[i].shape());
      minus[i] = doubles(down, xs[i].shape());
      g[k] = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * h);
    }
    grads.push_back(doubles(g, xs[i].shape()));
  }
  return grads;
}

}  // namespace ag_test

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

// Expects `stmt` to throw `Type` whose message contains `text`.
#define EXPECT_THROW_CONTAINS(stmt, Type, text)                                   \
  do {                                                                            \
    try {                                                                         \
      stmt;                                                                       \
      ADD_FAILURE() << "no exception from " #stmt;                                \
    } catch (const Type& e) {                                                     \
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what(); \
    }                                                                             \
  } while (0)
