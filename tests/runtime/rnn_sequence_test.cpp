// ag::rnn::gru and simple_rnn, a GRU or a simple RNN over a whole sequence as
// one op (gru_sequence, simple_rnn_sequence), for each cell oneDNN has (GRU
// with and without reset_after; tanh, relu and sigmoid RNNs): values
// against dynamic_rnn over the cell, forwards and in reverse, batch- and
// time-major, float32 against the float64 cell; one op and no While when
// traced, equal to eager; the cases left to dynamic_rnn; gradients (and
// the gradient op's, through the composed cell) against finite
// differences, eagerly and traced; oneDNN's primitives against the loops
// on the same buffers; a plan's op with constant weights, prepared once,
// against eager calls; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"
#include "ops/rnn_kernels.h"
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
using Cell = ag::ops::rnn_kernels::Cell;

// A cell of the op: its name, gates, op and how ag::rnn runs it.
struct Variant {
  std::string name;
  Cell cell;
  const char* op;
  int64_t gates() const { return ag::ops::rnn_kernels::gates(cell); }
  bool gru() const { return ag::ops::rnn_kernels::is_gru(cell); }
  const char* activation() const {
    return cell == Cell::rnn_relu ? "relu" : cell == Cell::rnn_sigmoid ? "sigmoid" : "tanh";
  }
};

const Variant kVariants[] = {
    {"gru", Cell::gru, "gru_sequence"},
    {"gru_reset_before", Cell::gru_reset_before, "gru_sequence"},
    {"rnn_tanh", Cell::rnn_tanh, "simple_rnn_sequence"},
    {"rnn_relu", Cell::rnn_relu, "simple_rnn_sequence"},
    {"rnn_sigmoid", Cell::rnn_sigmoid, "simple_rnn_sequence"},
};

// A cell's parameters: inputs [batch, time, input], the weights (a GRU's
// bias [2, 3 * units]) and h0.
struct Params {
  Tensor x, kernel, recurrent_kernel, bias, h0;
};

Params make_params(const Variant& v, int64_t batch, int64_t time, int64_t input, int64_t units,
                   ag::DType dtype = ag::float64) {
  const int64_t width = v.gates() * units;
  const Shape bias = v.gru() ? Shape{2, width} : Shape{width};
  return {wavy({batch, time, input}, 1.0, 0.1, dtype), wavy({input, width}, 0.6, 0.2, dtype),
          wavy({units, width}, 0.5, 0.3, dtype), wavy(bias, 0.3, 0.4, dtype),
          wavy({batch, units}, 0.5, 0.5, dtype)};
}

// outputs and h of rnn::gru or simple_rnn on (x, kernel, recurrent_kernel,
// bias, h0), or of dynamic_rnn over the cell (composed).
Tensors run(const Variant& v, const Tensors& q, const ag::rnn::RNNOptions& options,
            bool composed = false) {
  ag::rnn::RNNOutput out;
  if (v.gru()) {
    const ag::rnn::GRUWeights w{q[1], q[2], q[3]};
    ag::rnn::GRUOptions o;
    o.reset_after = v.cell == Cell::gru;
    out =
        composed
            ? ag::rnn::dynamic_rnn(
                  [&](const Tensor& s, const Tensors& h) { return ag::rnn::gru_cell(s, h, w, o); },
                  q[0], {q[4]}, options)
            : ag::rnn::gru(q[0], {q[4]}, w, o, options);
  } else {
    const ag::rnn::SimpleRNNWeights w{q[1], q[2], q[3]};
    ag::rnn::SimpleRNNOptions o;
    o.activation = ag::rnn::activation(v.activation());
    out = composed ? ag::rnn::dynamic_rnn(
                         [&](const Tensor& s, const Tensors& h) {
                           return ag::rnn::simple_rnn_cell(s, h, w, o);
                         },
                         q[0], {q[4]}, options)
                   : ag::rnn::simple_rnn(q[0], {q[4]}, w, o, options);
  }
  return {out.outputs, out.states[0]};
}

Tensors params(const Params& p, bool time_major = false) {
  return {time_major ? ag::transpose(p.x, {1, 0, 2}) : p.x, p.kernel, p.recurrent_kernel, p.bias,
          p.h0};
}

