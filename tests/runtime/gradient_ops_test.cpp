// Every op's gradient (runtime/ops/gradients_*.cpp) against central finite
// differences in float64, at several shapes with broadcasts and keepdims,
// eagerly and inside an ag::function (whose numbers must agree); and the
// coverage check that every op of ops.def has a gradient case or a
// not_differentiable mark.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ag/ag.h"
#include "error_test_util.h"
#include "ops/conv_geometry.h"
#include "ops/dispatch.h"
#include "ops/op_registry.h"

#include <ag/distribute.h>
#include <ag/rnn.h>

namespace ag_test {
void use_single_process_collectives();  // tests/runtime/op_cases.cpp
}

namespace {

using ag::Shape;
using ag::Tensor;
using Tensors = std::vector<Tensor>;

// A float64 tensor (ag::constant makes C++ doubles float32, as TensorFlow).
Tensor doubles(const std::vector<double>& values, const ag::Shape& shape) {
  Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

// fused_conv of a 2-D convolution (stride 1, SAME) with `epilogue`.
Tensor fused_conv(const Tensors& inputs, const ag::ops::ConvEpilogue& epilogue,
                  std::string_view data_format) {
  const ag::ops::ConvAttrs conv = ag::ops::conv_attrs("conv2d", 2, {1}, "SAME", data_format, {1});
  return ag::ops::apply(ag::ops::OpId::FusedConv, inputs,
                        ag::ops::FusedConvAttrs{conv, epilogue}.encode());
}

// Where an input's values are drawn from: away from the points where the
// op is not differentiable (0 for abs, relu, division; ties).
enum class Domain { Any, Positive, AwayFromZero };

struct GradCase {
  std::string op;  // the registry op this case covers
  std::vector<Shape> shapes;
  std::function<Tensor(const Tensors&)> f;
  std::vector<Domain> domains = {};  // per input; Any when absent
  double tolerance = 1e-6;
  double step = 1e-6;  // of the central differences
};

std::string label(const GradCase& c);
void PrintTo(const GradCase& c, std::ostream* os);

std::string label(const GradCase& c) {
  std::string s = c.op + "(";
  for (size_t i = 0; i < c.shapes.size(); ++i) s += (i ? ", " : "") + c.shapes[i].to_string();
  return s + ")";
}

void PrintTo(const GradCase& c, std::ostream* os) {
  *os << label(c);
}

Tensor random_input(const Shape& shape, Domain domain, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<double> values(size_t(shape.num_elements()));
  for (double& v : values) {
    v = u(rng);
    if (domain == Domain::Positive) v = std::abs(v) + 0.5;
    if (domain == Domain::AwayFromZero) v = v < 0 ? v - 0.3 : v + 0.3;
  }
  return doubles(values, shape);
}

Tensor weights_like(const Tensor& y, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> values(size_t(y.num_elements()));
  for (double& v : values) v = u(rng);
  return ag::cast(doubles(values, y.shape()), y.dtype());
}

// sum(w * f(xs)) as a double: the scalar whose gradient output_gradients = w seeds.
double weighted(const GradCase& c, const Tensors& xs, const Tensor& w) {
  Tensor y = c.f(xs);
  return ag::reduce_sum(ag::cast(y, ag::float64) * ag::cast(w, ag::float64)).item<double>();
}

Tensors finite_differences(const GradCase& c, const Tensors& xs, const Tensor& w) {
  const double h = c.step;
  Tensors grads;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> g(size_t(xs[i].num_elements()));
    for (size_t k = 0; k < g.size(); ++k) {
      Tensors plus = xs, minus = xs;
      plus[i] = doubles(xs[i].to_vector<double>(), xs[i].shape());
      minus[i] = doubles(xs[i].to_vector<double>(), xs[i].shape());
      plus[i].mutable_data<double>()[k] += h;
      minus[i].mutable_data<double>()[k] -= h;
      g[k] = (weighted(c, plus, w) - weighted(c, minus, w)) / (2 * h);
    }
    grads.push_back(doubles(g, xs[i].shape()));
  }
  return grads;
}

Tensors tape_gradients(const GradCase& c, const Tensors& xs, const Tensor& w) {
  ag::GradientTape tape;
  for (const Tensor& x : xs) tape.watch(x);
  Tensor y = c.f(xs);
  return tape.gradient(y, xs, ag::UnconnectedGradients::Zero, w);
}

void expect_close(const Tensor& actual, const Tensor& expected, double tolerance,
                  const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_NEAR(a[k], e[k], tolerance * (1 + std::abs(e[k]))) << what << " element " << k;
}

// `dims` computed in the graph from x's values (which do not change them),
// so that a traced function reads them when it runs.
Tensor computed_in_graph(const Tensor& x, std::vector<int64_t> dims) {
  const auto n = int64_t(dims.size());
  return ag::constant(dims, {n}) + ag::cast(ag::reduce_sum(x) * 0.0, ag::int64);
}

// reshape, broadcast_to and tile by shapes computed in the graph.
void add_dynamic_shape_cases(std::vector<GradCase>& c) {
  c.push_back({"dynamic_reshape", {Shape{2, 3}}, [](const Tensors& x) {
                 return ag::reshape(x[0], computed_in_graph(x[0], {3, -1}));
               }});
  c.push_back({"dynamic_broadcast_to", {Shape{2, 1, 3}}, [](const Tensors& x) {
                 return ag::broadcast_to(x[0], computed_in_graph(x[0], {4, 2, 5, 3}));
               }});
  c.push_back({"dynamic_tile", {Shape{2, 1, 3}}, [](const Tensors& x) {
                 return ag::tile(x[0], computed_in_graph(x[0], {2, 3, 1}));
               }});
}

// tile, reverse, gather_nd (also as sort's and top_k's values), the
// scatters and cumprod. Random inputs have no ties for the sorts.
void add_selection_cases(std::vector<GradCase>& c) {
  auto one = [&](const std::string& op, std::vector<Shape> shapes,
                 std::function<Tensor(const Tensors&)> f) {
    c.push_back({op, std::move(shapes), std::move(f)});
  };
  one("tile", {{2, 3}}, [](const Tensors& x) { return ag::tile(x[0], {2, 1}); });
  one("tile", {{2, 1, 3}}, [](const Tensors& x) { return ag::tile(x[0], {1, 3, 2}); });
  one("reverse", {{2, 3, 4}}, [](const Tensors& x) { return ag::reverse(x[0], {0, -1}); });
  // Repeated rows, single elements, a batch dim.
  one("gather_nd", {{4, 3}},
      [](const Tensors& x) { return ag::gather_nd(x[0], ag::constant({{2}, {0}, {2}})); });
  one("gather_nd", {{3, 4}},
      [](const Tensors& x) { return ag::gather_nd(x[0], ag::constant({{2, 1}, {0, 3}})); });
  one("gather_nd", {{2, 3, 4}}, [](const Tensors& x) {
    return ag::gather_nd(x[0], ag::constant({{{1}, {1}}, {{0}, {2}}}), 1);
  });
  one("gather_nd", {{3, 5}}, [](const Tensors& x) { return ag::top_k(x[0], 2).values; });
  one("gather_nd", {{4, 3}}, [](const Tensors& x) { return ag::sort(x[0], 0, "DESCENDING"); });
  one("tensor_scatter_nd_update", {{4, 3}, {2, 3}}, [](const Tensors& x) {
    return ag::tensor_scatter_nd_update(x[0], ag::constant({{1}, {3}}), x[1]);
  });
  one("tensor_scatter_nd_add", {{4, 3}, {3, 3}}, [](const Tensors& x) {
    return ag::tensor_scatter_nd_add(x[0], ag::constant({{1}, {1}, {3}}), x[1]);
  });
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      c.push_back({"cumprod",
                   {Shape{3, 4}},
                   [exclusive, reverse](const Tensors& x) {
                     return ag::cumprod(x[0], 1, exclusive, reverse);
                   },
                   {Domain::AwayFromZero}});
    }
  }
}

