// Importers of ONNX's convolutions and pools: Conv and ConvTranspose become
// our convolution and conv_transpose in the channels-first layout ONNX uses
// (no transpose of the activations), with the filter transposed from ONNX's
// [out, in/groups, kernel...] to our [kernel..., in/groups, out], which
// constant folding does once for an initializer; MaxPool and AveragePool our
// max_pool and avg_pool, the global pools reductions.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {
namespace {

constexpr const char* kChannelsFirst[] = {"NCW", "NCHW", "NCDHW"};

std::vector<int64_t> ints_or_none(NodeContext& ctx, std::string_view name) {
  return ctx.has_attr(name) ? ctx.attr_ints(name) : std::vector<int64_t>{};
}

int spatial_rank(NodeContext& ctx) {
  const Shape& x = ctx.input(0).shape();
  if (x.has_unknown_rank() || x.rank() < 3 || x.rank() > 5)
    ctx.unsupported("an input of rank 3 to 5 (1 to 3 spatial dims), got " + x.to_list_string());
  return x.rank() - 2;
}

// An attribute of one value per spatial dim, or `fallback` for each.
std::vector<int64_t> per_dim(NodeContext& ctx, std::string_view name, int rank, int64_t fallback) {
  std::vector<int64_t> v = ints_or_none(ctx, name);
  if (v.empty()) return std::vector<int64_t>(size_t(rank), fallback);
  if (v.size() != size_t(rank)) {
    ctx.invalid(std::string(name) + " has " + std::to_string(v.size()) + " values for " +
                std::to_string(rank) + " spatial dims");
  }
  return v;
}

// ONNX's [out, in/groups, kernel...] as our [kernel..., in/groups, out].
Tensor our_filter(const Tensor& w, int rank) {
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i + 2);
  perm.push_back(1);
  perm.push_back(0);
  return transpose(w, perm);
}

const Shape& kernel_shape_of(NodeContext& ctx, int rank) {
  const Shape& w = ctx.static_shape(1, "the filter's shape gives the kernel's");
  if (w.rank() != rank + 2) {
    ctx.invalid("the filter " + w.to_list_string() + " must have rank " + std::to_string(rank + 2));
  }
  const std::vector<int64_t> declared = ints_or_none(ctx, "kernel_shape");
  if (!declared.empty() && declared != std::vector<int64_t>(w.begin() + 2, w.end()))
    ctx.invalid("kernel_shape does not match the filter " + w.to_list_string());
  return w;
}

// Explicit pads as (before, after) pairs: ONNX's [b1, b2, ..., e1, e2, ...].
std::vector<std::pair<int64_t, int64_t>> explicit_pads(NodeContext& ctx, int rank) {
  std::vector<int64_t> pads = ints_or_none(ctx, "pads");
  if (pads.empty()) pads.assign(size_t(2 * rank), 0);
  if (pads.size() != size_t(2 * rank))
    ctx.invalid("pads has " + std::to_string(pads.size()) + " values, not 2 per spatial dim");
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < size_t(rank); ++i) pairs.emplace_back(pads[i], pads[i + size_t(rank)]);
  return pairs;
}

// Conv's padding: SAME_UPPER is TensorFlow's SAME; SAME_LOWER puts the odd
// padding first, which needs the input's spatial dims.
Padding conv_padding(NodeContext& ctx, int rank, const std::vector<int64_t>& strides,
                     const std::vector<int64_t>& dilations, const std::vector<int64_t>& kernel) {
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") return explicit_pads(ctx, rank);
  if (auto_pad == "VALID") return "VALID";
  if (auto_pad == "SAME_UPPER") return "SAME";
  if (auto_pad != "SAME_LOWER") ctx.invalid("auto_pad '" + auto_pad + "' is not an ONNX value");
  const Shape& x = ctx.static_shape(0, "SAME_LOWER padding depends on the input's dims");
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t i = 0; i < size_t(rank); ++i) {
    const int64_t in = x[int(i) + 2], s = strides[i];
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    const int64_t total = std::max<int64_t>(((in + s - 1) / s - 1) * s + span - in, 0);
    pads.emplace_back(total - total / 2, total / 2);
  }
  return pads;
}

