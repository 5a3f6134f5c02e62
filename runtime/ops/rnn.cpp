// Recurrent cells and dynamic_rnn (ag/rnn.h), composed of ops, and lstm,
// gru and simple_rnn, which run a cell over a sequence as one op
// (library/rnn_sequence.cpp) where oneDNN has the cell. The loop is
// ag::while_stmt over a step counter with the states and a TensorArray of
// outputs as its state: a C++ loop eagerly, one While node when traced.
#include "ag/rnn.h"

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "ag/control_flow.h"
#include "ag/error.h"
#include "ag/ops.h"
#include "ag/tensor_array.h"
#include "ops/dispatch.h"
#include "ops/rnn_kernels.h"

namespace ag::rnn {

namespace {

// "[3, 16]", with "?" for a dim unknown while tracing.
std::string rnn_dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k > 0) s += ", ";
    s += dims[k] == kUnknownDim ? "?" : std::to_string(dims[k]);
  }
  return s + "]";
}

// The dims of `shape` as rnn_dims writes them.
std::string rnn_dims(const Shape& shape) {
  return rnn_dims(std::vector<int64_t>(shape.begin(), shape.end()));
}

// Where a cell's dims come from, for its shape errors.
constexpr const char* kRnnUnitsHint =
    " (units are recurrent_kernel's rows, input_dim the inputs' last dim)";

// Throws unless `t` has `expected`'s rank and its dims where both are known.
// `layout` names the dims ("[input_dim, 4 * units]") for the message.
void rnn_expect_shape(const char* cell, const std::string& what, const Tensor& t,
                      const std::vector<int64_t>& expected, const std::string& layout,
                      const char* hint = kRnnUnitsHint) {
  const Shape& shape = t.shape();
  bool matches = shape.rank() == int(expected.size());
  for (size_t d = 0; matches && d < expected.size(); ++d) {
    const int64_t have = shape[int(d)];
    matches = have == kUnknownDim || expected[d] == kUnknownDim || have == expected[d];
  }
  if (!matches) {
    throw InvalidArgumentError(std::string(cell) + ": " + what + " must have shape " + layout +
                               " = " + rnn_dims(expected) + ", got " + rnn_dims(shape) + hint);
  }
}

// The cell's units, from recurrent_kernel [units, gates * units], after
// checking it, the kernel [input_dim, gates * units] and a step's inputs
// [batch, input_dim] of shape `step`.
int64_t rnn_units(const char* cell, int64_t gates, const Shape& step, const Tensor& kernel,
                  const Tensor& recurrent_kernel) {
  if (!kernel.defined() || !recurrent_kernel.defined())
    throw InvalidArgumentError(std::string(cell) + ": kernel and recurrent_kernel are required");
  const std::string g = gates == 1 ? "units" : std::to_string(gates) + " * units";
  if (recurrent_kernel.rank() != 2 || recurrent_kernel.shape()[0] == kUnknownDim) {
    throw InvalidArgumentError(std::string(cell) + ": recurrent_kernel must be a matrix [units, " +
                               g + "] with a known number of rows, got " +
                               rnn_dims(recurrent_kernel.shape()));
  }
  const int64_t units = recurrent_kernel.shape()[0];
  rnn_expect_shape(cell, "recurrent_kernel", recurrent_kernel, {units, gates * units},
                   "[units, " + g + "]");
  if (step.rank() != 2) {
    throw InvalidArgumentError(std::string(cell) + ": inputs must be [batch, input_dim], got " +
                               rnn_dims(step));
  }
  rnn_expect_shape(cell, "kernel", kernel, {step[1], gates * units}, "[input_dim, " + g + "]");
  return units;
}

int64_t rnn_units(const char* cell, int64_t gates, const Tensor& inputs, const Tensor& kernel,
                  const Tensor& recurrent_kernel) {
  return rnn_units(cell, gates, inputs.shape(), kernel, recurrent_kernel);
}