// The collectives on one rank (tests/distribute checks them across ranks).
void add_collective_cases(std::vector<GradCase>& c) {
  using ag::distribute::ReduceOp;
  auto one = [&](const std::string& op, Shape shape, std::function<Tensor(const Tensor&)> f) {
    c.push_back({op, {shape}, [f](const Tensors& x) {
                   ag_test::use_single_process_collectives();
                   return f(x[0]);
                 }});
  };
  for (ReduceOp reduce : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    one("all_reduce", {2, 3},
        [reduce](const Tensor& x) { return ag::distribute::all_reduce(x, reduce); });
  }
  one("broadcast", {2, 3}, [](const Tensor& x) { return ag::distribute::broadcast(x); });
  one("all_gather", {2, 3}, [](const Tensor& x) { return ag::distribute::all_gather(x); });
  one("reduce_scatter", {2, 3}, [](const Tensor& x) { return ag::distribute::reduce_scatter(x); });
  one("reduce_scatter", {4},
      [](const Tensor& x) { return ag::distribute::reduce_scatter(x, ReduceOp::Mean); });
}

std::vector<GradCase> make_cases() {
  using D = Domain;
  std::vector<GradCase> c;
  auto unary = [&](const std::string& op, std::function<Tensor(const Tensor&)> f,
                   Domain domain = D::Any) {
    for (Shape s : {Shape{}, Shape{2, 3}})
      c.push_back({op, {s}, [f](const Tensors& x) { return f(x[0]); }, {domain}});
  };
  unary("neg", [](const Tensor& x) { return -x; });
  unary("abs", [](const Tensor& x) { return ag::abs(x); }, D::AwayFromZero);
  unary("exp", [](const Tensor& x) { return ag::exp(x); });
  unary("log", [](const Tensor& x) { return ag::log(x); }, D::Positive);
  unary("sqrt", [](const Tensor& x) { return ag::sqrt(x); }, D::Positive);
  unary("tanh", [](const Tensor& x) { return ag::tanh(x); });
  unary("sigmoid", [](const Tensor& x) { return ag::sigmoid(x); });
  unary("sin", [](const Tensor& x) { return ag::sin(x); });
  unary("cos", [](const Tensor& x) { return ag::cos(x); });
  unary("tan", [](const Tensor& x) { return ag::tan(x * 0.5); });
  unary("asin", [](const Tensor& x) { return ag::asin(x * 0.3); });
  unary("acos", [](const Tensor& x) { return ag::acos(x * 0.3); });
  unary("atan", [](const Tensor& x) { return ag::atan(x); });
  unary("sinh", [](const Tensor& x) { return ag::sinh(x); });
  unary("cosh", [](const Tensor& x) { return ag::cosh(x); });
  unary("asinh", [](const Tensor& x) { return ag::asinh(x); });
  unary("acosh", [](const Tensor& x) { return ag::acosh(x + 1); }, D::Positive);
  unary("atanh", [](const Tensor& x) { return ag::atanh(x * 0.3); });
  unary("erf", [](const Tensor& x) { return ag::erf(x); });
  unary("log1p", [](const Tensor& x) { return ag::log1p(x); }, D::Positive);
  unary("expm1", [](const Tensor& x) { return ag::expm1(x); });
  unary("rsqrt", [](const Tensor& x) { return ag::rsqrt(x); }, D::Positive);
  unary("reciprocal", [](const Tensor& x) { return ag::reciprocal(x); }, D::AwayFromZero);
  unary("softplus", [](const Tensor& x) { return ag::softplus(x); });
  unary("softsign", [](const Tensor& x) { return ag::softsign(x); }, D::AwayFromZero);
  unary("elu", [](const Tensor& x) { return ag::elu(x); }, D::AwayFromZero);
  unary("selu", [](const Tensor& x) { return ag::selu(x); }, D::AwayFromZero);
  unary("gelu", [](const Tensor& x) { return ag::gelu(x); });
  c.push_back({"softmax", {Shape{3, 4}}, [](const Tensors& x) { return ag::softmax(x[0]); }});
  c.push_back({"softmax", {Shape{3, 4, 2}}, [](const Tensors& x) { return ag::softmax(x[0], 1); }});
  c.push_back(
      {"log_softmax", {Shape{3, 4}}, [](const Tensors& x) { return ag::log_softmax(x[0], 0); }});
  // The ops of softmax's gradients: the gradient of sum(softmax(x) * w) by x.
  c.push_back({"softmax_grad", {Shape{3, 4}, Shape{3, 4}}, [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::softmax(x[0], 1) * x[1];
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  c.push_back({"log_softmax_grad", {Shape{2, 3, 2}, Shape{2, 3, 2}}, [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::log_softmax(x[0], 1) * x[1];
                 return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
               }});
  // Normalisation, by every input: given statistics (channels last and
  // first), the batch's (through moments), and layer_norm.
  c.push_back(
      {"batch_norm",
       {Shape{2, 3, 4}, Shape{4}, Shape{4}, Shape{4}, Shape{4}},
       [](const Tensors& x) { return ag::batch_normalization(x[0], x[1], x[2], x[3], x[4], 0.01); },
       {Domain::Any, Domain::Any, Domain::Positive}});
  c.push_back({"batch_norm",
               {Shape{2, 3, 2, 2}, Shape{3}, Shape{3}, Shape{3}, Shape{3}},
               [](const Tensors& x) {
                 return ag::fused_batch_norm(x[0], x[4], x[3], x[1], x[2], 0.01, "NCHW", false).y;
               },
               {Domain::Any, Domain::Any, Domain::Positive}});
  c.push_back({"fused_batch_norm", {Shape{4, 2, 3}, Shape{3}, Shape{3}}, [](const Tensors& x) {
                 return ag::fused_batch_norm(x[0], x[1], x[2]).y;
               }});
  c.push_back({"fused_batch_norm", {Shape{2, 3, 2, 2}, Shape{3}, Shape{3}}, [](const Tensors& x) {
                 return ag::fused_batch_norm(x[0], x[1], x[2], {}, {}, 0.01, "NCHW").y;
               }});
  // fused_batch_norm_grad, by dy, x and scale: the gradient of sum(y * w) by x.
  c.push_back(
      {"fused_batch_norm_grad", {Shape{3, 2, 2}, Shape{2}, Shape{3, 2, 2}}, [](const Tensors& x) {
         ag::GradientTape tape;
         tape.watch(x[0]);
         const Tensor y = ag::fused_batch_norm(x[0], x[1], x[1] * 0.5, {}, {}, 0.01).y;
         return tape.gradient(ag::reduce_sum(y * x[2]), std::vector<Tensor>{x[0]})[0];
       }});
  c.push_back({"layer_norm", {Shape{2, 3, 4}, Shape{3, 4}, Shape{3, 4}}, [](const Tensors& x) {
                 return ag::layer_normalization(x[0], x[1], x[2], 1);
               }});
  c.push_back({"layer_norm", {Shape{3, 5}, Shape{5}, Shape{5}}, [](const Tensors& x) {
                 return ag::layer_normalization(x[0], x[1], x[2], -1, 1e-5);
               }});
  // layer_norm_grad, by x, scale and dy: the gradient of sum(layer_norm * dy) by x.
  c.push_back(
      {"layer_norm_grad", {Shape{2, 3, 2}, Shape{3, 2}, Shape{2, 3, 2}}, [](const Tensors& x) {
         ag::GradientTape tape;
         tape.watch(x[0]);
         const Tensor y = ag::layer_normalization(x[0], x[1], {}, 1, 0.01) * x[2];
         return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{x[0]})[0];
       }});
  // lstm_sequence (ag::rnn::lstm), in reverse, by the inputs, weights and
  // initial states; lstm_sequence_grad, by the same: the gradient of a sum
  // of the outputs' squares by the recurrent kernel.
  auto lstm = [](const Tensors& x) {
    ag::rnn::RNNOptions options;
    options.reverse = true;
    const ag::rnn::RNNOutput out =
        ag::rnn::lstm(x[0], {x[4], x[5]}, {x[1], x[2], x[3], Tensor()}, {}, options);
    return ag::concat({out.outputs, ag::expand_dims(out.states[1], 1)}, 1);
  };
  const std::vector<Shape> lstm_shapes = {Shape{2, 3, 2}, Shape{2, 8}, Shape{2, 8},
                                          Shape{8},       Shape{2, 2}, Shape{2, 2}};
  c.push_back({"lstm_sequence", lstm_shapes, lstm});
  c.push_back({"lstm_sequence_grad", lstm_shapes, [lstm](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[2]);
                 const Tensor y = lstm(x);
                 return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[2]})[0];
               }});
  // gru_sequence (ag::rnn::gru) in reverse without reset_after, and
  // simple_rnn_sequence (ag::rnn::simple_rnn) of tanh, by the inputs,
  // weights and initial state; their gradient ops by the recurrent kernel.
  auto gru = [](const Tensors& x) {
    ag::rnn::RNNOptions options;
    options.reverse = true;
    ag::rnn::GRUOptions cell;
    cell.reset_after = false;
    const ag::rnn::RNNOutput out = ag::rnn::gru(x[0], {x[4]}, {x[1], x[2], x[3]}, cell, options);
    return ag::concat({out.outputs, ag::expand_dims(out.states[0], 1)}, 1);
  };
  auto simple_rnn = [](const Tensors& x) {
    const ag::rnn::RNNOutput out = ag::rnn::simple_rnn(x[0], {x[4]}, {x[1], x[2], x[3]});
    return ag::concat({out.outputs, ag::expand_dims(out.states[0], 1)}, 1);
  };
  auto by_recurrent_kernel = [](std::function<Tensor(const Tensors&)> f) {
    return [f](const Tensors& x) {
      ag::GradientTape tape;
      tape.watch(x[2]);
      const Tensor y = f(x);
      return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[2]})[0];
    };
  };
  const std::vector<Shape> gru_shapes = {Shape{2, 3, 2}, Shape{2, 6}, Shape{2, 6}, Shape{2, 6},
                                         Shape{2, 2}};
  const std::vector<Shape> simple_rnn_shapes = {Shape{2, 3, 2}, Shape{2, 2}, Shape{2, 2}, Shape{2},
                                                Shape{2, 2}};
  c.push_back({"gru_sequence", gru_shapes, gru});
  c.push_back({"gru_sequence_grad", gru_shapes, by_recurrent_kernel(gru)});
  c.push_back({"simple_rnn_sequence", simple_rnn_shapes, simple_rnn});
  c.push_back({"simple_rnn_sequence_grad", simple_rnn_shapes, by_recurrent_kernel(simple_rnn)});
  unary("relu", [](const Tensor& x) { return ag::relu(x); }, D::AwayFromZero);
  unary("leaky_relu", [](const Tensor& x) { return ag::leaky_relu(x, 0.3); }, D::AwayFromZero);
  // Clipped below -1 and above 1 (random inputs are not at the kinks).
  unary("hard_sigmoid", [](const Tensor& x) { return ag::hard_sigmoid(x, 0.5, 0.5); });
  // Piecewise constant: zero gradient, which the differences agree with
  // away from the steps (random inputs are).
  unary("round", [](const Tensor& x) { return ag::round(x) * x; });
  unary("floor", [](const Tensor& x) { return ag::floor(x) * x; });
  unary("ceil", [](const Tensor& x) { return ag::ceil(x) * x; });
  unary("sign", [](const Tensor& x) { return ag::sign(x) * x; }, D::AwayFromZero);
  unary("Identity", [](const Tensor& x) { return ag::identity(x); });
  c.push_back({"cast",
               {Shape{2, 3}},
               [](const Tensors& x) { return ag::cast(x[0], ag::float32) * 3.0f; },
               {},
               2e-3,
               1e-2});

  auto binary = [&](const std::string& op, std::function<Tensor(const Tensor&, const Tensor&)> f,
                    std::vector<Domain> domains = {}) {
    for (auto [a, b] : std::vector<std::pair<Shape, Shape>>{{{2, 3}, {2, 3}},
                                                            {{2, 3}, {3}},
                                                            {{2, 1}, {1, 3}},
                                                            {{}, {2, 3}},
                                                            {{4, 1, 3}, {2, 1}}}) {
      c.push_back({op, {a, b}, [f](const Tensors& x) { return f(x[0], x[1]); }, domains});
    }
  };
  binary("add", [](const Tensor& a, const Tensor& b) { return a + b; });
  binary("sub", [](const Tensor& a, const Tensor& b) { return a - b; });
  binary("mul", [](const Tensor& a, const Tensor& b) { return a * b; });
  binary("truediv", [](const Tensor& a, const Tensor& b) { return a / b; },
         {D::Any, D::AwayFromZero});
  binary("pow", [](const Tensor& a, const Tensor& b) { return ag::pow(a, b); },
         {D::Positive, D::Any});
  binary("maximum", [](const Tensor& a, const Tensor& b) { return ag::maximum(a, b); });
  binary("minimum", [](const Tensor& a, const Tensor& b) { return ag::minimum(a, b); });
  binary("mod", [](const Tensor& a, const Tensor& b) { return ag::mod(a, b); },
         {D::Any, D::AwayFromZero});

  c.push_back({"where", {Shape{2, 3}, Shape{3}}, [](const Tensors& x) {
                 Tensor cond = ag::constant({{true, false, true}, {false, false, true}});
                 return ag::where(cond, x[0], x[1]);
               }});
  c.push_back({"where", {Shape{2, 1}, Shape{}}, [](const Tensors& x) {
                 return ag::where(ag::constant({true, false, true}), x[0], x[1]);
               }});
  c.push_back({"clip_by_value", {Shape{2, 3}, Shape{}, Shape{3}}, [](const Tensors& x) {
                 return ag::clip_by_value(x[0], x[1] * 0.1 - 0.5, x[2] * 0.1 + 0.5);
               }});

  auto reduce = [&](const std::string& op,
                    Tensor (*f)(const Tensor&, std::vector<int64_t>, bool, ag::CallSite)) {
    for (auto axes : std::vector<std::vector<int64_t>>{{}, {1}, {0, 2}, {-1}}) {
      for (bool keepdims : {false, true}) {
        c.push_back({op, {Shape{2, 3, 4}}, [f, axes, keepdims](const Tensors& x) {
                       return f(x[0], axes, keepdims, ag::CallSite::current());
                     }});
      }
    }
  };
  reduce("reduce_sum", &ag::reduce_sum);
  reduce("reduce_mean", &ag::reduce_mean);
  reduce("reduce_max", &ag::reduce_max);
  reduce("reduce_min", &ag::reduce_min);
  reduce("reduce_prod", &ag::reduce_prod);
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      c.push_back({"cumsum", {Shape{3, 4}}, [exclusive, reverse](const Tensors& x) {
                     return ag::cumsum(x[0], 1, exclusive, reverse);
                   }});
    }
  }

  // x summed to like's shape: leading axes, size-1 axes, and none.
  for (auto [x, like] :
       {std::pair{Shape{3, 4, 2}, Shape{4, 1}}, std::pair{Shape{2, 3}, Shape{1, 3}},
        std::pair{Shape{2, 3}, Shape{2, 3}}}) {
    c.push_back({"reduce_sum_to", {x, like}, [](const Tensors& t) {
                   return ag::reduce_sum_to(t[0], t[1]);
                 }});
  }
  c.push_back({"matmul", {Shape{2, 3}, Shape{3, 4}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1]);
               }});
  c.push_back({"matmul", {Shape{2, 2, 3}, Shape{2, 3, 2}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1]);
               }});
  // Broadcast batch dims (summed in the gradient), transposes, one b for a batch of a.
  c.push_back({"matmul", {Shape{2, 1, 2, 3}, Shape{3, 3, 2}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1]);
               }});
  c.push_back({"matmul", {Shape{3, 2}, Shape{4, 3}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1], true, true);
               }});
  c.push_back({"matmul", {Shape{2, 2, 3}, Shape{3, 4}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1]);
               }});
  c.push_back({"matmul", {Shape{2, 2, 3}, Shape{4, 3}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1], false, true);
               }});
  c.push_back({"matmul", {Shape{2, 3, 2}, Shape{1, 3, 4}}, [](const Tensors& x) {
                 return ag::matmul(x[0], x[1], true, false);
               }});
  // einsum through its lowering: a contraction, a diagonal, an outer product.
  c.push_back({"matmul", {Shape{2, 3, 4}, Shape{4, 5}}, [](const Tensors& x) {
                 return ag::einsum("bij,jk->bki", x);
               }});
  c.push_back(
      {"gather", {Shape{3, 3, 2}}, [](const Tensors& x) { return ag::einsum("iij->j", x); }});
  c.push_back({"mul", {Shape{3}, Shape{2, 4}}, [](const Tensors& x) {
                 return ag::einsum("i,jk->kij", x);
               }});
  // linspace in start and stop; norms (random inputs are away from 0 and ties).
  c.push_back({"concat", {Shape{}, Shape{2}}, [](const Tensors& x) {
                 return ag::linspace(x[0], x[1], 4, -1);
               }});
  c.push_back({"sqrt", {Shape{3, 4}}, [](const Tensors& x) { return ag::norm(x[0]); }});
  c.push_back({"sqrt", {Shape{2, 3, 4}}, [](const Tensors& x) {
                 return ag::norm(x[0], "fro", {0, 2}, true);
               }});
  c.push_back({"reduce_max", {Shape{3, 4}}, [](const Tensors& x) {
                 return ag::norm(x[0], INFINITY, {1});
               }});
  c.push_back(
      {"reduce_max", {Shape{3, 4}}, [](const Tensors& x) { return ag::norm(x[0], 1, {0, 1}); }});
  c.push_back({"pow", {Shape{5}}, [](const Tensors& x) { return ag::norm(x[0], 3); }});
  // dropout: every call of f restarts the seed, so each draws the same mask.
  c.push_back({"dropout_mask", {Shape{3, 4}}, [](const Tensors& x) {
                 ag::set_random_seed(3);
                 return ag::dropout(x[0], 0.5, 9);
               }});
  // Convolution and its two gradient ops (whose own gradients are the
  // second derivatives of a convolution), over padding, strides, dilations,
  // groups and layouts.
  auto conv = [&](const std::string& op, Shape a, Shape b,
                  std::function<Tensor(const Tensors&)> f) {
    c.push_back({op, {a, b}, std::move(f)});
  };
  conv("conv", {2, 5, 4, 3}, {3, 2, 3, 2},
       [](const Tensors& x) { return ag::conv2d(x[0], x[1], {2, 1}, "SAME"); });
  conv("conv", {1, 2, 6, 5}, {2, 2, 1, 4}, [](const Tensors& x) {
    return ag::conv2d(x[0], x[1], {1}, {{{1, 0}, {0, 2}}}, "NCHW", {2, 1});
  });
  conv("conv", {2, 7, 2}, {3, 2, 3},
       [](const Tensors& x) { return ag::conv1d(x[0], x[1], {1}, "VALID"); });
  conv("conv", {1, 3, 3, 3, 2}, {2, 2, 2, 2, 2},
       [](const Tensors& x) { return ag::conv3d(x[0], x[1], {1}, "SAME"); });
  conv("conv_backprop_input", {1, 3, 3, 4}, {3, 3, 2, 4}, [](const Tensors& x) {
    return ag::conv2d_transpose(x[0], x[1], {1, 5, 6, 2}, {2}, "SAME");
  });
  conv("conv_backprop_filter", {1, 2, 5, 4}, {1, 4, 5, 4}, [](const Tensors& x) {
    return ag::conv_backprop_filter(x[0], {2, 2, 1, 4}, x[1], {1}, "SAME", "NCHW");
  });
  // fused_conv, which only the optimiser makes: called by its op id, with
  // each epilogue term and activation.
  using Activation = ag::ops::ConvEpilogue::Activation;
  c.push_back(
      {"fused_conv",
       {Shape{1, 4, 5, 3}, Shape{3, 3, 3, 2}, Shape{2}, Shape{1, 4, 5, 2}},
       [](const Tensors& x) { return fused_conv(x, {true, true, Activation::relu}, "NHWC"); }});
  c.push_back({"fused_conv",
               {Shape{1, 3, 4, 4}, Shape{2, 2, 3, 2}, Shape{1, 2, 1, 1}},
               [](const Tensors& x) {
                 return fused_conv(x, {true, false, Activation::clip, -0.5, 0.5}, "NCHW");
               }});
  // Pools and the ops of their gradients (random inputs have no ties).
  auto pool = [&](const std::string& op, std::vector<Shape> shapes,
                  std::function<Tensor(const Tensors&)> f) {
    c.push_back({op, std::move(shapes), std::move(f)});
  };
  pool("max_pool", {{2, 5, 4, 3}},
       [](const Tensors& x) { return ag::max_pool2d(x[0], {3, 2}, {2, 1}, "SAME"); });
  pool("avg_pool", {{1, 2, 5, 5}},
       [](const Tensors& x) { return ag::avg_pool2d(x[0], {3}, {2}, "SAME", "NCHW"); });
  pool("avg_pool", {{1, 6, 5, 2}},
       [](const Tensors& x) { return ag::pool(x[0], {2}, "AVG", {1}, "SAME", "", {2}); });
  pool("avg_pool", {{2, 7, 2}},
       [](const Tensors& x) { return ag::avg_pool(x[0], {2}, {2}, ag::Padding({{1, 1}})); });
  pool("max_pool_grad", {{1, 4, 5, 2}, {1, 2, 3, 2}},
       [](const Tensors& x) { return ag::max_pool_grad(x[0], x[1], {2}, {2}, "SAME"); });
  pool("max_pool_grad_grad", {{1, 4, 5, 2}, {1, 4, 5, 2}},
       [](const Tensors& x) { return ag::max_pool_grad_grad(x[0], x[1], {2}, {2}, "SAME"); });
  pool("avg_pool_grad", {{1, 2, 3, 2}},
       [](const Tensors& x) { return ag::avg_pool_grad({1, 4, 5, 2}, x[0], {3}, {2}, "SAME"); });
  for (const char* mode : {"CONSTANT", "REFLECT", "SYMMETRIC", "EDGE"}) {
    c.push_back({"pad", {Shape{3, 4, 2}}, [mode](const Tensors& x) {
                   return ag::pad(x[0], {{1, 2}, {3, 0}, {1, 1}}, mode, 2);
                 }});
  }
  // Resizing: gathers weighed by constants.
  c.push_back({"gather", {Shape{1, 3, 4, 2}}, [](const Tensors& x) {
                 return ag::image::resize(x[0], {5, 6}, "bicubic");
               }});
  // pad_grad (pad's gradient) and its own gradient, pad.
  c.push_back({"pad_grad", {Shape{3, 4, 2}}, [](const Tensors& x) {
                 ag::GradientTape tape;
                 tape.watch(x[0]);
                 const Tensor y = ag::pad(x[0], {{1, 2}, {3, 0}, {1, 1}}, "REFLECT");
                 return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x[0]})[0];
               }});
  c.push_back({"transpose", {Shape{2, 3, 4}}, [](const Tensors& x) {
                 return ag::transpose(x[0], {1, 2, 0});
               }});
  c.push_back({"transpose", {Shape{2, 3}}, [](const Tensors& x) { return ag::transpose(x[0]); }});
  // Entries counted from the end (the fuzzer's transposed arrays write them so).
  c.push_back({"transpose", {Shape{2, 3, 4}}, [](const Tensors& x) {
                 return ag::transpose(x[0], {-2, 0, -1});
               }});
  c.push_back(
      {"reshape", {Shape{2, 3}}, [](const Tensors& x) { return ag::reshape(x[0], {3, -1}); }});
  c.push_back(
      {"expand_dims", {Shape{2, 3}}, [](const Tensors& x) { return ag::expand_dims(x[0], -1); }});
  c.push_back({"squeeze", {Shape{2, 1, 3, 1}}, [](const Tensors& x) { return ag::squeeze(x[0]); }});
  c.push_back({"broadcast_to", {Shape{2, 1, 3}}, [](const Tensors& x) {
                 return ag::broadcast_to(x[0], {4, 2, 5, 3});
               }});
  c.push_back(
      {"squeeze", {Shape{1, 3, 1}}, [](const Tensors& x) { return ag::squeeze(x[0], {-1}); }});
  c.push_back({"concat", {Shape{2, 3}, Shape{2, 2}}, [](const Tensors& x) {
                 return ag::concat({x[0], x[1], x[0]}, 1);
               }});
  c.push_back({"stack", {Shape{2, 3}, Shape{2, 3}}, [](const Tensors& x) {
                 return ag::stack({x[0], x[1]}, 1);
               }});
  c.push_back({"gather", {Shape{4, 3}}, [](const Tensors& x) {
                 return ag::gather(x[0], ag::constant({2, 0, 2}), 0);
               }});
  c.push_back({"gather", {Shape{2, 4, 3}}, [](const Tensors& x) {
                 return ag::gather(x[0], ag::constant({{3, 1}, {1, 1}}), 1);
               }});
  c.push_back({"gather", {Shape{3, 2}}, [](const Tensors& x) { return x[0][1]; }});
  // Repeated indices along the last axis and along a middle one with a scalar index.
  c.push_back({"gather", {Shape{2, 3, 4}}, [](const Tensors& x) {
                 return ag::gather(x[0], ag::constant({3, 3, 0, 3}), -1);
               }});
  c.push_back({"gather", {Shape{2, 3, 4}}, [](const Tensors& x) {
                 return ag::gather(x[0], Tensor(int64_t{2}), 1);
               }});
  c.push_back({"gather", {Shape{5}}, [](const Tensors& x) {
                 return ag::gather(x[0], ag::constant({{4, 0}, {4, 4}, {1, 0}}), 0);
               }});
  // Rows summed into segments: repeated ids, an empty segment, ids of rank 2.
  c.push_back({"unsorted_segment_sum", {Shape{4, 3}}, [](const Tensors& x) {
                 return ag::unsorted_segment_sum(x[0], ag::constant({2, 0, 2, 1}), Tensor(5));
               }});
  c.push_back({"unsorted_segment_sum", {Shape{2, 2, 3}}, [](const Tensors& x) {
                 return ag::unsorted_segment_sum(x[0], ag::constant({{1, 1}, {0, 3}}),
                                                 Tensor(int64_t{4}));
               }});
  c.push_back({"unsorted_segment_sum", {Shape{3}}, [](const Tensors& x) {
                 return ag::unsorted_segment_sum(x[0], ag::constant({0, 0, 0}), Tensor(2));
               }});
  // Row 1 written over gets no gradient; a dynamic array grows to 4 rows.
  c.push_back({"tensor_array_write", {Shape{3, 2}, Shape{2}}, [](const Tensors& x) {
                 ag::TensorArray ta(ag::float64, 3);
                 ta.unstack(x[0]);
                 return ta.write(1, x[1] * 2.0).stack();
               }});
  c.push_back({"tensor_array_write", {Shape{2, 2}, Shape{2}}, [](const Tensors& x) {
                 ag::TensorArray ta(ag::float64, 2, /*dynamic_size=*/true);
                 ta.unstack(x[0]);
                 return ta.write(3, x[1]).stack();
               }});
  c.push_back(
      {"slice", {Shape{3, 4}}, [](const Tensors& x) { return ag::slice(x[0], {1, 1}, {2, -1}); }});
  add_selection_cases(c);
  add_dynamic_shape_cases(c);
  add_collective_cases(c);
  return c;
}

