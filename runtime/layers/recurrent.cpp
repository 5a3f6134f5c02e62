// Keras's LSTM and GRU, through ag::rnn::lstm and gru: one op each where
// the activations are the defaults.
#include <algorithm>

#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"
#include "ag/rnn.h"

namespace ag::layers {

LSTM::LSTM(int64_t units, RecurrentOptions options) : LSTM("lstm", units, std::move(options), 4) {}

LSTM::LSTM(std::string_view default_name, int64_t units, RecurrentOptions options, int64_t gates)
    : Layer(default_name, options.name),
      units_(units),
      options_(std::move(options)),
      gates_(gates) {
  const std::string layer = gates == 4 ? "LSTM" : "GRU";
  if (units <= 0)
    throw InvalidArgumentError(layer + ": units must be positive, got " + std::to_string(units));
  rnn::activation(options_.activation);
  rnn::activation(options_.recurrent_activation);
}

void LSTM::build_weights(const Shape& input_shape, DType dtype, CallSite) {
  const int64_t width = gates_ * units_;
  add_weight("kernel", Shape{input_shape.dim(-1), width}, options_.kernel_initializer, dtype);
  add_weight("recurrent_kernel", Shape{units_, width}, options_.recurrent_initializer, dtype);
  if (!options_.use_bias) return;
  if (gates_ == 3) {
    Shape shape = options_.reset_after ? Shape{2, width} : Shape{width};
    add_weight("bias", shape, options_.bias_initializer, dtype);
    return;
  }
  Tensor init = initial_value(options_.bias_initializer, Shape{width}, dtype);
  if (options_.unit_forget_bias) {
    // The forget gate's block (the second of i, f, c, o) starts at 1; made
    // here, not assigned, so that a build inside a trace adds no node.
    std::vector<double> values = init.to_vector<double>();
    for (int64_t i = units_; i < 2 * units_; ++i) values[size_t(i)] = 1.0;
    if (dtype == DType::float64) {
      init = empty(Shape{width}, DType::float64);
      std::copy(values.begin(), values.end(), init.mutable_data<double>());
    } else {
      init = constant(std::vector<float>(values.begin(), values.end()), Shape{width});
    }
  }
  const std::string path = name() + "/bias";
  weights_.emplace_back(path, Variable(init, path));
}

Tensor LSTM::call(const Tensor& inputs, bool, CallSite site) {
  Tensor kernel = weights_[0].second.read(), recurrent = weights_[1].second.read();
  Tensor bias = options_.use_bias ? weights_[2].second.read() : Tensor();
  // Keras's go_backwards reads the sequence from its end, and its outputs
  // follow that order.
  Tensor x = options_.go_backwards ? reverse(inputs, {1}, site) : inputs;
  const Tensor h0 = rnn::zero_state(x, units_, false, site);
  rnn::RNNOutput out;
  if (gates_ == 4) {
    rnn::LSTMOptions lstm;
    lstm.activation = rnn::activation(options_.activation);
    lstm.recurrent_activation = rnn::activation(options_.recurrent_activation);
    out = rnn::lstm(x, {h0, h0}, {kernel, recurrent, bias, Tensor()}, lstm, {}, site);
  } else {
    rnn::GRUOptions gru;
    gru.activation = rnn::activation(options_.activation);
    gru.recurrent_activation = rnn::activation(options_.recurrent_activation);
    gru.reset_after = options_.reset_after;
    out = rnn::gru(x, {h0}, {kernel, recurrent, bias}, gru, {}, site);
  }
  return options_.return_sequences ? out.outputs : out.states[0];
}

GRU::GRU(int64_t units, RecurrentOptions options) : LSTM("gru", units, std::move(options), 3) {}

}  // namespace ag::layers