// Throws unless there are `count` states, each [batch, units].
void rnn_expect_states(const char* cell, const std::vector<Tensor>& states, size_t count,
                       const char* names, int64_t batch, int64_t units) {
  if (states.size() != count) {
    throw InvalidArgumentError(std::string(cell) + ": expects " + std::to_string(count) +
                               " states " + names + ", got " + std::to_string(states.size()));
  }
  for (size_t k = 0; k < count; ++k)
    rnn_expect_shape(cell, "state " + std::to_string(k), states[k], {batch, units},
                     "[batch, units]");
}

// The optional bias or peephole vector [size].
void rnn_expect_vector(const char* cell, const char* what, const Tensor& t, int64_t size,
                       const char* layout) {
  if (t.defined()) rnn_expect_shape(cell, what, t, {size}, layout);
}

Tensor rnn_clipped(const Tensor& z, const std::optional<double>& clip, CallSite site) {
  return clip ? clip_by_value(z, -*clip, *clip, site) : z;
}

// `mask` [batch] as [batch, 1, ...] of `like`'s rank.
Tensor rnn_mask_like(Tensor mask, const Tensor& like, CallSite site) {
  for (int d = 1; d < like.rank(); ++d) mask = expand_dims(mask, -1, site);
  return mask;
}

// The permutation that swaps the first two of `rank` axes.
std::vector<int64_t> rnn_swap_time_and_batch(int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d) perm[size_t(d)] = d;
  std::swap(perm[0], perm[1]);
  return perm;
}

// dynamic_rnn over no steps: no outputs (of the shape one step on zeros
// gives) and the initial states.
RNNOutput rnn_no_steps(const Cell& cell, const Tensor& x, const std::vector<Tensor>& initial_states,
                       bool time_major, CallSite site) {
  const Tensor zero_step = reduce_sum(x, {0}, false, site);  // a sum over no rows
  const Tensor output = expand_dims(cell(zero_step, initial_states).output, 0, site);
  std::vector<int64_t> begin(size_t(output.rank()), 0), size(size_t(output.rank()), -1);
  size[0] = 0;
  Tensor y = slice(output, begin, size, site);
  if (!time_major) y = transpose(y, rnn_swap_time_and_batch(y.rank()), site);
  return {y, initial_states};
}

using NamedActivation = Tensor (*)(const Tensor&, CallSite);

// Keras's activations by name, for activation().
std::span<const std::pair<std::string_view, NamedActivation>> rnn_named_activations() {
  static const std::pair<std::string_view, NamedActivation> kByName[] = {
      {"tanh", [](const Tensor& x, CallSite s) { return ag::tanh(x, s); }},
      {"sigmoid", [](const Tensor& x, CallSite s) { return ag::sigmoid(x, s); }},
      {"hard_sigmoid",
       [](const Tensor& x, CallSite s) { return ag::hard_sigmoid(x, 0.2, 0.5, s); }},
      {"relu", [](const Tensor& x, CallSite s) { return ag::relu(x, s); }},
      {"linear", [](const Tensor& x, CallSite) { return x; }},
      {"elu", [](const Tensor& x, CallSite s) { return ag::elu(x, s); }},
      {"selu", [](const Tensor& x, CallSite s) { return ag::selu(x, s); }},
      {"softplus", [](const Tensor& x, CallSite s) { return ag::softplus(x, s); }},
      {"softsign", [](const Tensor& x, CallSite s) { return ag::softsign(x, s); }},
  };
  return kByName;
}

// Whether `a` is activation(name).
bool rnn_is_activation(const Activation& a, std::string_view name) {
  const NamedActivation* f = a.target<NamedActivation>();
  if (f == nullptr) return false;
  for (const auto& [n, g] : rnn_named_activations())
    if (n == name) return *f == g;
  return false;
}