class OpGradient : public testing::TestWithParam<GradCase> {};

TEST_P(OpGradient, MatchesFiniteDifferencesEagerAndInAGraph) {
  const GradCase& c = GetParam();
  std::mt19937 rng(42);
  Tensors xs;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    Domain d = i < c.domains.size() ? c.domains[i] : Domain::Any;
    xs.push_back(random_input(c.shapes[i], d, rng));
  }
  Tensor w = weights_like(c.f(xs), rng);
  Tensors eager = tape_gradients(c, xs, w);
  Tensors expected = finite_differences(c, xs, w);
  ASSERT_EQ(eager.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    expect_close(eager[i], expected[i], c.tolerance,
                 label(c) + " eager, input " + std::to_string(i));

  auto traced = ag::function([&c](const Tensors& inputs, const Tensor& weights) {
    return tape_gradients(c, inputs, weights);
  });
  Tensors graph = traced(xs, w);
  ASSERT_EQ(graph.size(), xs.size());
  for (size_t i = 0; i < xs.size(); ++i)
    expect_close(graph[i], eager[i], 1e-12,
                 label(c) + " graph vs eager, input " + std::to_string(i));
  std::vector<std::string> ops = traced.get_concrete_function(xs, w).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), c.op), ops.end())
      << label(c) << ": the traced gradient has no " << c.op << " node";
}

