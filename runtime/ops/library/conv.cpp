// Convolution (tf.nn.convolution, conv1d/2d/3d, depthwise_conv2d) and its two
// gradients, which are ops of their own: conv_backprop_input (also
// conv_transpose) and conv_backprop_filter; and fused_conv, a convolution
// with its bias, a residual and an activation, which the graph optimiser makes
// (passes/conv_epilogues.cpp). Their geometry is ops/conv_geometry.h's;
// their kernels ops/conv_kernels.h's.
#include <algorithm>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/conv_geometry.h"
#include "ops/conv_kernels.h"
#include "ops/dispatch.h"
#include "ops/gemm.h"
#include "ops/gradient_helpers.h"
#include "ops/kernels.h"

namespace ag::ops {
namespace {

// Both operands float32 or both float64: the dtypes the kernels compute.
DType require_float_operands(const InferContext& ctx) {
  const DType a = ctx.inputs[0].dtype, b = ctx.inputs[1].dtype;
  if (a != b) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": operands have different dtypes, " +
                               std::string(dtype_name(a)) + " and " + std::string(dtype_name(b)));
  }
  if (a != DType::float32 && a != DType::float64) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype " +
                               std::string(dtype_name(a)) + " (float32 or float64)");
  }
  return a;
}

bool has_empty_dim(const ConvGeometry& g) {
  return g.batch == 0 || g.in_channels == 0 || g.out_channels == 0 || g.in_positions() == 0 ||
         g.out_positions() == 0 || g.kernel_positions() == 0;
}

// Whether a convolution of `dtype` and geometry `g` runs on oneDNN: float32
// where the build has oneDNN, and the geometry is not empty (which oneDNN
// refuses).
bool conv_on_onednn(DType dtype, const ConvGeometry& g) {
  return dtype == DType::float32 && built_with_onednn() && !has_empty_dim(g);
}

// Runs `pass` of the im2col engine on T, or `onednn` (conv_on_onednn).
template <class Onednn, class Im2col>
void run_engine(const KernelContext& ctx, const ConvGeometry& g, Onednn onednn, Im2col im2col) {
  if (conv_on_onednn(ctx.out_dtype, g)) {
    onednn();
  } else if (ctx.out_dtype == DType::float32) {
    im2col(float{});
  } else {
    im2col(double{});
  }
}

// The gradient ops of a convolution of attrs `a`, geometry `g`, whose
// result has the dims `dims` (some of which may be unknown when
// `unknown_read_when_run`).
ConvAttrs with_result(ConvAttrs a, const ConvGeometry& g, const std::vector<int64_t>& dims,
                      std::string_view what, bool unknown_read_when_run = false) {
  const bool dims_known = std::find(dims.begin(), dims.end(), kUnknownDim) == dims.end();
  if ((!dims_known && !unknown_read_when_run) || g.groups == kUnknownDim) {
    throw UnimplementedError("conv: the gradient of a convolution needs the " + std::string(what) +
                             " known when the function is traced, got " +
                             g.input_shape().to_list_string() + " and a filter of " +
                             g.filter_shape().to_list_string());
  }
  a.given_dims = dims;
  a.groups = g.groups;
  return a;
}

Tensor conv_of(ConvAttrs a, const Tensor& x, const Tensor& w, CallSite site) {
  a.given_dims.clear();
  a.groups = 0;
  return apply(OpId::Conv, {x, w}, a.encode(), site);
}

// dx of the convolution of x: its spatial dims given when known while
// tracing, else read from x (a third input) when the op runs.
Tensor backprop_input_of(const ConvAttrs& a, const ConvGeometry& g, const Tensor& dy,
                         const Tensor& w, const Tensor& x, CallSite site) {
  return apply(
      OpId::ConvBackpropInput, gradient_op_inputs({dy, w}, g, x),
      with_result(a, g, g.in, "input's spatial dims", /*unknown_read_when_run=*/true).encode(),
      site);
}

