// An LSTM over a whole sequence as one op, which ag::rnn::lstm (and through
// it Keras's LSTM layer and ONNX's LSTM) uses where the cell is the plain
// one: lstm_sequence(x, h0, c0, kernel, recurrent_kernel, bias) with x
// [time, batch, input] and attrs.ints = {reverse} gives one tensor
// [2 + time, batch, units]: the last step's h, its c, then each step's h at
// its input's position (ops have one output; ag::rnn::lstm slices it).
// lstm_sequence_grad(x, h0, c0, kernel, recurrent_kernel, bias, dpacked)
// gives the gradients by the six inputs, flattened into one vector in the
// order kernel, recurrent_kernel, bias, h0, c0, x. float32 runs on oneDNN's
// LSTM primitives where the build has them, else (and float64) on the
// loops here; ops/lstm_kernels.h. The gradient op's own gradient comes from
// the sequence written with ag::rnn::lstm_cell, by a tape (traced, where
// the steps are known while tracing).
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/error.h"
#include "ag/gradients.h"
#include "ag/ops.h"
#include "ag/rnn.h"
#include "ops/dispatch.h"
#include "ops/gemm.h"
#include "ops/kernels.h"
#include "ops/lstm_kernels.h"

namespace ag::ops {

namespace lstm {
namespace {

// The step computed s-th: t = s forwards, from the end in reverse.
int64_t step_at(const Problem& p, int64_t s) {
  return p.reverse ? p.time - 1 - s : s;
}

// c[m x n] = op(a) op(b) of ops::gemm, zeros where k is 0.
template <class T>
void product(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, bool trans_a = false,
             bool trans_b = false) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, T(0));
    return;
  }
  gemm(a, b, c, m, n, k, trans_a, trans_b);
}

// Runs the sequence, keeping each step's activated gates [time, batch,
// 4 * units] and cell state [time, batch, units] where those are given.
template <class T>
void run_steps(const Problem& p, const Inputs<T>& in, const Outputs<T>& out, T* kept_gates,
               T* cells) {
  const int64_t batch = p.batch, units = p.units, width = 4 * units, rows = p.time * batch;
  // Every step's x @ kernel + bias in one product.
  std::vector<T> z(static_cast<size_t>(rows * width));
  product(in.x, in.kernel, z.data(), rows, width, p.input);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) z[size_t(r * width + j)] += in.bias[j];
  const bool gemm_product = batch > kLoopProductRows;
  std::vector<T> recurrent(static_cast<size_t>(gemm_product ? batch * width : 0));
  std::vector<T> step_gates(static_cast<size_t>(kept_gates ? 0 : batch * width));
  std::copy(in.h0, in.h0 + batch * units, out.h);
  std::copy(in.c0, in.c0 + batch * units, out.c);
  for (int64_t s = 0; s < p.time; ++s) {
    const int64_t t = step_at(p, s);
    Step<T> step;
    step.zx = z.data() + t * batch * width;
    if (gemm_product) {
      product(out.h, in.recurrent_kernel, recurrent.data(), batch, width, units);
      step.zh = recurrent.data();
    }
    step.recurrent_kernel = in.recurrent_kernel;
    step.h = out.h;
    step.c = out.c;
    step.y = out.y + t * batch * units;
    step.gates = kept_gates ? kept_gates + t * batch * width : step_gates.data();
    step.cells = cells ? cells + t * batch * units : nullptr;
    step.batch = batch;
    step.units = units;
    run_step(step);
  }
}

}  // namespace

template <class T>
void forward_loops(const Problem& p, const Inputs<T>& in, const Outputs<T>& out) {
  run_steps<T>(p, in, out, nullptr, nullptr);
}