INSTANTIATE_TEST_SUITE_P(Ops, OpGradient, testing::ValuesIn(make_cases()),
                         [](const testing::TestParamInfo<GradCase>& info) {
                           std::string name = info.param.op + "_" + std::to_string(info.index);
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(OpGradientCoverage, EveryOpHasAGradientCaseOrIsMarkedNotDifferentiable) {
  std::set<std::string> covered;
  for (const GradCase& c : make_cases()) covered.insert(c.op);
  for (size_t i = 0; i < size_t(ag::ops::OpId::kCount); ++i) {
    const ag::ops::OpDef& def = ag::ops::op_def(ag::ops::OpId(i));
    std::string name(def.name);
    ASSERT_NE(def.gradient, nullptr) << name;
    if (!def.differentiable()) continue;
    EXPECT_TRUE(covered.count(name))
        << "op '" << name << "' has a gradient function but no case in make_cases() of "
        << "tests/runtime/gradient_ops_test.cpp (or mark it not_differentiable in ops.def)";
  }
}

TEST(OpGradientCoverage, NotDifferentiableOpsAreTheExpectedOnes) {
  std::set<std::string> marked;
  for (size_t i = 0; i < size_t(ag::ops::OpId::kCount); ++i) {
    const ag::ops::OpDef& def = ag::ops::op_def(ag::ops::OpId(i));
    if (!def.differentiable()) marked.insert(std::string(def.name));
  }
  std::set<std::string> expected = {
      "logical_not",    "floordiv",      "equal",         "not_equal",   "less",
      "less_equal",     "greater",       "greater_equal", "logical_and", "logical_or",
      "reduce_any",     "reduce_all",    "argmax",        "argmin",      "one_hot",
      "shape",          "size",          "rank",          "dim",         "range",
      "random_uniform", "random_normal", "zeros",         "logical_xor", "bitwise_and",
      "bitwise_or",     "bitwise_xor",   "invert",        "left_shift",  "right_shift",
      "is_nan",         "is_inf",        "is_finite",     "argsort",     "dropout_mask"};
  // Indices picked by comparing values.
  expected.insert({"non_max_suppression", "unique_first_indices"});
  // Integer codes: rounding to them has no gradient, and they take none.
  expected.insert({"quantize_linear", "dequantize_linear"});
  // Strings carry no gradient, nor do the numbers read from them.
  expected.insert({"string_join", "string_equal", "string_not_equal", "string_length", "substr",
                   "as_string", "string_to_number", "string_split", "reduce_join"});
  EXPECT_EQ(marked, expected);
}

// ---- gather's gradient is a scatter-add -------------------------------------------------

// Eager and traced gradients of f at xs, checked against finite differences
// (exact for the multilinear functions below) and each other.
Tensors checked_gradients(const GradCase& c, const Tensors& xs, const Tensor& w,
                          const std::vector<ag::TensorSpec>& signature = {}) {
  Tensors expected = finite_differences(c, xs, w);
  Tensors eager = tape_gradients(c, xs, w);
  for (size_t i = 0; i < xs.size(); ++i) expect_close(eager[i], expected[i], c.tolerance, label(c));
  auto traced = ag::function(
      [&c](const Tensor& x, const Tensor& weights) { return tape_gradients(c, {x}, weights); },
      {.input_signature = signature.empty() ? std::nullopt : std::optional(signature)});
  Tensors graph = traced(xs[0], w);
  for (size_t i = 0; i < xs.size(); ++i)
    expect_close(graph[i], eager[i], 1e-12, label(c) + " graph vs eager");
  return eager;
}

TEST(GatherGradient, SumsIntoParamsRowsWithoutAOneHotMatrix) {
  GradCase c{"gather", {Shape{4, 3}}, [](const Tensors& x) {
               return ag::gather(x[0], ag::constant({3, 1, 3, 3}), 0);
             }};
  Tensor x = doubles({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {4, 3});
  Tensor w = ag::ones({4, 3}, ag::float64);
  Tensors g = checked_gradients(c, {x}, w);
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{0, 0, 0, 1, 1, 1, 0, 0, 0, 3, 3, 3}));
  auto traced =
      ag::function([&c](const Tensor& x, const Tensor& w) { return tape_gradients(c, {x}, w); });
  std::vector<std::string> ops = traced.get_concrete_function(x, w).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "unsorted_segment_sum"), ops.end());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "one_hot"), ops.end());
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "matmul"), ops.end());
}