Tensor backprop_filter_of(const ConvAttrs& a, const ConvGeometry& g, const Tensor& x,
                          const Tensor& dy, CallSite site) {
  return apply(OpId::ConvBackpropFilter, {x, dy},
               with_result(a, g, g.kernel, "filter's kernel dims").encode(), site);
}

}  // namespace

// ---- conv: y = conv(x, w) ---------------------------------------------------------------

ValueType infer_conv(const InferContext& ctx) {
  const DType dtype = require_float_operands(ctx);
  return {dtype, conv_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs), ctx.inputs[0].shape,
                               ctx.inputs[1].shape)
                     .output_shape()};
}

// A plan step's oneDNN primitive, with a constant filter in its layout.
PreparedKernel prepare_conv(const PrepareContext& ctx) {
  const ConvGeometry g = conv_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs),
                                       ctx.inputs[0].shape, ctx.inputs[1].shape);
  if (!conv_on_onednn(ctx.inputs[0].dtype, g)) return nullptr;
  return conv_onednn::prepare_forward(g, static_cast<const float*>(ctx.constants[1]));
}

void kernel_conv(const KernelContext& ctx) {
  if (ctx.prepared) {
    conv_onednn::forward(*static_cast<const conv_onednn::PreparedForward*>(ctx.prepared),
                         ctx.input_data<float>(0), ctx.input_data<float>(1),
                         static_cast<float*>(ctx.out));
    return;
  }
  const ConvGeometry g = conv_geometry(ctx.op_name, ConvAttrs::decode(*ctx.attrs),
                                       *ctx.inputs[0].shape, *ctx.inputs[1].shape);
  run_engine(
      ctx, g,
      [&] {
        conv_onednn::forward(g, ctx.input_data<float>(0), ctx.input_data<float>(1),
                             static_cast<float*>(ctx.out));
      },
      [&]<class T>(T) {
        conv_im2col::forward<T>(g, ctx.input_data<T>(0), ctx.input_data<T>(1),
                                static_cast<T*>(ctx.out));
      });
}

std::vector<Tensor> grad_conv(const GradContext& c) {
  const ConvAttrs a = ConvAttrs::decode(c.attrs);
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const ConvGeometry g = conv_geometry(c.op_name, a, x.shape(), w.shape());
  return {c.needs(0) ? backprop_input_of(a, g, c.grad, w, x, c.site) : Tensor(),
          c.needs(1) ? backprop_filter_of(a, g, x, c.grad, c.site) : Tensor()};
}

// ---- conv_backprop_input: dx from (dy, w) -----------------------------------------------
// A third input, when the convolution's input had spatial dims unknown while
// tracing, is that input: the result takes its spatial dims.

ValueType infer_conv_backprop_input(const InferContext& ctx) {
  const ConvAttrs a = gradient_op_attrs(ctx, 2);
  const DType dtype = require_float_operands(ctx);
  return {dtype,
          conv_backprop_input_geometry(ctx.op_name, a, ctx.inputs[1].shape, ctx.inputs[0].shape)
              .input_shape()};
}

void kernel_conv_backprop_input(const KernelContext& ctx) {
  const ConvGeometry g = conv_backprop_input_geometry(ctx.op_name, gradient_op_attrs(ctx, 2),
                                                      *ctx.inputs[1].shape, *ctx.inputs[0].shape);
  run_engine(
      ctx, g,
      [&] {
        conv_onednn::backward_input(g, ctx.input_data<float>(0), ctx.input_data<float>(1),
                                    static_cast<float*>(ctx.out));
      },
      [&]<class T>(T) {
        conv_im2col::backward_input<T>(g, ctx.input_data<T>(0), ctx.input_data<T>(1),
                                       static_cast<T*>(ctx.out));
      });
}