// Whether lstm() runs as the lstm_sequence op: Keras's default cell, each
// sequence its full length, floats (float16 and bfloat16 computed as
// float32, as every op computes them) of the rank the op takes.
bool lstm_runs_as_one_op(const Tensor& inputs, const LSTMWeights& w, const LSTMOptions& o,
                         const RNNOptions& sequence) {
  const bool plain_cell =
      rnn_is_activation(o.activation, "tanh") &&
      rnn_is_activation(o.recurrent_activation, "sigmoid") &&
      (!o.output_activation || rnn_is_activation(o.output_activation, "tanh")) && !o.clip &&
      !o.input_forget && !w.peephole.defined();
  return plain_cell && !sequence.sequence_length.defined() && inputs.rank() == 3 &&
         is_floating(inputs.dtype());
}

// Whether gru() runs as the gru_sequence op: Keras's default activations,
// no clip, each sequence its full length.
bool gru_runs_as_one_op(const Tensor& inputs, const GRUOptions& o, const RNNOptions& sequence) {
  return rnn_is_activation(o.activation, "tanh") &&
         rnn_is_activation(o.recurrent_activation, "sigmoid") && !o.clip &&
         !sequence.sequence_length.defined() && inputs.rank() == 3 && is_floating(inputs.dtype());
}

// The simple RNN's cell of the simple_rnn_sequence op for its activation,
// if oneDNN's vanilla_rnn has it.
std::optional<ops::rnn_kernels::Cell> simple_rnn_op_cell(const Activation& a) {
  using ops::rnn_kernels::Cell;
  if (rnn_is_activation(a, "tanh")) return Cell::rnn_tanh;
  if (rnn_is_activation(a, "relu")) return Cell::rnn_relu;
  if (rnn_is_activation(a, "sigmoid")) return Cell::rnn_sigmoid;
  return std::nullopt;
}

// Throws unless each of `named` has the inputs' dtype.
void rnn_expect_dtypes(const char* fn, const Tensor& inputs,
                       std::initializer_list<std::pair<const char*, const Tensor*>> named) {
  for (const auto& [what, t] : named) {
    if (t->defined() && t->dtype() != inputs.dtype()) {
      throw InvalidArgumentError(std::string(fn) + ": " + what + " is " +
                                 std::string(dtype_name(t->dtype())) + ", but the inputs are " +
                                 std::string(dtype_name(inputs.dtype())));
    }
  }
}

// A step's shape [batch, input] of the sequence's inputs.
Shape rnn_step_shape(const Tensor& inputs, const RNNOptions& sequence) {
  return Shape{inputs.shape()[sequence.time_major ? 1 : 0], inputs.shape()[2]};
}

// Runs a sequence op (lstm_sequence, gru_sequence, simple_rnn_sequence) on
// the inputs' time-major form; its output [states + time, batch, units]
// holds the last states, then each step's h.
RNNOutput rnn_sequence_op(ops::OpId op, ops::rnn_kernels::Cell cell, const Tensor& inputs,
                          const std::vector<Tensor>& initial_states,
                          const std::vector<Tensor>& weights, const RNNOptions& sequence,
                          CallSite site) {
  const Tensor x = sequence.time_major ? inputs : transpose(inputs, {1, 0, 2}, site);
  std::vector<Tensor> operands{x};
  operands.insert(operands.end(), initial_states.begin(), initial_states.end());
  operands.insert(operands.end(), weights.begin(), weights.end());
  const Tensor packed =
      ops::apply(op, operands, ops::rnn_kernels::sequence_attrs(sequence.reverse, cell), site);
  const auto num_states = int64_t(initial_states.size());
  Tensor y = slice(packed, {num_states, 0, 0}, {-1, -1, -1}, site);
  if (!sequence.time_major) y = transpose(y, {1, 0, 2}, site);
  // (gather, whose gradient needs no dims known while tracing, as slice's does)
  std::vector<Tensor> states;
  for (int64_t k = 0; k < num_states; ++k) states.push_back(gather(packed, Tensor(k), 0, site));
  return {y, states};
}

}  // namespace