TEST(RnnSequence, MatchesDynamicRnnOverTheCell) {
  for (const Variant& v : kVariants) {
    const Params p = make_params(v, 3, 5, 2, 4);
    for (bool reverse : {false, true}) {
      for (bool time_major : {false, true}) {
        ag::rnn::RNNOptions options;
        options.reverse = reverse;
        options.time_major = time_major;
        const Tensors q = params(p, time_major);
        const Tensors fused = run(v, q, options), composed = run(v, q, options, true);
        const std::string what = v.name + (reverse ? ", reverse" : ", forward") +
                                 (time_major ? ", time-major" : ", batch-major");
        for (size_t k = 0; k < 2; ++k)
          expect_near(fused[k], composed[k], 1e-12, what + ", result " + std::to_string(k));
      }
    }
  }
}

TEST(RnnSequence, Float32MatchesTheFloat64Cell) {
  for (const Variant& v : kVariants) {
    const Params p32 = make_params(v, 4, 6, 5, 8, ag::float32), p64 = make_params(v, 4, 6, 5, 8);
    for (bool reverse : {false, true}) {
      ag::rnn::RNNOptions options;
      options.reverse = reverse;
      const Tensors fused = run(v, params(p32), options);
      const Tensors composed = run(v, params(p64), options, true);
      for (size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(fused[k].dtype(), ag::float32);
        expect_near(fused[k], composed[k], 2e-6, v.name + ", result " + std::to_string(k));
      }
    }
  }
}

TEST(RnnSequence, TracedIsOneOpWithoutAWhileAndEqualsEager) {
  for (const Variant& v : kVariants) {
    const Params p = make_params(v, 6, 7, 3, 12, ag::float32);
    auto f = [&](const Tensor& x) {
      return run(v, {x, p.kernel, p.recurrent_kernel, p.bias, p.h0}, {});
    };
    auto traced = ag::function(f);
    const Tensors eager = f(p.x), graph = traced(p.x);
    for (size_t k = 0; k < 2; ++k)
      EXPECT_EQ(values(graph[k]), values(eager[k])) << v.name << ", result " << k;
    const ag::Graph& g = traced.get_concrete_function(p.x).graph();
    EXPECT_EQ(count_ops(g, v.op), 1) << v.name;
    EXPECT_EQ(count_ops(g, "While"), 0) << v.name;
  }
}

TEST(RnnSequence, AGruBiasOfOneRowOrNoneIsTheInputBias) {
  const Variant& v = kVariants[0];
  const Params p = make_params(v, 2, 3, 2, 4);
  const Tensor row = wavy({12}, 0.3, 0.4);
  for (const Tensor& bias : {row, Tensor()}) {
    const Tensor two_rows = bias.defined() ? ag::stack({row, ag::zeros({12}, ag::float64)}, 0)
                                           : ag::zeros({2, 12}, ag::float64);
    const Tensors given = run(v, {p.x, p.kernel, p.recurrent_kernel, bias, p.h0}, {});
    const Tensors expected = run(v, {p.x, p.kernel, p.recurrent_kernel, two_rows, p.h0}, {}, true);
    for (size_t k = 0; k < 2; ++k)
      expect_near(given[k], expected[k], 1e-12, bias.defined() ? "one row" : "no bias");
  }
}

