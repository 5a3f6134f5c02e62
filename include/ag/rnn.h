// Recurrent cells and the loop that runs one over a sequence, as TensorFlow
// and Keras have them: lstm_cell, gru_cell and simple_rnn_cell compute one
// step (Keras's LSTMCell, GRUCell and SimpleRNNCell, with their weight
// layouts and gate orders), and dynamic_rnn runs a cell over the time axis
// (tf.compat.v1.nn.dynamic_rnn: per-sequence lengths, time-major or
// batch-major), forwards or from the end. Each is composed of ops, so its
// gradient, its graph and its ONNX export come from theirs; traced, the loop
// is one staged While node, whatever the sequence's length.
//
// Weights use Keras's layout: a kernel [input_dim, gates * units] multiplies
// the step's inputs [batch, input_dim] from the right, a recurrent_kernel
// [units, gates * units] the state [batch, units]; the gates are the
// kernel's column blocks, in Keras's order (LSTM: i, f, c, o; GRU: z, r, h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ag/tensor.h"

namespace ag::rnn {

// An activation of the cells, x -> f(x) elementwise; `site` is the cell's
// caller, for the ops it adds.
using Activation = std::function<Tensor(const Tensor& x, CallSite site)>;

// Keras's activations by name: "tanh", "sigmoid", "hard_sigmoid", "relu",
// "linear", "elu", "selu", "softplus", "softsign". Another name is an
// InvalidArgumentError listing these.
Activation activation(std::string_view name);

// One step's result, Keras's `output, new_states = cell(inputs, states)`.
struct CellOutput {
  Tensor output;
  std::vector<Tensor> states;
};

// A cell as dynamic_rnn calls it: the step's inputs [batch, ...] and the
// states, to the step's output and new states (the same number, each of the
// shape and dtype it had).
using Cell = std::function<CellOutput(const Tensor& inputs, const std::vector<Tensor>& states)>;

// ---- LSTM -------------------------------------------------------------------

struct LSTMWeights {
  Tensor kernel;            // [input_dim, 4 * units], gates i, f, c, o
  Tensor recurrent_kernel;  // [units, 4 * units]
  Tensor bias;              // [4 * units], or undefined for none
  Tensor peephole;          // [3 * units]: the i, f and o gates' weights of c; or undefined
};

struct LSTMOptions {
  // The candidate c's activation, and the new cell state's before o
  // multiplies it unless output_activation is given.
  Activation activation = rnn::activation("tanh");
  // The gates' (i, f, o).
  Activation recurrent_activation = rnn::activation("sigmoid");
  // The new cell state's, when it differs from `activation` (ONNX's h).
  Activation output_activation = nullptr;
  // ONNX's clip: each gate's input (before its activation) limited to
  // [-clip, clip].
  std::optional<double> clip = std::nullopt;
  // The forget gate coupled to the input gate, f = 1 - i (ONNX's
  // input_forget); the f columns of the weights are then unused.
  bool input_forget = false;
};

// One step of an LSTM: states {h, c}, each [batch, units]; the output is the
// new h. With z = inputs @ kernel + h @ recurrent_kernel + bias split into
// gates (i, f, c', o):
//   i = σ(z_i + p_i * c), f = σ(z_f + p_f * c), c_new = f * c + i * tanh(z_c'),
//   o = σ(z_o + p_o * c_new), h_new = o * tanh(c_new)
// (σ the recurrent activation, tanh the activation, p the peepholes).
CellOutput lstm_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                     const LSTMWeights& weights, const LSTMOptions& options = {},
                     CallSite site = CallSite::current());

// ---- GRU --------------------------------------------------------------------

struct GRUWeights {
  Tensor kernel;            // [input_dim, 3 * units], gates z, r, h
  Tensor recurrent_kernel;  // [units, 3 * units]
  // [2, 3 * units]: the input bias, then the recurrent bias; or [3 * units]
  // (the input bias only); or undefined for none. Without reset_after the
  // two rows add up (the recurrent h bias is outside r then too).
  Tensor bias;
};

struct GRUOptions {
  Activation activation = rnn::activation("tanh");
  Activation recurrent_activation = rnn::activation("sigmoid");
  // Keras's reset_after (ONNX's linear_before_reset): r multiplies the
  // recurrent kernel's product rather than the state before it.
  bool reset_after = true;
  std::optional<double> clip = std::nullopt;  // as LSTMOptions::clip
};