Activation activation(std::string_view name) {
  std::string known;
  for (const auto& [n, f] : rnn_named_activations()) {
    if (n == name) return f;
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw InvalidArgumentError("rnn::activation: unknown activation '" + std::string(name) +
                             "'; expected one of " + known +
                             ", or pass a function of (Tensor, CallSite)");
}

CellOutput lstm_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                     const LSTMWeights& weights, const LSTMOptions& options, CallSite site) {
  const char* cell = "lstm_cell";
  const int64_t units = rnn_units(cell, 4, inputs, weights.kernel, weights.recurrent_kernel);
  rnn_expect_vector(cell, "bias", weights.bias, 4 * units, "[4 * units]");
  rnn_expect_vector(cell, "peephole", weights.peephole, 3 * units, "[3 * units]");
  rnn_expect_states(cell, states, 2, "{h, c}", inputs.shape()[0], units);
  const Tensor &h = states[0], &c = states[1];
  Tensor z =
      add(matmul(inputs, weights.kernel, site), matmul(h, weights.recurrent_kernel, site), site);
  if (weights.bias.defined()) z = add(z, weights.bias, site);
  const std::vector<Tensor> gate = split(z, 4, 1, site);
  const std::vector<Tensor> peephole =
      weights.peephole.defined() ? split(weights.peephole, 3, 0, site) : std::vector<Tensor>{};
  // A gate's input: its columns of z, plus its peephole's share of `state`.
  auto gate_input = [&](size_t k, int p, const Tensor& state) {
    Tensor in = gate[k];
    if (p >= 0 && !peephole.empty()) in = add(in, mul(peephole[size_t(p)], state, site), site);
    return rnn_clipped(in, options.clip, site);
  };
  const Activation& output_activation =
      options.output_activation ? options.output_activation : options.activation;
  const Tensor i = options.recurrent_activation(gate_input(0, 0, c), site);
  const Tensor f = options.input_forget ? sub(1, i, site)
                                        : options.recurrent_activation(gate_input(1, 1, c), site);
  const Tensor candidate = options.activation(gate_input(2, -1, c), site);
  const Tensor c_new = add(mul(f, c, site), mul(i, candidate, site), site);
  const Tensor o = options.recurrent_activation(gate_input(3, 2, c_new), site);
  const Tensor h_new = mul(o, output_activation(c_new, site), site);
  return {h_new, {h_new, c_new}};
}

CellOutput gru_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                    const GRUWeights& weights, const GRUOptions& options, CallSite site) {
  const char* cell = "gru_cell";
  const int64_t units = rnn_units(cell, 3, inputs, weights.kernel, weights.recurrent_kernel);
  rnn_expect_states(cell, states, 1, "{h}", inputs.shape()[0], units);
  Tensor input_bias = weights.bias, recurrent_bias;
  if (input_bias.defined() && input_bias.rank() == 2) {
    rnn_expect_shape(cell, "bias", input_bias, {2, 3 * units}, "[2, 3 * units]");
    const std::vector<Tensor> rows = split(input_bias, 2, 0, site);
    input_bias = reshape(rows[0], {3 * units}, site);
    recurrent_bias = reshape(rows[1], {3 * units}, site);
    if (!options.reset_after) {
      input_bias = add(input_bias, recurrent_bias, site);
      recurrent_bias = Tensor();
    }
  }
  rnn_expect_vector(cell, "bias", input_bias, 3 * units, "[3 * units] or [2, 3 * units]");
  const Tensor& h = states[0];
  Tensor x_proj = matmul(inputs, weights.kernel, site);
  if (input_bias.defined()) x_proj = add(x_proj, input_bias, site);
  const std::vector<Tensor> x_gate = split(x_proj, 3, 1, site);
  Tensor h_z, h_r, recurrent_candidate;
  if (options.reset_after) {
    Tensor h_proj = matmul(h, weights.recurrent_kernel, site);
    if (recurrent_bias.defined()) h_proj = add(h_proj, recurrent_bias, site);
    const std::vector<Tensor> h_gate = split(h_proj, 3, 1, site);
    h_z = h_gate[0];
    h_r = h_gate[1];
    recurrent_candidate = h_gate[2];
  } else {
    const std::vector<Tensor> kernels =
        split(weights.recurrent_kernel, std::vector<int64_t>{2 * units, units}, 1, site);
    const std::vector<Tensor> h_gate = split(matmul(h, kernels[0], site), 2, 1, site);
    h_z = h_gate[0];
    h_r = h_gate[1];
    recurrent_candidate = kernels[1];  // multiplies r * h below
  }
  auto gate = [&](const Tensor& x_part, const Tensor& h_part) {
    return options.recurrent_activation(rnn_clipped(add(x_part, h_part, site), options.clip, site),
                                        site);
  };
  const Tensor z = gate(x_gate[0], h_z), r = gate(x_gate[1], h_r);
  const Tensor reset = options.reset_after ? mul(r, recurrent_candidate, site)
                                           : matmul(mul(r, h, site), recurrent_candidate, site);
  const Tensor candidate =
      options.activation(rnn_clipped(add(x_gate[2], reset, site), options.clip, site), site);
  const Tensor h_new = add(mul(z, h, site), mul(sub(1, z, site), candidate, site), site);
  return {h_new, {h_new}};
}

