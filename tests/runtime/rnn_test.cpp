// Recurrent cells and dynamic_rnn (ag/rnn.h): each cell against the same
// step written with loops over doubles; dynamic_rnn with sequence lengths,
// forwards and in reverse, against those steps run per sequence; eager
// against traced (one While node); gradients of an LSTM and a GRU over 3 steps
// against central finite differences, eagerly and traced; and the errors of
// wrong weights, states and lengths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag_test::doubles;
using Vec = std::vector<double>;
using Tensors = std::vector<Tensor>;

constexpr int64_t kBatch = 3, kIn = 2, kUnits = 4;

// Deterministic values in [-scale, scale].
Vec wavy_values(int64_t n, double scale, double phase) {
  Vec v(size_t(n), 0.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(1.3 * double(i) + phase);
  return v;
}

Tensor wavy(const ag::Shape& shape, double scale, double phase) {
  return doubles(wavy_values(shape.num_elements(), scale, phase), shape);
}

Vec values(const Tensor& t) {
  return t.to_vector<double>();
}

void expect_near(const Vec& actual, const Vec& expected, double tolerance,
                 const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k)
    EXPECT_NEAR(actual[k], expected[k], tolerance * (1 + std::abs(expected[k])))
        << what << ", element " << k;
}

// ---- The reference: one step on rows of doubles -------------------------------

double sigmoid(double v) {
  return 1 / (1 + std::exp(-v));
}

// x [batch, k] times w [k, n], row-major.
Vec times(const Vec& x, const Vec& w, int64_t batch, int64_t k, int64_t n) {
  Vec out(size_t(batch * n), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < k; ++i)
        out[size_t(b * n + j)] += x[size_t(b * k + i)] * w[size_t(i * n + j)];
  return out;
}

struct LstmParams {
  Vec kernel, recurrent_kernel, bias, peephole;  // Keras's layout, gates i, f, c, o
};

// One LSTM step of one batch row b: h and c updated in place.
void reference_lstm_step(const LstmParams& p, const Vec& x_row, Vec& h, Vec& c, double clip) {
  const Vec z_x = times(x_row, p.kernel, 1, kIn, 4 * kUnits);
  const Vec z_h = times(h, p.recurrent_kernel, 1, kUnits, 4 * kUnits);
  auto z = [&](int gate, int64_t u) {
    const size_t k = size_t(gate * kUnits + u);
    return z_x[k] + z_h[k] + (p.bias.empty() ? 0.0 : p.bias[k]);
  };
  auto clipped = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  auto peep = [&](int which, int64_t u) {
    return p.peephole.empty() ? 0.0 : p.peephole[size_t(which * kUnits + u)];
  };
  Vec h_new(kUnits, 0.0), c_new(kUnits, 0.0);
  for (int64_t u = 0; u < kUnits; ++u) {
    const double cu = c[size_t(u)];
    const double i = sigmoid(clipped(z(0, u) + peep(0, u) * cu));
    const double f = sigmoid(clipped(z(1, u) + peep(1, u) * cu));
    const double g = std::tanh(clipped(z(2, u)));
    c_new[size_t(u)] = f * cu + i * g;
    const double o = sigmoid(clipped(z(3, u) + peep(2, u) * c_new[size_t(u)]));
    h_new[size_t(u)] = o * std::tanh(c_new[size_t(u)]);
  }
  h = h_new;
  c = c_new;
}

struct GruParams {
  Vec kernel, recurrent_kernel, bias;  // bias [2, 3 * units]: input row, recurrent row
};