// y + b, b broadcast along the channels of a [batch, channels, spatial...] y.
Tensor with_bias(NodeContext& ctx, const Tensor& y, int rank) {
  if (!ctx.has_input(2)) return y;
  std::vector<int64_t> shape(size_t(rank) + 2, 1);
  shape[1] = -1;
  return y + reshape(ctx.input(2), shape);
}

void require_groups(NodeContext& ctx, int64_t channels, int64_t per_group) {
  const int64_t group = ctx.attr_int("group", 1);
  if (channels != kUnknownDim && channels != per_group * group) {
    ctx.invalid("the input has " + std::to_string(channels) + " channels, but group " +
                std::to_string(group) + " times the filter's " + std::to_string(per_group) +
                " input channels per group is " + std::to_string(per_group * group));
  }
}

// ceil_mode: the output counts a last, partial window that starts inside
// the input or its leading padding (as ONNX's reference and PyTorch do);
// extra padding at the end, which a pool never counts, makes it whole.
Padding with_ceil_mode(NodeContext& ctx, Padding padding, int rank,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& kernel) {
  if (ctx.attr_int("ceil_mode", 0) == 0 || padding.mode == "SAME") return padding;
  const Shape& x = ctx.static_shape(0, "ceil_mode depends on the input's dims");
  if (padding.mode == "VALID") padding = std::vector<std::pair<int64_t, int64_t>>(size_t(rank));
  for (size_t i = 0; i < size_t(rank); ++i) {
    auto& [before, after] = padding.pads[i];
    const int64_t in = x[int(i) + 2], s = strides[i], span = in + before + after - kernel[i];
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + before) --out;
    after += std::max<int64_t>((out - 1) * s + kernel[i] - (in + before + after), 0);
  }
  return padding;
}

// AveragePool with count_include_pad 1: each window's sum, padding's zeros
// included, over its size; the sum a depthwise convolution by ones.
Tensor mean_over_padding_too(NodeContext& ctx, int rank, const std::vector<int64_t>& kernel,
                             const std::vector<int64_t>& strides, const Padding& padding,
                             const std::vector<int64_t>& dilations) {
  const Tensor& x = ctx.input(0);
  const int64_t channels = x.shape()[1];
  if (channels == kUnknownDim) ctx.unsupported("count_include_pad 1 with unknown channels");
  std::vector<int64_t> window(kernel);
  window.push_back(1);
  window.push_back(channels);
  int64_t size = 1;
  for (int64_t k : kernel) size *= k;
  const Tensor ones = fill(Shape(window), 1.0 / double(size), x.dtype());
  return convolution(x, ones, strides, padding, kChannelsFirst[rank - 1], dilations);
}

// The windows of a pool over static spatial dims `in`: for each output
// position (row-major) and each of the window's `size` taps, the tap's flat
// position in `in` (row-major, or column-major for storage_order 1), or -1 in
// the padding.
struct Windows {
  std::vector<int64_t> out;  // the output's spatial dims
  int64_t size = 1;
  std::vector<int64_t> taps;  // [prod(out), size]
  std::vector<int64_t> taps_stored;
};

Windows pool_windows(const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                     const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                     const std::vector<std::pair<int64_t, int64_t>>& pads) {
  const size_t rank = in.size();
  Windows w;
  int64_t positions = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    w.out.push_back((in[i] + pads[i].first + pads[i].second - span) / strides[i] + 1);
    positions *= w.out.back();
    w.size *= kernel[i];
  }
  std::vector<int64_t> at(rank);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t k = 0; k < w.size; ++k) {
      int64_t rest_p = p, rest_k = k, flat = 0, stored = 0, stride_stored = 1;
      bool inside = true;
      for (size_t i = rank; i-- > 0;) {
        at[i] =
            (rest_p % w.out[i]) * strides[i] + (rest_k % kernel[i]) * dilations[i] - pads[i].first;
        rest_p /= w.out[i];
        rest_k /= kernel[i];
        inside = inside && at[i] >= 0 && at[i] < in[i];
      }
      for (size_t i = 0; i < rank; ++i) {
        flat = flat * in[i] + at[i];
        stored += at[i] * stride_stored;
        stride_stored *= in[i];
      }
      w.taps.push_back(inside ? flat : -1);
      w.taps_stored.push_back(inside ? stored : -1);
    }
  }
  return w;
}

