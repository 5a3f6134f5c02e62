// ag::rnn::lstm, an LSTM over a whole sequence as one op (lstm_sequence):
// its values against dynamic_rnn over lstm_cell, forwards and in reverse,
// batch- and time-major; one op and no While when traced, equal to eager;
// the cases it leaves to dynamic_rnn; its gradients (and the gradient op's,
// through the composed cell) against finite differences, eagerly and
// traced, also with the batch and time unknown while tracing; oneDNN's
// primitives against the loops on the same buffers; its errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"
#include "ops/lstm_kernels.h"
#include "sequence_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using Tensors = std::vector<Tensor>;
using Vec = std::vector<double>;
using ag_test::count_ops;
using ag_test::expect_near;
using ag_test::Loss;
using ag_test::values;
using ag_test::wavy;

// An LSTM's parameters: batch-major inputs [batch, time, input], the
// weights, the initial h and c.
struct Lstm {
  Tensor x, kernel, recurrent_kernel, bias, h0, c0;
  ag::rnn::LSTMWeights weights() const { return {kernel, recurrent_kernel, bias, Tensor()}; }
};

Lstm make_lstm(int64_t batch, int64_t time, int64_t input, int64_t units,
               ag::DType dtype = ag::float64) {
  return {wavy({batch, time, input}, 1.0, 0.1, dtype), wavy({input, 4 * units}, 0.6, 0.2, dtype),
          wavy({units, 4 * units}, 0.5, 0.3, dtype),   wavy({4 * units}, 0.3, 0.4, dtype),
          wavy({batch, units}, 0.5, 0.5, dtype),       wavy({batch, units}, 0.7, 0.6, dtype)};
}

// outputs, h, c of rnn::lstm, or of dynamic_rnn over lstm_cell.
Tensors run_lstm(const Lstm& p, const ag::rnn::RNNOptions& options, bool composed) {
  const Tensor x = options.time_major ? ag::transpose(p.x, {1, 0, 2}) : p.x;
  const ag::rnn::LSTMWeights w = p.weights();
  ag::rnn::RNNOutput out;
  if (composed) {
    out = ag::rnn::dynamic_rnn(
        [&](const Tensor& step, const Tensors& s) { return ag::rnn::lstm_cell(step, s, w); }, x,
        {p.h0, p.c0}, options);
  } else {
    out = ag::rnn::lstm(x, {p.h0, p.c0}, w, {}, options);
  }
  return {out.outputs, out.states[0], out.states[1]};
}

TEST(RnnLstm, MatchesDynamicRnnOverTheCell) {
  const Lstm p = make_lstm(3, 5, 2, 4);
  for (bool reverse : {false, true}) {
    for (bool time_major : {false, true}) {
      ag::rnn::RNNOptions options;
      options.reverse = reverse;
      options.time_major = time_major;
      const Tensors fused = run_lstm(p, options, false), composed = run_lstm(p, options, true);
      const std::string what = std::string(reverse ? "reverse" : "forward") +
                               (time_major ? ", time-major" : ", batch-major");
      for (size_t k = 0; k < 3; ++k)
        expect_near(fused[k], composed[k], 1e-12, what + ", result " + std::to_string(k));
    }
  }
}

TEST(RnnLstm, Float32MatchesTheFloat64Cell) {
  const Lstm p32 = make_lstm(4, 6, 5, 8, ag::float32), p64 = make_lstm(4, 6, 5, 8);
  for (bool reverse : {false, true}) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    const Tensors fused = run_lstm(p32, options, false), composed = run_lstm(p64, options, true);
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(fused[k].dtype(), ag::float32);
      expect_near(fused[k], composed[k], 2e-6, "result " + std::to_string(k));
    }
  }
}