void reference_gru_step(const GruParams& p, const Vec& x_row, Vec& h, bool reset_after) {
  const int64_t n = 3 * kUnits;
  const Vec x_proj = times(x_row, p.kernel, 1, kIn, n);
  const Vec h_proj = times(h, p.recurrent_kernel, 1, kUnits, n);
  Vec h_new(kUnits, 0.0);
  Vec r(kUnits, 0.0), z(kUnits, 0.0);
  for (int64_t u = 0; u < kUnits; ++u) {
    auto pre = [&](int gate) {
      const size_t k = size_t(gate * kUnits + u);
      return x_proj[k] + p.bias[k] + h_proj[k] + p.bias[size_t(n) + k];
    };
    z[size_t(u)] = sigmoid(pre(0));
    r[size_t(u)] = sigmoid(pre(1));
  }
  // (r * h) U_h, for the reset-before form.
  Vec rh(kUnits, 0.0);
  for (int64_t u = 0; u < kUnits; ++u) rh[size_t(u)] = r[size_t(u)] * h[size_t(u)];
  Vec rh_proj(size_t(kUnits), 0.0);
  for (int64_t j = 0; j < kUnits; ++j)
    for (int64_t i = 0; i < kUnits; ++i)
      rh_proj[size_t(j)] += rh[size_t(i)] * p.recurrent_kernel[size_t(i * n + 2 * kUnits + j)];
  for (int64_t u = 0; u < kUnits; ++u) {
    const size_t k = size_t(2 * kUnits + u);
    const double recurrent = reset_after ? r[size_t(u)] * (h_proj[k] + p.bias[size_t(n) + k])
                                         : rh_proj[size_t(u)] + p.bias[size_t(n) + k];
    const double candidate = std::tanh(x_proj[k] + p.bias[k] + recurrent);
    h_new[size_t(u)] = z[size_t(u)] * h[size_t(u)] + (1 - z[size_t(u)]) * candidate;
  }
  h = h_new;
}

// Row b of a [batch, n] matrix.
Vec row(const Vec& m, int64_t b, int64_t n) {
  return {m.begin() + b * n, m.begin() + (b + 1) * n};
}

LstmParams lstm_params(bool with_peephole) {
  LstmParams p{wavy_values(kIn * 4 * kUnits, 0.7, 0.1),
               wavy_values(kUnits * 4 * kUnits, 0.5, 0.2),
               wavy_values(4 * kUnits, 0.3, 0.3),
               {}};
  if (with_peephole) p.peephole = wavy_values(3 * kUnits, 0.4, 0.4);
  return p;
}

ag::rnn::LSTMWeights lstm_weights(const LstmParams& p) {
  ag::rnn::LSTMWeights w{doubles(p.kernel, {kIn, 4 * kUnits}),
                         doubles(p.recurrent_kernel, {kUnits, 4 * kUnits}),
                         doubles(p.bias, {4 * kUnits}), Tensor()};
  if (!p.peephole.empty()) w.peephole = doubles(p.peephole, {3 * kUnits});
  return w;
}

// ---- Cells --------------------------------------------------------------------

TEST(RnnCells, LstmCellMatchesTheReference) {
  const Vec x = wavy_values(kBatch * kIn, 1.0, 0.5), h0 = wavy_values(kBatch * kUnits, 0.6, 0.6),
            c0 = wavy_values(kBatch * kUnits, 0.9, 0.7);
  for (bool peephole : {false, true}) {
    for (double clip : {0.0, 0.4}) {
      const LstmParams p = lstm_params(peephole);
      ag::rnn::LSTMOptions options;
      if (clip > 0) options.clip = clip;
      const ag::rnn::CellOutput out = ag::rnn::lstm_cell(
          doubles(x, {kBatch, kIn}), {doubles(h0, {kBatch, kUnits}), doubles(c0, {kBatch, kUnits})},
          lstm_weights(p), options);
      Vec want_h, want_c;
      for (int64_t b = 0; b < kBatch; ++b) {
        Vec h = row(h0, b, kUnits), c = row(c0, b, kUnits);
        reference_lstm_step(p, row(x, b, kIn), h, c, clip);
        want_h.insert(want_h.end(), h.begin(), h.end());
        want_c.insert(want_c.end(), c.begin(), c.end());
      }
      const std::string what =
          std::string(peephole ? "peephole" : "no peephole") + (clip > 0 ? ", clip" : "");
      ASSERT_EQ(out.states.size(), 2u);
      expect_near(values(out.output), want_h, 1e-12, what + ": output");
      expect_near(values(out.states[0]), want_h, 1e-12, what + ": h");
      expect_near(values(out.states[1]), want_c, 1e-12, what + ": c");
    }
  }
}