// MaxPool's Indices: each window's first largest element's flat position in
// the input (batch and channel counted in), found by gathering the windows'
// taps (the padding a -inf past the end) and their argmax.
Tensor max_pool_indices(NodeContext& ctx, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                        const Padding& padding) {
  const Shape& shape = ctx.static_shape(0, "MaxPool's Indices output");
  if (padding.mode == "SAME") ctx.unsupported("the Indices output with SAME padding");
  const int rank = shape.rank() - 2;
  std::vector<std::pair<int64_t, int64_t>> pads = padding.pads;
  if (padding.mode == "VALID") pads.assign(size_t(rank), {0, 0});
  const std::vector<int64_t> in(shape.begin() + 2, shape.end());
  const Windows w = pool_windows(in, kernel, strides, dilations, pads);
  const int64_t n = shape[0], c = shape[1], per_channel = shape.num_elements() / (n * c);
  const int64_t positions = int64_t(w.taps.size()) / w.size;
  const Tensor& x = ctx.input(0);
  const Tensor flat =
      concat({reshape(x, {n, c, per_channel}),
              fill(Shape{n, c, 1}, -std::numeric_limits<double>::infinity(), x.dtype())},
             2);
  std::vector<int64_t> gathered = w.taps;
  for (int64_t& t : gathered) t = t < 0 ? per_channel : t;
  const Tensor windows =
      reshape(gather(flat, constant(gathered, Shape{int64_t(gathered.size())}), 2),
              {n, c, positions, w.size});
  std::vector<int64_t> first_tap(static_cast<size_t>(positions));
  for (int64_t p = 0; p < positions; ++p) first_tap[size_t(p)] = p * w.size;
  const Tensor tap = constant(first_tap, Shape{positions}) + cast(argmax(windows, 3), int64);
  const bool column_major = ctx.attr_int("storage_order", 0) != 0;
  const std::vector<int64_t>& table = column_major ? w.taps_stored : w.taps;
  std::vector<int64_t> offsets(static_cast<size_t>(n * c));
  for (int64_t k = 0; k < n * c; ++k) offsets[size_t(k)] = k * per_channel;
  Tensor index = gather(constant(table, Shape{int64_t(table.size())}), tap) +
                 constant(offsets, Shape{n, c, 1});
  std::vector<int64_t> dims{n, c};
  dims.insert(dims.end(), w.out.begin(), w.out.end());
  return reshape(index, dims);
}

std::vector<Tensor> import_pool(NodeContext& ctx, bool max) {
  const int rank = spatial_rank(ctx);
  const std::vector<int64_t> kernel = ints_or_none(ctx, "kernel_shape");
  if (kernel.size() != size_t(rank)) ctx.invalid("kernel_shape needs one value per spatial dim");
  const std::vector<int64_t> strides = per_dim(ctx, "strides", rank, 1);
  const std::vector<int64_t> dilations = per_dim(ctx, "dilations", rank, 1);
  const Padding padding = with_ceil_mode(ctx, conv_padding(ctx, rank, strides, dilations, kernel),
                                         rank, strides, kernel);
  const char* format = kChannelsFirst[rank - 1];
  if (!max && ctx.attr_int("count_include_pad", 0) != 0)
    return {mean_over_padding_too(ctx, rank, kernel, strides, padding, dilations)};
  // An integer MaxPool (int8 and uint8 since opset 12) runs in float64,
  // which holds every such value exactly.
  const Tensor& x = ctx.input(0);
  const bool integer = max && is_integer(x.dtype());
  Tensor y = pool(integer ? cast(x, float64) : x, kernel, max ? "MAX" : "AVG", strides, padding,
                  format, dilations);
  if (integer) y = cast(y, x.dtype());
  if (max && ctx.node().output_size() > 1 && !ctx.node().output(1).empty())
    return {y, max_pool_indices(ctx, kernel, strides, dilations, padding)};
  return {y};
}

