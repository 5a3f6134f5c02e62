// LSTM, GRU and RNN: each direction is ag::rnn::lstm, gru or simple_rnn:
// one op (lstm_sequence, gru_sequence, simple_rnn_sequence) where oneDNN has
// the cell and the sequences run their full length, else dynamic_rnn over
// the cell of ag/rnn.h, one staged While per direction. ONNX's weights
// (W [directions, gates * hidden, input], R [directions, gates * hidden,
// hidden], B [directions, 2 * gates * hidden]) become the cell's Keras
// layout: transposed, and an LSTM's gates reordered from ONNX's i, o, f, c
// to i, f, c, o (its peepholes from i, o, f to i, f, o). The input and
// recurrent biases add up, except a GRU's, whose cell keeps both rows for
// linear_before_reset. layout 1 puts the batch first in X, initial_h,
// initial_c, Y, Y_h and Y_c.
#include <algorithm>
#include <cctype>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "ag/rnn.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

enum class RecurrentKind { kLstm, kGru, kRnn };

// What each op type's node holds: gates per direction, activations per
// direction and the default ones.
struct RecurrentForm {
  int64_t gates;
  std::vector<std::string> default_activations;
};

RecurrentForm recurrent_form(RecurrentKind kind) {
  switch (kind) {
    case RecurrentKind::kLstm:
      return {4, {"Sigmoid", "Tanh", "Tanh"}};
    case RecurrentKind::kGru:
      return {3, {"Sigmoid", "Tanh"}};
    case RecurrentKind::kRnn:
      break;
  }
  return {1, {"Tanh"}};
}

// The node's inputs and attributes, checked.
struct RecurrentNode {
  RecurrentKind kind = RecurrentKind::kRnn;
  RecurrentForm form;
  int64_t hidden = 0;
  std::vector<bool> reverse;  // per direction
  bool batch_major = false;   // layout 1
  std::optional<double> clip;
  bool input_forget = false;
  bool linear_before_reset = false;
  std::vector<rnn::Activation> activations;  // form.default_activations.size() per direction
};

// The values an activation takes from activation_alpha / activation_beta,
// consumed in the order of the activations.
struct ActivationParameters {
  std::vector<float> alpha, beta;
  size_t next_alpha = 0, next_beta = 0;
  double take_alpha(double fallback) {
    return next_alpha < alpha.size() ? double(alpha[next_alpha++]) : fallback;
  }
  double take_beta(double fallback) {
    return next_beta < beta.size() ? double(beta[next_beta++]) : fallback;
  }
};

// ONNX's activation functions of recurrent ops (names in any case), with
// their alpha and beta defaults.
rnn::Activation onnx_activation(const NodeContext& ctx, const std::string& name,
                                ActivationParameters& p) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  if (n == "sigmoid" || n == "tanh" || n == "relu" || n == "softsign" || n == "softplus")
    return rnn::activation(n);
  if (n == "leakyrelu") {
    const double alpha = p.take_alpha(0.01);
    return [alpha](const Tensor& x, CallSite s) { return leaky_relu(x, alpha, s); };
  }
  if (n == "hardsigmoid") {
    const double alpha = p.take_alpha(0.2), beta = p.take_beta(0.5);
    return [alpha, beta](const Tensor& x, CallSite s) { return hard_sigmoid(x, alpha, beta, s); };
  }
  if (n == "thresholdedrelu") {
    const double alpha = p.take_alpha(1.0);
    return [alpha](const Tensor& x, CallSite s) { return where(greater(x, alpha, s), x, 0, s); };
  }
  if (n == "elu") {
    const double alpha = p.take_alpha(1.0);
    return [alpha](const Tensor& x, CallSite s) {
      return where(greater_equal(x, 0, s), x, mul(expm1(x, s), alpha, s), s);
    };
  }
  if (n == "affine") {
    const double alpha = p.take_alpha(1.0), beta = p.take_beta(0.0);
    return [alpha, beta](const Tensor& x, CallSite s) { return add(mul(x, alpha, s), beta, s); };
  }
  if (n == "scaledtanh") {
    const double alpha = p.take_alpha(1.0), beta = p.take_beta(1.0);
    return [alpha, beta](const Tensor& x, CallSite s) {
      return mul(tanh(mul(x, beta, s), s), alpha, s);
    };
  }
  ctx.unsupported("activation '" + name +
                  "' is not supported (Sigmoid, Tanh, Relu, LeakyRelu, ThresholdedRelu, "
                  "HardSigmoid, Elu, Softsign, Softplus, Affine, ScaledTanh are)");
}