// The gathered axis's length is read when the graph runs (once an
// UnimplementedError: the one-hot depth had to be known while tracing).
TEST(GatherGradient, GatheredAxisUnknownWhileTracing) {
  GradCase c{"gather", {Shape{5, 2}}, [](const Tensors& x) {
               return ag::gather(x[0], ag::constant({4, 0, 4}), 0);
             }};
  std::mt19937 rng(7);
  Tensor x = random_input({5, 2}, Domain::Any, rng);
  Tensor w = weights_like(c.f({x}), rng);
  checked_gradients(
      c, {x}, w,
      {ag::TensorSpec({ag::kUnknownDim, 2}, ag::float64), ag::TensorSpec({3, 2}, ag::float64)});
}

// x [?, 3] reshaped to its dims reversed, read when the graph runs; the
// gradient reshapes back to x's shape, read then too. Also of a tile by
// multiples read then, and of a reshape and a tile of x [?, ?].
TEST(DynamicShapeGradient, ReshapeAndTileByShapesReadWhenTheGraphRuns) {
  const std::vector<ag::TensorSpec> batch_unknown = {
      ag::TensorSpec({ag::kUnknownDim, 3}, ag::float64), ag::TensorSpec({3, 4}, ag::float64)};
  GradCase reshape{"dynamic_reshape", {Shape{4, 3}}, [](const Tensors& x) {
                     return ag::reshape(x[0], ag::reverse(ag::shape(x[0], ag::int64), {0}));
                   }};
  std::mt19937 rng(3);
  Tensor x = random_input({4, 3}, Domain::Any, rng);
  checked_gradients(reshape, {x}, weights_like(reshape.f({x}), rng), batch_unknown);
  GradCase tile{"dynamic_tile", {Shape{4, 3}}, [](const Tensors& x) {
                  return ag::tile(
                      x[0],
                      ag::concat({ag::constant({1}), ag::slice(ag::shape(x[0]), {1}, {1})}, 0));
                }};
  const std::vector<ag::TensorSpec> tiled = {ag::TensorSpec({ag::kUnknownDim, 3}, ag::float64),
                                             ag::TensorSpec({4, 9}, ag::float64)};
  checked_gradients(tile, {x}, weights_like(tile.f({x}), rng), tiled);
  // A static reshape of x with both dims unknown while tracing: its gradient
  // reshapes back to x's shape read when the graph runs.
  GradCase flat{"reshape", {Shape{4, 3}}, [](const Tensors& x) {
                  return ag::reshape(x[0], {-1}) * x[0][0][0];
                }};
  const std::vector<ag::TensorSpec> both_unknown = {
      ag::TensorSpec({ag::kUnknownDim, ag::kUnknownDim}, ag::float64),
      ag::TensorSpec({12}, ag::float64)};
  checked_gradients(flat, {x}, weights_like(flat.f({x}), rng), both_unknown);
  GradCase tiled_twice{
      "tile", {Shape{4, 3}}, [](const Tensors& x) { return ag::tile(x[0], {2, 1}) * x[0][0][0]; }};
  checked_gradients(tiled_twice, {x}, weights_like(tiled_twice.f({x}), rng),
                    {ag::TensorSpec({ag::kUnknownDim, ag::kUnknownDim}, ag::float64),
                     ag::TensorSpec({8, 3}, ag::float64)});
}