// dx is linear in dy and in w: <g, dx> = <conv(g, w), dy>, and its gradient
// by w is the filter gradient of a convolution of g whose output gradient is dy.
std::vector<Tensor> grad_conv_backprop_input(const GradContext& c) {
  const ConvAttrs a = ConvAttrs::decode(c.attrs);
  const Tensor &dy = c.inputs[0], &w = c.inputs[1];
  const ConvGeometry g = conv_backprop_input_geometry(c.op_name, a, w.shape(), dy.shape());
  std::vector<Tensor> grads = {
      c.needs(0) ? conv_of(a, c.grad, w, c.site) : Tensor(),
      c.needs(1) ? backprop_filter_of(a, g, c.grad, dy, c.site) : Tensor()};
  grads.resize(c.inputs.size());  // the input whose dims the result took gets none
  return grads;
}

// ---- conv_backprop_filter: dw from (x, dy) ----------------------------------------------

ValueType infer_conv_backprop_filter(const InferContext& ctx) {
  const DType dtype = require_float_operands(ctx);
  return {dtype, conv_backprop_filter_geometry(ctx.op_name, ConvAttrs::decode(ctx.attrs),
                                               ctx.inputs[0].shape, ctx.inputs[1].shape)
                     .filter_shape()};
}

void kernel_conv_backprop_filter(const KernelContext& ctx) {
  const ConvGeometry g = conv_backprop_filter_geometry(ctx.op_name, ConvAttrs::decode(*ctx.attrs),
                                                       *ctx.inputs[0].shape, *ctx.inputs[1].shape);
  run_engine(
      ctx, g,
      [&] {
        conv_onednn::backward_filter(g, ctx.input_data<float>(0), ctx.input_data<float>(1),
                                     static_cast<float*>(ctx.out));
      },
      [&]<class T>(T) {
        conv_im2col::backward_filter<T>(g, ctx.input_data<T>(0), ctx.input_data<T>(1),
                                        static_cast<T*>(ctx.out));
      });
}

// dw is linear in x and in dy: its gradient by x is the input gradient of a
// convolution by g, and by dy the convolution of x by g.
std::vector<Tensor> grad_conv_backprop_filter(const GradContext& c) {
  const ConvAttrs a = ConvAttrs::decode(c.attrs);
  const Tensor &x = c.inputs[0], &dy = c.inputs[1];
  const ConvGeometry g = conv_backprop_filter_geometry(c.op_name, a, x.shape(), dy.shape());
  return {c.needs(0) ? backprop_input_of(a, g, dy, c.grad, x, c.site) : Tensor(),
          c.needs(1) ? conv_of(a, x, c.grad, c.site) : Tensor()};
}

// ---- fused_conv: y = activation(conv(x, w) + bias + residual) ---------------------------

namespace {

void require_epilogue_term(const InferContext& ctx, size_t input, const ConvGeometry& g,
                           const Shape& out, bool per_channel, std::string_view what) {
  const ValueType& term = ctx.inputs[input];
  const bool fits = per_channel ? is_channel_bias(term.shape, g, out) : term.shape == out;
  if (term.dtype != ctx.inputs[0].dtype || !fits) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": the " + std::string(what) + " is " +
                               std::string(dtype_name(term.dtype)) + term.shape.to_list_string() +
                               ", which does not fit a result of " +
                               std::string(dtype_name(ctx.inputs[0].dtype)) + out.to_list_string());
  }
}

Tensor activation_gradient(const ConvEpilogue& e, const GradContext& c) {
  using Activation = ConvEpilogue::Activation;
  const Tensor& y = c.output;
  if (e.activation == Activation::relu)
    return api::where(api::greater(y, 0, c.site), c.grad, 0, c.site);
  if (e.activation == Activation::none) return c.grad;
  const Tensor lo = api::cast(Tensor(e.lo), y.dtype()), hi = api::cast(Tensor(e.hi), y.dtype());
  const Tensor inside =
      api::logical_and(api::greater(y, lo, c.site), api::less(y, hi, c.site), c.site);
  return api::where(inside, c.grad, 0, c.site);
}

}  // namespace

