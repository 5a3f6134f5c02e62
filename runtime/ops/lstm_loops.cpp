// The LSTM's loops (ops/lstm_kernels.h): the sequence forward, a step at
// a time through the step compiled per instruction set (lstm_steps.cpp),
// and back through time.
#include <algorithm>
#include <vector>

#include "ops/lstm_kernels.h"

namespace ag::ops::lstm {

namespace {

using rnn_kernels::product;
using rnn_kernels::step_at;

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

}  // namespace ag::ops::lstm