// One step of a GRU: states {h}, [batch, units]; the output is the new h.
//   z = σ(x W_z + h U_z + b_z), r = σ(x W_r + h U_r + b_r),
//   h' = tanh(x W_h + b_h + r * (h U_h + rb_h))   (reset_after)
//   h' = tanh(x W_h + b_h + (r * h) U_h)           (otherwise)
//   h_new = z * h + (1 - z) * h'
CellOutput gru_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                    const GRUWeights& weights, const GRUOptions& options = {},
                    CallSite site = CallSite::current());

// ---- Simple RNN -------------------------------------------------------------

struct SimpleRNNWeights {
  Tensor kernel;            // [input_dim, units]
  Tensor recurrent_kernel;  // [units, units]
  Tensor bias;              // [units], or undefined for none
};

struct SimpleRNNOptions {
  Activation activation = rnn::activation("tanh");
  std::optional<double> clip = std::nullopt;  // as LSTMOptions::clip
};

// One step of a fully connected RNN: states {h}; h_new = tanh(x W + h U + b),
// which is also the output.
CellOutput simple_rnn_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                           const SimpleRNNWeights& weights, const SimpleRNNOptions& options = {},
                           CallSite site = CallSite::current());

// ---- Sequences ----------------------------------------------------------------

struct RNNOptions {
  // [batch] int32 or int64, each sequence's length: the steps at or past it
  // give zero outputs and leave the states as they were, so the final states
  // are those of each sequence's last valid step. Undefined: every step.
  Tensor sequence_length = {};
  // inputs and outputs [time, batch, ...] rather than [batch, time, ...].
  bool time_major = false;
  // From the last step to the first (a sequence shorter than the input from
  // its own last valid step); each output stays at its input's position, as
  // tf.scan's reverse and ONNX's reverse direction have it.
  bool reverse = false;
};

struct RNNOutput {
  Tensor outputs;              // the steps' outputs, with the inputs' time and batch axes
  std::vector<Tensor> states;  // the final states
};

// Runs `cell` over the time axis of `inputs` from `initial_states`: eagerly
// as a C++ loop, traced as one While node (a TensorArray collects the
// outputs), differentiable either way. Over no steps the outputs have no
// rows and the states are the initial ones; traced with the time and the
// batch axes both unknown, the outputs of no steps then have batch 0 (the
// TensorArray's rows have no shape before a first write).
RNNOutput dynamic_rnn(const Cell& cell, const Tensor& inputs,
                      const std::vector<Tensor>& initial_states, const RNNOptions& options = {},
                      CallSite site = CallSite::current());

// A cell over a whole sequence as one op where oneDNN has the cell:
// dynamic_rnn over lstm_cell, gru_cell or simple_rnn_cell, with the same
// arguments, but one op (lstm_sequence, gru_sequence, simple_rnn_sequence)
// where every sequence runs its full length (no sequence_length), the
// inputs are [batch, time, input] (or time-major) floats, and the cell is
//   lstm: Keras's default (tanh and sigmoid; no peepholes, clip or coupled
//     input and forget gates);
//   gru: tanh and sigmoid, no clip, either reset_after;
//   simple_rnn: tanh, relu or sigmoid, no clip.
// The op runs float32 on oneDNN's RNN primitives (lstm, lbr_gru or gru,
// vanilla_rnn), forward and backward, where the build has them (an LSTM's
// states of at most 64 elements, batch x units, on loops as fast), and on
// loops otherwise. Any other cell or sequence is dynamic_rnn over the cell.
// Either way the results agree to rounding, eagerly and traced, and so do
// the gradients; the op's gradient has a gradient too (second derivatives,
// by a tape over the cells). The initial states are the cell's ({h, c} or
// {h}, each [batch, units]); the outputs have the inputs' layout.
RNNOutput lstm(const Tensor& inputs, const std::vector<Tensor>& initial_states,
               const LSTMWeights& weights, const LSTMOptions& options = {},
               const RNNOptions& sequence = {}, CallSite site = CallSite::current());
RNNOutput gru(const Tensor& inputs, const std::vector<Tensor>& initial_states,
              const GRUWeights& weights, const GRUOptions& options = {},
              const RNNOptions& sequence = {}, CallSite site = CallSite::current());
RNNOutput simple_rnn(const Tensor& inputs, const std::vector<Tensor>& initial_states,
                     const SimpleRNNWeights& weights, const SimpleRNNOptions& options = {},
                     const RNNOptions& sequence = {}, CallSite site = CallSite::current());

// Zeros [batch, units] of the inputs' dtype, the batch read from `inputs`
// ([batch, time, ...], or [time, batch, ...] when time_major) when the
// graph runs if it is unknown while tracing: a cell's usual initial state.
Tensor zero_state(const Tensor& inputs, int64_t units, bool time_major = false,
                  CallSite site = CallSite::current());

}  // namespace ag::rnn