// Back through time: each step's gradient by its gates' inputs z (dz,
// [time, batch, 4 * units]) from the carried dh and dc, then the inputs'
// and weights' gradients from dz in a few products.
template <class T>
void backward_loops(const Problem& p, const Inputs<T>& in, const T* dy, const T* dh, const T* dc,
                    const Gradients<T>& grads) {
  const int64_t batch = p.batch, units = p.units, width = 4 * units, rows = p.time * batch;
  const int64_t state_size = batch * units;
  std::vector<T> gates(size_t(rows * width)), cells(size_t(rows * units)), y(size_t(rows * units));
  std::vector<T> last_h(static_cast<size_t>(state_size)), last_c(static_cast<size_t>(state_size));
  run_steps<T>(p, in, {y.data(), last_h.data(), last_c.data()}, gates.data(), cells.data());
  std::vector<T> dz(size_t(rows * width)), previous_h(size_t(rows * units));
  std::copy(dh, dh + state_size, grads.h0);  // the carried dh and dc
  std::copy(dc, dc + state_size, grads.c0);
  for (int64_t s = p.time - 1; s >= 0; --s) {
    const int64_t t = step_at(p, s), before = s > 0 ? step_at(p, s - 1) : -1;
    const T* c_before = before < 0 ? in.c0 : cells.data() + before * state_size;
    const T* h_before = before < 0 ? in.h0 : y.data() + before * state_size;
    std::copy(h_before, h_before + state_size, previous_h.data() + t * state_size);
    for (int64_t b = 0; b < batch; ++b) {
      const T* g_t = gates.data() + (t * batch + b) * width;
      T* dz_t = dz.data() + (t * batch + b) * width;
      for (int64_t j = 0; j < units; ++j) {
        const int64_t k = b * units + j;
        const T i = g_t[j], f = g_t[units + j], g = g_t[2 * units + j], o = g_t[3 * units + j];
        const T tanh_c = loop_tanh(cells[size_t(t * state_size + k)]);
        const T dh_k = dy[t * state_size + k] + grads.h0[k];
        const T dc_k = grads.c0[k] + dh_k * o * (1 - tanh_c * tanh_c);
        dz_t[j] = dc_k * g * i * (1 - i);
        dz_t[units + j] = dc_k * c_before[k] * f * (1 - f);
        dz_t[2 * units + j] = dc_k * i * (1 - g * g);
        dz_t[3 * units + j] = dh_k * tanh_c * o * (1 - o);
        grads.c0[k] = dc_k * f;
      }
    }
    product(dz.data() + t * batch * width, in.recurrent_kernel, grads.h0, batch, units, width,
            false, true);
  }
  product(dz.data(), in.kernel, grads.x, rows, p.input, width, false, true);
  product(in.x, dz.data(), grads.kernel, p.input, width, rows, true);
  product(previous_h.data(), dz.data(), grads.recurrent_kernel, units, width, rows, true);
  std::fill(grads.bias, grads.bias + width, T(0));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) grads.bias[j] += dz[size_t(r * width + j)];
}

template void forward_loops<float>(const Problem&, const Inputs<float>&, const Outputs<float>&);
template void forward_loops<double>(const Problem&, const Inputs<double>&, const Outputs<double>&);
template void backward_loops<float>(const Problem&, const Inputs<float>&, const float*,
                                    const float*, const float*, const Gradients<float>&);
template void backward_loops<double>(const Problem&, const Inputs<double>&, const double*,
                                     const double*, const double*, const Gradients<double>&);

}  // namespace lstm

