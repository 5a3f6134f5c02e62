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
// y = epilogue(y): the bias, the residual (which may be y) and the
// activation, element by element, as the unfused ops compute them.
template <class T>
void apply_epilogue(const ConvGeometry& g, const ConvEpilogue& e, const T* bias, const T* residual,
                    T* y);
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
// it at once) with the epilogue as oneDNN post-ops and, for a filter that is
// a constant of the plan, the filter reordered to the primitive's layout,
// once.
class PreparedForward;
std::shared_ptr<const PreparedForward> prepare_forward(const ConvGeometry& g,
                                                       const float* constant_filter,
                                                       const ConvEpilogue& epilogue = {});
// The terms of an epilogue: the bias (out_channels values) and the residual
// (in y's layout), each null where the epilogue has none.
struct EpilogueTerms {
  const float* bias = nullptr;
  const float* residual = nullptr;
};
// y = conv(x, w) and the prepared epilogue's terms; w is read only when the
// filter was not a constant. The residual may be y itself.
void forward(const PreparedForward& prepared, const float* x, const float* w, float* y,
             EpilogueTerms terms = {});
// The same unprepared (eager calls by op id, constant folding), on this
// thread's cached primitive of g and `epilogue`.
void forward(const ConvGeometry& g, const ConvEpilogue& epilogue, const float* x, const float* w,
             float* y, EpilogueTerms terms);
// Whether oneDNN's kernel for `g` with `epilogue` adds the epilogue's terms
// to the finished sum of products, as the unfused ops do (its brgemm
// kernels), rather than starting the sum from the bias (the older
// direct kernels, which round differently).
bool applies_epilogue_to_the_sum(const ConvGeometry& g, const ConvEpilogue& epilogue);
// The implementation oneDNN chose for the forward convolution of `g`
// ("brgconv:avx512_core", "jit:avx2", ...), for benchmarks.
std::string forward_implementation(const ConvGeometry& g);
}  // namespace conv_onednn

// Whether fused_conv of `dtype`, `g` and `epilogue` computes the same bits as
// the conv and elementwise ops it fuses: always on the im2col engine (which
// adds the terms after the convolution); on oneDNN, where its kernel does.
bool fused_conv_keeps_values(DType dtype, const ConvGeometry& g, const ConvEpilogue& epilogue);

}  // namespace ag::ops