TEST(RnnSequence, OtherCellsAndSequenceLengthsRunAsDynamicRnn) {
  const Tensor lengths = ag::constant(std::vector<int32_t>{4, 1, 3}, {3});
  struct Case {
    std::string name;
    std::function<Tensors(const Tensor&, bool composed)> run;
  };
  const Params gru = make_params(kVariants[0], 3, 4, 2, 3);
  const Params rnn = make_params(kVariants[2], 3, 4, 2, 3);
  auto run_gru = [&](const Tensor& x, ag::rnn::GRUOptions o, ag::rnn::RNNOptions s, bool composed) {
    const ag::rnn::GRUWeights w{gru.kernel, gru.recurrent_kernel, gru.bias};
    const ag::rnn::RNNOutput out = composed ? ag::rnn::dynamic_rnn(
                                                  [&](const Tensor& step, const Tensors& h) {
                                                    return ag::rnn::gru_cell(step, h, w, o);
                                                  },
                                                  x, {gru.h0}, s)
                                            : ag::rnn::gru(x, {gru.h0}, w, o, s);
    return Tensors{out.outputs, out.states[0]};
  };
  auto run_rnn = [&](const Tensor& x, ag::rnn::SimpleRNNOptions o, bool composed) {
    const ag::rnn::SimpleRNNWeights w{rnn.kernel, rnn.recurrent_kernel, rnn.bias};
    const ag::rnn::RNNOutput out = composed ? ag::rnn::dynamic_rnn(
                                                  [&](const Tensor& step, const Tensors& h) {
                                                    return ag::rnn::simple_rnn_cell(step, h, w, o);
                                                  },
                                                  x, {rnn.h0})
                                            : ag::rnn::simple_rnn(x, {rnn.h0}, w, o);
    return Tensors{out.outputs, out.states[0]};
  };
  ag::rnn::RNNOptions with_lengths;
  with_lengths.sequence_length = lengths;
  ag::rnn::GRUOptions clipped;
  clipped.clip = 0.5;
  ag::rnn::SimpleRNNOptions elu;
  elu.activation = ag::rnn::activation("elu");
  const std::vector<Case> cases = {
      {"gru with sequence lengths",
       [&](const Tensor& x, bool c) { return run_gru(x, {}, with_lengths, c); }},
      {"gru with clip", [&](const Tensor& x, bool c) { return run_gru(x, clipped, {}, c); }},
      {"simple rnn of elu", [&](const Tensor& x, bool c) { return run_rnn(x, elu, c); }},
  };
  for (const Case& c : cases) {
    auto traced = ag::function([&](const Tensor& x) { return c.run(x, false); });
    const Tensors expected = c.run(gru.x, true), graph = traced(gru.x);
    for (size_t k = 0; k < 2; ++k) expect_near(graph[k], expected[k], 1e-12, c.name);
    const ag::Graph& g = traced.get_concrete_function(gru.x).graph();
    EXPECT_EQ(count_ops(g, "gru_sequence") + count_ops(g, "simple_rnn_sequence"), 0) << c.name;
    EXPECT_EQ(count_ops(g, "While"), 1) << c.name;
  }
}

// ---- Gradients --------------------------------------------------------------------

// A loss of every output of the variant on (x, kernel, recurrent_kernel, bias, h0).
Loss sequence_loss(const Variant& v, bool reverse) {
  return [v, reverse](const Tensors& q) {
    ag::rnn::RNNOptions options;
    options.reverse = reverse;
    const Tensors out = run(v, q, options);
    return ag::reduce_sum(ag::sin(out[0])) + ag::reduce_sum(out[1] * out[1]);
  };
}

TEST(RnnSequence, GradientsMatchFiniteDifferencesEagerAndTraced) {
  for (const Variant& v : kVariants) {
    const Tensors p = params(make_params(v, 2, 3, 3, 2));
    for (bool reverse : {false, true}) {
      const Loss loss = sequence_loss(v, reverse);
      auto grads = [&](const Tensors& xs) { return ag_test::tape_gradients(loss, xs); };
      auto traced = ag::function(grads);
      const Tensors eager = grads(p), graph = traced(p), fd = ag_test::finite_differences(loss, p);
      for (size_t i = 0; i < p.size(); ++i) {
        const std::string which =
            v.name + (reverse ? ", reverse" : ", forward") + ", input " + std::to_string(i);
        expect_near(eager[i], fd[i], 1e-6, which + ": eager vs finite differences");
        expect_near(graph[i], eager[i], 0, which + ": graph vs eager");
      }
      const ag::Graph& g = traced.get_concrete_function(p).graph();
      EXPECT_EQ(count_ops(g, std::string(v.op) + "_grad"), 1) << v.name;
      EXPECT_EQ(count_ops(g, "While"), 0) << v.name;
    }
  }
}

TEST(RnnSequence, GradientsWithTheBatchAndTimeUnknownWhileTracing) {
  for (const Variant& v : kVariants) {
    const Params p = make_params(v, 3, 4, 2, 3);
    const Loss loss = sequence_loss(v, false);
    auto grads = [&](const Tensor& x, const Tensor& h0) {
      return ag_test::tape_gradients(loss, {x, p.kernel, p.recurrent_kernel, p.bias, h0});
    };
    const ag::TensorSpec x_spec({ag::kUnknownDim, ag::kUnknownDim, 2}, ag::float64);
    const ag::TensorSpec state_spec({ag::kUnknownDim, 3}, ag::float64);
    auto relaxed =
        ag::function(grads, {.input_signature = std::vector<ag::TensorSpec>{x_spec, state_spec}});
    const Tensors eager = grads(p.x, p.h0), graph = relaxed(p.x, p.h0);
    ASSERT_EQ(graph.size(), eager.size());
    for (size_t i = 0; i < eager.size(); ++i)
      expect_near(graph[i], eager[i], 0, v.name + ", input " + std::to_string(i));
  }
}