namespace {

constexpr const char* kLstmInputNames[] = {"x",    "h0",     "c0", "kernel", "recurrent_kernel",
                                           "bias", "dpacked"};

// The inputs in the order of their gradients in lstm_sequence_grad's vector.
constexpr size_t kLstmGradientOrder[] = {3, 4, 5, 1, 2, 0};

std::string lstm_dims(const Shape& s) {
  return s.to_list_string();
}

// The problem of a call on these shapes, every dim known.
lstm::Problem lstm_problem(const Shape& x, const Shape& recurrent_kernel, const Attrs& attrs) {
  return {x[0], x[1], x[2], recurrent_kernel[0], lstm::is_reverse(attrs)};
}

// oneDNN's primitives where the state (batch x units) has more than
// lstm::kLoopsMaxState elements; on smaller ones, where a step is a few
// thousand multiply-adds, the loops are as fast or faster (see there).
bool lstm_on_onednn(DType dtype, const lstm::Problem& p) {
  return dtype == DType::float32 && built_with_onednn() && p.time > 0 && p.input > 0 &&
         p.batch * p.units > lstm::kLoopsMaxState;
}

template <class T>
lstm::Inputs<T> lstm_inputs(const KernelContext& ctx) {
  return {ctx.input_data<T>(0), ctx.input_data<T>(1), ctx.input_data<T>(2),
          ctx.input_data<T>(3), ctx.input_data<T>(4), ctx.input_data<T>(5)};
}

template <class T>
void lstm_forward(const lstm::Problem& p, const KernelContext& ctx) {
  T* packed = static_cast<T*>(ctx.out);
  const int64_t state = p.batch * p.units;
  const lstm::Outputs<T> out{packed + 2 * state, packed, packed + state};
  if constexpr (std::is_same_v<T, float>) {
    if (lstm_on_onednn(ctx.out_dtype, p)) return lstm::forward_onednn(p, lstm_inputs<T>(ctx), out);
  }
  lstm::forward_loops<T>(p, lstm_inputs<T>(ctx), out);
}

template <class T>
void lstm_backward(const lstm::Problem& p, const KernelContext& ctx) {
  const int64_t state = p.batch * p.units, width = 4 * p.units;
  const T* dpacked = ctx.input_data<T>(6);
  T* flat = static_cast<T*>(ctx.out);
  lstm::Gradients<T> grads;
  grads.kernel = flat;
  grads.recurrent_kernel = grads.kernel + p.input * width;
  grads.bias = grads.recurrent_kernel + p.units * width;
  grads.h0 = grads.bias + width;
  grads.c0 = grads.h0 + state;
  grads.x = grads.c0 + state;
  const T *dh = dpacked, *dc = dpacked + state, *dy = dpacked + 2 * state;
  if constexpr (std::is_same_v<T, float>) {
    if (lstm_on_onednn(ctx.out_dtype, p))
      return lstm::backward_onednn(p, lstm_inputs<T>(ctx), dy, dh, dc, grads);
  }
  lstm::backward_loops<T>(p, lstm_inputs<T>(ctx), dy, dh, dc, grads);
}

// Checks the inputs' dtypes and shapes; returns the output's dtype with
// x's shape and the units.
ValueType lstm_check_inputs(const InferContext& ctx, size_t count, int64_t& units) {
  const std::string op(ctx.op_name);
  const DType dtype = ctx.inputs[0].dtype;
  if (dtype != DType::float32 && dtype != DType::float64)
    throw InvalidArgumentError(op + ": x must be float32 or float64, got " +
                               std::string(dtype_name(dtype)));
  for (size_t k = 1; k < count; ++k) {
    if (ctx.inputs[k].dtype != dtype) {
      throw InvalidArgumentError(op + ": " + kLstmInputNames[k] + " is " +
                                 std::string(dtype_name(ctx.inputs[k].dtype)) + ", but x is " +
                                 std::string(dtype_name(dtype)));
    }
  }
  const Shape &x = ctx.inputs[0].shape, &recurrent = ctx.inputs[4].shape;
  if (x.has_unknown_rank() || x.rank() != 3)
    throw InvalidArgumentError(op + ": x must be [time, batch, input], got " + lstm_dims(x));
  if (recurrent.has_unknown_rank() || recurrent.rank() != 2 || recurrent[0] == kUnknownDim)
    throw InvalidArgumentError(op +
                               ": recurrent_kernel must be [units, 4 * units] with known "
                               "units, got " +
                               lstm_dims(recurrent));
  units = recurrent[0];
  const Shape expected[] = {x,
                            Shape{x[1], units},
                            Shape{x[1], units},
                            Shape{x[2], 4 * units},
                            Shape{units, 4 * units},
                            Shape{4 * units}};
  for (size_t k = 1; k < 6; ++k) {
    if (!ctx.inputs[k].shape.is_compatible_with(expected[k])) {
      throw InvalidArgumentError(op + ": " + kLstmInputNames[k] + " must have shape " +
                                 lstm_dims(expected[k]) + ", got " +
                                 lstm_dims(ctx.inputs[k].shape));
    }
  }
  return ctx.inputs[0];
}

int64_t lstm_times(int64_t a, int64_t b) {
  return a == kUnknownDim || b == kUnknownDim ? kUnknownDim : a * b;
}

int64_t lstm_plus(int64_t a, int64_t b) {
  return a == kUnknownDim || b == kUnknownDim ? kUnknownDim : a + b;
}

// The packed output's shape: [2 + time, batch, units].
Shape lstm_packed_shape(const Shape& x, int64_t units) {
  return Shape{lstm_plus(x[0], 2), x[1], units};
}

// One of the flat gradient's parts, as `like`: a slice at `start`, or where
// like's shape or its place is known only when the graph runs
// (start_tensor defined), a gather of the positions from start_tensor on.
Tensor lstm_gradient_part(const Tensor& flat, int64_t start, const Tensor& start_tensor,
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

// lstm_sequence's output, written with ag::rnn::lstm_cell: a step after
// step where the steps are known while tracing (a tape around a staged
// While's gradient is not implemented), else dynamic_rnn.
Tensor lstm_sequence_composed(const std::vector<Tensor>& in, const Attrs& attrs, CallSite site) {
  const rnn::LSTMWeights weights{in[3], in[4], in[5], Tensor()};
  const bool reverse = lstm::is_reverse(attrs);
  const int64_t time = in[0].shape()[0];
  std::vector<Tensor> states{in[1], in[2]};
  Tensor y;
  if (time > 0) {
    std::vector<Tensor> steps(static_cast<size_t>(time));
    for (int64_t s = 0; s < time; ++s) {
      const int64_t t = reverse ? time - 1 - s : s;
      rnn::CellOutput out =
          rnn::lstm_cell(api::gather(in[0], Tensor(t), 0, site), states, weights, {}, site);
      steps[size_t(t)] = out.output;
      states = std::move(out.states);
    }
    y = api::stack(steps, 0, site);
  } else {
    rnn::RNNOptions options;
    options.time_major = true;
    options.reverse = reverse;
    const rnn::Cell cell = [&](const Tensor& x, const std::vector<Tensor>& s) {
      return rnn::lstm_cell(x, s, weights, {}, site);
    };
    rnn::RNNOutput out = rnn::dynamic_rnn(cell, in[0], states, options, site);
    y = out.outputs;
    states = std::move(out.states);
  }
  return api::concat(
      {api::expand_dims(states[0], 0, site), api::expand_dims(states[1], 0, site), y}, 0, site);
}

}  // namespace

ValueType infer_lstm_sequence(const InferContext& ctx) {
  int64_t units = 0;
  const ValueType x = lstm_check_inputs(ctx, 6, units);
  return {x.dtype, lstm_packed_shape(x.shape, units)};
}

void kernel_lstm_sequence(const KernelContext& ctx) {
  const lstm::Problem p = lstm_problem(*ctx.inputs[0].shape, *ctx.inputs[4].shape, *ctx.attrs);
  if (ctx.out_dtype == DType::float32) {
    lstm_forward<float>(p, ctx);
  } else {
    lstm_forward<double>(p, ctx);
  }
}

// The six gradients, from lstm_sequence_grad's flat vector of them.
std::vector<Tensor> grad_lstm_sequence(const GradContext& c) {
  const CallSite site = c.site;
  std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
  inputs.push_back(c.grad);
  const Tensor flat = apply(OpId::LstmSequenceGrad, inputs, c.attrs, site);
  // From the first part of a size unknown while tracing on, the parts'
  // places are computed when the graph runs.
  std::vector<Tensor> grads(6);
  int64_t start = 0;
  Tensor start_tensor;
  for (size_t input : kLstmGradientOrder) {
    const Tensor& like = c.inputs[input];
    if (!like.shape().is_fully_defined() && !start_tensor.defined()) start_tensor = Tensor(start);
    if (c.needs(input)) grads[input] = lstm_gradient_part(flat, start, start_tensor, like, site);
    if (start_tensor.defined()) {
      start_tensor = api::add(start_tensor, api::size(like, DType::int64, site), site);
    } else {
      start += like.shape().num_elements();
    }
  }
  return grads;
}

ValueType infer_lstm_sequence_grad(const InferContext& ctx) {
  int64_t units = 0;
  const ValueType x = lstm_check_inputs(ctx, 7, units);
  const Shape packed = lstm_packed_shape(x.shape, units);
  if (!ctx.inputs[6].shape.is_compatible_with(packed)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": dpacked must have shape " +
                               lstm_dims(packed) + ", got " + lstm_dims(ctx.inputs[6].shape));
  }
  const Shape& kernel = ctx.inputs[3].shape;  // [input, 4 * units]
  const int64_t input =
      x.shape[2] != kUnknownDim || kernel.has_unknown_rank() ? x.shape[2] : kernel[0];
  const int64_t weights = lstm_times(lstm_plus(input, units + 1), 4 * units);
  const int64_t states = lstm_times(2, lstm_times(x.shape[1], units));
  const int64_t inputs = lstm_times(x.shape[0], lstm_times(x.shape[1], x.shape[2]));
  return {x.dtype, Shape{lstm_plus(weights, lstm_plus(states, inputs))}};
}

