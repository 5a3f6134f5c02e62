// The GRU's and simple RNN's loops (ops/rnn_kernels.h): the inputs' share
// of every step in one product, then a step at a time, each step's
// recurrent product with gemm; back through time the same way, the weights'
// gradients in a few products at the end. They serve float64, float32
// without oneDNN, and empty problems.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/rnn_kernels.h"

namespace ag::ops::rnn_kernels {

namespace {

template <class T>
T sigmoid(T z) {
  return T(1) / (T(1) + std::exp(-z));
}

// The simple RNN's activation, and its derivative from its value.
template <class T>
T activate(Cell cell, T a) {
  switch (cell) {
    case Cell::rnn_relu:
      return a > T(0) ? a : T(0);
    case Cell::rnn_sigmoid:
      return sigmoid(a);
    default:
      return std::tanh(a);
  }
}

template <class T>
T activation_slope(Cell cell, T h) {
  switch (cell) {
    case Cell::rnn_relu:
      return h > T(0) ? T(1) : T(0);
    case Cell::rnn_sigmoid:
      return h * (1 - h);
    default:
      return 1 - h * h;
  }
}

template <class T>
std::vector<T> buffer(int64_t size) {
  return std::vector<T>(static_cast<size_t>(size));
}

// What the backward pass needs of the forward one, per step.
template <class T>
struct Kept {
  std::vector<T> gates;   // [time, batch, gates * units]: a GRU's z, r, h~
  std::vector<T> hidden;  // [time, batch, units]: h @ U_h + b_h (reset_after) or r * h
};

// The input's share of every step: x @ kernel + the input bias, and a
// GRU's recurrent bias where it adds to the input one (z's and r's; h's
// too without reset_after, with it that one is inside r * (h @ U_h + b_h)).
template <class T>
std::vector<T> input_products(const Problem& p, const Inputs<T>& in) {
  const int64_t width = gates(p.cell) * p.units, rows = p.time * p.batch;
  std::vector<T> z = buffer<T>(rows * width);
  product(in.x, in.kernel, z.data(), rows, width, p.input);
  std::vector<T> bias(in.bias, in.bias + width);
  const int64_t summed = p.cell == Cell::gru ? 2 * p.units : is_gru(p.cell) ? width : 0;
  for (int64_t j = 0; j < summed; ++j) bias[size_t(j)] += in.bias[width + j];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width; ++j) z[size_t(r * width + j)] += bias[size_t(j)];
  return z;
}

// U_h, the recurrent kernel's candidate columns [units, units], contiguous.
template <class T>
std::vector<T> candidate_kernel(const Problem& p, const T* recurrent_kernel) {
  const int64_t units = p.units, width = 3 * units;
  std::vector<T> u = buffer<T>(units * units);
  for (int64_t k = 0; k < units; ++k)
    std::copy(recurrent_kernel + k * width + 2 * units, recurrent_kernel + (k + 1) * width,
              u.begin() + k * units);
  return u;
}

// One GRU step on h (updated in place) from its input share zx and the
// recurrent product zh = h @ U, keeping its gates and candidate's hidden part
// (reset_product: the caller's buffer [batch, units] for (r * h) @ U_h).
template <class T>
void gru_step(const Problem& p, const Inputs<T>& in, const T* zx, const T* zh,
              const std::vector<T>& u_h, T* h, T* gates, T* hidden, T* reset_product) {
  const int64_t units = p.units, width = 3 * units, batch = p.batch;
  const bool reset_after = p.cell == Cell::gru;
  const T* recurrent_bias = in.bias + width;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < units; ++j) {
      const int64_t g = b * width + j, k = b * units + j;
      gates[g] = sigmoid(zx[g] + zh[g]);
      const T r = sigmoid(zx[g + units] + zh[g + units]);
      gates[g + units] = r;
      hidden[k] = reset_after ? zh[g + 2 * units] + recurrent_bias[2 * units + j] : r * h[k];
    }
  }
  // Without reset_after, the candidate's recurrent part is (r * h) @ U_h.
  if (!reset_after) product(hidden, u_h.data(), reset_product, batch, units, units);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < units; ++j) {
      const int64_t g = b * width + j, k = b * units + j;
      const T recurrent = reset_after ? gates[g + units] * hidden[k] : reset_product[k];
      const T candidate = std::tanh(zx[g + 2 * units] + recurrent);
      gates[g + 2 * units] = candidate;
      const T z = gates[g];
      h[k] = z * h[k] + (1 - z) * candidate;
    }
  }
}

