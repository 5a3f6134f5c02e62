// Pooling (tf.nn.max_pool, avg_pool and their 2-D forms) and the ops of
// their gradients, TensorFlow's raw ops: max_pool_grad (the gradient of
// max_pool: each output's gradient added at its window's maximum),
// max_pool_grad_grad (its gradient: a gradient of the input's shape read
// at each window's maximum) and avg_pool_grad (each output's gradient spread
// over its window). A pool is a depthwise convolution's geometry
// (ops/conv_geometry.h: pool_geometry); padding never counts, so a max
// ignores it and a mean divides by the window's positions inside the input.
// Their kernels are ops/pool_kernels.h's: float32 on oneDNN's primitives
// where the build has oneDNN, the loops here otherwise (and for
// max_pool_grad_grad, which oneDNN has no primitive for).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/conv_geometry.h"
#include "ops/dispatch.h"
#include "ops/gemm.h"
#include "ops/kernels.h"
#include "ops/pool_kernels.h"

namespace ag::ops {
namespace {

DType require_float(const InferContext& ctx) {
  for (const ValueType& input : ctx.inputs) {
    if (input.dtype != DType::float32 && input.dtype != DType::float64) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype " +
                                 std::string(dtype_name(input.dtype)) + " (float32 or float64)");
    }
    if (input.dtype != ctx.inputs[0].dtype) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": operands have different dtypes");
    }
  }
  return ctx.inputs[0].dtype;
}

void require_shape(const InferContext& ctx, std::string_view what, const Shape& got,
                   const Shape& want) {
  if (!got.is_compatible_with(want)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": " + std::string(what) + " has shape " +
                               got.to_list_string() + ", the pool's " + want.to_list_string());
  }
}

}  // namespace

// ---- the loops over the windows (pool_kernels.h) -----------------------------------------

namespace pool_loops {
namespace {

// A window's positions and the input's stride between spatial positions,
// read once per kernel call rather than per output element.
struct Window {
  int64_t size, position_stride;
};

// Output positions whose windows are found at once.
constexpr int64_t kWindowTile = 256;

// Calls visit(window, input offset of channel c of batch item b, output
// offset) for every output element; window[k] is the input position that
// window position k reads, or -1.
template <class Visit>
void for_each_window(const ConvGeometry& g, Visit visit) {
  const ConvGeometry::Strides in = g.input_strides(), out = g.output_strides();
  const int64_t window = g.kernel_positions(), positions = g.out_positions();
  for (int64_t p0 = 0; p0 < positions; p0 += kWindowTile) {
    const int64_t rows = std::min(kWindowTile, positions - p0);
    const std::vector<int64_t> sources = window_sources(g, p0, rows);
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < g.in_channels; ++c)
          visit(sources.data() + r * window, b * in.batch + c * in.channel,
                b * out.batch + c * out.channel + (p0 + r) * out.position);
  }
}

Window window_of(const ConvGeometry& g) {
  return {g.kernel_positions(), g.input_strides().position};
}

// The input offset of the window's maximum (its first, or its first NaN),
// or -1 for a window wholly in the padding.
template <class T>
int64_t argmax(const Window& w, const T* x, const int64_t* window, int64_t base) {
  int64_t best = -1;
  for (int64_t k = 0; k < w.size; ++k) {
    if (window[k] < 0) continue;
    const int64_t at = base + window[k] * w.position_stride;
    if (best < 0 || x[at] > x[best] || (std::isnan(x[at]) && !std::isnan(x[best]))) best = at;
  }
  return best;
}

}  // namespace

template <class T>
void max_pool(const ConvGeometry& g, const T* x, T* y) {
  const Window w = window_of(g);
  for_each_window(g, [&](const int64_t* window, int64_t base, int64_t o) {
    const int64_t at = argmax(w, x, window, base);
    y[o] = at < 0 ? -std::numeric_limits<T>::infinity() : x[at];
  });
}

template <class T>
void avg_pool(const ConvGeometry& g, const T* x, T* y) {
  const Window w = window_of(g);
  for_each_window(g, [&](const int64_t* window, int64_t base, int64_t o) {
    T sum = 0;
    int64_t count = 0;
    for (int64_t k = 0; k < w.size; ++k) {
      if (window[k] < 0) continue;
      sum += x[base + window[k] * w.position_stride];
      ++count;
    }
    y[o] = count == 0 ? T(0) : sum / T(count);
  });
}

