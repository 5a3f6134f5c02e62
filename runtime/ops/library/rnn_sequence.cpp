// A recurrent cell over a whole sequence as one op, which ag::rnn::lstm,
// gru and simple_rnn (and through them Keras's recurrent layers and ONNX's
// LSTM, GRU and RNN) use where the cell is one that oneDNN has:
//   lstm_sequence(x, h0, c0, kernel, recurrent_kernel, bias)
//   gru_sequence(x, h0, kernel, recurrent_kernel, bias)
//   simple_rnn_sequence(x, h0, kernel, recurrent_kernel, bias)
// with x [time, batch, input] and attrs {reverse, cell}
// (rnn_kernels::sequence_attrs) give one tensor [states + time, batch,
// units]: the last step's states (h, and an LSTM's c), then each step's h
// at its input's position (ops have one output; ag::rnn slices it). Their
// gradient ops take the same inputs and dpacked, and give the gradients by
// the inputs flattened into one vector in the order kernel,
// recurrent_kernel, bias, the initial states, x. float32 runs on oneDNN's
// RNN primitives where the build has them (an LSTM's small states on its
// loops, see ops/lstm_kernels.h), else (and float64) on loops; the kernels
// are in ops/rnn_kernels.h. A gradient op's own gradient comes from the
// sequence written with ag::rnn's cells, by a tape (traced, where the steps
// are known while tracing).
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/error.h"
#include "ag/gradients.h"
#include "ag/ops.h"
#include "ag/rnn.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/lstm_kernels.h"
#include "ops/rnn_kernels.h"