// States of 2 x 5 (the loops) and 6 x 12 (oneDNN's primitives, where the
// build has them).
TEST(RnnLstm, TracedIsOneOpWithoutAWhileAndEqualsEager) {
  for (auto [batch, units] : {std::pair<int64_t, int64_t>{2, 5}, {6, 12}}) {
    const Lstm p = make_lstm(batch, 7, 3, units, ag::float32);
    auto run = [&](const Tensor& x) {
      const ag::rnn::RNNOutput out = ag::rnn::lstm(x, {p.h0, p.c0}, p.weights());
      return Tensors{out.outputs, out.states[0], out.states[1]};
    };
    auto traced = ag::function(run);
    const Tensors eager = run(p.x), graph = traced(p.x);
    for (size_t k = 0; k < 3; ++k)
      EXPECT_EQ(values(graph[k]), values(eager[k])) << "batch " << batch << ", result " << k;
    const ag::Graph& g = traced.get_concrete_function(p.x).graph();
    EXPECT_EQ(count_ops(g, "lstm_sequence"), 1);
    EXPECT_EQ(count_ops(g, "While"), 0);
    const Tensors composed = run_lstm(make_lstm(batch, 7, 3, units), {}, true);
    for (size_t k = 0; k < 3; ++k)
      expect_near(eager[k], composed[k], 2e-6,
                  "against the float64 cell, result " + std::to_string(k));
  }
}

TEST(RnnLstm, OtherCellsAndSequenceLengthsRunAsDynamicRnn) {
  const Lstm p = make_lstm(3, 4, 2, 3);
  const Tensor lengths = ag::constant(std::vector<int32_t>{4, 1, 3}, {3});
  struct Variant {
    std::string name;
    ag::rnn::LSTMOptions cell;
    ag::rnn::RNNOptions sequence;
  };
  std::vector<Variant> variants(3);
  variants[0].name = "sequence lengths";
  variants[0].sequence.sequence_length = lengths;
  variants[1].name = "clip";
  variants[1].cell.clip = 0.5;
  variants[2].name = "hard_sigmoid gates";
  variants[2].cell.recurrent_activation = ag::rnn::activation("hard_sigmoid");
  for (const Variant& v : variants) {
    auto run = [&](const Tensor& x) {
      const ag::rnn::RNNOutput out =
          ag::rnn::lstm(x, {p.h0, p.c0}, p.weights(), v.cell, v.sequence);
      return Tensors{out.outputs, out.states[1]};
    };
    auto cell_run = [&](const Tensor& x) {
      const ag::rnn::LSTMWeights w = p.weights();
      const ag::rnn::RNNOutput out = ag::rnn::dynamic_rnn(
          [&](const Tensor& step, const Tensors& s) {
            return ag::rnn::lstm_cell(step, s, w, v.cell);
          },
          x, {p.h0, p.c0}, v.sequence);
      return Tensors{out.outputs, out.states[1]};
    };
    auto traced = ag::function(run);
    const Tensors expected = cell_run(p.x), graph = traced(p.x);
    for (size_t k = 0; k < 2; ++k) expect_near(graph[k], expected[k], 1e-12, v.name);
    const ag::Graph& g = traced.get_concrete_function(p.x).graph();
    EXPECT_EQ(count_ops(g, "lstm_sequence"), 0) << v.name;
    EXPECT_EQ(count_ops(g, "While"), 1) << v.name;
  }
}

// ---- Gradients --------------------------------------------------------------------

// A loss of every output of rnn::lstm on (x, kernel, recurrent_kernel,
// bias, h0, c0).
Loss lstm_loss(bool reverse) {
  return [reverse](const Tensors& q) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    const ag::rnn::RNNOutput out =
        ag::rnn::lstm(q[0], {q[4], q[5]}, {q[1], q[2], q[3], Tensor()}, {}, options);
    return ag::reduce_sum(ag::sin(out.outputs)) + ag::reduce_sum(out.states[0] * out.states[0]) +
           ag::reduce_sum(out.states[1] * 0.5);
  };
}