TEST(RnnSequence, SecondDerivativesMatchFiniteDifferencesOfTheFirst) {
  for (const Variant& v : {kVariants[1], kVariants[4]}) {
    const Tensors p = params(make_params(v, 2, 3, 2, 2));
    const Loss loss = sequence_loss(v, true);
    const Loss first_norm = [&](const Tensors& xs) {
      Tensor total = ag::zeros({}, ag::float64);
      for (const Tensor& g : ag_test::tape_gradients(loss, xs))
        total = total + ag::reduce_sum(g * g);
      return total;
    };
    const Tensors second = ag_test::tape_gradients(first_norm, p),
                  fd = ag_test::finite_differences(first_norm, p);
    for (size_t i = 0; i < p.size(); ++i)
      expect_near(second[i], fd[i], 1e-5, v.name + ", input " + std::to_string(i));
  }
}

// ---- The engines -------------------------------------------------------------------

TEST(RnnSequence, EnginesAgree) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "this build has no oneDNN (AG_GEMM=openblas)";
  namespace kernels = ag::ops::rnn_kernels;
  // Weights of a layer's usual scale, 1 / sqrt(fan-in).
  ag_test::UniformFloats random(7);
  for (const Variant& v : kVariants) {
    // (time, batch, input, units, reverse)
    for (kernels::Problem p : {kernels::Problem{3, 2, 5, 4, false},
                               {6, 3, 7, 9, true},
                               {8, 1, 32, 32, false},
                               {16, 16, 64, 128, false}}) {
      p.cell = v.cell;
      const int64_t state = p.batch * p.units, width = v.gates() * p.units;
      const int64_t bias_size = kernels::bias_size(p.cell, p.units);
      const int64_t y_size = p.time * state, x_size = p.time * p.batch * p.input;
      const auto x = random(x_size), h0 = random(state), bias = random(bias_size);
      const auto kernel = random(p.input * width, 1 / std::sqrt(float(p.input)));
      const auto recurrent = random(p.units * width, 1 / std::sqrt(float(p.units)));
      const auto dy = random(y_size), dh = random(state);
      const kernels::Inputs<float> in{x.data(),      h0.data(),        nullptr,
                                      kernel.data(), recurrent.data(), bias.data()};
      const std::string what = v.name + " [" + std::to_string(p.time) + ", " +
                               std::to_string(p.batch) + ", " + std::to_string(p.input) + ", " +
                               std::to_string(p.units) + "]";
      auto compare = [&](const std::vector<float>& a, const std::vector<float>& b,
                         const std::string& part) {
        ag_test::expect_engines_agree(a, b, what + ", " + part);
      };
      std::vector<float> y[2], h[2];
      for (int e = 0; e < 2; ++e) {
        y[e].resize(size_t(y_size)), h[e].resize(size_t(state));
        const kernels::Outputs<float> out{y[e].data(), h[e].data(), nullptr};
        e == 0 ? kernels::forward_onednn(p, in, out) : kernels::forward_loops<float>(p, in, out);
      }
      compare(y[0], y[1], "y");
      compare(h[0], h[1], "h");
      std::vector<float> grads[2][5];
      const int64_t sizes[5] = {x_size, state, p.input * width, p.units * width, bias_size};
      for (int e = 0; e < 2; ++e) {
        for (int k = 0; k < 5; ++k) grads[e][k].assign(size_t(sizes[k]), 0.0f);
        const kernels::Gradients<float> g{
            grads[e][0].data(), grads[e][1].data(), nullptr,
            grads[e][2].data(), grads[e][3].data(), grads[e][4].data()};
        e == 0 ? kernels::backward_onednn(p, in, dy.data(), dh.data(), nullptr, g)
               : kernels::backward_loops<float>(p, in, dy.data(), dh.data(), g);
      }
      const char* names[5] = {"dx", "dh0", "dkernel", "drecurrent_kernel", "dbias"};
      for (int k = 0; k < 5; ++k) compare(grads[0][k], grads[1][k], names[k]);
    }
  }
}

