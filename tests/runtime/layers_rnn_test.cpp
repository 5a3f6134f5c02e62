// ag::layers::LSTM and GRU against step-by-step references computed by plain
// loops, eager against traced, gradients against finite differences, the
// orthogonal recurrent kernel, and their errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "layers_test_util.h"

namespace {

using ag_test::error_of;
using layers_test::as_doubles;
using layers_test::expect_near;
using layers_test::expect_same;
using layers_test::Vec;
using layers_test::wavy;
namespace L = ag::layers;

double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}

struct Sizes {
  int64_t batch, time, features, units;
};

// row [features] @ m [features, cols] -> [cols].
Vec row_times(const double* row, const Vec& m, int64_t features, int64_t cols) {
  Vec out(size_t(cols), 0.0);
  for (int64_t i = 0; i < features; ++i)
    for (int64_t j = 0; j < cols; ++j) out[size_t(j)] += row[i] * m[size_t(i * cols + j)];
  return out;
}

// Keras's LSTM (gates i, f, c, o) or GRU (z, r, h, reset_after) by loops;
// every step's h, [batch, time, units].
Vec recurrent_reference(bool lstm, const Sizes& s, const Vec& x, const Vec& kernel,
                        const Vec& recurrent, const Vec& bias) {
  const int64_t u = s.units, width = (lstm ? 4 : 3) * u;
  Vec out(size_t(s.batch * s.time * u));
  for (int64_t b = 0; b < s.batch; ++b) {
    Vec h(size_t(u), 0.0), c(size_t(u), 0.0);
    for (int64_t t = 0; t < s.time; ++t) {
      Vec xz = row_times(&x[size_t((b * s.time + t) * s.features)], kernel, s.features, width);
      Vec hz = row_times(h.data(), recurrent, u, width);
      for (int64_t j = 0; j < width; ++j) {
        xz[size_t(j)] += bias[size_t(j)];
        if (!lstm) hz[size_t(j)] += bias[size_t(width + j)];  // the recurrent bias row
      }
      for (int64_t k = 0; k < u; ++k) {
        const size_t q = size_t(k);
        if (lstm) {
          double i = sigmoid(xz[q] + hz[q]), f = sigmoid(xz[q + u] + hz[q + u]);
          double g = std::tanh(xz[q + 2 * u] + hz[q + 2 * u]);
          double o = sigmoid(xz[q + 3 * u] + hz[q + 3 * u]);
          c[q] = f * c[q] + i * g;
          h[q] = o * std::tanh(c[q]);
        } else {
          double z = sigmoid(xz[q] + hz[q]), r = sigmoid(xz[q + u] + hz[q + u]);
          double hh = std::tanh(xz[q + 2 * u] + r * hz[q + 2 * u]);
          h[q] = z * h[q] + (1 - z) * hh;
        }
      }
      for (int64_t k = 0; k < u; ++k) out[size_t((b * s.time + t) * u + k)] = h[size_t(k)];
    }
  }
  return out;
}

void check_recurrent(bool lstm, bool return_sequences) {
  const Sizes s{2, 4, 3, 5};
  L::RecurrentOptions options{.bias_initializer = {"uniform", 3},
                              .return_sequences = return_sequences};
  L::LSTM lstm_layer(s.units, options);
  L::GRU gru_layer(s.units, options);
  L::Layer& layer = lstm ? static_cast<L::Layer&>(lstm_layer) : gru_layer;
  ag::Tensor x = wavy({s.batch, s.time, s.features}, 1.0, 0.2);
  ag::Tensor y = layer(x);
  auto vars = layer.variables();
  ASSERT_EQ(vars.size(), 3u);
  const int64_t width = (lstm ? 4 : 3) * s.units;
  EXPECT_EQ(vars[0].shape(), ag::Shape({s.features, width}));
  EXPECT_EQ(vars[1].shape(), ag::Shape({s.units, width}));
  EXPECT_EQ(vars[2].shape(), lstm ? ag::Shape({width}) : ag::Shape({2, width}));
  Vec all = recurrent_reference(lstm, s, as_doubles(x), as_doubles(vars[0].read()),
                                as_doubles(vars[1].read()), as_doubles(vars[2].read()));
  Vec expected = all;
  if (!return_sequences) {
    expected.clear();
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t k = 0; k < s.units; ++k)
        expected.push_back(all[size_t((b * s.time + s.time - 1) * s.units + k)]);
  }
  ASSERT_EQ(y.shape(), return_sequences ? ag::Shape({s.batch, s.time, s.units})
                                        : ag::Shape({s.batch, s.units}));
  const std::string what = std::string(lstm ? "LSTM" : "GRU") +
                           (return_sequences ? " return_sequences" : " last output");
  expect_near(as_doubles(y), expected, 1e-5, what);
  auto f = ag::function([&](ag::Tensor in) { return layer(in); });
  expect_same(f(x), y, what + ": traced vs eager");
}