namespace {

// max_pool_grad on channels-last buffers: each tile's windows are found
// once (window_sources, in tiles as for_each_window), then searched on
// vectors of channels in every batch item (max_pool_grad_tile).
template <class T>
void max_pool_grad_channels_last(const ConvGeometry& g, const T* x, const T* dy, T* dx) {
  const int64_t channels = g.in_channels, window = g.kernel_positions();
  const int64_t positions = g.out_positions();
  MaxPoolGradTile<T> tile{.x = x,
                          .dy = dy,
                          .dx = dx,
                          .offsets = nullptr,
                          .counts = nullptr,
                          .rows = 0,
                          .window = window,
                          .channels = channels,
                          .batch = g.batch,
                          .in_batch = g.in_positions() * channels,
                          .out_batch = positions * channels};
  std::vector<int64_t> offsets(static_cast<size_t>(kWindowTile * window));
  std::vector<int64_t> counts(static_cast<size_t>(kWindowTile));
  for (int64_t p0 = 0; p0 < positions; p0 += kWindowTile) {
    tile.rows = std::min(kWindowTile, positions - p0);
    const std::vector<int64_t> sources = window_sources(g, p0, tile.rows);
    for (int64_t r = 0; r < tile.rows; ++r) {
      int64_t& n = counts[size_t(r)];
      n = 0;
      for (int64_t k = 0; k < window; ++k) {
        const int64_t source = sources[size_t(r * window + k)];
        if (source >= 0) offsets[size_t(r * window + n++)] = source * channels;
      }
    }
    tile.dy = dy + p0 * channels;
    tile.offsets = offsets.data();
    tile.counts = counts.data();
    max_pool_grad_tile(tile);
  }
}

}  // namespace

template <class T>
void max_pool_grad(const ConvGeometry& g, const T* x, const T* dy, T* dx) {
  std::fill(dx, dx + g.input_shape().num_elements(), T(0));
  if (!g.channels_first) return max_pool_grad_channels_last(g, x, dy, dx);
  const Window w = window_of(g);
  for_each_window(g, [&](const int64_t* window, int64_t base, int64_t o) {
    const int64_t at = argmax(w, x, window, base);
    if (at >= 0) dx[at] += dy[o];
  });
}

template <class T>
void max_pool_grad_grad(const ConvGeometry& g, const T* x, const T* grad, T* out) {
  const Window w = window_of(g);
  for_each_window(g, [&](const int64_t* window, int64_t base, int64_t o) {
    const int64_t at = argmax(w, x, window, base);
    out[o] = at < 0 ? T(0) : grad[at];
  });
}

template <class T>
void avg_pool_grad(const ConvGeometry& g, const T* dy, T* dx) {
  const Window w = window_of(g);
  std::fill(dx, dx + g.input_shape().num_elements(), T(0));
  for_each_window(g, [&](const int64_t* window, int64_t base, int64_t o) {
    int64_t count = 0;
    for (int64_t k = 0; k < w.size; ++k) count += window[k] >= 0;
    for (int64_t k = 0; k < w.size; ++k)
      if (window[k] >= 0) dx[base + window[k] * w.position_stride] += dy[o] / T(count);
  });
}

#define AG_POOL_LOOPS(T)                                                            \
  template void max_pool<T>(const ConvGeometry&, const T*, T*);                     \
  template void avg_pool<T>(const ConvGeometry&, const T*, T*);                     \
  template void max_pool_grad<T>(const ConvGeometry&, const T*, const T*, T*);      \
  template void max_pool_grad_grad<T>(const ConvGeometry&, const T*, const T*, T*); \
  template void avg_pool_grad<T>(const ConvGeometry&, const T*, T*);
AG_POOL_LOOPS(float)
AG_POOL_LOOPS(double)
#undef AG_POOL_LOOPS

}  // namespace pool_loops