std::vector<int64_t> spatial_axes(NodeContext& ctx) {
  std::vector<int64_t> axes;
  for (int i = 2; i < spatial_rank(ctx) + 2; ++i) axes.push_back(i);
  return axes;
}

}  // namespace

std::vector<Tensor> import_max_pool(NodeContext& ctx) {
  return import_pool(ctx, true);
}

std::vector<Tensor> import_average_pool(NodeContext& ctx) {
  return import_pool(ctx, false);
}

std::vector<Tensor> import_global_max_pool(NodeContext& ctx) {
  return {reduce_max(ctx.input(0), spatial_axes(ctx), true)};
}

std::vector<Tensor> import_global_average_pool(NodeContext& ctx) {
  return {reduce_mean(ctx.input(0), spatial_axes(ctx), true)};
}

namespace {
// The node's convolution of x by filter, which have the shapes of its inputs 0 and 1.
Tensor convolution_of(NodeContext& ctx, const Tensor& x, const Tensor& filter, int rank) {
  const Shape& w = kernel_shape_of(ctx, rank);
  require_groups(ctx, ctx.input(0).shape()[1], w[1]);
  const std::vector<int64_t> strides = per_dim(ctx, "strides", rank, 1);
  const std::vector<int64_t> dilations = per_dim(ctx, "dilations", rank, 1);
  return convolution(x, our_filter(filter, rank), strides,
                     conv_padding(ctx, rank, strides, dilations, {w.begin() + 2, w.end()}),
                     kChannelsFirst[rank - 1], dilations);
}
}  // namespace

std::vector<Tensor> import_conv(NodeContext& ctx) {
  const int rank = spatial_rank(ctx);
  return {with_bias(ctx, convolution_of(ctx, ctx.input(0), ctx.input(1), rank), rank)};
}

// ConvInteger: the int32 convolution of x - x_zero_point by w - w_zero_point
// (w's per output channel: 1-D of its dim 0), computed in float64, which
// holds every such sum exactly; the padding is 0 after the subtraction.
std::vector<Tensor> import_conv_integer(NodeContext& ctx) {
  const int rank = spatial_rank(ctx);
  auto centered = [&](size_t k, size_t zero_point) {
    Tensor v = cast(ctx.input(k), float64);
    if (!ctx.has_input(zero_point)) return v;
    Tensor zp = cast(ctx.input(zero_point), float64);
    if (k == 1 && zp.rank() == 1) {
      std::vector<int64_t> dims(size_t(rank) + 2, 1);
      dims[0] = -1;
      zp = reshape(zp, dims);
    }
    return v - zp;
  };
  return {cast(convolution_of(ctx, centered(0, 2), centered(1, 3), rank), int32)};
}

