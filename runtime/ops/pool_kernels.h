// The computations of the pools, on buffers in the layouts of
// conv_geometry.h (a pool is a depthwise convolution's geometry:
// pool_geometry), with every dim of the geometry known:
//   max_pool            y  = the maximum of each window of x
//   avg_pool            y  = the mean of each window of x (padding not counted)
//   max_pool_grad       dx = dy added at each window's maximum in x
//   max_pool_grad_grad  y  = a gradient of x's shape read at each window's maximum
//   avg_pool_grad       dx = dy spread over each window
// Two engines: loops over the windows (float32 and float64: library/pool.cpp),
// and oneDNN's pooling primitives (float32, AG_GEMM=onednn builds:
// pool_onednn.cpp). The pool ops choose (library/pool.cpp).
#pragma once

#include "ops/conv_geometry.h"

namespace ag::ops {

// A window's maximum is its first largest value in row-major order of the
// window, or its first NaN; a window wholly in the padding has a maximum of
// -infinity and a mean of 0.
namespace pool_loops {
template <class T>
void max_pool(const ConvGeometry& g, const T* x, T* y);
template <class T>
void avg_pool(const ConvGeometry& g, const T* x, T* y);
template <class T>
void max_pool_grad(const ConvGeometry& g, const T* x, const T* dy, T* dx);
template <class T>
void max_pool_grad_grad(const ConvGeometry& g, const T* x, const T* grad, T* out);
template <class T>
void avg_pool_grad(const ConvGeometry& g, const T* dy, T* dx);

// A tile of max_pool_grad's channels-last loop: `rows` output positions of
// every batch item, the window of row r at offsets[r * window + k] for k <
// counts[r] (input positions times the channels, the padding left out); dy
// at the tile's first position. Adds each dy at its window's maximum in dx,
// which is never -0. Compiled per instruction set (pool_steps.cpp).
template <class T>
struct MaxPoolGradTile {
  const T* x;
  const T* dy;
  T* dx;
  const int64_t* offsets;
  const int64_t* counts;
  int64_t rows, window, channels, batch, in_batch, out_batch;
};
void max_pool_grad_tile(const MaxPoolGradTile<float>& tile);
void max_pool_grad_tile(const MaxPoolGradTile<double>& tile);
}  // namespace pool_loops

// oneDNN's primitives (float32). Each primitive is created on the first
// call of its geometry on a thread and kept for the next. Throw an
// UnimplementedError in a build without oneDNN.
//
// oneDNN's maximum is the first largest value of the window in the same
// order, so a gradient goes to the same position among equal values; but it
// never takes a NaN (its comparisons with one are false), so the pool ops
// keep an input with a NaN on the loops.
namespace pool_onednn {
// Whether oneDNN takes `g` and computes what the loops do: no empty dim,
// and on each spatial dim padding shorter than the window's span and
// dilation gaps shorter than the input, so that every window reads the
// input. oneDNN refuses the average of a window wholly in the padding, and
// gives its maximum as the lowest float where the loops give -infinity.
bool supports(const ConvGeometry& g);
void max_pool(const ConvGeometry& g, const float* x, float* y);
void avg_pool(const ConvGeometry& g, const float* x, float* y);
// oneDNN's backward reads where the forward found each maximum (its
// workspace), which max_pool_grad's operands do not say: this runs the
// forward, then the backward. Both together still outrun the loops' search
// of each window on many channels: 0.20 ms against 1.1 on resnet's first
// pool (3x3, stride 2, SAME over [1, 112, 112, 64] NHWC; one thread). On 16
// channels or fewer, channels-last, the loops win and the op takes them
// (library/pool.cpp).
void max_pool_grad(const ConvGeometry& g, const float* x, const float* dy, float* dx);
void avg_pool_grad(const ConvGeometry& g, const float* dy, float* dx);
}  // namespace pool_onednn

}  // namespace ag::ops
