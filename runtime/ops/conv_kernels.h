// The three computations of a convolution, on buffers in the layouts of
// conv_geometry.h, with every dim of the geometry known:
//   forward          y  = conv(x, w)
//   backward_input   dx = the gradient of <dy, conv(x, w)> by x
//   backward_filter  dw = the gradient of <dy, conv(x, w)> by w
// Two engines: oneDNN's convolution primitives (float32, AG_GEMM=onednn
// builds: conv_onednn.cpp), and im2col on the gemm of ops/gemm.h (float32
// and float64: conv_im2col.cpp). The conv ops choose (library/conv.cpp).
#pragma once

#include <memory>
#include <string>

#include "ops/conv_geometry.h"

namespace ag::ops {

namespace conv_im2col {
template <class T>
void forward(const ConvGeometry& g, const T* x, const T* w, T* y);
template <class T>
void backward_input(const ConvGeometry& g, const T* dy, const T* w, T* dx);
template <class T>
void backward_filter(const ConvGeometry& g, const T* x, const T* dy, T* dw);
}  // namespace conv_im2col

// oneDNN's primitives (float32). Each primitive is created on the first
// call of its geometry on a thread and kept for the next. Throw an
// UnimplementedError in a build without oneDNN.
namespace conv_onednn {
void forward(const ConvGeometry& g, const float* x, const float* w, float* y);
void backward_input(const ConvGeometry& g, const float* dy, const float* w, float* dx);
void backward_filter(const ConvGeometry& g, const float* x, const float* dy, float* dw);
// A forward convolution of one geometry, made when a plan is built: its
// primitive (with a scratchpad per calling thread, so that threads may run
// it at once) and, for a filter that is a constant of the plan, the filter
// reordered to the primitive's layout, once.
class PreparedForward;
std::shared_ptr<const PreparedForward> prepare_forward(const ConvGeometry& g,
                                                       const float* constant_filter);
// y = conv(x, w); w is read only when the filter was not a constant.
void forward(const PreparedForward& prepared, const float* x, const float* w, float* y);
// The implementation oneDNN chose for the forward convolution of `g`
// ("brgconv:avx512_core", "jit:avx2", ...), for benchmarks.
std::string forward_implementation(const ConvGeometry& g);
}  // namespace conv_onednn

}  // namespace ag::ops