namespace {

// Calls f(T{}) for the kernel's dtype.
template <class F>
void on_dtype(const KernelContext& ctx, F f) {
  if (ctx.out_dtype == DType::float32)
    f(float{});
  else
    f(double{});
}

// Whether the pool of `g` runs on oneDNN: float32 where the build has it and
// oneDNN computes what the loops do (pool_kernels.h).
bool pool_on_onednn(const KernelContext& ctx, const ConvGeometry& g) {
  return ctx.out_dtype == DType::float32 && built_with_onednn() && pool_onednn::supports(g);
}

// Whether float32 input 0 has a NaN, which the loops' maximum is and
// oneDNN's skips. The scan goes in blocks with an int flag, which GCC
// vectorizes (an exit per element, or a bool flag, keeps it scalar: 0.47 ms
// against 0.12 over resnet's first pool's 3.2 MB, which oneDNN pools in 0.25).
bool pool_input_has_nan(const KernelContext& ctx) {
  constexpr int64_t kBlock = 1024;
  const float* x = ctx.input_data<float>(0);
  const int64_t n = ctx.inputs[0].shape->num_elements();
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    int nan = 0;
    for (int64_t i = start; i < end; ++i) nan |= int(x[i] != x[i]);
    if (nan) return true;
  }
  return false;
}

// Runs `onednn`, or `loops` on the kernel's dtype.
template <class Onednn, class Loops>
void pool_run(const KernelContext& ctx, bool on_onednn, Onednn onednn, Loops loops) {
  if (on_onednn)
    onednn();
  else
    on_dtype(ctx, loops);
}

ConvGeometry geometry_of(const KernelContext& ctx) {
  return pool_geometry(ctx.op_name, ConvAttrs::decode(*ctx.attrs), *ctx.inputs[0].shape);
}

// avg_pool_grad's attrs: the pool's, with the input's spatial dims after the
// window (unknown ones read from the input, a second input, when it runs).
Attrs avg_pool_grad_attrs(ConvAttrs a, const ConvGeometry& g) {
  a.given_dims.insert(a.given_dims.end(), g.in.begin(), g.in.end());
  return a.encode();
}

Attrs pool_attrs_of(const Attrs& avg_pool_grad, int rank) {
  ConvAttrs a = ConvAttrs::decode(avg_pool_grad);
  a.given_dims.resize(size_t(rank));
  return a.encode();
}

}  // namespace

// ---- max_pool and avg_pool: y from x -----------------------------------------------------

ValueType infer_pool(const InferContext& ctx) {
  const DType dtype = require_float(ctx);
  return {
      dtype,
      pool_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs), ctx.inputs[0].shape).output_shape()};
}

void kernel_max_pool(const KernelContext& ctx) {
  const ConvGeometry g = geometry_of(ctx);
  pool_run(
      ctx, pool_on_onednn(ctx, g) && !pool_input_has_nan(ctx),
      [&] { pool_onednn::max_pool(g, ctx.input_data<float>(0), static_cast<float*>(ctx.out)); },
      [&]<class T>(T) { pool_loops::max_pool(g, ctx.input_data<T>(0), static_cast<T*>(ctx.out)); });
}

std::vector<Tensor> grad_max_pool(const GradContext& c) {
  return {apply(OpId::MaxPoolGrad, {c.inputs[0], c.grad}, c.attrs, c.site)};
}

void kernel_avg_pool(const KernelContext& ctx) {
  const ConvGeometry g = geometry_of(ctx);
  pool_run(
      ctx, pool_on_onednn(ctx, g),
      [&] { pool_onednn::avg_pool(g, ctx.input_data<float>(0), static_cast<float*>(ctx.out)); },
      [&]<class T>(T) { pool_loops::avg_pool(g, ctx.input_data<T>(0), static_cast<T*>(ctx.out)); });
}

std::vector<Tensor> grad_avg_pool(const GradContext& c) {
  const ConvAttrs a = ConvAttrs::decode(c.attrs);
  const ConvGeometry g = pool_geometry(c.op_name, a, c.inputs[0].shape());
  return {apply(OpId::AvgPoolGrad, gradient_op_inputs({c.grad}, g, c.inputs[0]),
                avg_pool_grad_attrs(a, g), c.site)};
}

// ---- max_pool_grad: dx from (x, dy) ------------------------------------------------------

ValueType infer_max_pool_grad(const InferContext& ctx) {
  const DType dtype = require_float(ctx);
  const ConvGeometry g =
      pool_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs), ctx.inputs[0].shape);
  require_shape(ctx, "out_backprop", ctx.inputs[1].shape, g.output_shape());
  return {dtype, ctx.inputs[0].shape};
}