TEST(RnnCells, LstmInputForgetCouplesTheGates) {
  // f = 1 - i: with the f columns of every weight zero, the result must not
  // change when they change.
  LstmParams p = lstm_params(false);
  ag::rnn::LSTMOptions options;
  options.input_forget = true;
  const Tensor x = wavy({kBatch, kIn}, 1.0, 0.5);
  const Tensors states = {wavy({kBatch, kUnits}, 0.6, 0.6), wavy({kBatch, kUnits}, 0.9, 0.7)};
  const Vec first = values(ag::rnn::lstm_cell(x, states, lstm_weights(p), options).states[1]);
  for (int64_t r = 0; r < kIn; ++r)
    for (int64_t u = kUnits; u < 2 * kUnits; ++u) p.kernel[size_t(r * 4 * kUnits + u)] += 3.0;
  const Vec second = values(ag::rnn::lstm_cell(x, states, lstm_weights(p), options).states[1]);
  expect_near(second, first, 1e-15, "input_forget ignores the f columns");
  // And c_new = (1 - i) c + i g, checked at one element against the gates.
  options.input_forget = false;
  const Vec uncoupled = values(ag::rnn::lstm_cell(x, states, lstm_weights(p), options).states[1]);
  EXPECT_GT(std::abs(uncoupled[0] - first[0]), 1e-6);
}

TEST(RnnCells, GruCellMatchesTheReferenceInBothResetForms) {
  const GruParams p{wavy_values(kIn * 3 * kUnits, 0.7, 0.1),
                    wavy_values(kUnits * 3 * kUnits, 0.5, 0.2), wavy_values(6 * kUnits, 0.3, 0.3)};
  const Vec x = wavy_values(kBatch * kIn, 1.0, 0.5), h0 = wavy_values(kBatch * kUnits, 0.6, 0.6);
  for (bool reset_after : {true, false}) {
    ag::rnn::GRUOptions options;
    options.reset_after = reset_after;
    const ag::rnn::GRUWeights w{doubles(p.kernel, {kIn, 3 * kUnits}),
                                doubles(p.recurrent_kernel, {kUnits, 3 * kUnits}),
                                doubles(p.bias, {2, 3 * kUnits})};
    const ag::rnn::CellOutput out =
        ag::rnn::gru_cell(doubles(x, {kBatch, kIn}), {doubles(h0, {kBatch, kUnits})}, w, options);
    Vec want;
    for (int64_t b = 0; b < kBatch; ++b) {
      Vec h = row(h0, b, kUnits);
      reference_gru_step(p, row(x, b, kIn), h, reset_after);
      want.insert(want.end(), h.begin(), h.end());
    }
    expect_near(values(out.output), want, 1e-12, reset_after ? "reset_after" : "reset before");
  }
}

TEST(RnnCells, SimpleRnnCellMatchesTheReference) {
  const Vec k = wavy_values(kIn * kUnits, 0.7, 0.1), rk = wavy_values(kUnits * kUnits, 0.5, 0.2),
            bias = wavy_values(kUnits, 0.3, 0.3), x = wavy_values(kBatch * kIn, 1.0, 0.5),
            h0 = wavy_values(kBatch * kUnits, 0.6, 0.6);
  ag::rnn::SimpleRNNOptions options;
  options.activation = ag::rnn::activation("relu");
  const ag::rnn::CellOutput out = ag::rnn::simple_rnn_cell(
      doubles(x, {kBatch, kIn}), {doubles(h0, {kBatch, kUnits})},
      {doubles(k, {kIn, kUnits}), doubles(rk, {kUnits, kUnits}), doubles(bias, {kUnits})}, options);
  const Vec xk = times(x, k, kBatch, kIn, kUnits), hr = times(h0, rk, kBatch, kUnits, kUnits);
  Vec want(size_t(kBatch * kUnits));
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = std::max(0.0, xk[i] + hr[i] + bias[i % size_t(kUnits)]);
  expect_near(values(out.output), want, 1e-12, "relu rnn");
}

// ---- dynamic_rnn --------------------------------------------------------------

constexpr int64_t kTime = 4;