CellOutput simple_rnn_cell(const Tensor& inputs, const std::vector<Tensor>& states,
                           const SimpleRNNWeights& weights, const SimpleRNNOptions& options,
                           CallSite site) {
  const char* cell = "simple_rnn_cell";
  const int64_t units = rnn_units(cell, 1, inputs, weights.kernel, weights.recurrent_kernel);
  rnn_expect_vector(cell, "bias", weights.bias, units, "[units]");
  rnn_expect_states(cell, states, 1, "{h}", inputs.shape()[0], units);
  Tensor z = add(matmul(inputs, weights.kernel, site),
                 matmul(states[0], weights.recurrent_kernel, site), site);
  if (weights.bias.defined()) z = add(z, weights.bias, site);
  const Tensor h_new = options.activation(rnn_clipped(z, options.clip, site), site);
  return {h_new, {h_new}};
}

RNNOutput dynamic_rnn(const Cell& cell, const Tensor& inputs,
                      const std::vector<Tensor>& initial_states, const RNNOptions& options,
                      CallSite site) {
  if (!cell) throw InvalidArgumentError("dynamic_rnn: the cell is empty");
  if (inputs.rank() < 2) {
    throw InvalidArgumentError(
        std::string("dynamic_rnn: inputs must have a time and a batch axis (") +
        (options.time_major ? "[time, batch, ...]" : "[batch, time, ...]") + "), got shape " +
        rnn_dims(inputs.shape()));
  }
  const Tensor x =
      options.time_major ? inputs : transpose(inputs, rnn_swap_time_and_batch(inputs.rank()), site);
  Tensor lengths;
  if (options.sequence_length.defined()) {
    const Tensor& given = options.sequence_length;
    if (!is_integer(given.dtype()) || given.rank() != 1) {
      throw InvalidArgumentError(
          "dynamic_rnn: sequence_length must be an int32 or int64 vector "
          "[batch], got " +
          given.spec().to_string());
    }
    rnn_expect_shape("dynamic_rnn", "sequence_length", given, {x.shape()[1]}, "[batch]",
                     " (the inputs' batch)");
    lengths = cast(given, DType::int64, site);
  }
  const int64_t known_steps = x.shape()[0];
  if (known_steps == 0) return rnn_no_steps(cell, x, initial_states, options.time_major, site);
  const Tensor steps = detail::first_dim(x);
  TensorArray outputs(x.dtype(), known_steps == kUnknownDim ? 0 : known_steps,
                      /*dynamic_size=*/known_steps == kUnknownDim);
  std::vector<Tensor> states = initial_states;
  Tensor step(int64_t{0});
  auto body = [&] {
    const Tensor t = options.reverse ? sub(sub(steps, int64_t{1}, site), step, site) : step;
    CellOutput out = cell(gather(x, t, 0, site), states);
    if (out.states.size() != states.size()) {
      throw InvalidArgumentError("dynamic_rnn: the cell returned " +
                                 std::to_string(out.states.size()) + " states for " +
                                 std::to_string(states.size()) + " initial states");
    }
    if (lengths.defined()) {
      // Steps past a sequence's end give zeros and keep its states.
      const Tensor valid = less(t, lengths, site);
      out.output = where(rnn_mask_like(valid, out.output, site), out.output, 0, site);
      for (size_t k = 0; k < states.size(); ++k) {
        out.states[k] =
            where(rnn_mask_like(valid, out.states[k], site), out.states[k], states[k], site);
      }
    }
    states = std::move(out.states);
    outputs.write(step, out.output, site);
    step = add(step, int64_t{1}, site);
  };
  while_stmt([&] { return less(step, steps, site); }, body,
             state({"step", "states", "outputs"}, step, states, outputs));
  Tensor y = outputs.stack();
  if (options.reverse) y = ag::reverse(y, {0}, site);
  if (!options.time_major) y = transpose(y, rnn_swap_time_and_batch(y.rank()), site);
  return {y, states};
}

