// The recurrent sequence ops' kernels on buffers: lstm_sequence,
// gru_sequence and simple_rnn_sequence (library/rnn_sequence.cpp), a cell
// over a whole sequence, forward and backward:
//   x [time, batch, input], h0 (and an LSTM's c0) [batch, units],
//   kernel [input, gates * units], recurrent_kernel [units, gates * units],
//   the gates in Keras's order (LSTM i, f, c~, o; GRU z, r, h), which is
//   oneDNN's ldigo layout as it is;
//   bias: an LSTM's [4 * units]; a GRU's [2, 3 * units], the input bias
//   then the recurrent one (without reset_after the two add up); a simple
//   RNN's [units];
//   y [time, batch, units], each step's h at its input's position, and the
//   last step's h (and c).
// Two engines: oneDNN's RNN primitives (float32, AG_GEMM=onednn builds:
// rnn_onednn.cpp) and loops on the gemm of ops/gemm.h (float32 and float64:
// the LSTM's in lstm_loops.cpp with ops/lstm_kernels.h, the GRU's and
// simple RNN's in rnn_loops.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "ops/gemm.h"
#include "ops/op_registry.h"

namespace ag::ops::rnn_kernels {

// The cell, with the variants oneDNN has a primitive for.
enum class Cell : int64_t {
  lstm,
  gru,               // Keras's reset_after (ONNX's linear_before_reset): lbr_gru
  gru_reset_before,  // r multiplies the state before the recurrent kernel: gru
  rnn_tanh,          // the simple RNN's activations: vanilla_rnn
  rnn_relu,
  rnn_sigmoid,
};

// The gates each unit has: the kernels' columns are gates * units.
inline int64_t gates(Cell cell) {
  switch (cell) {
    case Cell::lstm:
      return 4;
    case Cell::gru:
    case Cell::gru_reset_before:
      return 3;
    default:
      return 1;
  }
}

inline bool is_gru(Cell cell) {
  return cell == Cell::gru || cell == Cell::gru_reset_before;
}

// The elements of the op's bias input.
inline int64_t bias_size(Cell cell, int64_t units) {
  return (is_gru(cell) ? 2 : 1) * gates(cell) * units;
}

// The sequence ops' attrs, ints = {reverse, cell}: what ag::rnn writes and
// the ops' kernels, gradients and ONNX forms read. An LSTM's attrs without
// the cell are an LSTM's.
inline Attrs sequence_attrs(bool reverse, Cell cell) {
  Attrs attrs;
  attrs.ints = {reverse ? 1 : 0, static_cast<int64_t>(cell)};
  return attrs;
}

inline bool is_reverse(const Attrs& attrs) {
  return !attrs.ints.empty() && attrs.ints[0] != 0;
}

inline Cell cell_of(const Attrs& attrs) {
  return attrs.ints.size() > 1 ? static_cast<Cell>(attrs.ints[1]) : Cell::lstm;
}

struct Problem {
  int64_t time = 0, batch = 0, input = 0, units = 0;
  bool reverse = false;  // from the last step to the first
  Cell cell = Cell::lstm;
};

// The step computed s-th: t = s forwards, from the end in reverse.
inline int64_t step_at(const Problem& p, int64_t s) {
  return p.reverse ? p.time - 1 - s : s;
}

template <class T>
struct Inputs {
  const T *x = nullptr, *h0 = nullptr, *c0 = nullptr;  // c0: an LSTM's only
  const T *kernel = nullptr, *recurrent_kernel = nullptr, *bias = nullptr;
};

template <class T>
struct Outputs {
  T *y = nullptr, *h = nullptr, *c = nullptr;
};

// The gradients of a loss by the inputs, given its gradients by the
// outputs (dy, dh, dc of the outputs' shapes; dc an LSTM's only).
template <class T>
struct Gradients {
  T *x = nullptr, *h0 = nullptr, *c0 = nullptr;
  T *kernel = nullptr, *recurrent_kernel = nullptr, *bias = nullptr;
};

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

// oneDNN's primitives for any cell, made on a geometry's first call on a
// thread and kept for the next. Both need time and batch above 0; each
// throws an UnimplementedError in a build without oneDNN. The backward runs
// the forward pass again for its workspace.
void forward_onednn(const Problem& p, const Inputs<float>& in, const Outputs<float>& out);
void backward_onednn(const Problem& p, const Inputs<float>& in, const float* dy, const float* dh,
                     const float* dc, const Gradients<float>& grads);

// The forward pass of a plan step whose weights are constants: their
// reorders to the primitive's layouts (and a GRU's bias in oneDNN's) done
// once, when the plan is built. Runs from any thread at once.
class PreparedForward;
// Null where the primitive takes the weights as they are (nothing to save).
std::shared_ptr<const PreparedForward> prepare_forward(const Problem& p, const float* kernel,
                                                       const float* recurrent_kernel,
                                                       const float* bias);
void forward_onednn(const PreparedForward& prepared, const Inputs<float>& in,
                    const Outputs<float>& out);

// The GRU's and simple RNN's loops (rnn_loops.cpp).
template <class T>
void forward_loops(const Problem& p, const Inputs<T>& in, const Outputs<T>& out);
template <class T>
void backward_loops(const Problem& p, const Inputs<T>& in, const T* dy, const T* dh,
                    const Gradients<T>& grads);

}  // namespace ag::ops::rnn_kernels