// ConvTranspose of x [batch, in, spatial...] by w [in, out/groups,
// kernel...]: the input gradient of a convolution of an output-sized input.
// Its output's dims are output_shape, or stride * (x - 1) + output_padding
// + the kernel's span - pads; SAME pads (auto_pad) make them x * stride.
std::vector<Tensor> import_conv_transpose(NodeContext& ctx) {
  const int rank = spatial_rank(ctx);
  const Shape& w = kernel_shape_of(ctx, rank);
  const Shape& x = ctx.input(0).shape();
  for (int i = 1; i < x.rank(); ++i)
    if (x[i] == kUnknownDim) ctx.unsupported("an input whose channels or spatial dims are unknown");
  const int64_t group = ctx.attr_int("group", 1);
  if (x[1] != w[0]) {
    ctx.invalid("the input has " + std::to_string(x[1]) + " channels and the filter " +
                w.to_list_string() + " takes " + std::to_string(w[0]));
  }
  const std::vector<int64_t> strides = per_dim(ctx, "strides", rank, 1);
  const std::vector<int64_t> dilations = per_dim(ctx, "dilations", rank, 1);
  const std::vector<int64_t> output_padding = per_dim(ctx, "output_padding", rank, 0);
  const std::vector<int64_t> output_shape = ints_or_none(ctx, "output_shape");
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  std::vector<std::pair<int64_t, int64_t>> pads = explicit_pads(ctx, rank);
  std::vector<int64_t> out_shape = {x[0], w[1] * group};
  for (size_t i = 0; i < size_t(rank); ++i) {
    const int64_t span = dilations[i] * (w[int(i) + 2] - 1) + 1;
    const int64_t full = strides[i] * (x[int(i) + 2] - 1) + output_padding[i] + span;
    if (auto_pad == "VALID") pads[i] = {0, 0};
    int64_t out = full - pads[i].first - pads[i].second;
    if (!output_shape.empty() || (auto_pad != "NOTSET" && auto_pad != "VALID")) {
      out = output_shape.empty() ? x[int(i) + 2] * strides[i]
                                 : output_shape[output_shape.size() - size_t(rank) + i];
      // A negative total pads nothing and extends the output at the end,
      // as output_padding does.
      const int64_t total = std::max<int64_t>(full - out, 0);
      pads[i] = auto_pad == "SAME_UPPER" ? std::pair{total / 2, total - total / 2}
                                         : std::pair{total - total / 2, total / 2};
    }
    out_shape.push_back(out);
  }
  const Tensor y = conv_transpose(ctx.input(0), our_filter(ctx.input(1), rank), out_shape, strides,
                                  pads, kChannelsFirst[rank - 1], dilations);
  return {with_bias(ctx, y, rank)};
}

// MaxUnpool: zeros of the unpooled shape (each spatial dim (in - 1) * stride
// + kernel - pads) with x's values written at their flat indices, as
// MaxPool's Indices give them; an output_shape (input 2) larger than that
// pads each dim at its end, as ONNX's reference does.
std::vector<Tensor> import_max_unpool(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int rank = spatial_rank(ctx);
  const Shape& shape = ctx.static_shape(0, "MaxUnpool");
  const std::vector<int64_t> kernel = ints_or_none(ctx, "kernel_shape");
  if (kernel.size() != size_t(rank)) ctx.invalid("kernel_shape needs one value per spatial dim");
  const std::vector<int64_t> strides = per_dim(ctx, "strides", rank, 1);
  const auto pads = explicit_pads(ctx, rank);
  std::vector<int64_t> dims{shape[0], shape[1]};
  for (size_t i = 0; i < size_t(rank); ++i)
    dims.push_back((shape[int(i) + 2] - 1) * strides[i] + kernel[i] - pads[i].first -
                   pads[i].second);
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  Tensor y = reshape(
      tensor_scatter_nd_update(zeros(Shape{total}, x.dtype()),
                               reshape(cast(ctx.input(1), int64), {-1, 1}), reshape(x, {-1})),
      dims);
  if (!ctx.has_input(2)) return {y};
  const std::vector<int64_t> wanted = ctx.constant_ints(2, "output_shape");
  std::vector<std::pair<int64_t, int64_t>> paddings;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (wanted.size() != dims.size() || wanted[i] < dims[i] || (i < 2 && wanted[i] != dims[i])) {
      ctx.invalid("output_shape " + Shape(std::span<const int64_t>(wanted)).to_list_string() +
                  " must have the input's batch and channels and cover the unpooled shape " +
                  Shape(std::span<const int64_t>(dims)).to_list_string());
    }
    paddings.emplace_back(0, wanted[i] - dims[i]);
  }
  return {pad(y, paddings)};
}

}  // namespace ag::onnx_io