// oneDNN's pair loses to the channels-last loops on few channels. On an AMD
// EPYC with AVX-512, LeNet's pools (2x2 at stride 2, batch 64, NHWC): 0.085
// ms against 0.22 on six channels, 0.022 against 0.015 (the op's oneDNN path
// adds its NaN scan) on sixteen; on 32 oneDNN wins (0.036 against 0.051),
// and on resnet's first pool (64 channels, 3x3 windows that overlap) by far
// (0.20 against 1.1). conv_bench's max_pool_grad rows measure both (the
// loops' times on 32 and 64 channels with kMostLoopChannels raised to 64).
bool max_pool_grad_on_onednn(const KernelContext& ctx, const ConvGeometry& g) {
  constexpr int64_t kMostLoopChannels = 16;
  if (!g.channels_first && g.in_channels <= kMostLoopChannels) return false;
  return pool_on_onednn(ctx, g) && !pool_input_has_nan(ctx);
}

void kernel_max_pool_grad(const KernelContext& ctx) {
  const ConvGeometry g = geometry_of(ctx);
  pool_run(
      ctx, max_pool_grad_on_onednn(ctx, g),
      [&] {
        pool_onednn::max_pool_grad(g, ctx.input_data<float>(0), ctx.input_data<float>(1),
                                   static_cast<float*>(ctx.out));
      },
      [&]<class T>(T) {
        pool_loops::max_pool_grad(g, ctx.input_data<T>(0), ctx.input_data<T>(1),
                                  static_cast<T*>(ctx.out));
      });
}

// Linear in dy; piecewise constant in x, whose gradient is 0 (none).
std::vector<Tensor> grad_max_pool_grad(const GradContext& c) {
  return {Tensor(), apply(OpId::MaxPoolGradGrad, {c.inputs[0], c.grad}, c.attrs, c.site)};
}

// ---- max_pool_grad_grad: a gradient of x's shape read at each window's maximum -------------

ValueType infer_max_pool_grad_grad(const InferContext& ctx) {
  const DType dtype = require_float(ctx);
  const ConvGeometry g =
      pool_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs), ctx.inputs[0].shape);
  require_shape(ctx, "the gradient", ctx.inputs[1].shape, ctx.inputs[0].shape);
  return {dtype, g.output_shape()};
}

void kernel_max_pool_grad_grad(const KernelContext& ctx) {
  const ConvGeometry g = geometry_of(ctx);
  on_dtype(ctx, [&]<class T>(T) {
    pool_loops::max_pool_grad_grad(g, ctx.input_data<T>(0), ctx.input_data<T>(1),
                                   static_cast<T*>(ctx.out));
  });
}

// Its adjoint in the gradient is max_pool_grad; x's is 0 (none).
std::vector<Tensor> grad_max_pool_grad_grad(const GradContext& c) {
  return {Tensor(), apply(OpId::MaxPoolGrad, {c.inputs[0], c.grad}, c.attrs, c.site)};
}

// ---- avg_pool_grad: dx from dy ------------------------------------------------------------

ValueType infer_avg_pool_grad(const InferContext& ctx) {
  const ConvAttrs a = gradient_op_attrs(ctx, 1);
  const DType dtype = require_float(ctx);
  return {dtype, avg_pool_grad_geometry(ctx.op_name, a, ctx.inputs[0].shape).input_shape()};
}

void kernel_avg_pool_grad(const KernelContext& ctx) {
  const ConvGeometry g =
      avg_pool_grad_geometry(ctx.op_name, gradient_op_attrs(ctx, 1), *ctx.inputs[0].shape);
  pool_run(
      ctx, pool_on_onednn(ctx, g),
      [&] {
        pool_onednn::avg_pool_grad(g, ctx.input_data<float>(0), static_cast<float*>(ctx.out));
      },
      [&]<class T>(T) {
        pool_loops::avg_pool_grad(g, ctx.input_data<T>(0), static_cast<T*>(ctx.out));
      });
}

// Linear in dy: its adjoint is the pool itself.
std::vector<Tensor> grad_avg_pool_grad(const GradContext& c) {
  const int rank = ConvAttrs::decode(c.attrs).rank;
  std::vector<Tensor> grads = {
      apply(OpId::AvgPool, {c.grad}, pool_attrs_of(c.attrs, rank), c.site)};
  grads.resize(c.inputs.size());  // the input whose dims the result took gets none
  return grads;
}

}  // namespace ag::ops