Tensors params(const Lstm& p) {
  return {p.x, p.kernel, p.recurrent_kernel, p.bias, p.h0, p.c0};
}

TEST(RnnLstm, GradientsMatchFiniteDifferencesEagerAndTraced) {
  const Tensors p = params(make_lstm(2, 3, 3, 2));
  for (bool reverse : {false, true}) {
    const Loss loss = lstm_loss(reverse);
    auto grads = [&](const Tensors& xs) { return ag_test::tape_gradients(loss, xs); };
    auto traced = ag::function(grads);
    const Tensors eager = grads(p), graph = traced(p), fd = ag_test::finite_differences(loss, p);
    for (size_t i = 0; i < p.size(); ++i) {
      const std::string which =
          std::string(reverse ? "reverse" : "forward") + ", input " + std::to_string(i);
      expect_near(eager[i], fd[i], 1e-6, which + ": eager vs finite differences");
      expect_near(graph[i], eager[i], 0, which + ": graph vs eager");
    }
    const ag::Graph& g = traced.get_concrete_function(p).graph();
    EXPECT_EQ(count_ops(g, "lstm_sequence_grad"), 1);
    EXPECT_EQ(count_ops(g, "While"), 0);
  }
}

TEST(RnnLstm, GradientsWithTheBatchAndTimeUnknownWhileTracing) {
  const Lstm p = make_lstm(3, 4, 2, 3);
  const Loss loss = lstm_loss(false);
  auto grads = [&](const Tensor& x, const Tensor& h0, const Tensor& c0) {
    return ag_test::tape_gradients(loss, {x, p.kernel, p.recurrent_kernel, p.bias, h0, c0});
  };
  const ag::TensorSpec x_spec({ag::kUnknownDim, ag::kUnknownDim, 2}, ag::float64);
  const ag::TensorSpec state_spec({ag::kUnknownDim, 3}, ag::float64);
  auto relaxed = ag::function(
      grads, {.input_signature = std::vector<ag::TensorSpec>{x_spec, state_spec, state_spec}});
  const Tensors eager = grads(p.x, p.h0, p.c0), graph = relaxed(p.x, p.h0, p.c0);
  ASSERT_EQ(graph.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i)
    expect_near(graph[i], eager[i], 0, "input " + std::to_string(i));
}

TEST(RnnLstm, SecondDerivativesMatchFiniteDifferencesOfTheFirst) {
  const Tensors p = params(make_lstm(2, 3, 2, 2));
  const Loss loss = lstm_loss(true);
  // The first derivatives' sum of squares, as a function of the parameters.
  const Loss first_norm = [&](const Tensors& xs) {
    Tensor total = ag::zeros({}, ag::float64);
    for (const Tensor& g : ag_test::tape_gradients(loss, xs)) total = total + ag::reduce_sum(g * g);
    return total;
  };
  const Tensors second = ag_test::tape_gradients(first_norm, p),
                fd = ag_test::finite_differences(first_norm, p);
  for (size_t i = 0; i < p.size(); ++i)
    expect_near(second[i], fd[i], 1e-5, "input " + std::to_string(i));
}

// ---- The engines -------------------------------------------------------------------