std::vector<std::string> attr_strings(const NodeContext& ctx, const std::string& name) {
  for (const auto& a : ctx.node().attribute())
    if (a.name() == name) return {a.strings().begin(), a.strings().end()};
  return {};
}

// The activations of every direction: attribute `activations` names them
// for each direction in turn (or once for all directions).
std::vector<rnn::Activation> read_activations(const NodeContext& ctx, const RecurrentForm& form,
                                              size_t directions) {
  const size_t per_direction = form.default_activations.size();
  std::vector<std::string> names = attr_strings(ctx, "activations");
  if (names.empty()) {
    for (size_t d = 0; d < directions; ++d)
      names.insert(names.end(), form.default_activations.begin(), form.default_activations.end());
  } else if (names.size() == per_direction && directions == 2) {
    names.insert(names.end(), names.begin(), names.end());
  } else if (names.size() != per_direction * directions) {
    ctx.invalid("attribute 'activations' must name " + std::to_string(per_direction) +
                " activations per direction (" + std::to_string(per_direction * directions) +
                " here), got " + std::to_string(names.size()));
  }
  ActivationParameters p;
  if (ctx.has_attr("activation_alpha")) p.alpha = ctx.attr_floats("activation_alpha");
  if (ctx.has_attr("activation_beta")) p.beta = ctx.attr_floats("activation_beta");
  std::vector<rnn::Activation> activations;
  for (const std::string& name : names) activations.push_back(onnx_activation(ctx, name, p));
  return activations;
}

// "[2, 12, 2]", with "?" for a dim unknown while tracing.
std::string dims_list(std::span<const int64_t> dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : ", ") + (d == kUnknownDim ? "?" : std::to_string(d));
  return "[" + s + "]";
}

// Throws unless input `k` (when present) has `expected` dims (the known ones).
void expect_input_shape(const NodeContext& ctx, size_t k, const char* name,
                        const std::vector<int64_t>& expected, const std::string& layout) {
  if (!ctx.has_input(k)) return;
  const Shape& shape = ctx.input(k).shape();
  bool matches = shape.rank() == int(expected.size());
  for (size_t d = 0; matches && d < expected.size(); ++d) {
    matches =
        shape[int(d)] == kUnknownDim || expected[d] == kUnknownDim || shape[int(d)] == expected[d];
  }
  if (!matches) {
    ctx.invalid(std::string("input ") + name + " must have shape " + layout + " = " +
                dims_list(expected) + ", got " + dims_list(shape.dims()));
  }
}