TEST(LayersLSTM, MatchesLoopsEagerAndTraced) {
  check_recurrent(true, false);
  check_recurrent(true, true);
}

TEST(LayersGRU, MatchesLoopsEagerAndTraced) {
  check_recurrent(false, false);
  check_recurrent(false, true);
}

TEST(LayersLSTM, ForgetBiasStartsAtOneAndRecurrentKernelIsOrthogonal) {
  L::LSTM lstm(3);
  lstm(wavy({1, 2, 4}));
  EXPECT_EQ(as_doubles(lstm.variables()[2].read()), Vec({0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0}));
  // [3, 12]: orthonormal rows, R R^T = I.
  Vec r = as_doubles(lstm.variables()[1].read());
  for (size_t a = 0; a < 3; ++a)
    for (size_t b = 0; b < 3; ++b) {
      double dot = 0;
      for (size_t k = 0; k < 12; ++k) dot += r[a * 12 + k] * r[b * 12 + k];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-6) << "rows " << a << ", " << b;
    }
}

TEST(LayersLSTM, GoBackwardsReadsTheSequenceFromItsEnd) {
  L::LSTM backwards(2, {.kernel_initializer = {"glorot_uniform", 4},
                        .recurrent_initializer = {"orthogonal", 5},
                        .go_backwards = true});
  L::LSTM forwards(
      2, {.kernel_initializer = {"glorot_uniform", 4}, .recurrent_initializer = {"orthogonal", 5}});
  ag::Tensor x = wavy({2, 3, 2});
  expect_near(as_doubles(backwards(x)), as_doubles(forwards(ag::reverse(x, {1}))), 1e-6,
              "go_backwards");
}

TEST(LayersRecurrent, GradientsMatchFiniteDifferences) {
  L::LSTM lstm(2, {.bias_initializer = {"uniform", 1}, .return_sequences = true});
  layers_test::check_gradients(lstm, wavy({2, 3, 2}, 1.0, 0.4, ag::float64), false, 1e-5);
  L::GRU gru(2, {.bias_initializer = {"uniform", 2}});
  layers_test::check_gradients(gru, wavy({1, 3, 2}, 1.0, 0.6, ag::float64), false, 1e-5);
}

TEST(LayersRecurrent, ErrorsSayWhatWhereAndWhatToDo) {
  L::GRU gru(4);
  std::string rank = error_of([&] { gru(ag::ones({2, 3})); });
  EXPECT_CONTAINS(rank, "(GRU) called at layers_rnn_test.cpp:");
  EXPECT_CONTAINS(rank, "expected an input of rank 3, but got one of shape (2, 3)");
  gru(ag::ones({2, 3, 5}));
  EXPECT_CONTAINS(error_of([&] { gru(ag::ones({2, 3, 6})); }),
                  "built for inputs with 5 at axis -1");
  EXPECT_CONTAINS(error_of([] { L::LSTM(3, {.activation = "nope"}); }),
                  "unknown activation 'nope'");
}

}  // namespace