ValueType infer_fused_conv(const InferContext& ctx) {
  const FusedConvAttrs a = FusedConvAttrs::decode(ctx.attrs);
  const ConvEpilogue& e = a.epilogue;
  if (ctx.inputs.size() != e.num_inputs()) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": " + std::to_string(ctx.inputs.size()) +
                               " inputs do not match its epilogue's terms");
  }
  const DType dtype = require_float_operands(ctx);
  const ConvGeometry g =
      conv_geometry(ctx.op_name, a.conv, ctx.inputs[0].shape, ctx.inputs[1].shape);
  const Shape out = g.output_shape();
  if (e.bias) require_epilogue_term(ctx, ConvEpilogue::kBiasInput, g, out, true, "bias");
  if (e.residual) require_epilogue_term(ctx, e.residual_input(), g, out, false, "residual");
  return {dtype, out};
}

bool fused_conv_keeps_values(DType dtype, const ConvGeometry& g, const ConvEpilogue& epilogue) {
  return !conv_on_onednn(dtype, g) || conv_onednn::applies_epilogue_to_the_sum(g, epilogue);
}

PreparedKernel prepare_fused_conv(const PrepareContext& ctx) {
  const FusedConvAttrs a = FusedConvAttrs::decode(ctx.attrs);
  const ConvGeometry g =
      conv_geometry(ctx.op_name, a.conv, ctx.inputs[0].shape, ctx.inputs[1].shape);
  if (!conv_on_onednn(ctx.inputs[0].dtype, g)) return nullptr;
  return conv_onednn::prepare_forward(g, static_cast<const float*>(ctx.constants[1]), a.epilogue);
}

void kernel_fused_conv(const KernelContext& ctx) {
  const FusedConvAttrs a = FusedConvAttrs::decode(*ctx.attrs);
  const ConvEpilogue& e = a.epilogue;
  auto bias = [&]<class T>(T) { return e.bias ? ctx.input_data<T>(e.kBiasInput) : nullptr; };
  auto residual = [&]<class T>(T) {
    return e.residual ? ctx.input_data<T>(e.residual_input()) : nullptr;
  };
  const conv_onednn::EpilogueTerms terms = {bias(float{}), residual(float{})};
  if (ctx.prepared) {
    conv_onednn::forward(*static_cast<const conv_onednn::PreparedForward*>(ctx.prepared),
                         ctx.input_data<float>(0), ctx.input_data<float>(1),
                         static_cast<float*>(ctx.out), terms);
    return;
  }
  const ConvGeometry g =
      conv_geometry(ctx.op_name, a.conv, *ctx.inputs[0].shape, *ctx.inputs[1].shape);
  run_engine(
      ctx, g,
      [&] {
        conv_onednn::forward(g, a.epilogue, ctx.input_data<float>(0), ctx.input_data<float>(1),
                             static_cast<float*>(ctx.out), terms);
      },
      [&]<class T>(T) {
        T* y = static_cast<T*>(ctx.out);
        // The residual may be y's own buffer (ops::in_place_input).
        std::vector<T> kept;
        const T* r = residual(T{});
        if (r == y) {
          kept.assign(y, y + g.batch * g.output_strides().batch);
          r = kept.data();
        }
        conv_im2col::forward<T>(g, ctx.input_data<T>(0), ctx.input_data<T>(1), y);
        conv_im2col::apply_epilogue<T>(g, e, bias(T{}), r, y);
      });
}

