// A convolution's output size, SAME padding, groups and layout; see
// conv_geometry.h.
#include "ops/conv_geometry.h"

#include <algorithm>
#include <iterator>

#include "ag/error.h"

namespace ag::ops {
namespace {

constexpr int64_t kUnknown = kUnknownDim;

[[noreturn]] void fail(std::string_view op, const std::string& what) {
  throw InvalidArgumentError(std::string(op) + ": " + what);
}

std::string list(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) s += (i ? "," : "") + std::to_string(values[i]);
  return s + "]";
}

bool known(int64_t d) {
  return d != kUnknown;
}

int64_t divide_or_unknown(int64_t a, int64_t b) {
  return known(a) && known(b) && b != 0 ? a / b : kUnknown;
}

// [batch, spatial..., channels] or [batch, channels, spatial...].
Shape layout_shape(int64_t batch, int64_t channels, const std::vector<int64_t>& spatial,
                   bool channels_first) {
  Shape s;
  s.push_back(batch);
  if (channels_first) s.push_back(channels);
  for (int64_t d : spatial) s.push_back(d);
  if (!channels_first) s.push_back(channels);
  return s;
}

void require_rank(std::string_view op, std::string_view what, const Shape& shape, int rank) {
  if (shape.has_unknown_rank()) fail(op, std::string(what) + " needs a known rank");
  if (shape.rank() != rank) {
    fail(op, std::string(what) + " must have rank " + std::to_string(rank) + " (" +
                 std::to_string(rank - 2) + " spatial dims), got " + shape.to_list_string());
  }
}

// The groups: the input's channels over the filter's in-channel dim.
int64_t groups_of(std::string_view op, const ConvAttrs& attrs, const ConvGeometry& g,
                  int64_t filter_in_channels, const Shape& input, const Shape& filter) {
  if (attrs.groups > 0) return attrs.groups;
  if (!known(g.in_channels) || !known(filter_in_channels)) return kUnknown;
  if (g.in_channels == 0 && filter_in_channels == 0) return 1;  // sums of nothing: zeros
  if (filter_in_channels <= 0 || g.in_channels % filter_in_channels != 0) {
    fail(op, "the input " + input.to_list_string() + " has " + std::to_string(g.in_channels) +
                 " channels, which the filter " + filter.to_list_string() + "'s " +
                 std::to_string(filter_in_channels) +
                 " input channels do not divide (the filter is [kernel..., in_channels / "
                 "groups, out_channels])");
  }
  return g.in_channels / filter_in_channels;
}

// Output positions and padding of spatial dim i.
void resolve_spatial_dim(std::string_view op, const ConvAttrs& attrs, ConvGeometry& g, size_t i) {
  const int64_t in = g.in[i], k = g.kernel[i], s = g.strides[i], d = g.dilations[i];
  if (!known(in) || !known(k)) {
    g.out[i] = kUnknown;
    if (attrs.same) g.pad_before[i] = g.pad_after[i] = kUnknown;
    return;
  }
  const int64_t extent = d * (k - 1) + 1;  // the dilated kernel's span
  if (attrs.same) {
    g.out[i] = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>((g.out[i] - 1) * s + extent - in, 0);
    g.pad_before[i] = total / 2;
    g.pad_after[i] = total - total / 2;
    return;
  }
  const int64_t padded = in + g.pad_before[i] + g.pad_after[i];
  if (padded < extent) {
    fail(op, "spatial dim " + std::to_string(i) + " of the input has " + std::to_string(in) +
                 " positions (" + std::to_string(padded) +
                 " padded), fewer than the kernel spans (" + std::to_string(extent) +
                 " with dilation " + std::to_string(d) + ")");
  }
  g.out[i] = (padded - extent) / s + 1;
}

void require_output(std::string_view op, const ConvGeometry& g, const Shape& out_backprop) {
  if (!g.output_shape().is_compatible_with(out_backprop)) {
    fail(op, "out_backprop has shape " + out_backprop.to_list_string() +
                 ", but the convolution of an input of " + g.input_shape().to_list_string() +
                 " by a filter of " + g.filter_shape().to_list_string() + " gives " +
                 g.output_shape().to_list_string());
  }
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (!known(d)) return kUnknown;
    n *= d;
  }
  return n;
}