RecurrentNode read_node(const NodeContext& ctx, RecurrentKind kind) {
  RecurrentNode node;
  node.kind = kind;
  node.form = recurrent_form(kind);
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction == "forward" || direction == "reverse") {
    node.reverse = {direction == "reverse"};
  } else if (direction == "bidirectional") {
    node.reverse = {false, true};
  } else {
    ctx.invalid("direction '" + direction + "' is not forward, reverse or bidirectional");
  }
  const int64_t layout = ctx.attr_int("layout", 0);
  if (layout != 0 && layout != 1)
    ctx.invalid("layout must be 0 or 1, got " + std::to_string(layout));
  node.batch_major = layout == 1;
  if (ctx.has_attr("clip")) node.clip = ctx.attr_float("clip", 0);
  node.input_forget = ctx.attr_int("input_forget", 0) != 0;
  node.linear_before_reset = ctx.attr_int("linear_before_reset", 0) != 0;

  const Tensor& x = ctx.input(0);
  const Tensor& r = ctx.input(2);
  if (x.rank() != 3) {
    ctx.invalid(
        std::string("input X must be ") +
        (node.batch_major ? "[batch, seq_length, input_size]" : "[seq_length, batch, input_size]") +
        ", got " + dims_list(x.shape().dims()));
  }
  if (ctx.has_attr("hidden_size")) {
    node.hidden = ctx.attr_int("hidden_size");
  } else if (r.rank() == 3 && r.shape()[2] != kUnknownDim) {
    node.hidden = r.shape()[2];
  } else {
    ctx.invalid("without attribute hidden_size, input R must be [num_directions, " +
                std::to_string(node.form.gates) + " * hidden_size, hidden_size] with known dims");
  }
  const auto dirs = int64_t(node.reverse.size());
  const int64_t h = node.hidden, g = node.form.gates, batch = x.shape()[node.batch_major ? 0 : 1];
  const std::string gh = g == 1 ? "hidden_size" : std::to_string(g) + " * hidden_size";
  expect_input_shape(ctx, 1, "W", {dirs, g * h, x.shape()[2]},
                     "[num_directions, " + gh + ", input_size]");
  expect_input_shape(ctx, 2, "R", {dirs, g * h, h}, "[num_directions, " + gh + ", hidden_size]");
  expect_input_shape(ctx, 3, "B", {dirs, 2 * g * h}, "[num_directions, 2 * " + gh + "]");
  expect_input_shape(ctx, 4, "sequence_lens", {batch}, "[batch_size]");
  const std::vector<int64_t> state = node.batch_major ? std::vector<int64_t>{batch, dirs, h}
                                                      : std::vector<int64_t>{dirs, batch, h};
  const std::string state_layout = node.batch_major ? "[batch_size, num_directions, hidden_size]"
                                                    : "[num_directions, batch_size, hidden_size]";
  expect_input_shape(ctx, 5, "initial_h", state, state_layout);
  if (kind == RecurrentKind::kLstm) {
    expect_input_shape(ctx, 6, "initial_c", state, state_layout);
    expect_input_shape(ctx, 7, "P", {dirs, 3 * h}, "[num_directions, 3 * hidden_size]");
  }
  node.activations = read_activations(ctx, node.form, node.reverse.size());
  return node;
}

// An LSTM's gate blocks along axis 0 from ONNX's order (i, o, f, c) to
// Keras's (i, f, c, o); other cells' orders are the same.
Tensor keras_gate_order(const Tensor& w, RecurrentKind kind) {
  if (kind != RecurrentKind::kLstm) return w;
  const std::vector<Tensor> gate = split(w, 4, 0);
  return concat({gate[0], gate[2], gate[3], gate[1]}, 0);
}

struct DirectionWeights {
  Tensor kernel, recurrent_kernel;
  Tensor input_bias, recurrent_bias;  // undefined without B
  Tensor peephole;
};

DirectionWeights direction_weights(const NodeContext& ctx, const RecurrentNode& node, int64_t d) {
  const Tensor index(d);
  DirectionWeights w;
  auto matrix = [&](size_t k) {
    return transpose(keras_gate_order(gather(ctx.input(k), index, 0), node.kind), {1, 0});
  };
  w.kernel = matrix(1);
  w.recurrent_kernel = matrix(2);
  if (ctx.has_input(3)) {
    const std::vector<Tensor> halves = split(gather(ctx.input(3), index, 0), 2, 0);
    w.input_bias = keras_gate_order(halves[0], node.kind);
    w.recurrent_bias = keras_gate_order(halves[1], node.kind);
  }
  if (node.kind == RecurrentKind::kLstm && ctx.has_input(7)) {
    const std::vector<Tensor> p = split(gather(ctx.input(7), index, 0), 3, 0);  // i, o, f
    w.peephole = concat({p[0], p[2], p[1]}, 0);
  }
  return w;
}