TEST(RnnLstm, EnginesAgree) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "this build has no oneDNN (AG_GEMM=openblas)";
  namespace lstm = ag::ops::lstm;
  namespace rnn_kernels = ag::ops::rnn_kernels;
  // (time, batch, input, units, reverse): small, the ONNX language model's
  // layers, and model_bench's training step.
  const std::vector<lstm::Problem> problems = {
      {3, 2, 5, 4, false}, {6, 3, 7, 9, true}, {8, 1, 32, 32, false}, {32, 16, 64, 128, false}};
  // Weights of a layer's usual scale, 1 / sqrt(fan-in): larger ones make the
  // recurrence chaotic, and float32's rounding grows without bound.
  ag_test::UniformFloats random(7);
  for (const lstm::Problem& p : problems) {
    const int64_t state = p.batch * p.units, width = 4 * p.units;
    const int64_t y_size = p.time * state, x_size = p.time * p.batch * p.input;
    const auto x = random(x_size), h0 = random(state), c0 = random(state);
    const auto kernel = random(p.input * width, 1 / std::sqrt(float(p.input)));
    const auto recurrent = random(p.units * width, 1 / std::sqrt(float(p.units)));
    const auto bias = random(width), dy = random(y_size), dh = random(state), dc = random(state);
    const lstm::Inputs<float> in{x.data(),      h0.data(),        c0.data(),
                                 kernel.data(), recurrent.data(), bias.data()};
    const std::string what = "problem [" + std::to_string(p.time) + ", " + std::to_string(p.batch) +
                             ", " + std::to_string(p.input) + ", " + std::to_string(p.units) + "]";
    auto compare = [&](const std::vector<float>& a, const std::vector<float>& b,
                       const std::string& part) {
      ag_test::expect_engines_agree(a, b, what + ", " + part);
    };
    // Forward.
    std::vector<float> y[2], h[2], c[2];
    for (int e = 0; e < 2; ++e) {
      y[e].resize(size_t(y_size)), h[e].resize(size_t(state)), c[e].resize(size_t(state));
      const lstm::Outputs<float> out{y[e].data(), h[e].data(), c[e].data()};
      e == 0 ? rnn_kernels::forward_onednn(p, in, out) : lstm::forward_loops<float>(p, in, out);
    }
    compare(y[0], y[1], "y");
    compare(h[0], h[1], "h");
    compare(c[0], c[1], "c");
    // Backward.
    std::vector<float> grads[2][6];
    const int64_t sizes[6] = {x_size, state, state, p.input * width, p.units * width, width};
    for (int e = 0; e < 2; ++e) {
      for (int k = 0; k < 6; ++k) grads[e][k].assign(size_t(sizes[k]), 0.0f);
      const lstm::Gradients<float> g{grads[e][0].data(), grads[e][1].data(), grads[e][2].data(),
                                     grads[e][3].data(), grads[e][4].data(), grads[e][5].data()};
      e == 0 ? rnn_kernels::backward_onednn(p, in, dy.data(), dh.data(), dc.data(), g)
             : lstm::backward_loops<float>(p, in, dy.data(), dh.data(), dc.data(), g);
    }
    const char* names[6] = {"dx", "dh0", "dc0", "dkernel", "drecurrent_kernel", "dbias"};
    for (int k = 0; k < 6; ++k) compare(grads[0][k], grads[1][k], names[k]);
  }
}

// ---- Errors ------------------------------------------------------------------------

TEST(RnnLstm, ErrorsNameTheWrongInput) {
  const Lstm p = make_lstm(2, 3, 2, 4);
  EXPECT_THROW_CONTAINS(ag::rnn::lstm(p.x, {p.h0}, p.weights()), ag::InvalidArgumentError,
                        "lstm: expects 2 states {h, c}, got 1");
  EXPECT_THROW_CONTAINS(
      ag::rnn::lstm(p.x, {p.h0, p.c0}, {p.recurrent_kernel, p.recurrent_kernel, p.bias, Tensor()}),
      ag::InvalidArgumentError,
      "lstm: kernel must have shape [input_dim, 4 * units] = [2, 16], got [4, 16]");
  EXPECT_THROW_CONTAINS(
      ag::rnn::lstm(p.x, {p.h0, p.c0},
                    {p.kernel, p.recurrent_kernel, ag::cast(p.bias, ag::float32), Tensor()}),
      ag::InvalidArgumentError, "lstm: bias is float32, but the inputs are float64");
  EXPECT_THROW_CONTAINS(ag::rnn::lstm(p.x, {p.h0, ag::zeros({3, 4}, ag::float64)}, p.weights()),
                        ag::InvalidArgumentError, "lstm: state 1 must have shape [batch, units]");
}

}  // namespace
