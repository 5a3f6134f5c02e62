// The LSTM's loops of the lstm_sequence op (ops/rnn_kernels.h has the op's
// buffers and its oneDNN engine): the sequence forward and back through
// time in lstm_loops.cpp, a step compiled per instruction set in
// lstm_steps.cpp. The op takes them for float64, without oneDNN, and for
// float32 states of at most kLoopsMaxState elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/fast_tanh.h"
#include "ops/rnn_kernels.h"

namespace ag::ops::lstm {

using rnn_kernels::Problem;
template <class T>
using Inputs = rnn_kernels::Inputs<T>;
template <class T>
using Outputs = rnn_kernels::Outputs<T>;
template <class T>
using Gradients = rnn_kernels::Gradients<T>;

// One step of the loops for a batch: gates = activations of zx + h @
// recurrent_kernel (or of zx + zh, where the product was made with gemm),
// then c and h updated in place and h written to y too. Compiled for each
// instruction set (ops/isa.h: lstm_steps.cpp), as the elementwise loops are.
// The loops' tanh and sigmoid, of the gates and of the cell state: for
// float32, tanh's vectorisable formula (ops/fast_tanh.h) and sigmoid(z) =
// (1 + tanh(z / 2)) / 2 on it, so that a step's loops vectorise (a scalar
// expf per gate element was most of a small LSTM's time); for float64, the
// library's functions.
template <class T>
T loop_tanh(T z) {
  if constexpr (std::is_same_v<T, float>) {
    return fast_tanh(z);
  } else {
    return std::tanh(z);
  }
}

template <class T>
T loop_sigmoid(T z) {
  if constexpr (std::is_same_v<T, float>) {
    return 0.5f + 0.5f * fast_tanh(0.5f * z);
  } else {
    return T(1) / (T(1) + std::exp(-z));
  }
}

// Above this many rows (the batch), the loops make a step's h @
// recurrent_kernel with one gemm call; up to it, in the step's loop, since
// the call costs more than the product on a small batch (oneDNN's sgemm:
// about 0.6 us a call).
constexpr int64_t kLoopProductRows = 4;

// The op runs float32 on the loops where the state (batch x units) has at
// most this many elements, on oneDNN's primitives above. Measured on an AMD
// EPYC with AVX-512, one thread, 8 steps of 32 inputs and units, forward /
// backward in us: batch 1, oneDNN 4.9 / 17.9, loops 4.4 / 10.6; batch 2,
// 5.6 / 21.5 against 7.7 / 19.7; batch 4, 7.2 / 26.3 against 15.6 / 34.9.
// Batch 1 of 128 units, 32 steps: 117 / 242 against 113 / 305.
constexpr int64_t kLoopsMaxState = 64;

template <class T>
struct Step {
  const T* zx = nullptr;                // [batch, 4 * units]: x @ kernel + bias
  const T* zh = nullptr;                // [batch, 4 * units], or null: computed here
  const T* recurrent_kernel = nullptr;  // [units, 4 * units], read where zh is null
  T *h = nullptr, *c = nullptr;         // [batch, units], updated
  T* y = nullptr;                       // [batch, units]
  T* gates = nullptr;                   // [batch, 4 * units]: the activated gates
  T* cells = nullptr;                   // [batch, units]: c, or null
  int64_t batch = 0, units = 0;
};
void run_step(const Step<float>& step);
void run_step(const Step<double>& step);

template <class T>
void forward_loops(const Problem& p, const Inputs<T>& in, const Outputs<T>& out);
template <class T>
void backward_loops(const Problem& p, const Inputs<T>& in, const T* dy, const T* dh, const T* dc,
                    const Gradients<T>& grads);

}  // namespace ag::ops::lstm