// A convolution's and an average pool's gradients by an input whose spatial
// dims are unknown while tracing (once an UnimplementedError): the gradient
// ops read them from the input when the graph runs. Stride 2 with SAME
// padding maps 5 and 6 rows to the same 3, so they cannot come from the
// output gradient's dims.
TEST(ConvGradient, SpatialDimsUnknownWhileTracing) {
  std::mt19937 rng(5);
  const Tensor filter = random_input({3, 2, 3, 4}, Domain::Any, rng);
  GradCase conv{"conv", {Shape{2, 5, 4, 3}}, [filter](const Tensors& x) {
                  return ag::conv2d(x[0], filter, {2}, "SAME");
                }};
  GradCase pool{"avg_pool", {Shape{2, 5, 4, 3}}, [](const Tensors& x) {
                  return ag::avg_pool2d(x[0], {3}, {2}, "SAME");
                }};
  auto signature = [](int64_t channels_out) {
    return std::vector<ag::TensorSpec>{
        ag::TensorSpec({2, ag::kUnknownDim, ag::kUnknownDim, 3}, ag::float64),
        ag::TensorSpec({2, ag::kUnknownDim, ag::kUnknownDim, channels_out}, ag::float64)};
  };
  for (const Shape& shape : {Shape{2, 5, 4, 3}, Shape{2, 6, 3, 3}}) {
    Tensor x = random_input(shape, Domain::Any, rng);
    checked_gradients(conv, {x}, weights_like(conv.f({x}), rng), signature(4));
    checked_gradients(pool, {x}, weights_like(pool.f({x}), rng), signature(3));
  }
  // The second derivative goes through conv_backprop_input with the input
  // whose dims it took, which gets no gradient of its own.
  auto second = [filter](const Tensor& x) {
    ag::GradientTape outer, inner;
    outer.watch(x);
    inner.watch(x);
    Tensor y = ag::conv2d(x, filter, {2}, "SAME");
    Tensor g = inner.gradient(ag::reduce_sum(y * y), x);
    return outer.gradient(ag::reduce_sum(g * g), x);
  };
  auto traced = ag::function(second, {.input_signature = std::vector{ag::TensorSpec(
                                          {2, ag::kUnknownDim, ag::kUnknownDim, 3}, ag::float64)}});
  Tensor x = random_input({2, 6, 3, 3}, Domain::Any, rng);
  expect_close(traced(x), second(x), 1e-12, "second derivative, graph vs eager");
  std::vector<std::string> ops = traced.get_concrete_function(x).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "conv_backprop_input"), ops.end());
}