// Runs the sequence, keeping what the backward pass needs where `kept` is given.
template <class T>
void run_steps(const Problem& p, const Inputs<T>& in, const Outputs<T>& out, Kept<T>* kept) {
  const int64_t units = p.units, width = gates(p.cell) * units, state = p.batch * units;
  const std::vector<T> zx = input_products(p, in);
  const std::vector<T> u_h = p.cell == Cell::gru_reset_before
                                 ? candidate_kernel(p, in.recurrent_kernel)
                                 : std::vector<T>{};
  std::vector<T> zh = buffer<T>(p.batch * width), gates = buffer<T>(p.batch * width);
  std::vector<T> hidden = buffer<T>(state), reset_product = buffer<T>(state);
  std::copy(in.h0, in.h0 + state, out.h);
  for (int64_t s = 0; s < p.time; ++s) {
    const int64_t t = step_at(p, s);
    const T* zx_t = zx.data() + t * p.batch * width;
    product(out.h, in.recurrent_kernel, zh.data(), p.batch, width, units);
    if (is_gru(p.cell)) {
      T* g = kept ? kept->gates.data() + t * p.batch * width : gates.data();
      T* k = kept ? kept->hidden.data() + t * state : hidden.data();
      gru_step(p, in, zx_t, zh.data(), u_h, out.h, g, k, reset_product.data());
    } else {
      for (int64_t k = 0; k < state; ++k) out.h[k] = activate(p.cell, zx_t[k] + zh[size_t(k)]);
    }
    std::copy(out.h, out.h + state, out.y + t * state);
  }
}

// A GRU's gradients by each step's gates' inputs from the input (dzx) and
// from the state (dzh) [time, batch, 3 * units], and for reset_before by
// the candidate's input (dn [time, batch, units]), carrying dh back.
template <class T>
struct GruBackward {
  std::vector<T> dzx, dzh, dn;
};

template <class T>
GruBackward<T> gru_step_gradients(const Problem& p, const Inputs<T>& in, const Kept<T>& kept,
                                  const T* y, const T* dy, T* carried) {
  const int64_t units = p.units, width = 3 * units, state = p.batch * units;
  const int64_t rows = p.time * p.batch;
  const bool reset_after = p.cell == Cell::gru;
  const std::vector<T> u_h =
      reset_after ? std::vector<T>{} : candidate_kernel(p, in.recurrent_kernel);
  GruBackward<T> g{buffer<T>(rows * width), buffer<T>(rows * width),
                   buffer<T>(reset_after ? 0 : rows * units)};
  std::vector<T> dh = buffer<T>(state), direct = buffer<T>(state), d_reset = buffer<T>(state);
  for (int64_t s = p.time - 1; s >= 0; --s) {
    const int64_t t = step_at(p, s), before = s > 0 ? step_at(p, s - 1) : -1;
    const T* h_before = before < 0 ? in.h0 : y + before * state;
    const T* gates = kept.gates.data() + t * p.batch * width;
    const T* hidden = kept.hidden.data() + t * state;
    T* dzx = g.dzx.data() + t * p.batch * width;
    T* dzh = g.dzh.data() + t * p.batch * width;
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t j = 0; j < units; ++j) {
        const int64_t q = b * width + j, k = b * units + j;
        const T z = gates[q], n = gates[q + 2 * units];
        dh[size_t(k)] = dy[t * state + k] + carried[k];
        const T dn = dh[size_t(k)] * (1 - z) * (1 - n * n);
        dzx[q] = dzh[q] = dh[size_t(k)] * (h_before[k] - n) * z * (1 - z);
        dzx[q + 2 * units] = dn;
        if (!reset_after) g.dn[size_t(t * state + k)] = dn;
      }
    }
    // d(r * h) = dn @ U_h^T, without reset_after.
    if (!reset_after)
      product(g.dn.data() + t * state, u_h.data(), d_reset.data(), p.batch, units, units, false,
              true);
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t j = 0; j < units; ++j) {
        const int64_t q = b * width + j, k = b * units + j;
        const T z = gates[q], r = gates[q + units], dn = dzx[q + 2 * units];
        const T dr = reset_after ? dn * hidden[k] : d_reset[size_t(k)] * h_before[k];
        dzx[q + units] = dzh[q + units] = dr * r * (1 - r);
        dzh[q + 2 * units] = reset_after ? dn * r : T(0);
        direct[size_t(k)] = dh[size_t(k)] * z + (reset_after ? T(0) : d_reset[size_t(k)] * r);
      }
    }
    product(dzh, in.recurrent_kernel, carried, p.batch, units, width, false, true);
    for (int64_t k = 0; k < state; ++k) carried[k] += direct[size_t(k)];
  }
  return g;
}