// A plan's sequence op with constant weights (captured tensors, as a loaded
// model's initializers) has them reordered into oneDNN's layouts once, when
// the plan is built; each call gives the eager call's bits, on several
// threads at once too, as the weights passed as arguments do. The LSTM too.
TEST(RnnSequence, PreparedPlanStepMatchesEagerCalls) {
  std::vector<Variant> variants(std::begin(kVariants), std::end(kVariants));
  variants.push_back({"lstm", Cell::lstm, "lstm_sequence"});
  for (const Variant& v : variants) {
    const int64_t units = 16, width = v.gates() * units;
    const Tensor kernel = wavy({5, width}, 0.4, 0.2, ag::float32);
    const Tensor recurrent = wavy({units, width}, 0.3, 0.3, ag::float32);
    const Tensor bias = wavy(v.gru() ? Shape{2, width} : Shape{width}, 0.3, 0.4, ag::float32);
    const Tensor h0 = wavy({8, units}, 0.5, 0.5, ag::float32);
    auto call = [&](const Tensors& q) -> Tensors {
      if (v.cell != Cell::lstm) return run(v, q, {});
      const ag::rnn::RNNOutput out = ag::rnn::lstm(q[0], {q[4], q[4]}, {q[1], q[2], q[3], {}});
      return {out.outputs, out.states[1]};
    };
    auto constant_weights =
        ag::function([&](const Tensor& x) { return call({x, kernel, recurrent, bias, h0}); });
    auto weight_arguments = ag::function([&](const Tensor& x, const Tensor& k, const Tensor& r,
                                             const Tensor& b) { return call({x, k, r, b, h0}); });
    const Tensor x = wavy({8, 6, 5}, 1.0, 0.1, ag::float32);
    const Tensors eager = call({x, kernel, recurrent, bias, h0});
    std::vector<Tensors> results(4);
    std::vector<std::thread> threads;
    for (Tensors& r : results) threads.emplace_back([&] { r = constant_weights(x); });
    for (std::thread& t : threads) t.join();
    results.push_back(weight_arguments(x, kernel, recurrent, bias));
    for (const Tensors& r : results)
      for (size_t k = 0; k < 2; ++k)
        EXPECT_EQ(values(r[k]), values(eager[k])) << v.name << ", result " << k;
  }
}

// ---- Errors ------------------------------------------------------------------------

TEST(RnnSequence, ErrorsNameTheWrongInput) {
  const Params g = make_params(kVariants[0], 2, 3, 2, 4);
  EXPECT_THROW_CONTAINS(ag::rnn::gru(g.x, {g.h0, g.h0}, {g.kernel, g.recurrent_kernel, g.bias}),
                        ag::InvalidArgumentError, "gru: expects 1 states {h}, got 2");
  EXPECT_THROW_CONTAINS(
      ag::rnn::gru(g.x, {g.h0}, {g.kernel, g.recurrent_kernel, ag::zeros({3, 12}, ag::float64)}),
      ag::InvalidArgumentError, "gru: bias must have shape [2, 3 * units] = [2, 12], got [3, 12]");
  EXPECT_THROW_CONTAINS(
      ag::rnn::gru(g.x, {g.h0}, {g.kernel, g.recurrent_kernel, ag::cast(g.bias, ag::float32)}),
      ag::InvalidArgumentError, "gru: bias is float32, but the inputs are float64");
  const Params r = make_params(kVariants[2], 2, 3, 2, 4);
  EXPECT_THROW_CONTAINS(
      ag::rnn::simple_rnn(r.x, {r.h0}, {r.recurrent_kernel, r.recurrent_kernel, r.bias}),
      ag::InvalidArgumentError,
      "simple_rnn: kernel must have shape [input_dim, units] = [2, 4], got [4, 4]");
  EXPECT_THROW_CONTAINS(ag::rnn::simple_rnn(r.x, {ag::zeros({3, 4}, ag::float64)},
                                            {r.kernel, r.recurrent_kernel, r.bias}),
                        ag::InvalidArgumentError,
                        "simple_rnn: state 0 must have shape [batch, units]");
}

}  // namespace