TEST(UnsortedSegmentSum, SumsRowsIntoSegments) {
  Tensor data = ag::constant({{1, 2}, {3, 4}, {5, 6}});
  EXPECT_EQ(ag::unsorted_segment_sum(data, ag::constant({2, 0, 2}), Tensor(4)).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 4, 0, 0, 6, 8, 0, 0}));
  EXPECT_EQ(ag::unsorted_segment_sum(data, ag::constant({2, 0, 2}), Tensor(4)).shape(),
            (Shape{4, 2}));
  // ids of data's whole shape: one element per id.
  EXPECT_EQ(ag::unsorted_segment_sum(data, ag::constant({{0, 1}, {1, 1}, {0, 0}}), Tensor(2))
                .to_vector<int32_t>(),
            (std::vector<int32_t>{12, 9}));
}

TEST(UnsortedSegmentSum, Errors) {
  Tensor data = ag::zeros({3, 2});
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0, 3, 1}), Tensor(3)),
                        ag::InvalidArgumentError,
                        "unsorted_segment_sum: segment_ids[1] = 3 is not in [0, 3)");
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0, -1, 1}), Tensor(3)),
                        ag::InvalidArgumentError, "segment_ids[1] = -1 is not in [0, 3)");
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0, 1}), Tensor(3)),
                        ag::InvalidArgumentError,
                        "segment_ids of shape [2] must be a prefix of data's shape [3,2]");
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0.0f, 1, 1}), Tensor(3)),
                        ag::InvalidArgumentError,
                        "segment_ids must be int32 or int64, got float32");
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0, 1, 1}), Tensor(-1)),
                        ag::InvalidArgumentError, "num_segments must be non-negative, got -1");
  EXPECT_THROW_CONTAINS(ag::unsorted_segment_sum(data, ag::constant({0, 1, 1}), ag::constant({3})),
                        ag::InvalidArgumentError,
                        "num_segments must be an int32 or int64 scalar, got int32 of shape [1]");
}

