// A step of the LSTM loops (ops/lstm_kernels.h), compiled once per
// instruction set (ops/isa.h) so that its loops over the gates vectorise,
// through lstm::loop_tanh and loop_sigmoid.
#include <algorithm>

#include "ops/isa.h"
#include "ops/kernel_tables.h"
#include "ops/lstm_kernels.h"

AG_ISA_BEGIN
namespace ag::ops::AG_ISA_NS {
namespace {

// A batch row's gate inputs: zx + zh, or zx + h @ recurrent_kernel.
template <class T>
void gate_inputs(const lstm::Step<T>& s, int64_t b, T* __restrict row) {
  const int64_t width = 4 * s.units;
  const T* zx = s.zx + b * width;
  if (s.zh != nullptr) {
    const T* zh = s.zh + b * width;
    for (int64_t j = 0; j < width; ++j) row[j] = zx[j] + zh[j];
    return;
  }
  std::copy(zx, zx + width, row);
  for (int64_t k = 0; k < s.units; ++k) {
    const T hk = s.h[b * s.units + k];
    const T* __restrict weights = s.recurrent_kernel + k * width;
    for (int64_t j = 0; j < width; ++j) row[j] += hk * weights[j];
  }
}

template <class T>
void step(const lstm::Step<T>& s) {
  const int64_t units = s.units, width = 4 * units;
  // Every row's gates first: the product reads h, which the update writes.
  for (int64_t b = 0; b < s.batch; ++b) {
    T* __restrict g = s.gates + b * width;
    gate_inputs(s, b, g);
    for (int64_t j = 0; j < 2 * units; ++j) g[j] = lstm::loop_sigmoid(g[j]);  // i, f
    for (int64_t j = 2 * units; j < 3 * units; ++j) g[j] = lstm::loop_tanh(g[j]);
    for (int64_t j = 3 * units; j < width; ++j) g[j] = lstm::loop_sigmoid(g[j]);  // o
  }
  for (int64_t b = 0; b < s.batch; ++b) {
    const T* __restrict g = s.gates + b * width;
    T* __restrict c = s.c + b * units;
    T* __restrict h = s.h + b * units;
    T* __restrict y = s.y + b * units;
    for (int64_t j = 0; j < units; ++j) {
      c[j] = g[units + j] * c[j] + g[j] * g[2 * units + j];
      h[j] = g[3 * units + j] * lstm::loop_tanh(c[j]);
      y[j] = h[j];
    }
    if (s.cells != nullptr) std::copy(c, c + units, s.cells + b * units);
  }
}

}  // namespace

extern const LstmStepKernels lstm_step_kernels = {&step<float>, &step<double>};

}  // namespace ag::ops::AG_ISA_NS
AG_ISA_END