// The activation passes the gradient where the result is the sum itself
// (relu: positive; clip: strictly between its bounds); then the sum's
// gradient reaches the convolution's input and filter as conv's does, the
// bias summed over all but the channel axis, and the residual as it is.
std::vector<Tensor> grad_fused_conv(const GradContext& c) {
  const FusedConvAttrs a = FusedConvAttrs::decode(c.attrs);
  const ConvEpilogue& e = a.epilogue;
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const ConvGeometry g = conv_geometry(c.op_name, a.conv, x.shape(), w.shape());
  const Tensor d = activation_gradient(e, c);
  std::vector<Tensor> grads = {
      c.needs(0) ? backprop_input_of(a.conv, g, d, w, x, c.site) : Tensor(),
      c.needs(1) ? backprop_filter_of(a.conv, g, x, d, c.site) : Tensor()};
  if (e.bias) grads.push_back(c.needs(e.kBiasInput) ? unbroadcast(c, d, e.kBiasInput) : Tensor());
  if (e.residual) grads.push_back(c.needs(e.residual_input()) ? d : Tensor());
  return grads;
}

}  // namespace ag::ops

namespace ag::api {
namespace {

using ops::ConvAttrs;

int spatial_rank_of(std::string_view op, const Tensor& t, std::string_view what) {
  if (t.shape().has_unknown_rank() || t.shape().rank() < 3 || t.shape().rank() > 5) {
    throw InvalidArgumentError(std::string(op) + ": " + std::string(what) +
                               " must have rank 3 to 5 (1 to 3 spatial dims), got " +
                               t.shape().to_list_string());
  }
  return t.shape().rank() - 2;
}

Tensor conv_of_rank(std::string_view op, int rank, const Tensor& input, const Tensor& filters,
                    const std::vector<int64_t>& strides, const Padding& padding,
                    std::string_view data_format, const std::vector<int64_t>& dilations,
                    CallSite site) {
  const ConvAttrs a = ops::conv_attrs(op, rank, strides, padding, data_format, dilations);
  return ops::apply(ops::OpId::Conv, {input, filters}, a.encode(), site);
}

// The groups of a convolution of `channels` input channels by a filter of
// `per_group` input channels.
int64_t groups_from(std::string_view op, int64_t channels, int64_t per_group) {
  if (channels == kUnknownDim || per_group == kUnknownDim || per_group <= 0 ||
      channels % per_group != 0) {
    throw InvalidArgumentError(std::string(op) + ": " + std::to_string(channels) +
                               " channels, which the filter's " + std::to_string(per_group) +
                               " input channels per group do not divide");
  }
  return channels / per_group;
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
                   Padding padding, std::string_view data_format, std::vector<int64_t> dilations,
                   CallSite site) {
  const int rank = spatial_rank_of("convolution", input, "the input");
  return conv_of_rank("convolution", rank, input, filters, strides, padding, data_format, dilations,
                      site);
}

Tensor conv1d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format, std::vector<int64_t> dilations,
              CallSite site) {
  return conv_of_rank("conv1d", 1, input, filters, strides, padding, data_format, dilations, site);
}

Tensor conv2d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format, std::vector<int64_t> dilations,
              CallSite site) {
  return conv_of_rank("conv2d", 2, input, filters, strides, padding, data_format, dilations, site);
}

Tensor conv3d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format, std::vector<int64_t> dilations,
              CallSite site) {
  return conv_of_rank("conv3d", 3, input, filters, strides, padding, data_format, dilations, site);
}

Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides,
                        Padding padding, std::string_view data_format,
                        std::vector<int64_t> dilations, CallSite site) {
  const ConvAttrs a =
      ops::conv_attrs("depthwise_conv2d", 2, strides, padding, data_format, dilations);
  const Shape& f = filter.shape();
  const Shape& x = input.shape();
  if (!f.is_fully_defined() || f.rank() != 4 || x.has_unknown_rank() || x.rank() != 4 ||
      x[a.channels_first ? 1 : 3] != f[2]) {
    throw InvalidArgumentError(
        "depthwise_conv2d: the filter must be [kh, kw, in_channels, multiplier], known when "
        "traced, with the input's channels; got an input of " +
        x.to_list_string() + " and a filter of " + f.to_list_string());
  }
  const Tensor grouped = reshape(filter, {f[0], f[1], 1, f[2] * f[3]}, site);
  return ops::apply(ops::OpId::Conv, {input, grouped}, a.encode(), site);
}