// ---- reduce_prod's gradient where inputs are zero ----------------------------------------

struct ProdCase {
  Shape shape;
  std::vector<double> values;
  std::vector<int64_t> axes;
  bool keepdims;
  std::vector<double> expected;  // the gradient with output gradient 1
};

TEST(ReduceProdGradient, ProductOfTheOthersWithZeros) {
  std::vector<ProdCase> cases = {
      // One zero: the product of the others there, 0 elsewhere.
      {{4}, {2, 0, 3, 5}, {}, false, {0, 30, 0, 0}},
      // Two zeros: 0 everywhere.
      {{4}, {2, 0, 3, 0}, {}, false, {0, 0, 0, 0}},
      // Per row, keepdims: row 0 has one zero, row 1 two, row 2 none.
      {{3, 3}, {1, 0, 4, 0, 2, 0, 2, 3, 5}, {1}, true, {0, 4, 0, 0, 0, 0, 15, 10, 6}},
      // Per column.
      {{2, 3}, {0, 2, 3, 4, 0, 6}, {0}, false, {4, 0, 6, 0, 2, 3}},
      // Two axes of three, one zero in block 0, none in block 1.
      {{2, 2, 2}, {1, 2, 0, 4, 1, 2, 3, 4}, {0, 2}, false, {4, 2, 48, 0, 4, 2, 0, 0}},
      // A length-1 axis and a scalar: the gradient passes through.
      {{2, 1}, {0, 3}, {1}, false, {1, 1}},
      {{}, {0}, {}, false, {1}},
  };
  for (const ProdCase& p : cases) {
    GradCase c{"reduce_prod", {p.shape}, [p](const Tensors& x) {
                 return ag::reduce_prod(x[0], p.axes, p.keepdims);
               }};
    Tensor x = doubles(p.values, p.shape);
    Tensor w = ag::ones_like(ag::reduce_prod(x, p.axes, p.keepdims));
    Tensors g = checked_gradients(c, {x}, w);
    EXPECT_EQ(g[0].to_vector<double>(), p.expected) << label(c);
  }
}

// The rule is made of differentiable ops: a tape around the gradient gives
// d/dx_k sum_i prod_{j != i} x_j = sum_{i != k} prod_{j != i, k} x_j, with a zero.
TEST(ReduceProdGradient, SecondOrderWithAZero) {
  Tensor x = doubles({2, 0, 3}, {3});
  ag::GradientTape outer;
  outer.watch(x);
  Tensor first;
  {
    ag::GradientTape inner;
    inner.watch(x);
    first = inner.gradient(ag::reduce_prod(x), x);
  }
  EXPECT_EQ(first.to_vector<double>(), (std::vector<double>{0, 6, 0}));
  Tensor second = outer.gradient(ag::reduce_sum(first), x);
  EXPECT_EQ(second.to_vector<double>(), (std::vector<double>{3, 5, 2}));
}

// Each element of a long axis gets the product of the others, also with a zero.
TEST(ReduceProdGradient, LongAxisWithAZero) {
  std::vector<double> values;
  for (int i = 0; i < 13; ++i) values.push_back(1.0 + 0.1 * i);
  values[6] = 0;
  GradCase c{"reduce_prod", {Shape{13}}, [](const Tensors& x) { return ag::reduce_prod(x[0]); }};
  Tensor w = Tensor(1.5);
  Tensors g = checked_gradients(c, {doubles(values, {13})}, ag::cast(w, ag::float64));
  double others = 1;
  for (int i = 0; i < 13; ++i)
    if (i != 6) others *= values[size_t(i)];
  std::vector<double> expected(13, 0.0);
  expected[6] = 1.5 * others;
  expect_close(g[0], doubles(expected, {13}), 1e-12, "long axis");
}

}  // namespace