void kernel_lstm_sequence_grad(const KernelContext& ctx) {
  const lstm::Problem p = lstm_problem(*ctx.inputs[0].shape, *ctx.inputs[4].shape, *ctx.attrs);
  if (ctx.out_dtype == DType::float32) {
    lstm_backward<float>(p, ctx);
  } else {
    lstm_backward<double>(p, ctx);
  }
}

// The gradient of the first gradients, by a tape over them computed again
// from lstm_sequence written with ag::rnn::lstm_cell (lstm_sequence_composed).
std::vector<Tensor> grad_lstm_sequence_grad(const GradContext& c) {
  const std::vector<Tensor> inputs(c.inputs.begin(), c.inputs.end());
  const std::vector<Tensor> forward_inputs(inputs.begin(), inputs.begin() + 6);
  GradientTape outer;
  for (const Tensor& input : inputs) outer.watch(input);
  std::vector<Tensor> first;
  {
    GradientTape inner;
    for (const Tensor& input : forward_inputs) inner.watch(input);
    const Tensor packed = lstm_sequence_composed(forward_inputs, c.attrs, c.site);
    first = inner.gradient(packed, forward_inputs, UnconnectedGradients::Zero, inputs[6]);
  }
  std::vector<Tensor> flat;
  for (size_t input : kLstmGradientOrder) flat.push_back(api::reshape(first[input], {-1}, c.site));
  return outer.gradient(api::concat(flat, 0, c.site), inputs, UnconnectedGradients::Zero, c.grad);
}

}  // namespace ag::ops