namespace ag::ops {

namespace {

using rnn_kernels::Cell;

// What a cell's op takes and gives.
struct SequenceForm {
  const char* op;  // the forward op's name
  OpId gradient_op;
  size_t states;  // 2 for an LSTM (h, c), else 1 (h)
};

SequenceForm sequence_form(Cell cell) {
  switch (cell) {
    case Cell::lstm:
      return {"lstm_sequence", OpId::LstmSequenceGrad, 2};
    case Cell::gru:
    case Cell::gru_reset_before:
      return {"gru_sequence", OpId::GruSequenceGrad, 1};
    default:
      return {"simple_rnn_sequence", OpId::SimpleRnnSequenceGrad, 1};
  }
}

// The cell of an op's attrs, checked against the op: a gru_sequence's
// attrs must name a GRU, and so on.
Cell sequence_cell(std::string_view op, const Attrs& attrs) {
  const int64_t raw = attrs.ints.size() > 1 ? attrs.ints[1] : 0;
  const Cell cell = rnn_kernels::cell_of(attrs);
  const bool known = raw >= 0 && raw <= int64_t(Cell::rnn_sigmoid);
  const std::string forward(op.substr(0, op.size() - (op.ends_with("_grad") ? 5 : 0)));
  if (!known || forward != sequence_form(cell).op) {
    throw InvalidArgumentError(std::string(op) + ": attrs' cell " + std::to_string(raw) +
                               " is not one of this op's cells");
  }
  return cell;
}

// The inputs' names, in order: x, the states, the weights, dpacked.
std::vector<std::string> sequence_input_names(size_t states) {
  std::vector<std::string> names{"x", "h0"};
  if (states == 2) names.push_back("c0");
  for (const char* name : {"kernel", "recurrent_kernel", "bias", "dpacked"}) names.push_back(name);
  return names;
}

// The inputs in the order of their gradients in the gradient op's vector.
std::vector<size_t> sequence_gradient_order(size_t states) {
  std::vector<size_t> order{states + 1, states + 2, states + 3};
  for (size_t s = 1; s <= states; ++s) order.push_back(s);
  order.push_back(0);
  return order;
}

int64_t sequence_times(int64_t a, int64_t b) {
  return a == kUnknownDim || b == kUnknownDim ? kUnknownDim : a * b;
}

int64_t sequence_plus(int64_t a, int64_t b) {
  return a == kUnknownDim || b == kUnknownDim ? kUnknownDim : a + b;
}

// Checks the inputs' dtypes and shapes (the first `count`); returns x's
// dtype and shape and the units.
ValueType sequence_check_inputs(const InferContext& ctx, Cell cell, size_t count, int64_t& units) {
  const std::string op(ctx.op_name);
  const size_t states = sequence_form(cell).states;
  const std::vector<std::string> names = sequence_input_names(states);
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype != DType::float32 && dtype != DType::float64)
    throw InvalidArgumentError(op + ": x must be float32 or float64, got " +
                               std::string(dtype_name(dtype)));
  for (size_t k = 1; k < count; ++k) {
    if (ctx.inputs[k].dtype != dtype) {
      throw InvalidArgumentError(op + ": " + names[k] + " is " +
                                 std::string(dtype_name(ctx.inputs[k].dtype)) + ", but x is " +
                                 std::string(dtype_name(dtype)));
    }
  }
  const int64_t gates = rnn_kernels::gates(cell);
  const std::string columns = gates == 1 ? "units" : std::to_string(gates) + " * units";
  const Shape &x = ctx.inputs[0].shape, &recurrent = ctx.inputs[states + 2].shape;
  if (x.has_unknown_rank() || x.rank() != 3)
    throw InvalidArgumentError(op + ": x must be [time, batch, input], got " + x.to_list_string());
  if (recurrent.has_unknown_rank() || recurrent.rank() != 2 || recurrent[0] == kUnknownDim)
    throw InvalidArgumentError(op + ": recurrent_kernel must be [units, " + columns +
                               "] with known units, got " + recurrent.to_list_string());
  units = recurrent[0];
  std::vector<Shape> expected(states, Shape{x[1], units});
  expected.insert(expected.begin(), x);
  expected.push_back(Shape{x[2], gates * units});
  expected.push_back(Shape{units, gates * units});
  expected.push_back(rnn_kernels::is_gru(cell) ? Shape{2, gates * units} : Shape{gates * units});
  for (size_t k = 1; k < expected.size(); ++k) {
    if (!ctx.inputs[k].shape.is_compatible_with(expected[k])) {
      throw InvalidArgumentError(op + ": " + names[k] + " must have shape " +
                                 expected[k].to_list_string() + ", got " +
                                 ctx.inputs[k].shape.to_list_string());
    }
  }
  return ctx.inputs[0];
}

// The packed output's shape: [states + time, batch, units].
Shape sequence_packed_shape(const Shape& x, int64_t units, size_t states) {
  return Shape{sequence_plus(x[0], int64_t(states)), x[1], units};
}

// One of the flat gradient's parts, as `like`: a slice at `start`, or where
// like's shape or its place is known only when the graph runs
// (start_tensor defined), a gather of the positions from start_tensor on.
Tensor sequence_gradient_part(const Tensor& flat, int64_t start, const Tensor& start_tensor,
                              const Tensor& like, CallSite site) {
  if (!start_tensor.defined()) {
    const int64_t n = like.shape().num_elements();
    const std::span<const int64_t> dims = like.shape().dims();
    return api::reshape(api::slice(flat, {start}, {n}, site),
                        std::vector<int64_t>(dims.begin(), dims.end()), site);
  }
  const Tensor end = api::add(start_tensor, api::size(like, DType::int64, site), site);
  const Tensor positions = api::range(start_tensor, end, Tensor(int64_t{1}), site);
  return api::reshape(api::gather(flat, positions, 0, site), api::shape(like, DType::int64, site),
                      site);
}

// One step of the cell, written with ag::rnn's cells.
rnn::Cell composed_cell(Cell cell, const std::vector<Tensor>& in, CallSite site) {
  const size_t k = sequence_form(cell).states + 1;  // the kernel's position
  switch (cell) {
    case Cell::lstm: {
      const rnn::LSTMWeights w{in[k], in[k + 1], in[k + 2], Tensor()};
      return [w, site](const Tensor& x, const std::vector<Tensor>& s) {
        return rnn::lstm_cell(x, s, w, {}, site);
      };
    }
    case Cell::gru:
    case Cell::gru_reset_before: {
      const rnn::GRUWeights w{in[k], in[k + 1], in[k + 2]};
      rnn::GRUOptions options;
      options.reset_after = cell == Cell::gru;
      return [w, options, site](const Tensor& x, const std::vector<Tensor>& s) {
        return rnn::gru_cell(x, s, w, options, site);
      };
    }
    default: {
      const rnn::SimpleRNNWeights w{in[k], in[k + 1], in[k + 2]};
      rnn::SimpleRNNOptions options;
      options.activation = rnn::activation(cell == Cell::rnn_relu      ? "relu"
                                           : cell == Cell::rnn_sigmoid ? "sigmoid"
                                                                       : "tanh");
      return [w, options, site](const Tensor& x, const std::vector<Tensor>& s) {
        return rnn::simple_rnn_cell(x, s, w, options, site);
      };
    }
  }
}

// The op's output, written with ag::rnn's cells: a step after step where
// the steps are known while tracing (a tape around a staged While's
// gradient is not implemented), else dynamic_rnn.
Tensor sequence_composed(const std::vector<Tensor>& in, const Attrs& attrs, Cell cell,
                         CallSite site) {
  const rnn::Cell step = composed_cell(cell, in, site);
  const bool reverse = rnn_kernels::is_reverse(attrs);
  const int64_t time = in[0].shape()[0];
  std::vector<Tensor> states(in.begin() + 1, in.begin() + 1 + int(sequence_form(cell).states));
  Tensor y;
  if (time > 0) {
    std::vector<Tensor> steps(static_cast<size_t>(time));
    for (int64_t s = 0; s < time; ++s) {
      const int64_t t = reverse ? time - 1 - s : s;
      rnn::CellOutput out = step(api::gather(in[0], Tensor(t), 0, site), states);
      steps[size_t(t)] = out.output;
      states = std::move(out.states);
    }
    y = api::stack(steps, 0, site);
  } else {
    rnn::RNNOptions options;
    options.time_major = true;
    options.reverse = reverse;
    rnn::RNNOutput out = rnn::dynamic_rnn(step, in[0], states, options, site);
    y = out.outputs;
    states = std::move(out.states);
  }
  std::vector<Tensor> parts;
  for (const Tensor& state : states) parts.push_back(api::expand_dims(state, 0, site));
  parts.push_back(y);
  return api::concat(parts, 0, site);
}

// The problem of a call, every dim known.
rnn_kernels::Problem sequence_problem(const KernelContext& ctx, Cell cell) {
  const Shape& x = *ctx.inputs[0].shape;
  const Shape& recurrent = *ctx.inputs[sequence_form(cell).states + 2].shape;
  return {x[0], x[1], x[2], recurrent[0], rnn_kernels::is_reverse(*ctx.attrs), cell};
}

// oneDNN's primitives for float32 where the problem is not empty; an
// LSTM's only where its state (batch x units) has more than
// lstm::kLoopsMaxState elements (on smaller ones its loops are as fast or
// faster, see there).
bool sequence_on_onednn(DType dtype, const rnn_kernels::Problem& p) {
  const bool small_lstm = p.cell == Cell::lstm && p.batch * p.units <= lstm::kLoopsMaxState;
  return dtype == DType::float32 && built_with_onednn() && p.time > 0 && p.batch > 0 &&
         p.input > 0 && p.units > 0 && !small_lstm;
}

template <class T>
rnn_kernels::Inputs<T> sequence_inputs(const KernelContext& ctx, Cell cell) {
  if (cell == Cell::lstm) {
    return {ctx.input_data<T>(0), ctx.input_data<T>(1), ctx.input_data<T>(2),
            ctx.input_data<T>(3), ctx.input_data<T>(4), ctx.input_data<T>(5)};
  }
  return {ctx.input_data<T>(0), ctx.input_data<T>(1), nullptr,
          ctx.input_data<T>(2), ctx.input_data<T>(3), ctx.input_data<T>(4)};
}

template <class T>
void sequence_forward(const rnn_kernels::Problem& p, const KernelContext& ctx) {
  T* packed = static_cast<T*>(ctx.out);
  const int64_t state = p.batch * p.units;
  const bool lstm = p.cell == Cell::lstm;
  const rnn_kernels::Outputs<T> out{packed + (lstm ? 2 : 1) * state, packed,
                                    lstm ? packed + state : nullptr};
  const rnn_kernels::Inputs<T> in = sequence_inputs<T>(ctx, p.cell);
  if constexpr (std::is_same_v<T, float>) {
    if (ctx.prepared) {
      return rnn_kernels::forward_onednn(
          *static_cast<const rnn_kernels::PreparedForward*>(ctx.prepared), in, out);
    }
    if (sequence_on_onednn(ctx.out_dtype, p)) return rnn_kernels::forward_onednn(p, in, out);
  }
  if (lstm) return lstm::forward_loops<T>(p, in, out);
  rnn_kernels::forward_loops<T>(p, in, out);
}

template <class T>
void sequence_backward(const rnn_kernels::Problem& p, const KernelContext& ctx) {
  const bool lstm = p.cell == Cell::lstm;
  const size_t states = lstm ? 2 : 1;
  const int64_t state = p.batch * p.units, width = rnn_kernels::gates(p.cell) * p.units;
  const T* dpacked = ctx.input_data<T>(states + 4);
  T* flat = static_cast<T*>(ctx.out);
  rnn_kernels::Gradients<T> grads;
  grads.kernel = flat;
  grads.recurrent_kernel = grads.kernel + p.input * width;
  grads.bias = grads.recurrent_kernel + p.units * width;
  grads.h0 = grads.bias + rnn_kernels::bias_size(p.cell, p.units);
  grads.c0 = lstm ? grads.h0 + state : nullptr;
  grads.x = grads.h0 + int64_t(states) * state;
  const T *dh = dpacked, *dc = lstm ? dpacked + state : nullptr;
  const T* dy = dpacked + int64_t(states) * state;
  const rnn_kernels::Inputs<T> in = sequence_inputs<T>(ctx, p.cell);
  if constexpr (std::is_same_v<T, float>) {
    if (sequence_on_onednn(ctx.out_dtype, p))
      return rnn_kernels::backward_onednn(p, in, dy, dh, dc, grads);
  }
  if (lstm) return lstm::backward_loops<T>(p, in, dy, dh, dc, grads);
  rnn_kernels::backward_loops<T>(p, in, dy, dh, grads);
}

}  // namespace