RNNOutput lstm(const Tensor& inputs, const std::vector<Tensor>& initial_states,
               const LSTMWeights& weights, const LSTMOptions& options, const RNNOptions& sequence,
               CallSite site) {
  if (!lstm_runs_as_one_op(inputs, weights, options, sequence)) {
    const Cell cell = [&](const Tensor& x, const std::vector<Tensor>& states) {
      return lstm_cell(x, states, weights, options, site);
    };
    return dynamic_rnn(cell, inputs, initial_states, sequence, site);
  }
  // The checks of lstm_cell, on a step's shape.
  const Shape step = rnn_step_shape(inputs, sequence);
  const int64_t units = rnn_units("lstm", 4, step, weights.kernel, weights.recurrent_kernel);
  rnn_expect_vector("lstm", "bias", weights.bias, 4 * units, "[4 * units]");
  rnn_expect_states("lstm", initial_states, 2, "{h, c}", step[0], units);
  rnn_expect_dtypes("lstm", inputs,
                    {{"kernel", &weights.kernel},
                     {"recurrent_kernel", &weights.recurrent_kernel},
                     {"bias", &weights.bias},
                     {"state 0", &initial_states[0]},
                     {"state 1", &initial_states[1]}});
  const Tensor bias = weights.bias.defined() ? weights.bias : zeros({4 * units}, inputs.dtype());
  return rnn_sequence_op(ops::OpId::LstmSequence, ops::rnn_kernels::Cell::lstm, inputs,
                         initial_states, {weights.kernel, weights.recurrent_kernel, bias}, sequence,
                         site);
}