Tensor conv_transpose(const Tensor& input, const Tensor& filters, std::vector<int64_t> output_shape,
                      std::vector<int64_t> strides, Padding padding, std::string_view data_format,
                      std::vector<int64_t> dilations, CallSite site) {
  const int rank = int(output_shape.size()) - 2;
  ConvAttrs a = ops::conv_attrs("conv_transpose", rank, strides, padding, data_format, dilations);
  const Shape& f = filters.shape();
  if (f.has_unknown_rank() || f.rank() != rank + 2) {
    throw InvalidArgumentError("conv_transpose: the filters must have rank " +
                               std::to_string(rank + 2) + ", got " + f.to_list_string());
  }
  const size_t channel = a.channels_first ? 1 : size_t(rank) + 1;
  a.groups = groups_from("conv_transpose", output_shape[channel], f[rank]);
  for (int i = 0; i < rank; ++i) a.given_dims.push_back(output_shape[channel == 1 ? i + 2 : i + 1]);
  Tensor out = ops::apply(ops::OpId::ConvBackpropInput, {input, filters}, a.encode(), site);
  if (output_shape[0] != kUnknownDim && out.shape()[0] != kUnknownDim &&
      out.shape()[0] != output_shape[0]) {
    throw InvalidArgumentError(
        "conv_transpose: output_shape " + Shape(output_shape).to_list_string() +
        " has a batch of " + std::to_string(output_shape[0]) + ", the input " +
        input.shape().to_list_string() + " one of " + std::to_string(out.shape()[0]));
  }
  return out;
}

Tensor conv2d_transpose(const Tensor& input, const Tensor& filters,
                        std::vector<int64_t> output_shape, std::vector<int64_t> strides,
                        Padding padding, std::string_view data_format,
                        std::vector<int64_t> dilations, CallSite site) {
  if (output_shape.size() != 4) {
    throw InvalidArgumentError("conv2d_transpose: output_shape " +
                               Shape(output_shape).to_list_string() + " must have 4 dims");
  }
  return conv_transpose(input, filters, std::move(output_shape), std::move(strides),
                        std::move(padding), data_format, std::move(dilations), site);
}

Tensor conv_backprop_filter(const Tensor& input, std::vector<int64_t> filter_sizes,
                            const Tensor& out_backprop, std::vector<int64_t> strides,
                            Padding padding, std::string_view data_format,
                            std::vector<int64_t> dilations, CallSite site) {
  const int rank = int(filter_sizes.size()) - 2;
  ConvAttrs a =
      ops::conv_attrs("conv_backprop_filter", rank, strides, padding, data_format, dilations);
  const int rank_of_input = spatial_rank_of("conv_backprop_filter", input, "the input");
  if (rank_of_input != rank) {
    throw InvalidArgumentError("conv_backprop_filter: filter_sizes " +
                               Shape(filter_sizes).to_list_string() + " and the input " +
                               input.shape().to_list_string() + " have different spatial ranks");
  }
  a.groups = groups_from("conv_backprop_filter", input.shape()[a.channels_first ? 1 : rank + 1],
                         filter_sizes[size_t(rank)]);
  a.given_dims.assign(filter_sizes.begin(), filter_sizes.begin() + rank);
  Tensor out = ops::apply(ops::OpId::ConvBackpropFilter, {input, out_backprop}, a.encode(), site);
  if (!out.shape().is_compatible_with(Shape(filter_sizes))) {
    throw InvalidArgumentError(
        "conv_backprop_filter: filter_sizes " + Shape(filter_sizes).to_list_string() +
        " do not match out_backprop " + out_backprop.shape().to_list_string() +
        ", which gives a filter of " + out.shape().to_list_string());
  }
  return out;
}

}  // namespace ag::api