// The LSTM over x [batch, time, in] by the reference, each sequence on its
// own for its length, in either direction: outputs [batch, time, units]
// (zeros past the length) and the final h and c.
struct ReferenceRun {
  Vec outputs, h, c;
};
ReferenceRun reference_lstm_sequence(const LstmParams& p, const Vec& x, const Vec& h0,
                                     const Vec& c0, const std::vector<int64_t>& lengths,
                                     bool reverse) {
  ReferenceRun run{Vec(size_t(kBatch * kTime * kUnits), 0.0), {}, {}};
  for (int64_t b = 0; b < kBatch; ++b) {
    Vec h = row(h0, b, kUnits), c = row(c0, b, kUnits);
    for (int64_t s = 0; s < lengths[size_t(b)]; ++s) {
      const int64_t t = reverse ? lengths[size_t(b)] - 1 - s : s;
      reference_lstm_step(p, row(x, b * kTime + t, kIn), h, c, 0);
      std::copy(h.begin(), h.end(), run.outputs.begin() + (b * kTime + t) * kUnits);
    }
    run.h.insert(run.h.end(), h.begin(), h.end());
    run.c.insert(run.c.end(), c.begin(), c.end());
  }
  return run;
}

ag::rnn::Cell lstm(const ag::rnn::LSTMWeights& w) {
  return [w](const Tensor& x, const Tensors& states) { return ag::rnn::lstm_cell(x, states, w); };
}

TEST(DynamicRnn, SequenceLengthsForwardAndReverseMatchTheReference) {
  const LstmParams p = lstm_params(true);
  const Vec x = wavy_values(kBatch * kTime * kIn, 1.0, 0.8),
            h0 = wavy_values(kBatch * kUnits, 0.6, 0.6),
            c0 = wavy_values(kBatch * kUnits, 0.9, 0.7);
  const std::vector<int64_t> lengths = {4, 2, 0};
  for (bool reverse : {false, true}) {
    ag::rnn::RNNOptions options;
    options.sequence_length = ag::constant(std::vector<int32_t>{4, 2, 0}, {kBatch});
    options.reverse = reverse;
    const ag::rnn::RNNOutput out = ag::rnn::dynamic_rnn(
        lstm(lstm_weights(p)), doubles(x, {kBatch, kTime, kIn}),
        {doubles(h0, {kBatch, kUnits}), doubles(c0, {kBatch, kUnits})}, options);
    const ReferenceRun want = reference_lstm_sequence(p, x, h0, c0, lengths, reverse);
    const std::string what = reverse ? "reverse" : "forward";
    EXPECT_EQ(out.outputs.shape(), ag::Shape({kBatch, kTime, kUnits}));
    expect_near(values(out.outputs), want.outputs, 1e-12, what + ": outputs");
    expect_near(values(out.states[0]), want.h, 1e-12, what + ": h");
    expect_near(values(out.states[1]), want.c, 1e-12, what + ": c");
  }
  // Every sequence full length: the same as no lengths.
  const Tensors initial = {doubles(h0, {kBatch, kUnits}), doubles(c0, {kBatch, kUnits})};
  const ReferenceRun full = reference_lstm_sequence(p, x, h0, c0, {4, 4, 4}, false);
  const ag::rnn::RNNOutput out =
      ag::rnn::dynamic_rnn(lstm(lstm_weights(p)), doubles(x, {kBatch, kTime, kIn}), initial);
  expect_near(values(out.outputs), full.outputs, 1e-12, "no lengths");
}

TEST(DynamicRnn, TimeMajorInputsGiveTimeMajorOutputs) {
  const LstmParams p = lstm_params(false);
  const Tensor x = wavy({kBatch, kTime, kIn}, 1.0, 0.8);
  const Tensors initial = {ag::rnn::zero_state(x, kUnits), ag::rnn::zero_state(x, kUnits)};
  const ag::rnn::RNNOutput batch_major = ag::rnn::dynamic_rnn(lstm(lstm_weights(p)), x, initial);
  ag::rnn::RNNOptions options;
  options.time_major = true;
  const ag::rnn::RNNOutput time_major =
      ag::rnn::dynamic_rnn(lstm(lstm_weights(p)), ag::transpose(x, {1, 0, 2}), initial, options);
  EXPECT_EQ(time_major.outputs.shape(), ag::Shape({kTime, kBatch, kUnits}));
  expect_near(values(ag::transpose(time_major.outputs, {1, 0, 2})), values(batch_major.outputs),
              1e-15, "outputs");
  expect_near(values(time_major.states[1]), values(batch_major.states[1]), 1e-15, "c");
}

int count_whiles(const ag::Graph& g) {
  const std::vector<std::string> ops = g.ops();
  return int(std::count(ops.begin(), ops.end(), "While"));
}