ValueType infer_rnn_sequence(const InferContext& ctx) {
  const Cell cell = sequence_cell(ctx.op_name, ctx.attrs);
  const size_t states = sequence_form(cell).states;
  int64_t units = 0;
  const ValueType x = sequence_check_inputs(ctx, cell, states + 4, units);
  return {x.dtype, sequence_packed_shape(x.shape, units, states)};
}

// Where the plan holds the weights as constants (a loaded model's), their
// reorders into oneDNN's layouts, once.
PreparedKernel prepare_rnn_sequence(const PrepareContext& ctx) {
  const Cell cell = rnn_kernels::cell_of(ctx.attrs);
  const size_t k = sequence_form(cell).states + 1;  // the kernel's position
  const Shape &x = ctx.inputs[0].shape, &recurrent = ctx.inputs[k + 1].shape;
  const rnn_kernels::Problem p{x[0], x[1], x[2], recurrent[0], rnn_kernels::is_reverse(ctx.attrs),
                               cell};
  if (!sequence_on_onednn(ctx.inputs[0].dtype, p) || !ctx.constants[k] || !ctx.constants[k + 1])
    return nullptr;
  return rnn_kernels::prepare_forward(p, static_cast<const float*>(ctx.constants[k]),
                                      static_cast<const float*>(ctx.constants[k + 1]),
                                      static_cast<const float*>(ctx.constants[k + 2]));
}