RNNOutput gru(const Tensor& inputs, const std::vector<Tensor>& initial_states,
              const GRUWeights& weights, const GRUOptions& options, const RNNOptions& sequence,
              CallSite site) {
  if (!gru_runs_as_one_op(inputs, options, sequence)) {
    const Cell cell = [&](const Tensor& x, const std::vector<Tensor>& states) {
      return gru_cell(x, states, weights, options, site);
    };
    return dynamic_rnn(cell, inputs, initial_states, sequence, site);
  }
  // The checks of gru_cell, on a step's shape.
  const Shape step = rnn_step_shape(inputs, sequence);
  const int64_t units = rnn_units("gru", 3, step, weights.kernel, weights.recurrent_kernel);
  Tensor bias = weights.bias;
  if (bias.defined() && bias.rank() == 2) {
    rnn_expect_shape("gru", "bias", bias, {2, 3 * units}, "[2, 3 * units]");
  } else {
    rnn_expect_vector("gru", "bias", bias, 3 * units, "[3 * units] or [2, 3 * units]");
  }
  rnn_expect_states("gru", initial_states, 1, "{h}", step[0], units);
  rnn_expect_dtypes("gru", inputs,
                    {{"kernel", &weights.kernel},
                     {"recurrent_kernel", &weights.recurrent_kernel},
                     {"bias", &weights.bias},
                     {"state 0", &initial_states[0]}});
  // The op's bias is [2, 3 * units]: the input bias, then the recurrent one.
  if (!bias.defined()) {
    bias = zeros({2, 3 * units}, inputs.dtype());
  } else if (bias.rank() == 1) {
    bias = stack({bias, zeros({3 * units}, inputs.dtype())}, 0, site);
  }
  const auto cell =
      options.reset_after ? ops::rnn_kernels::Cell::gru : ops::rnn_kernels::Cell::gru_reset_before;
  return rnn_sequence_op(ops::OpId::GruSequence, cell, inputs, initial_states,
                         {weights.kernel, weights.recurrent_kernel, bias}, sequence, site);
}

RNNOutput simple_rnn(const Tensor& inputs, const std::vector<Tensor>& initial_states,
                     const SimpleRNNWeights& weights, const SimpleRNNOptions& options,
                     const RNNOptions& sequence, CallSite site) {
  const std::optional<ops::rnn_kernels::Cell> op_cell = simple_rnn_op_cell(options.activation);
  if (!op_cell || options.clip || sequence.sequence_length.defined() || inputs.rank() != 3 ||
      !is_floating(inputs.dtype())) {
    const Cell cell = [&](const Tensor& x, const std::vector<Tensor>& states) {
      return simple_rnn_cell(x, states, weights, options, site);
    };
    return dynamic_rnn(cell, inputs, initial_states, sequence, site);
  }
  // The checks of simple_rnn_cell, on a step's shape.
  const Shape step = rnn_step_shape(inputs, sequence);
  const int64_t units = rnn_units("simple_rnn", 1, step, weights.kernel, weights.recurrent_kernel);
  rnn_expect_vector("simple_rnn", "bias", weights.bias, units, "[units]");
  rnn_expect_states("simple_rnn", initial_states, 1, "{h}", step[0], units);
  rnn_expect_dtypes("simple_rnn", inputs,
                    {{"kernel", &weights.kernel},
                     {"recurrent_kernel", &weights.recurrent_kernel},
                     {"bias", &weights.bias},
                     {"state 0", &initial_states[0]}});
  const Tensor bias = weights.bias.defined() ? weights.bias : zeros({units}, inputs.dtype());
  return rnn_sequence_op(ops::OpId::SimpleRnnSequence, *op_cell, inputs, initial_states,
                         {weights.kernel, weights.recurrent_kernel, bias}, sequence, site);
}

Tensor zero_state(const Tensor& inputs, int64_t units, bool time_major, CallSite site) {
  const int batch_axis = time_major ? 1 : 0;
  if (inputs.rank() < 2) {
    throw InvalidArgumentError("zero_state: inputs must have a time and a batch axis, got shape " +
                               rnn_dims(inputs.shape()));
  }
  const int64_t batch = inputs.shape()[batch_axis];
  if (batch != kUnknownDim) return zeros({batch, units}, inputs.dtype());
  // [batch] zeros (a sum of zeros over the other axes, which may be empty),
  // broadcast to [batch, units].
  std::vector<int64_t> other_axes;
  for (int d = 0; d < inputs.rank(); ++d)
    if (d != batch_axis) other_axes.push_back(d);
  const Tensor per_example = reduce_sum(zeros_like(inputs, site), other_axes, false, site);
  return add(expand_dims(per_example, -1, site), zeros({units}, inputs.dtype()), site);
}

}  // namespace ag::rnn