TEST(DynamicRnn, TracedIsOneWhileAndEqualsEager) {
  const ag::rnn::LSTMWeights w = lstm_weights(lstm_params(true));
  ag::rnn::GRUOptions gru_options;
  const ag::rnn::GRUWeights gru_w{wavy({kUnits, 3 * kUnits}, 0.7, 0.1),
                                  wavy({kUnits, 3 * kUnits}, 0.5, 0.2),
                                  wavy({2, 3 * kUnits}, 0.3, 0.3)};
  // An LSTM in reverse, then a GRU forwards over its outputs, both with lengths.
  auto run = [&](const Tensor& x, const Tensor& lengths) {
    ag::rnn::RNNOptions options;
    options.sequence_length = lengths;
    options.reverse = true;
    const Tensor zeros = ag::rnn::zero_state(x, kUnits);
    const ag::rnn::RNNOutput first = ag::rnn::dynamic_rnn(lstm(w), x, {zeros, zeros}, options);
    options.reverse = false;
    const ag::rnn::RNNOutput second = ag::rnn::dynamic_rnn(
        [&](const Tensor& in, const Tensors& s) { return ag::rnn::gru_cell(in, s, gru_w); },
        first.outputs, {zeros}, options);
    return Tensors{second.outputs, second.states[0], first.states[1]};
  };
  auto traced = ag::function(run);
  for (int64_t time : {kTime, int64_t{6}}) {
    const Tensor x = wavy({kBatch, time, kIn}, 1.0, 0.8);
    const Tensor lengths = ag::constant(std::vector<int64_t>{time, 1, 3}, {kBatch});
    const Tensors eager = run(x, lengths), graph = traced(x, lengths);
    for (size_t k = 0; k < eager.size(); ++k)
      expect_near(values(graph[k]), values(eager[k]), 1e-12, "result " + std::to_string(k));
    EXPECT_EQ(count_whiles(traced.get_concrete_function(x, lengths).graph()), 2);
  }
  // Unknown time and batch axes while tracing (the zero state's batch read
  // when the graph runs); an unknown time axis and no steps.
  const ag::TensorSpec x_spec({ag::kUnknownDim, ag::kUnknownDim, kIn}, ag::float64);
  auto relaxed = ag::function(run, {.input_signature = std::vector<ag::TensorSpec>{
                                        x_spec, ag::TensorSpec({ag::kUnknownDim}, ag::int64)}});
  const Tensor lengths = ag::constant(std::vector<int64_t>{5, 0, 2}, {kBatch});
  const Tensor x = wavy({kBatch, 5, kIn}, 1.0, 0.8);
  const Tensors eager = run(x, lengths), graph = relaxed(x, lengths);
  for (size_t k = 0; k < eager.size(); ++k)
    expect_near(values(graph[k]), values(eager[k]), 1e-12,
                "unknown time, result " + std::to_string(k));
  auto unknown_time =
      ag::function(run, {.input_signature = std::vector<ag::TensorSpec>{
                             ag::TensorSpec({kBatch, ag::kUnknownDim, kIn}, ag::float64),
                             ag::TensorSpec({kBatch}, ag::int64)}});
  const Tensors no_steps = unknown_time(ag::zeros({kBatch, 0, kIn}, ag::float64), lengths * 0);
  EXPECT_EQ(no_steps[0].shape(), ag::Shape({kBatch, 0, kUnits}));
  expect_near(values(no_steps[1]), Vec(size_t(kBatch * kUnits), 0.0), 0, "no steps: h");
}

TEST(DynamicRnn, NoStepsGiveNoOutputsAndTheInitialStates) {
  const Tensor x = ag::zeros({kBatch, 0, kIn}, ag::float64);
  const Tensor h = wavy({kBatch, kUnits}, 0.5, 0.1), c = wavy({kBatch, kUnits}, 0.5, 0.2);
  const ag::rnn::Cell cell = lstm(lstm_weights(lstm_params(false)));
  const ag::rnn::RNNOutput eager = ag::rnn::dynamic_rnn(cell, x, {h, c});
  EXPECT_EQ(eager.outputs.shape(), ag::Shape({kBatch, 0, kUnits}));
  expect_near(values(eager.states[0]), values(h), 0, "h");
  auto traced = ag::function([&](const Tensor& in) {
    const ag::rnn::RNNOutput out = ag::rnn::dynamic_rnn(cell, in, {h, c});
    return Tensors{out.outputs, out.states[1]};
  });
  const Tensors graph = traced(x);
  EXPECT_EQ(graph[0].shape(), ag::Shape({kBatch, 0, kUnits}));
  expect_near(values(graph[1]), values(c), 0, "traced c");
}