void kernel_rnn_sequence(const KernelContext& ctx) {
  const rnn_kernels::Problem p = sequence_problem(ctx, rnn_kernels::cell_of(*ctx.attrs));
  if (ctx.out_dtype == DType::float32) {
    sequence_forward<float>(p, ctx);
  } else {
    sequence_forward<double>(p, ctx);
  }
}

// The inputs' gradients, from the gradient op's flat vector of them.
std::vector<Tensor> grad_rnn_sequence(const GradContext& c) {
  const CallSite site = c.site;
  const SequenceForm form = sequence_form(rnn_kernels::cell_of(c.attrs));
  std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
  inputs.push_back(c.grad);
  const Tensor flat = apply(form.gradient_op, inputs, c.attrs, site);
  // From the first part of a size unknown while tracing on, the parts'
  // places are computed when the graph runs.
  std::vector<Tensor> grads(c.inputs.size());
  int64_t start = 0;
  Tensor start_tensor;
  for (size_t input : sequence_gradient_order(form.states)) {
    const Tensor& like = c.inputs[input];
    if (!like.shape().is_fully_defined() && !start_tensor.defined()) start_tensor = Tensor(start);
    if (c.needs(input))
      grads[input] = sequence_gradient_part(flat, start, start_tensor, like, site);
    if (start_tensor.defined()) {
      start_tensor = api::add(start_tensor, api::size(like, DType::int64, site), site);
    } else {
      start += like.shape().num_elements();
    }
  }
  return grads;
}