// Direction d over the sequence, with the direction's weights and
// activations: rnn::lstm, gru or simple_rnn, one op where oneDNN has the
// cell and the sequences run their full length.
rnn::RNNOutput run_direction(const NodeContext& ctx, const RecurrentNode& node, int64_t d,
                             const std::vector<Tensor>& initial, const rnn::RNNOptions& sequence) {
  const DirectionWeights w = direction_weights(ctx, node, d);
  const size_t per_direction = node.form.default_activations.size();
  auto act = [&](size_t k) { return node.activations[size_t(d) * per_direction + k]; };
  const Tensor summed_bias =
      w.input_bias.defined() ? add(w.input_bias, w.recurrent_bias) : Tensor();
  switch (node.kind) {
    case RecurrentKind::kLstm: {
      const rnn::LSTMOptions options{act(1), act(0), act(2), node.clip, node.input_forget};
      const rnn::LSTMWeights weights{w.kernel, w.recurrent_kernel, summed_bias, w.peephole};
      return rnn::lstm(ctx.input(0), initial, weights, options, sequence, {});
    }
    case RecurrentKind::kGru: {
      const rnn::GRUOptions options{act(1), act(0), node.linear_before_reset, node.clip};
      const Tensor bias =
          w.input_bias.defined() ? stack({w.input_bias, w.recurrent_bias}, 0) : Tensor();
      const rnn::GRUWeights weights{w.kernel, w.recurrent_kernel, bias};
      return rnn::gru(ctx.input(0), initial, weights, options, sequence, {});
    }
    case RecurrentKind::kRnn:
      break;
  }
  const rnn::SimpleRNNOptions options{act(0), node.clip};
  const rnn::SimpleRNNWeights weights{w.kernel, w.recurrent_kernel, summed_bias};
  return rnn::simple_rnn(ctx.input(0), initial, weights, options, sequence, {});
}

// Input k (initial_h, initial_c) for direction d, or zeros.
Tensor initial_state(const NodeContext& ctx, const RecurrentNode& node, size_t k, int64_t d) {
  if (ctx.has_input(k)) return gather(ctx.input(k), Tensor(d), node.batch_major ? 1 : 0);
  return rnn::zero_state(ctx.input(0), node.hidden, !node.batch_major, {});
}

std::vector<Tensor> import_recurrent(NodeContext& ctx, RecurrentKind kind) {
  const RecurrentNode node = read_node(ctx, kind);
  const size_t num_states = kind == RecurrentKind::kLstm ? 2 : 1;
  rnn::RNNOptions options;
  options.time_major = !node.batch_major;
  if (ctx.has_input(4)) options.sequence_length = ctx.input(4);
  std::vector<Tensor> y;
  std::vector<std::vector<Tensor>> final_states(num_states);
  for (size_t d = 0; d < node.reverse.size(); ++d) {
    options.reverse = node.reverse[d];
    std::vector<Tensor> initial;
    for (size_t s = 0; s < num_states; ++s)
      initial.push_back(initial_state(ctx, node, 5 + s, int64_t(d)));
    rnn::RNNOutput out = run_direction(ctx, node, int64_t(d), initial, options);
    y.push_back(out.outputs);
    for (size_t s = 0; s < num_states; ++s) final_states[s].push_back(out.states[s]);
  }
  // Y [seq, directions, batch, hidden] (layout 1: [batch, seq, directions,
  // hidden]); Y_h and Y_c [directions, batch, hidden] ([batch, directions, hidden]).
  std::vector<Tensor> outputs{stack(y, node.batch_major ? 2 : 1)};
  for (const std::vector<Tensor>& states : final_states)
    outputs.push_back(stack(states, node.batch_major ? 1 : 0));
  return outputs;
}

}  // namespace

std::vector<Tensor> import_lstm(NodeContext& ctx) {
  return import_recurrent(ctx, RecurrentKind::kLstm);
}

std::vector<Tensor> import_gru(NodeContext& ctx) {
  return import_recurrent(ctx, RecurrentKind::kGru);
}

std::vector<Tensor> import_rnn(NodeContext& ctx) {
  return import_recurrent(ctx, RecurrentKind::kRnn);
}

}  // namespace ag::onnx_io