// One value per spatial dim from TensorFlow's 1, rank or rank + 2 values.
std::vector<int64_t> per_spatial_dim(std::string_view op, std::string_view what,
                                     const std::vector<int64_t>& values, int rank,
                                     bool channels_first) {
  std::vector<int64_t> out;
  if (values.size() == 1) out.assign(size_t(rank), values[0]);
  if (values.size() == size_t(rank)) out = values;
  if (values.size() == size_t(rank) + 2) {
    const size_t channel = channels_first ? 1 : size_t(rank) + 1;
    if (values[0] != 1 || values[channel] != 1) {
      fail(op, std::string(what) + " " + list(values) + " must be 1 at the batch and channel dims");
    }
    for (size_t i = 0; i < values.size(); ++i)
      if (i != 0 && i != channel) out.push_back(values[i]);
  }
  if (out.empty()) {
    fail(op, std::string(what) + " " + list(values) + " must have 1, " + std::to_string(rank) +
                 " or " + std::to_string(rank + 2) + " entries");
  }
  for (int64_t v : out)
    if (v < 1) fail(op, std::string(what) + " " + list(values) + " must be positive");
  return out;
}

// Whether data_format is channels-first, for `rank` spatial dims.
bool channels_first_format(std::string_view op, std::string_view format, int rank) {
  constexpr std::string_view kSpatial[] = {"W", "HW", "DHW"};
  const std::string spatial(kSpatial[rank - 1]);
  if (format.empty() || format == "N" + spatial + "C") return false;
  if (format == "NC" + spatial) return true;
  fail(op, "data_format '" + std::string(format) + "' must be N" + spatial + "C or NC" + spatial +
               " for " + std::to_string(rank) + " spatial dims");
}

}  // namespace

Attrs ConvAttrs::encode() const {
  Attrs a;
  a.ints = {rank, same ? 1 : 0, groups};
  for (const auto* v : {&strides, &dilations, &pad_before, &pad_after, &given_dims})
    a.ints.insert(a.ints.end(), v->begin(), v->end());
  a.axis = channels_first ? 1 : -1;
  return a;
}

ConvAttrs ConvAttrs::decode(const Attrs& a) {
  ConvAttrs c;
  c.rank = int(a.ints.at(0));
  c.same = a.ints.at(1) != 0;
  c.groups = a.ints.at(2);
  c.channels_first = a.axis == 1;
  auto next = a.ints.begin() + 3;
  for (auto* v : {&c.strides, &c.dilations, &c.pad_before, &c.pad_after}) {
    v->assign(next, next + c.rank);
    next += c.rank;
  }
  c.given_dims.assign(next, a.ints.end());
  return c;
}

Attrs FusedConvAttrs::encode() const {
  Attrs a = conv.encode();
  const int64_t front[] = {epilogue.bias ? 1 : 0, epilogue.residual ? 1 : 0,
                           int64_t(epilogue.activation)};
  a.ints.insert(a.ints.begin(), std::begin(front), std::end(front));
  a.lo = epilogue.lo;
  a.hi = epilogue.hi;
  return a;
}

FusedConvAttrs FusedConvAttrs::decode(const Attrs& a) {
  FusedConvAttrs f;
  f.epilogue = {a.ints.at(0) != 0, a.ints.at(1) != 0, ConvEpilogue::Activation(a.ints.at(2)), a.lo,
                a.hi};
  Attrs conv = a;
  conv.ints.erase(conv.ints.begin(), conv.ints.begin() + 3);
  f.conv = ConvAttrs::decode(conv);
  return f;
}

bool is_channel_bias(const Shape& term, const ConvGeometry& g, const Shape& out) {
  if (term.has_unknown_rank() || term.rank() > out.rank()) return false;
  const int channel_axis = g.channels_first ? 1 : out.rank() - 1;
  const int lead = out.rank() - term.rank();
  for (int k = 0; k < term.rank(); ++k) {
    if (term[k] != (k + lead == channel_axis ? g.out_channels : 1)) return false;
  }
  return g.out_channels == 1 || lead <= channel_axis;
}

namespace {
ConvGeometry::Strides layout_strides(bool channels_first, int64_t channels, int64_t positions) {
  if (channels_first) return {channels * positions, positions, 1};
  return {channels * positions, 1, channels};
}
}  // namespace

ConvGeometry::Strides ConvGeometry::input_strides() const {
  return layout_strides(channels_first, in_channels, in_positions());
}
ConvGeometry::Strides ConvGeometry::output_strides() const {
  return layout_strides(channels_first, out_channels, out_positions());
}

Shape ConvGeometry::input_shape() const {
  return layout_shape(batch, in_channels, in, channels_first);
}

Shape ConvGeometry::filter_shape() const {
  Shape s(kernel);
  s.push_back(divide_or_unknown(in_channels, groups));
  s.push_back(out_channels);
  return s;
}

Shape ConvGeometry::output_shape() const {
  return layout_shape(batch, out_channels, out, channels_first);
}

int64_t ConvGeometry::in_positions() const {
  return product(in);
}
int64_t ConvGeometry::out_positions() const {
  return product(out);
}
int64_t ConvGeometry::kernel_positions() const {
  return product(kernel);
}