// ---- Gradients ------------------------------------------------------------------

using Loss = std::function<Tensor(const Tensors&)>;

// A loss of an LSTM over 3 steps: the inputs, the kernel, the recurrent
// kernel, the bias and the initial h.
Tensor lstm_loss(const Tensors& p) {
  const ag::rnn::LSTMWeights w{p[1], p[2], p[3], Tensor()};
  ag::rnn::RNNOptions options;
  options.sequence_length = ag::constant(std::vector<int32_t>{3, 2}, {2});
  const ag::rnn::RNNOutput out =
      ag::rnn::dynamic_rnn(lstm(w), p[0], {p[4], ag::zeros({2, 2}, ag::float64)}, options);
  return ag::reduce_sum(out.outputs * out.outputs) + ag::reduce_sum(out.states[1]);
}

// A GRU (reset before the recurrent kernel) in reverse over 3 steps: the
// inputs, the kernel, the recurrent kernel, the bias rows and the initial h.
Tensor gru_loss(const Tensors& p) {
  const ag::rnn::GRUWeights w{p[1], p[2], p[3]};
  ag::rnn::GRUOptions gru_options;
  gru_options.reset_after = false;
  ag::rnn::RNNOptions options;
  options.sequence_length = ag::constant(std::vector<int32_t>{2, 3}, {2});
  options.reverse = true;
  const ag::rnn::RNNOutput out = ag::rnn::dynamic_rnn(
      [&](const Tensor& x, const Tensors& s) { return ag::rnn::gru_cell(x, s, w, gru_options); },
      p[0], {p[4]}, options);
  return ag::reduce_sum(ag::sin(out.outputs)) + ag::reduce_sum(out.states[0] * out.states[0]);
}

// The gradients of `loss` at p eagerly and traced (a forward and a backward
// While) against central finite differences.
void check_gradients(const Loss& loss, const Tensors& p) {
  auto grads = [loss](const Tensors& xs) {
    ag::GradientTape tape;
    for (const Tensor& x : xs) tape.watch(x);
    const Tensor y = loss(xs);
    return tape.gradient(y, xs, ag::UnconnectedGradients::Zero);
  };
  auto traced = ag::function(grads);
  const Tensors eager = grads(p), graph = traced(p), fd = ag_test::finite_differences(loss, p);
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string which = "input " + std::to_string(i);
    expect_near(values(eager[i]), values(fd[i]), 1e-6, which + ": eager vs finite differences");
    expect_near(values(graph[i]), values(eager[i]), 1e-10, which + ": graph vs eager");
  }
  EXPECT_EQ(count_whiles(traced.get_concrete_function(p).graph()), 2)
      << "a forward and a backward While";
}

TEST(DynamicRnn, LstmGradientsMatchFiniteDifferencesEagerAndTraced) {
  // batch 2, 3 steps, 3 inputs, 2 units.
  check_gradients(lstm_loss, {wavy({2, 3, 3}, 1.0, 0.1), wavy({3, 8}, 0.6, 0.2),
                              wavy({2, 8}, 0.5, 0.3), wavy({8}, 0.3, 0.4), wavy({2, 2}, 0.5, 0.5)});
}

TEST(DynamicRnn, GruGradientsMatchFiniteDifferencesEagerAndTraced) {
  check_gradients(gru_loss,
                  {wavy({2, 3, 3}, 1.0, 0.1), wavy({3, 6}, 0.6, 0.2), wavy({2, 6}, 0.5, 0.3),
                   wavy({2, 6}, 0.3, 0.4), wavy({2, 2}, 0.5, 0.5)});
}

// ---- Errors -----------------------------------------------------------------------