// The weights' and inputs' gradients from the steps' gradients dzx and dzh.
template <class T>
void weight_gradients(const Problem& p, const Inputs<T>& in, const Kept<T>& kept,
                      const std::vector<T>& previous_h, const GruBackward<T>& g,
                      const Gradients<T>& grads) {
  const int64_t units = p.units, width = gates(p.cell) * units, rows = p.time * p.batch;
  product(g.dzx.data(), in.kernel, grads.x, rows, p.input, width, false, true);
  product(in.x, g.dzx.data(), grads.kernel, p.input, width, rows, true);
  product(previous_h.data(), g.dzh.data(), grads.recurrent_kernel, units, width, rows, true);
  if (p.cell == Cell::gru_reset_before) {
    // U_h's gradient, (r * h)^T dn, into its columns.
    std::vector<T> u_h = buffer<T>(units * units);
    product(kept.hidden.data(), g.dn.data(), u_h.data(), units, units, rows, true);
    for (int64_t k = 0; k < units; ++k)
      for (int64_t j = 0; j < units; ++j)
        grads.recurrent_kernel[k * width + 2 * units + j] += u_h[size_t(k * units + j)];
  }
  const int64_t bias = bias_size(p.cell, units);
  std::fill(grads.bias, grads.bias + bias, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < width; ++j) {
      grads.bias[j] += g.dzx[size_t(r * width + j)];
      // A GRU's recurrent bias: where it adds to the input one, the same.
      if (is_gru(p.cell))
        grads.bias[width + j] +=
            p.cell == Cell::gru ? g.dzh[size_t(r * width + j)] : g.dzx[size_t(r * width + j)];
    }
  }
}

}  // namespace

template <class T>
void forward_loops(const Problem& p, const Inputs<T>& in, const Outputs<T>& out) {
  run_steps<T>(p, in, out, nullptr);
}

template <class T>
void backward_loops(const Problem& p, const Inputs<T>& in, const T* dy, const T* dh,
                    const Gradients<T>& grads) {
  const int64_t units = p.units, width = gates(p.cell) * units, state = p.batch * units;
  const int64_t rows = p.time * p.batch;
  Kept<T> kept{buffer<T>(is_gru(p.cell) ? rows * width : 0),
               buffer<T>(is_gru(p.cell) ? rows * units : 0)};
  std::vector<T> y = buffer<T>(rows * units), last_h = buffer<T>(state);
  run_steps<T>(p, in, {y.data(), last_h.data(), nullptr}, &kept);
  std::vector<T> previous_h = buffer<T>(rows * units);
  for (int64_t s = 0; s < p.time; ++s) {
    const int64_t t = step_at(p, s), before = s > 0 ? step_at(p, s - 1) : -1;
    const T* h_before = before < 0 ? in.h0 : y.data() + before * state;
    std::copy(h_before, h_before + state, previous_h.begin() + t * state);
  }
  std::copy(dh, dh + state, grads.h0);  // the carried dh
  GruBackward<T> g;
  if (is_gru(p.cell)) {
    g = gru_step_gradients(p, in, kept, y.data(), dy, grads.h0);
  } else {
    // The simple RNN: dz = (dy + carried) * f'(h), carried = dz @ U^T.
    g.dzx = buffer<T>(rows * units);
    for (int64_t s = p.time - 1; s >= 0; --s) {
      const int64_t t = step_at(p, s);
      T* dz = g.dzx.data() + t * state;
      for (int64_t k = 0; k < state; ++k)
        dz[k] =
            (dy[t * state + k] + grads.h0[k]) * activation_slope(p.cell, y[size_t(t * state + k)]);
      product(dz, in.recurrent_kernel, grads.h0, p.batch, units, units, false, true);
    }
    g.dzh = g.dzx;
  }
  weight_gradients(p, in, kept, previous_h, g, grads);
}

template void forward_loops<float>(const Problem&, const Inputs<float>&, const Outputs<float>&);
template void forward_loops<double>(const Problem&, const Inputs<double>&, const Outputs<double>&);
template void backward_loops<float>(const Problem&, const Inputs<float>&, const float*,
                                    const float*, const Gradients<float>&);
template void backward_loops<double>(const Problem&, const Inputs<double>&, const double*,
                                     const double*, const Gradients<double>&);

}  // namespace ag::ops::rnn_kernels