bool ConvGeometry::input_spatial_dims_known() const {
  return std::all_of(in.begin(), in.end(), known);
}

ConvGeometry conv_geometry(std::string_view op, const ConvAttrs& attrs, const Shape& input,
                           const Shape& filter) {
  const int r = attrs.rank;
  require_rank(op, "the input", input, r + 2);
  require_rank(op, "the filter", filter, r + 2);
  ConvGeometry g;
  g.rank = r;
  g.channels_first = attrs.channels_first;
  g.batch = input[0];
  g.in_channels = input[attrs.channels_first ? 1 : r + 1];
  g.out_channels = filter[r + 1];
  for (int i = 0; i < r; ++i) {
    g.in.push_back(input[attrs.channels_first ? i + 2 : i + 1]);
    g.kernel.push_back(filter[i]);
  }
  g.groups = groups_of(op, attrs, g, filter[r], input, filter);
  if (known(g.groups) && known(g.out_channels) && g.out_channels % g.groups != 0) {
    fail(op, "the filter " + filter.to_list_string() + " has " + std::to_string(g.out_channels) +
                 " output channels, which the " + std::to_string(g.groups) +
                 " groups do not divide");
  }
  g.strides = attrs.strides;
  g.dilations = attrs.dilations;
  g.pad_before = attrs.pad_before;
  g.pad_after = attrs.pad_after;
  g.out.resize(size_t(r));
  for (size_t i = 0; i < size_t(r); ++i) resolve_spatial_dim(op, attrs, g, i);
  return g;
}

ConvGeometry pool_geometry(std::string_view op, const ConvAttrs& attrs, const Shape& input) {
  const int r = attrs.rank;
  require_rank(op, "the input", input, r + 2);
  Shape window(attrs.given_dims);
  window.push_back(1);
  window.push_back(input[attrs.channels_first ? 1 : r + 1]);
  return conv_geometry(op, attrs, input, window);
}

ConvGeometry avg_pool_grad_geometry(std::string_view op, const ConvAttrs& attrs,
                                    const Shape& out_backprop) {
  const int r = attrs.rank;
  require_rank(op, "out_backprop", out_backprop, r + 2);
  ConvAttrs pool = attrs;
  pool.given_dims = std::vector<int64_t>(attrs.given_dims.begin(), attrs.given_dims.begin() + r);
  const std::vector<int64_t> in(attrs.given_dims.begin() + r, attrs.given_dims.end());
  const int64_t channels = out_backprop[attrs.channels_first ? 1 : r + 1];
  ConvGeometry g =
      pool_geometry(op, pool, layout_shape(out_backprop[0], channels, in, attrs.channels_first));
  require_output(op, g, out_backprop);
  return g;
}

namespace {

// gradient_op_attrs of an op given `count` inputs, the last `last`.
ConvAttrs gradient_op_attrs(std::string_view op, const Attrs& attrs, size_t arity, size_t count,
                            const Shape& last) {
  if (count != arity && count != arity + 1) {
    fail(op, "takes " + std::to_string(arity) + " or " + std::to_string(arity + 1) +
                 " inputs, got " + std::to_string(count));
  }
  ConvAttrs a = ConvAttrs::decode(attrs);
  if (count == arity) return a;
  const int r = a.rank;
  require_rank(op, "the input whose spatial dims the result takes", last, r + 2);
  if (a.given_dims.size() < size_t(r)) fail(op, "has no spatial dims to take");
  const size_t first_given = a.given_dims.size() - size_t(r);
  const int first_spatial = a.channels_first ? 2 : 1;
  for (int i = 0; i < r; ++i) {
    int64_t& d = a.given_dims[first_given + size_t(i)];
    if (d == kUnknown) d = last[first_spatial + i];
  }
  return a;
}

}  // namespace

ConvAttrs gradient_op_attrs(const InferContext& ctx, size_t arity) {
  if (ctx.inputs.empty()) fail(ctx.op_name, "takes " + std::to_string(arity) + " inputs, got 0");
  return gradient_op_attrs(ctx.op_name, ctx.attrs, arity, ctx.inputs.size(),
                           ctx.inputs.back().shape);
}

std::vector<Tensor> gradient_op_inputs(std::vector<Tensor> operands, const ConvGeometry& g,
                                       const Tensor& input) {
  if (!g.input_spatial_dims_known()) operands.push_back(input);
  return operands;
}

ConvAttrs gradient_op_attrs(const KernelContext& ctx, size_t arity) {
  return gradient_op_attrs(ctx.op_name, *ctx.attrs, arity, ctx.inputs.size(),
                           *ctx.inputs.back().shape);
}