ValueType infer_rnn_sequence_grad(const InferContext& ctx) {
  const Cell cell = sequence_cell(ctx.op_name, ctx.attrs);
  const size_t states = sequence_form(cell).states;
  int64_t units = 0;
  const ValueType x = sequence_check_inputs(ctx, cell, states + 5, units);
  const Shape packed = sequence_packed_shape(x.shape, units, states);
  if (!ctx.inputs[states + 4].shape.is_compatible_with(packed)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": dpacked must have shape " +
                               packed.to_list_string() + ", got " +
                               ctx.inputs[states + 4].shape.to_list_string());
  }
  const Shape& kernel = ctx.inputs[states + 1].shape;  // [input, gates * units]
  const int64_t input =
      x.shape[2] != kUnknownDim || kernel.has_unknown_rank() ? x.shape[2] : kernel[0];
  const int64_t width = rnn_kernels::gates(cell) * units;
  const int64_t weights = sequence_plus(sequence_times(sequence_plus(input, units), width),
                                        rnn_kernels::bias_size(cell, units));
  const int64_t state = sequence_times(int64_t(states), sequence_times(x.shape[1], units));
  const int64_t inputs = sequence_times(x.shape[0], sequence_times(x.shape[1], x.shape[2]));
  return {x.dtype, Shape{sequence_plus(weights, sequence_plus(state, inputs))}};
}

void kernel_rnn_sequence_grad(const KernelContext& ctx) {
  const rnn_kernels::Problem p = sequence_problem(ctx, rnn_kernels::cell_of(*ctx.attrs));
  if (ctx.out_dtype == DType::float32) {
    sequence_backward<float>(p, ctx);
  } else {
    sequence_backward<double>(p, ctx);
  }
}

// The gradient of the first gradients, by a tape over them computed again
// from the sequence written with ag::rnn's cells (sequence_composed).
std::vector<Tensor> grad_rnn_sequence_grad(const GradContext& c) {
  const Cell cell = rnn_kernels::cell_of(c.attrs);
  const size_t states = sequence_form(cell).states;
  const std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
  const std::vector<Tensor> forward_inputs(inputs.begin(), inputs.end() - 1);
  GradientTape outer;
  for (const Tensor& input : inputs) outer.watch(input);
  std::vector<Tensor> first;
  {
    GradientTape inner;
    for (const Tensor& input : forward_inputs) inner.watch(input);
    const Tensor packed = sequence_composed(forward_inputs, c.attrs, cell, c.site);
    first = inner.gradient(packed, forward_inputs, UnconnectedGradients::Zero, inputs.back());
  }
  std::vector<Tensor> flat;
  for (size_t input : sequence_gradient_order(states))
    flat.push_back(api::reshape(first[input], {-1}, c.site));
  return outer.gradient(api::concat(flat, 0, c.site), inputs, UnconnectedGradients::Zero, c.grad);
}

}  // namespace ag::ops
