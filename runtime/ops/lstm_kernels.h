// An LSTM over a whole sequence (the lstm_sequence op,
// library/lstm_sequence.cpp), forward and backward, on buffers:
//   x [time, batch, input], h0 and c0 [batch, units],
//   kernel [input, 4 * units], recurrent_kernel [units, 4 * units] and
//   bias [4 * units], the gates i, f, c~, o in that order (Keras's, and
//   oneDNN's ldigo layout as it is);
//   y [time, batch, units], each step's h at its input's position, and the
//   last step's h and c.
// Two engines: oneDNN's lstm_forward / lstm_backward primitives (float32,
// AG_GEMM=onednn builds: lstm_onednn.cpp) and loops on the gemm of
// ops/gemm.h, a step at a time (float32 and float64:
// library/lstm_sequence.cpp, lstm_steps.cpp). The op chooses: oneDNN for
// float32 states above kLoopsMaxState elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "ops/fast_tanh.h"
#include "ops/op_registry.h"

namespace ag::ops::lstm {

// lstm_sequence's attrs, {reverse} in ints: what ag::rnn::lstm writes and
// the op's kernels, gradient and ONNX form read.
inline Attrs sequence_attrs(bool reverse) {
  Attrs attrs;
  attrs.ints = {reverse ? 1 : 0};
  return attrs;
}

inline bool is_reverse(const Attrs& attrs) {
  return !attrs.ints.empty() && attrs.ints[0] != 0;
}

struct Problem {
  int64_t time = 0, batch = 0, input = 0, units = 0;
  bool reverse = false;  // from the last step to the first
};

template <class T>
struct Inputs {
  const T *x = nullptr, *h0 = nullptr, *c0 = nullptr;
  const T *kernel = nullptr, *recurrent_kernel = nullptr, *bias = nullptr;
};

template <class T>
struct Outputs {
  T *y = nullptr, *h = nullptr, *c = nullptr;
};

// The gradients of a loss by the inputs, given its gradients by the
// outputs (dy, dh, dc of the outputs' shapes).
template <class T>
struct Gradients {
  T *x = nullptr, *h0 = nullptr, *c0 = nullptr;
  T *kernel = nullptr, *recurrent_kernel = nullptr, *bias = nullptr;
};

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

// oneDNN's primitives, made on a geometry's first call on a thread and kept
// for the next. Both need time and batch above 0; each throws an
// UnimplementedError in a build without oneDNN.
void forward_onednn(const Problem& p, const Inputs<float>& in, const Outputs<float>& out);
// Runs the forward pass again for its workspace, then the backward one.
void backward_onednn(const Problem& p, const Inputs<float>& in, const float* dy, const float* dh,
                     const float* dc, const Gradients<float>& grads);

}  // namespace ag::ops::lstm