TEST(RnnErrors, WrongWeightShapesSayWhatIsExpected) {
  const Tensor x = wavy({kBatch, kIn}, 1.0, 0.1);
  const Tensors states = {wavy({kBatch, kUnits}, 1.0, 0.2), wavy({kBatch, kUnits}, 1.0, 0.3)};
  ag::rnn::LSTMWeights w = lstm_weights(lstm_params(false));
  w.kernel = wavy({kIn, 3 * kUnits}, 1.0, 0.1);
  EXPECT_THROW_CONTAINS(ag::rnn::lstm_cell(x, states, w), ag::InvalidArgumentError,
                        "lstm_cell: kernel must have shape [input_dim, 4 * units] = [2, 16], got "
                        "[2, 12]");
  w = lstm_weights(lstm_params(false));
  w.recurrent_kernel = wavy({kUnits, 4 * kUnits + 1}, 1.0, 0.1);
  EXPECT_THROW_CONTAINS(ag::rnn::lstm_cell(x, states, w), ag::InvalidArgumentError,
                        "recurrent_kernel must have shape [units, 4 * units] = [4, 16]");
  w = lstm_weights(lstm_params(false));
  w.bias = wavy({kUnits}, 1.0, 0.1);
  EXPECT_THROW_CONTAINS(ag::rnn::lstm_cell(x, states, w), ag::InvalidArgumentError,
                        "bias must have shape [4 * units] = [16], got [4]");
  w = lstm_weights(lstm_params(false));
  EXPECT_THROW_CONTAINS(ag::rnn::lstm_cell(x, {states[0]}, w), ag::InvalidArgumentError,
                        "lstm_cell: expects 2 states {h, c}, got 1");
  EXPECT_THROW_CONTAINS(ag::rnn::lstm_cell(x, {states[0], wavy({kBatch, 5}, 1.0, 0.3)}, w),
                        ag::InvalidArgumentError,
                        "state 1 must have shape [batch, units] = [3, 4], got [3, 5]");
  const ag::rnn::GRUWeights gru{wavy({kIn, 3 * kUnits}, 1.0, 0.1),
                                wavy({kUnits, 3 * kUnits}, 1.0, 0.1), wavy({3, 3 * kUnits}, 1, 0)};
  EXPECT_THROW_CONTAINS(ag::rnn::gru_cell(x, {states[0]}, gru), ag::InvalidArgumentError,
                        "gru_cell: bias must have shape [2, 3 * units] = [2, 12], got [3, 12]");
  EXPECT_THROW_CONTAINS(
      ag::rnn::simple_rnn_cell(wavy({kBatch, kIn, 1}, 1.0, 0.1), {states[0]},
                               {wavy({kIn, kUnits}, 1, 0), wavy({kUnits, kUnits}, 1, 0), Tensor()}),
      ag::InvalidArgumentError,
      "simple_rnn_cell: inputs must be [batch, input_dim], got [3, 2, 1]");
}

TEST(RnnErrors, SequenceAndActivationErrors) {
  const ag::rnn::LSTMWeights w = lstm_weights(lstm_params(false));
  const Tensor x = wavy({kBatch, kTime, kIn}, 1.0, 0.1);
  const Tensors initial = {ag::rnn::zero_state(x, kUnits), ag::rnn::zero_state(x, kUnits)};
  ag::rnn::RNNOptions options;
  options.sequence_length = wavy({kBatch}, 1.0, 0.1);
  EXPECT_THROW_CONTAINS(ag::rnn::dynamic_rnn(lstm(w), x, initial, options),
                        ag::InvalidArgumentError,
                        "dynamic_rnn: sequence_length must be an int32 or int64 vector [batch]");
  options.sequence_length = ag::constant(std::vector<int32_t>{1, 2}, {2});
  EXPECT_THROW_CONTAINS(ag::rnn::dynamic_rnn(lstm(w), x, initial, options),
                        ag::InvalidArgumentError,
                        "sequence_length must have shape [batch] = [3], got [2]");
  EXPECT_THROW_CONTAINS(
      ag::rnn::dynamic_rnn(lstm(w), wavy({kBatch}, 1.0, 0.1), initial), ag::InvalidArgumentError,
      "dynamic_rnn: inputs must have a time and a batch axis ([batch, time, ...])");
  EXPECT_THROW_CONTAINS(ag::rnn::dynamic_rnn(lstm(w), x, {initial[0]}), ag::InvalidArgumentError,
                        "lstm_cell: expects 2 states {h, c}, got 1");
  EXPECT_THROW_CONTAINS(ag::rnn::activation("swish"), ag::InvalidArgumentError,
                        "unknown activation 'swish'; expected one of tanh, sigmoid");
}

}  // namespace