std::vector<int64_t> window_sources(const ConvGeometry& g, int64_t first, int64_t count) {
  const int64_t kernel_positions = g.kernel_positions();
  std::vector<int64_t> sources(size_t(count * kernel_positions));
  std::vector<int64_t> o(size_t(g.rank)), k(size_t(g.rank));
  for (int64_t r = 0; r < count; ++r) {
    int64_t rest = first + r;
    for (int i = g.rank - 1; i >= 0; --i) {
      o[size_t(i)] = rest % g.out[size_t(i)];
      rest /= g.out[size_t(i)];
    }
    for (int64_t kp = 0; kp < kernel_positions; ++kp) {
      int64_t position = 0;
      rest = kp;
      for (int i = g.rank - 1; i >= 0; --i) {
        k[size_t(i)] = rest % g.kernel[size_t(i)];
        rest /= g.kernel[size_t(i)];
      }
      for (int i = 0; i < g.rank && position >= 0; ++i) {
        const size_t s = size_t(i);
        const int64_t at = o[s] * g.strides[s] - g.pad_before[s] + k[s] * g.dilations[s];
        position = at < 0 || at >= g.in[s] ? -1 : position * g.in[s] + at;
      }
      sources[size_t(r * kernel_positions + kp)] = position;
    }
  }
  return sources;
}

ConvGeometry conv_backprop_input_geometry(std::string_view op, const ConvAttrs& attrs,
                                          const Shape& filter, const Shape& out_backprop) {
  const int r = attrs.rank;
  require_rank(op, "the filter", filter, r + 2);
  require_rank(op, "out_backprop", out_backprop, r + 2);
  const int64_t channels = known(filter[r]) ? filter[r] * attrs.groups
                                            : kUnknown;  // in-channels per group, times groups
  ConvGeometry g = conv_geometry(
      op, attrs, layout_shape(out_backprop[0], channels, attrs.given_dims, attrs.channels_first),
      filter);
  require_output(op, g, out_backprop);
  return g;
}

ConvGeometry conv_backprop_filter_geometry(std::string_view op, const ConvAttrs& attrs,
                                           const Shape& input, const Shape& out_backprop) {
  const int r = attrs.rank;
  require_rank(op, "the input", input, r + 2);
  require_rank(op, "out_backprop", out_backprop, r + 2);
  Shape filter(attrs.given_dims);
  filter.push_back(divide_or_unknown(input[attrs.channels_first ? 1 : r + 1], attrs.groups));
  filter.push_back(out_backprop[attrs.channels_first ? 1 : r + 1]);
  ConvGeometry g = conv_geometry(op, attrs, input, filter);
  require_output(op, g, out_backprop);
  return g;
}

ConvAttrs conv_attrs(std::string_view op, int rank, const std::vector<int64_t>& strides,
                     const Padding& padding, std::string_view data_format,
                     const std::vector<int64_t>& dilations) {
  if (rank < 1 || rank > 3) fail(op, "supports 1 to 3 spatial dims, got " + std::to_string(rank));
  ConvAttrs a;
  a.rank = rank;
  a.channels_first = channels_first_format(op, data_format, rank);
  a.strides = per_spatial_dim(op, "strides", strides, rank, a.channels_first);
  a.dilations = per_spatial_dim(op, "dilations", dilations, rank, a.channels_first);
  a.pad_before.assign(size_t(rank), 0);
  a.pad_after.assign(size_t(rank), 0);
  if (padding.mode == "SAME") {
    a.same = true;
  } else if (padding.mode == "EXPLICIT") {
    if (padding.pads.size() != size_t(rank)) {
      fail(op, "explicit padding has " + std::to_string(padding.pads.size()) +
                   " (before, after) pairs; it needs one per spatial dim, " + std::to_string(rank));
    }
    for (size_t i = 0; i < size_t(rank); ++i) {
      auto [before, after] = padding.pads[i];
      if (before < 0 || after < 0) fail(op, "explicit padding must not be negative");
      a.pad_before[i] = before;
      a.pad_after[i] = after;
    }
  } else if (padding.mode != "VALID") {
    fail(op, "padding '" + padding.mode +
                 "' must be \"SAME\", \"VALID\" or (before, after) pairs, one per spatial dim");
  }
  return a;
}

ConvAttrs pool_attrs(std::string_view op, int rank, const std::vector<int64_t>& ksize,
                     const std::vector<int64_t>& strides, const Padding& padding,
                     std::string_view data_format, const std::vector<int64_t>& dilations) {
  ConvAttrs a = conv_attrs(op, rank, strides, padding, data_format, dilations);
  a.given_dims = per_spatial_dim(op, "ksize", ksize, rank, a.channels_first);
  return a;
}

}  // namespace ag::ops