namespace ag::api {
namespace {

int pool_rank(std::string_view op, const Shape& input) {
  if (input.has_unknown_rank() || input.rank() < 3 || input.rank() > 5) {
    throw InvalidArgumentError(std::string(op) +
                               ": the input must have rank 3 to 5 (1 to 3 spatial dims), got " +
                               input.to_list_string());
  }
  return input.rank() - 2;
}

Tensor pool_of(ops::OpId id, std::string_view op, const Tensor& input, int rank,
               const std::vector<int64_t>& ksize, const std::vector<int64_t>& strides,
               const Padding& padding, std::string_view data_format, CallSite site) {
  const ops::ConvAttrs a = ops::pool_attrs(op, rank, ksize, strides, padding, data_format);
  return ops::apply(id, {input}, a.encode(), site);
}

}  // namespace

Tensor max_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                Padding padding, std::string_view data_format, CallSite site) {
  return pool_of(ops::OpId::MaxPool, "max_pool", input, pool_rank("max_pool", input.shape()), ksize,
                 strides, padding, data_format, site);
}

Tensor avg_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                Padding padding, std::string_view data_format, CallSite site) {
  return pool_of(ops::OpId::AvgPool, "avg_pool", input, pool_rank("avg_pool", input.shape()), ksize,
                 strides, padding, data_format, site);
}

Tensor max_pool2d(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                  Padding padding, std::string_view data_format, CallSite site) {
  return pool_of(ops::OpId::MaxPool, "max_pool2d", input, 2, ksize, strides, padding, data_format,
                 site);
}

Tensor avg_pool2d(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                  Padding padding, std::string_view data_format, CallSite site) {
  return pool_of(ops::OpId::AvgPool, "avg_pool2d", input, 2, ksize, strides, padding, data_format,
                 site);
}

Tensor pool(const Tensor& input, std::vector<int64_t> window_shape, std::string_view pooling_type,
            std::vector<int64_t> strides, Padding padding, std::string_view data_format,
            std::vector<int64_t> dilations, CallSite site) {
  if (pooling_type != "MAX" && pooling_type != "AVG") {
    throw InvalidArgumentError("pool: pooling_type '" + std::string(pooling_type) +
                               "' must be \"MAX\" or \"AVG\"");
  }
  const ops::ConvAttrs a = ops::pool_attrs("pool", pool_rank("pool", input.shape()), window_shape,
                                           strides, padding, data_format, dilations);
  return ops::apply(pooling_type == "MAX" ? ops::OpId::MaxPool : ops::OpId::AvgPool, {input},
                    a.encode(), site);
}

Tensor max_pool_grad(const Tensor& input, const Tensor& out_backprop, std::vector<int64_t> ksize,
                     std::vector<int64_t> strides, Padding padding, std::string_view data_format,
                     CallSite site) {
  const int rank = pool_rank("max_pool_grad", input.shape());
  const ops::ConvAttrs a =
      ops::pool_attrs("max_pool_grad", rank, ksize, strides, padding, data_format);
  return ops::apply(ops::OpId::MaxPoolGrad, {input, out_backprop}, a.encode(), site);
}

Tensor max_pool_grad_grad(const Tensor& input, const Tensor& grad, std::vector<int64_t> ksize,
                          std::vector<int64_t> strides, Padding padding,
                          std::string_view data_format, CallSite site) {
  const int rank = pool_rank("max_pool_grad_grad", input.shape());
  const ops::ConvAttrs a =
      ops::pool_attrs("max_pool_grad_grad", rank, ksize, strides, padding, data_format);
  return ops::apply(ops::OpId::MaxPoolGradGrad, {input, grad}, a.encode(), site);
}

Tensor avg_pool_grad(std::vector<int64_t> input_shape, const Tensor& grad,
                     std::vector<int64_t> ksize, std::vector<int64_t> strides, Padding padding,
                     std::string_view data_format, CallSite site) {
  const int rank = pool_rank("avg_pool_grad", Shape(input_shape));
  ops::ConvAttrs a = ops::pool_attrs("avg_pool_grad", rank, ksize, strides, padding, data_format);
  const size_t first_spatial = a.channels_first ? 2 : 1;
  a.given_dims.insert(a.given_dims.end(), input_shape.begin() + first_spatial,
                      input_shape.begin() + first_spatial + rank);
  Tensor out = ops::apply(ops::OpId::AvgPoolGrad, {grad}, a.encode(), site);
  if (!out.shape().is_compatible_with(Shape(input_shape))) {
    throw InvalidArgumentError("avg_pool_grad: input_shape " + Shape(input_shape).to_list_string() +
                               " does not match the gradient " + grad.shape().to_list_string() +
                               ", which gives " + out.shape().to_list_string());
  }
  return out;
}

}  // namespace ag::api
