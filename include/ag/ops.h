// Tensor operations. Each one is declared once in ag/ops.def with its
// shape/dtype rule and its kernel; eager mode and the graph executor call the
// same kernel. Binary ops broadcast as NumPy does and promote dtypes as
// described in ag/dtype.h. C++ scalars are "weak" (`int32 tensor * 2` stays
// int32).
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ag/tensor.h"

namespace ag {

// A C++ scalar as a weak tensor operand (rule 2 of ag/dtype.h).
struct Scalar {
  template <Arithmetic T>
  Scalar(T v)
      : f(double(v)),
        i(int64_t(v)),
        kind(std::is_same_v<T, bool>       ? ScalarKind::boolean
             : std::is_floating_point_v<T> ? ScalarKind::floating
                                           : ScalarKind::integer) {}
  double f;
  int64_t i;
  ScalarKind kind;
};

namespace detail {
// The forms of reshape, broadcast_to, tile and fill by a shape tensor (api
// below), which the templates there call.
Tensor reshape_to_tensor(const Tensor& x, const Tensor& shape, CallSite site);
Tensor broadcast_to_tensor(const Tensor& x, const Tensor& shape, CallSite site);
Tensor tile_to_tensor(const Tensor& input, const Tensor& multiples, CallSite site);
Tensor fill_to_tensor(const Tensor& dims, const Tensor& value, CallSite site);
}  // namespace detail

namespace api {

// The tensor a weak scalar becomes next to a tensor of dtype `like`.
Tensor scalar_like(Scalar s, DType like);

// ---- Elementwise ----------------------------------------------------------

// The templates make `f(t, 2)` pick the weak-scalar form rather than an
// ambiguous conversion of 2 to a Tensor or a Scalar.
#define AG_DECLARE_BINARY(name)                                                       \
  Tensor name(const Tensor& a, const Tensor& b, CallSite site = CallSite::current()); \
  Tensor name(const Tensor& a, Scalar b, CallSite site = CallSite::current());        \
  Tensor name(Scalar a, const Tensor& b, CallSite site = CallSite::current());        \
  template <Arithmetic S>                                                             \
  Tensor name(const Tensor& a, S b, CallSite site = CallSite::current()) {            \
    return name(a, Scalar(b), site);                                                  \
  }                                                                                   \
  template <Arithmetic S>                                                             \
  Tensor name(S a, const Tensor& b, CallSite site = CallSite::current()) {            \
    return name(Scalar(a), b, site);                                                  \
  }
// The unary and binary elementwise ops of ag/ops.def, declared from their
// rows (the api column): neg, abs, exp, log, sqrt, tanh, sigmoid, relu,
// round (half to even; integers pass through), floor and ceil (floating
// only), sign (-1, 0 or 1; NaN stays NaN), identity, logical_not; sin, cos,
// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, log1p
// (log(1 + x)), expm1 (exp(x) - 1), rsqrt (1 / sqrt(x)), reciprocal,
// softplus, softsign, elu (alpha 1), selu, gelu (its exact, erf form; all
// floating only); add, sub,
// mul, floordiv and mod (floor division and the matching modulo: the result
// takes the divisor's sign; integer division by zero is an
// InvalidArgumentError), maximum, minimum, equal, not_equal, less,
// less_equal, greater, greater_equal, logical_and, logical_or.
#define AG_DECLARE_unary(name) Tensor name(const Tensor& x, CallSite site = CallSite::current());
#define AG_DECLARE_bool_unary(name) AG_DECLARE_unary(name)
#define AG_DECLARE_binary(name) AG_DECLARE_BINARY(name)
#define AG_DECLARE_bool_binary(name) AG_DECLARE_BINARY(name)
#define AG_DECLARE_custom(name)
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  AG_DECLARE_##api
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP
#undef AG_DECLARE_unary
#undef AG_DECLARE_bool_unary
#undef AG_DECLARE_binary
#undef AG_DECLARE_bool_binary
#undef AG_DECLARE_custom
// The elementwise ops with a public function of their own.
// True division: integer operands are cast to float64, as TensorFlow's `/`.
AG_DECLARE_BINARY(div)
// Powers; pow(x, 2) is one multiply.
AG_DECLARE_BINARY(pow)
namespace operators {
// The operators &, | and ^: the logical op of bool operands, the bitwise op
// of integers, as tf.Tensor's __and__, __or__ and __xor__.
AG_DECLARE_BINARY(operator_and)
AG_DECLARE_BINARY(operator_or)
AG_DECLARE_BINARY(operator_xor)
// ~x: logical_not of a bool tensor, invert of an integer one.
Tensor operator_invert(const Tensor& x, CallSite site);
// ++t and --t: t plus `step` (1 or -1) in t's dtype; a bool t is an error.
Tensor operator_step(const Tensor& t, int step, const char* op);
}  // namespace operators
#undef AG_DECLARE_BINARY
inline Tensor subtract(const Tensor& a, const Tensor& b, CallSite site = CallSite::current()) {
  return sub(a, b, site);
}
inline Tensor multiply(const Tensor& a, const Tensor& b, CallSite site = CallSite::current()) {
  return mul(a, b, site);
}
inline Tensor divide(const Tensor& a, const Tensor& b, CallSite site = CallSite::current()) {
  return div(a, b, site);
}

inline Tensor negative(const Tensor& x, CallSite site = CallSite::current()) {
  return neg(x, site);
}
Tensor square(const Tensor& x, CallSite site = CallSite::current());
Tensor cast(const Tensor& x, DType dtype, CallSite site = CallSite::current());
// Elementwise choice; `cond` is bool; all three broadcast.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y,
             CallSite site = CallSite::current());
Tensor where(const Tensor& cond, Scalar x, const Tensor& y, CallSite site = CallSite::current());
Tensor where(const Tensor& cond, const Tensor& x, Scalar y, CallSite site = CallSite::current());
Tensor where(const Tensor& cond, Scalar x, Scalar y, CallSite site = CallSite::current());
// Pick the weak-scalar forms for C++ scalars rather than an ambiguous
// conversion to Tensor or Scalar.
template <Arithmetic S>
Tensor where(const Tensor& cond, S x, const Tensor& y, CallSite site = CallSite::current()) {
  return where(cond, Scalar(x), y, site);
}
template <Arithmetic S>
Tensor where(const Tensor& cond, const Tensor& x, S y, CallSite site = CallSite::current()) {
  return where(cond, x, Scalar(y), site);
}
template <Arithmetic S, Arithmetic T>
Tensor where(const Tensor& cond, S x, T y, CallSite site = CallSite::current()) {
  return where(cond, Scalar(x), Scalar(y), site);
}

// ---- Reductions -----------------------------------------------------------
// `axes` empty reduces over every axis. Negative axes count from the end.
// reduce_mean of an integer tensor divides with truncation, as TensorFlow.
Tensor reduce_sum(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                  CallSite site = CallSite::current());
Tensor reduce_mean(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                   CallSite site = CallSite::current());
Tensor reduce_max(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                  CallSite site = CallSite::current());
Tensor reduce_min(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                  CallSite site = CallSite::current());
Tensor reduce_prod(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                   CallSite site = CallSite::current());
// Logical or / and over a bool tensor; no elements give false / true.
Tensor reduce_any(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                  CallSite site = CallSite::current());
Tensor reduce_all(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false,
                  CallSite site = CallSite::current());
// One axis as a plain integer, as TensorFlow's axis=1: ag::reduce_any(x, 1).
#define AG_DECLARE_REDUCE_ONE_AXIS(name)                                 \
  template <std::integral I>                                             \
    requires(!std::is_same_v<I, bool>)                                   \
  Tensor name(const Tensor& x, I axis, bool keepdims = false,            \
              CallSite site = CallSite::current()) {                     \
    return name(x, std::vector<int64_t>{int64_t(axis)}, keepdims, site); \
  }
AG_DECLARE_REDUCE_ONE_AXIS(reduce_sum)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_mean)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_max)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_min)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_prod)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_any)
AG_DECLARE_REDUCE_ONE_AXIS(reduce_all)
#undef AG_DECLARE_REDUCE_ONE_AXIS
// Index of the largest element along `axis`, as int64.
Tensor argmax(const Tensor& x, int64_t axis = 0, CallSite site = CallSite::current());
Tensor argmin(const Tensor& x, int64_t axis = 0, CallSite site = CallSite::current());

// ---- Linear algebra and shapes ---------------------------------------------
// tf.linalg.matmul: [..., m, k] x [..., k, n] -> [..., m, n], each operand of
// rank 2 or more; the batch dims (all but the last two) broadcast as NumPy's
// do ([2, 1, m, k] x [3, k, n] -> [2, 3, m, n]). transpose_a/transpose_b
// multiply by an operand's transpose (its last two dims swapped: TensorFlow's
// adjoint_a/adjoint_b too, for real numbers) without a copy. The operands are
// promoted to one dtype (ag/dtype.h); bool is an error.
Tensor matmul(const Tensor& a, const Tensor& b, CallSite site = CallSite::current());
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b = false,
              CallSite site = CallSite::current());
// `perm` empty reverses the axes.
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {},
                 CallSite site = CallSite::current());
// One dim may be -1 (inferred).
Tensor reshape(const Tensor& x, std::vector<int64_t> shape, CallSite site = CallSite::current());
// x repeated to `shape` along the dims where it has 1 or none (aligned from
// the last), as tf.broadcast_to; `shape` has no unknown dim.
Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape,
                    CallSite site = CallSite::current());
// reshape and broadcast_to by a shape given as a tensor, as tf.reshape(x,
// tf.shape(y)): 1-D, int32 or int64, of a length known while tracing. Its
// values may be computed in the graph (from ag::shape of a tensor whose dims
// are unknown while tracing): the result's dims are then unknown while
// tracing, and read when the graph runs. A shape known while tracing gives
// the forms above. (Templates, so that a braced {2, 3} is the vector form.)
template <std::same_as<Tensor> T>
Tensor reshape(const Tensor& x, const T& shape, CallSite site = CallSite::current()) {
  return detail::reshape_to_tensor(x, shape, site);
}
template <std::same_as<Tensor> T>
Tensor broadcast_to(const Tensor& x, const T& shape, CallSite site = CallSite::current()) {
  return detail::broadcast_to_tensor(x, shape, site);
}
Tensor expand_dims(const Tensor& x, int64_t axis, CallSite site = CallSite::current());
// `axes` empty removes every size-1 dim.
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {},
               CallSite site = CallSite::current());
Tensor concat(const std::vector<Tensor>& xs, int64_t axis, CallSite site = CallSite::current());
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0, CallSite site = CallSite::current());
// Slices of `params` along `axis` at `indices` (int32 or int64).
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0,
              CallSite site = CallSite::current());
// tf.math.unsorted_segment_sum: zeros of shape [num_segments] + data's dims
// after segment_ids' rank, with data's slice at each position of segment_ids
// (int32 or int64, data's leading dims, each in [0, num_segments)) added to
// row segment_ids[...]. num_segments is an int32 or int64 scalar. The
// gradient of gather.
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids,
                            const Tensor& num_segments, CallSite site = CallSite::current());
// tf.slice: `size` -1 takes the rest of that dim.
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size,
             CallSite site = CallSite::current());

// ---- Creation that may be staged --------------------------------------------
// [start, start + delta, ...) up to `limit`. Scalar bounds give the dtype
// (int32 for C++ integers); tensor bounds stage a Range node.
Tensor range(const Tensor& start, const Tensor& limit, const Tensor& delta = Tensor(int32_t{1}),
             CallSite site = CallSite::current());
Tensor range(const Tensor& limit, CallSite site = CallSite::current());
// tf.fill: the scalar `value` repeated to the shape `dims`, a tensor as
// reshape's shape above (ag::fill(Shape, ...) makes a constant).
template <std::same_as<Tensor> T>
Tensor fill(const T& dims, const Tensor& value, CallSite site = CallSite::current()) {
  return detail::fill_to_tensor(dims, value, site);
}
// Stateful random ops. With a seed, the sequence of values is reproducible
// per call site: the first call gives the same values eagerly and in a graph.
Tensor random_uniform(Shape shape, double minval = 0.0, double maxval = 1.0,
                      DType dtype = DType::float32, std::optional<uint64_t> seed = std::nullopt,
                      CallSite site = CallSite::current());
Tensor random_normal(Shape shape, double mean = 0.0, double stddev = 1.0,
                     DType dtype = DType::float32, std::optional<uint64_t> seed = std::nullopt,
                     CallSite site = CallSite::current());
// Seeds the sequence used by random ops without an explicit seed.
void set_random_seed(uint64_t seed);

// ---- Shapes, rounding, clipping, one-hot, cumulative sum ---------------------
// As TensorFlow's ops of the same names.
// The shape of `x` as a 1-D tensor (tf.shape), its number of elements
// (tf.size) and its rank (tf.rank, int32). In a graph each is a constant when
// the shape is known while tracing, and is read when the graph runs when a
// dim is not.
Tensor shape(const Tensor& x, DType out_type = DType::int32, CallSite site = CallSite::current());
Tensor size(const Tensor& x, DType out_type = DType::int32, CallSite site = CallSite::current());
Tensor rank(const Tensor& x, CallSite site = CallSite::current());
// maximum(minimum(t, clip_value_max), clip_value_min): the min wins when
// min > max, and NaN passes through. The result has t's dtype and shape: the
// bounds must have t's dtype (C++ scalars convert to it; a floating one for
// an integer t is an error) and broadcast to t's shape.
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, const Tensor& clip_value_max,
                     CallSite site = CallSite::current());
Tensor clip_by_value(const Tensor& t, Scalar clip_value_min, Scalar clip_value_max,
                     CallSite site = CallSite::current());
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, Scalar clip_value_max,
                     CallSite site = CallSite::current());
Tensor clip_by_value(const Tensor& t, Scalar clip_value_min, const Tensor& clip_value_max,
                     CallSite site = CallSite::current());
// Pick the scalar forms for C++ scalars rather than an ambiguous conversion.
template <Arithmetic L, Arithmetic H>
Tensor clip_by_value(const Tensor& t, L clip_value_min, H clip_value_max,
                     CallSite site = CallSite::current()) {
  return clip_by_value(t, Scalar(clip_value_min), Scalar(clip_value_max), site);
}
template <Arithmetic H>
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, H clip_value_max,
                     CallSite site = CallSite::current()) {
  return clip_by_value(t, clip_value_min, Scalar(clip_value_max), site);
}
template <Arithmetic L>
Tensor clip_by_value(const Tensor& t, L clip_value_min, const Tensor& clip_value_max,
                     CallSite site = CallSite::current()) {
  return clip_by_value(t, Scalar(clip_value_min), clip_value_max, site);
}
// `indices` (int32 or int64) with a new axis of length `depth` at `axis`
// (-1: last) holding on_value at the index and off_value elsewhere; an index
// outside [0, depth) gives a row of off_value. The dtype is `dtype`, else
// that of on_value or off_value (a C++ integer gives int32, a floating
// scalar float32, a bool bool), else float32. on_value defaults to 1 and
// off_value to 0.
Tensor one_hot(const Tensor& indices, int64_t depth, std::optional<Scalar> on_value = std::nullopt,
               std::optional<Scalar> off_value = std::nullopt, int64_t axis = -1,
               std::optional<DType> dtype = std::nullopt, CallSite site = CallSite::current());
// Running sums along `axis`; `exclusive` leaves each element out of its own
// sum, `reverse` sums from the end (tf.math.cumsum).
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
              CallSite site = CallSite::current());
// x summed down to the shape of `like`, which must broadcast to x's shape:
// over x's leading axes and over those where `like` has size 1. Only like's
// shape is read. Gradients use it to undo a broadcast decided at run time.
Tensor reduce_sum_to(const Tensor& x, const Tensor& like, CallSite site = CallSite::current());

// ---- Activations with parameters ------------------------------------------------
// tf.nn.leaky_relu: features where features > 0, else alpha * features.
Tensor leaky_relu(const Tensor& features, double alpha = 0.2, CallSite site = CallSite::current());
// Keras's (2.x) and ONNX's hard_sigmoid: max(0, min(1, alpha * x + beta)).
Tensor hard_sigmoid(const Tensor& x, double alpha = 0.2, double beta = 0.5,
                    CallSite site = CallSite::current());

// ---- Softmax ------------------------------------------------------------------
// tf.nn.softmax and log_softmax along `axis`: exp(x) / sum(exp(x)) and its
// log, computed with the maximum taken out (no overflow). Floating dtypes.
Tensor softmax(const Tensor& logits, int64_t axis = -1, CallSite site = CallSite::current());
Tensor log_softmax(const Tensor& logits, int64_t axis = -1, CallSite site = CallSite::current());

// ---- Normalisation ----------------------------------------------------------
// tf.nn.batch_normalization: (x - mean) * scale / sqrt(variance +
// variance_epsilon) + offset, the parameters broadcast against x (offset
// and scale may be undefined: 0 and 1). Per-channel parameters ([channels]
// for the last axis, or x's rank with 1 but at the channel axis) run as one
// op, batch_norm; others as that formula.
Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance,
                           const Tensor& offset, const Tensor& scale, double variance_epsilon,
                           CallSite site = CallSite::current());
// tf.nn.moments: the mean and the (biased) variance of x over `axes`.
struct MomentsResult {
  Tensor mean;
  Tensor variance;
};
MomentsResult moments(const Tensor& x, std::vector<int64_t> axes, bool keepdims = false,
                      CallSite site = CallSite::current());
// tf.compat.v1.nn.fused_batch_norm: x normalised per channel (data_format
// "N...C": the last axis, "NC...": axis 1, of x of any rank from 2), scale
// and offset of [channels].
// Training: by the batch's mean and variance over every axis but the
// channels', returned with the variance corrected by n / (n - 1) as
// TensorFlow does (mean and variance are not read); inference
// (is_training false): by the given ones, returned as they are.
//   auto [y, batch_mean, batch_variance] = ag::fused_batch_norm(x, scale, offset);
struct FusedBatchNormResult {
  Tensor y;
  Tensor batch_mean;
  Tensor batch_variance;
};
FusedBatchNormResult fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                      const Tensor& mean = Tensor(),
                                      const Tensor& variance = Tensor(), double epsilon = 0.001,
                                      std::string_view data_format = "NHWC",
                                      bool is_training = true, CallSite site = CallSite::current());
// Keras's LayerNormalization (ONNX's LayerNormalization): x normalised over
// its axes from begin_axis on by their mean and variance, times gamma plus
// beta, both of those axes' shape (undefined: 1 and 0).
Tensor layer_normalization(const Tensor& x, const Tensor& gamma = Tensor(),
                           const Tensor& beta = Tensor(), int64_t begin_axis = -1,
                           double epsilon = 0.001, CallSite site = CallSite::current());

// ---- Convolution ------------------------------------------------------------
// A convolution's padding, as TensorFlow's `padding`: "SAME" (the output has
// ceil(input / stride) positions per spatial dim; an odd total padding puts
// the extra one at the end), "VALID" (none), or explicit (before, after)
// pairs, one per spatial dim.
struct Padding {
  Padding(const char* mode) : mode(mode) {}
  Padding(std::string_view mode) : mode(mode) {}
  // A template, so that a braced pair {2, 1} is never a std::string(2, '\1').
  template <std::same_as<std::string> S>
  Padding(const S& mode) : mode(mode) {}
  Padding(std::vector<std::pair<int64_t, int64_t>> pads)
      : mode("EXPLICIT"), pads(std::move(pads)) {}
  std::string mode;
  std::vector<std::pair<int64_t, int64_t>> pads;
};

// tf.nn.convolution: `input` [batch, spatial..., in_channels] (data_format
// "NWC", "NHWC", "NDHWC": the default) or [batch, in_channels, spatial...]
// ("NCW", "NCHW", "NCDHW"), with 1 to 3 spatial dims, by `filters`
// [kernel..., in_channels / groups, out_channels]. groups is in_channels over
// the filters' in-channel dim: 1 for a plain convolution, in_channels for a
// depthwise one. `strides` and `dilations` hold one value for every spatial
// dim, one per spatial dim, or one per dim of the input (1 at batch and
// channels). Floating dtypes; float32 runs on oneDNN's convolution where the
// build has it.
Tensor convolution(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides = {1},
                   Padding padding = "VALID", std::string_view data_format = "",
                   std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
// tf.nn.conv1d, conv2d and conv3d: convolution with 1, 2 and 3 spatial dims.
Tensor conv1d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format = "NWC",
              std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
Tensor conv2d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format = "NHWC",
              std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
Tensor conv3d(const Tensor& input, const Tensor& filters, std::vector<int64_t> strides,
              Padding padding, std::string_view data_format = "NDHWC",
              std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
// tf.nn.depthwise_conv2d: each input channel c convolved with its own
// `filter`[:, :, c, :] ([kh, kw, in_channels, multiplier]), giving output
// channels c * multiplier + m.
Tensor depthwise_conv2d(const Tensor& input, const Tensor& filter, std::vector<int64_t> strides,
                        Padding padding, std::string_view data_format = "NHWC",
                        std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
// tf.nn.conv_transpose and conv2d_transpose: the gradient of a convolution
// of an input of `output_shape` by `filters` [kernel..., output_channels /
// groups, in_channels], taken by that convolution's output (`input`).
Tensor conv_transpose(const Tensor& input, const Tensor& filters, std::vector<int64_t> output_shape,
                      std::vector<int64_t> strides, Padding padding = "SAME",
                      std::string_view data_format = "", std::vector<int64_t> dilations = {1},
                      CallSite site = CallSite::current());
Tensor conv2d_transpose(const Tensor& input, const Tensor& filters,
                        std::vector<int64_t> output_shape, std::vector<int64_t> strides,
                        Padding padding = "SAME", std::string_view data_format = "NHWC",
                        std::vector<int64_t> dilations = {1}, CallSite site = CallSite::current());
// The gradient of a convolution of `input` by a filter of `filter_sizes`,
// taken by the filter, where the output's gradient is `out_backprop`
// (tf.compat.v1.nn.conv2d_backprop_filter, of any spatial rank).
Tensor conv_backprop_filter(const Tensor& input, std::vector<int64_t> filter_sizes,
                            const Tensor& out_backprop, std::vector<int64_t> strides,
                            Padding padding, std::string_view data_format = "",
                            std::vector<int64_t> dilations = {1},
                            CallSite site = CallSite::current());

// ---- Pooling ------------------------------------------------------------------
// tf.nn.max_pool and avg_pool: per channel, the maximum or the mean of each
// window of `ksize` positions, moved by `strides` (each one value for every
// spatial dim, one per spatial dim, or one per dim of the input with 1 at
// batch and channels); the input, its 1 to 3 spatial dims and data_format as
// convolution's. Padding never counts: a maximum ignores it and a mean
// divides by the window's positions inside the input. Floating dtypes.
Tensor max_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                Padding padding, std::string_view data_format = "",
                CallSite site = CallSite::current());
Tensor avg_pool(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                Padding padding, std::string_view data_format = "",
                CallSite site = CallSite::current());
// tf.nn.max_pool2d and avg_pool2d: the same on 2 spatial dims.
Tensor max_pool2d(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                  Padding padding, std::string_view data_format = "NHWC",
                  CallSite site = CallSite::current());
Tensor avg_pool2d(const Tensor& input, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                  Padding padding, std::string_view data_format = "NHWC",
                  CallSite site = CallSite::current());
// tf.nn.pool: max_pool ("MAX") or avg_pool ("AVG") of windows whose
// positions are `dilations` apart.
Tensor pool(const Tensor& input, std::vector<int64_t> window_shape, std::string_view pooling_type,
            std::vector<int64_t> strides = {1}, Padding padding = "VALID",
            std::string_view data_format = "", std::vector<int64_t> dilations = {1},
            CallSite site = CallSite::current());
// The gradients (TensorFlow's raw ops MaxPoolGrad, MaxPoolGradGrad,
// AvgPoolGrad): max_pool_grad adds each output's gradient where its window
// has its maximum (the first, or the first NaN); max_pool_grad_grad reads a
// gradient of the input's shape there; avg_pool_grad spreads each output's
// gradient evenly over its window's positions inside an input of input_shape.
Tensor max_pool_grad(const Tensor& input, const Tensor& out_backprop, std::vector<int64_t> ksize,
                     std::vector<int64_t> strides, Padding padding,
                     std::string_view data_format = "", CallSite site = CallSite::current());
Tensor max_pool_grad_grad(const Tensor& input, const Tensor& grad, std::vector<int64_t> ksize,
                          std::vector<int64_t> strides, Padding padding,
                          std::string_view data_format = "", CallSite site = CallSite::current());
Tensor avg_pool_grad(std::vector<int64_t> input_shape, const Tensor& grad,
                     std::vector<int64_t> ksize, std::vector<int64_t> strides, Padding padding,
                     std::string_view data_format = "", CallSite site = CallSite::current());
// tf.pad: each dimension d grown by paddings[d].first elements in front and
// .second behind. mode (any case): "CONSTANT" fills them with
// constant_values, "REFLECT" mirrors the tensor without its edge element
// (at most size - 1 on a side), "SYMMETRIC" with it (at most size), "EDGE"
// repeats the edge element (numpy.pad's "edge").
Tensor pad(const Tensor& tensor, const std::vector<std::pair<int64_t, int64_t>>& paddings,
           std::string_view mode = "CONSTANT", double constant_values = 0,
           CallSite site = CallSite::current());

// ---- Layout and selection -------------------------------------------------------
// As TensorFlow's ops of the same names. Indices are int32 or int64; an
// index out of range is an InvalidArgumentError naming it, eagerly and when
// a graph runs.
// tf.tile: `input` repeated multiples[d] (>= 0) times along each dim d.
Tensor tile(const Tensor& input, std::vector<int64_t> multiples,
            CallSite site = CallSite::current());
// The same by multiples given as a tensor, as reshape's shape above.
template <std::same_as<Tensor> T>
Tensor tile(const Tensor& input, const T& multiples, CallSite site = CallSite::current()) {
  return detail::tile_to_tensor(input, multiples, site);
}
// tf.reverse: the order of the elements along each of `axis` (distinct,
// negative ones counted from the end) reversed.
Tensor reverse(const Tensor& tensor, std::vector<int64_t> axis,
               CallSite site = CallSite::current());
// tf.split: `value` cut along `axis` into num_or_size_splits equal parts, or
// into parts of the sizes given (one may be -1: the rest). A braced single
// size, split(x, {4}), is a count: write std::vector<int64_t>{4} for a size.
// The axis's length must be known while tracing. Each part is a slice.
std::vector<Tensor> split(const Tensor& value, int64_t num_or_size_splits, int64_t axis = 0,
                          CallSite site = CallSite::current());
std::vector<Tensor> split(const Tensor& value, std::vector<int64_t> size_splits, int64_t axis = 0,
                          CallSite site = CallSite::current());
// tf.repeat: each element along `axis` repeated `repeats` times, or
// repeats[i] times for element i; without an axis, of the flattened input.
// A gather at the repeated indices.
Tensor repeat(const Tensor& input, std::vector<int64_t> repeats,
              std::optional<int64_t> axis = std::nullopt, CallSite site = CallSite::current());
Tensor repeat(const Tensor& input, int64_t repeats, std::optional<int64_t> axis = std::nullopt,
              CallSite site = CallSite::current());
// tf.gather_nd: the last dim of `indices` holds k coordinates into the dims
// of `params` after its first batch_dims (which indices shares); each
// index tuple gives the slice of params' dims after those: the result has
// shape indices.shape[:-1] + params.shape[batch_dims + k:].
Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims = 0,
                 CallSite site = CallSite::current());
// tf.tensor_scatter_nd_update and _add: `tensor` with the slices that
// gather_nd(tensor, indices) would read replaced by (or added to) `updates`,
// of shape indices.shape[:-1] + tensor.shape[k:]. Of repeated indices, the
// last update wins (update) or all add up (add).
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                CallSite site = CallSite::current());
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite site = CallSite::current());
// tf.scatter_nd: tensor_scatter_nd_add into zeros of `shape`.
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, std::vector<int64_t> shape,
                  CallSite site = CallSite::current());
// tf.argsort and tf.sort along `axis`, direction "ASCENDING" or
// "DESCENDING"; numbers only. Equal values keep the order of their indices
// (every sort is stable: `stable` is accepted for TensorFlow's signature)
// and NaN sorts above every number. argsort's indices are int32.
Tensor argsort(const Tensor& values, int64_t axis = -1, std::string_view direction = "ASCENDING",
               bool stable = false, CallSite site = CallSite::current());
Tensor sort(const Tensor& values, int64_t axis = -1, std::string_view direction = "ASCENDING",
            CallSite site = CallSite::current());
// tf.math.top_k: the k largest entries along the last axis, largest first
// (equal ones by index; `sorted` is accepted for TensorFlow's signature),
// and their int32 indices: auto [values, indices] = ag::top_k(x, 2).
struct TopKResult {
  Tensor values;
  Tensor indices;
};
TopKResult top_k(const Tensor& input, int64_t k = 1, bool sorted = true,
                 CallSite site = CallSite::current());
// tf.math.cumprod: running products along `axis`, as cumsum's sums.
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
               CallSite site = CallSite::current());

// ---- Linear algebra and random dropout -----------------------------------------
// tf.einsum: ag::einsum("bij,bjk->bik", {a, b}). Subscripts are letters, one
// per dim; "..." stands for an operand's other dims (aligned from the last,
// broadcast); a letter repeated in one operand takes its diagonal; letters
// absent from the output are summed. Without "->" the output is "..." and the
// letters that appear once, alphabetically. Any number of operands of one
// numeric dtype, contracted two at a time from the left with transpose,
// reshape, matmul and reduce_sum (so it differentiates and exports through
// those). A mistake in the equation is an InvalidArgumentError naming the
// character and its position.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands,
              CallSite site = CallSite::current());
// tf.linspace: num (>= 1) evenly spaced values from start to stop, both
// included, along `axis` of the result (start and stop broadcast to the
// other dims); start and stop of one floating dtype. Differentiable in both.
Tensor linspace(const Tensor& start, const Tensor& stop, int64_t num, int64_t axis = 0,
                CallSite site = CallSite::current());
// tf.norm of a float tensor: `axis` empty treats x as one vector; one axis
// gives vector norms along it, two axes matrix norms over them. ord
// "euclidean" (2 for vectors; sqrt of the sum of squares for matrices),
// "fro" (matrices), 1, 2 (vectors), INFINITY (the largest |x| of a vector,
// the largest row sum of a matrix) or any p > 0 (vectors). At x = 0 the
// gradient of the euclidean norm is NaN, as TensorFlow's is.
Tensor norm(const Tensor& x, std::string_view ord = "euclidean", std::vector<int64_t> axis = {},
            bool keepdims = false, CallSite site = CallSite::current());
Tensor norm(const Tensor& x, double ord, std::vector<int64_t> axis = {}, bool keepdims = false,
            CallSite site = CallSite::current());
// tf.nn.dropout of a float tensor: each element kept with probability
// 1 - rate (rate in [0, 1)) and scaled by 1 / (1 - rate), else 0; with
// training false (Keras's inference), x itself. Seeded as the random ops
// are: with a seed, the first mask is the same eagerly and in a graph. The
// gradient is the output's gradient times the same mask.
Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed = std::nullopt,
               bool training = true, CallSite site = CallSite::current());

// tf.unique: the distinct values of a 1-D x in the order they first occur,
// and for each element its slot among them (out_idx int32 or int64):
// auto [y, idx] = ag::unique(x). Its length depends on the values.
struct UniqueResult {
  Tensor y;
  Tensor idx;
};
UniqueResult unique(const Tensor& x, DType out_idx = DType::int32,
                    CallSite site = CallSite::current());
// The int64 index of the first occurrence of each distinct slice of x along
// `axis` (of each distinct element of x flattened when no axis), in the
// order they first occur or, with `sorted`, in ascending order of the slices
// (lexicographic, as NumPy's unique): ONNX's Unique, whose outputs gather x
// there. Its length depends on the values.
Tensor unique_first_indices(const Tensor& x, std::optional<int64_t> axis = std::nullopt,
                            bool sorted = false, CallSite site = CallSite::current());
// tf.image.non_max_suppression: the int32 indices of at most
// max_output_size boxes [num_boxes, 4] ([y1, x1, y2, x2], either corner
// first), picked greedily by descending score (ties by index) among those
// scoring above score_threshold, skipping any whose IoU with a picked box is
// above iou_threshold. Its length depends on the values: unknown while tracing.
Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size,
                           double iou_threshold = 0.5,
                           double score_threshold = -std::numeric_limits<double>::infinity(),
                           CallSite site = CallSite::current());
// Linear quantization, as ONNX's QuantizeLinear and DequantizeLinear:
//   quantize_linear:   saturate(round_half_to_even(x / scale) + zero_point)
//                      in zero_point's dtype, uint8 or int8 (uint8 when
//                      zero_point is undefined); x float32 or int32
//   dequantize_linear: (x - zero_point) * scale in float32; x uint8, int8 or
//                      int32, zero_point of x's dtype (0 when undefined)
// scale (float32) and zero_point are scalars, or 1-D of
// x.shape[axis] entries: one per slice along `axis` (negative counts from the
// end).
Tensor quantize_linear(const Tensor& x, const Tensor& scale, const Tensor& zero_point = {},
                       int64_t axis = 1, CallSite site = CallSite::current());
Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor& zero_point = {},
                         int64_t axis = 1, CallSite site = CallSite::current());
// tf.boolean_mask: the slices of `tensor` where the bool `mask` (of rank k
// >= 1, matching tensor's dims axis .. axis + k - 1) is true, in row-major
// order: tensor's dims there become one of the count of trues, known when
// the graph runs. A gather, so it has a gradient.
Tensor boolean_mask(const Tensor& tensor, const Tensor& mask, int64_t axis = 0,
                    CallSite site = CallSite::current());

}  // namespace api

// tf.signal's windows of `window_length` samples, of a floating dtype:
// hann_window 0.5 - 0.5 cos(2 pi n / N) and hamming_window 0.54 - 0.46
// cos(2 pi n / N), N = window_length - 1, or window_length for a periodic
// window of even length (TensorFlow's rule); a window of length 1 is [1].
// Computed in the dtype, as TensorFlow computes them.
namespace signal {
Tensor hann_window(int64_t window_length, bool periodic = true, DType dtype = DType::float32,
                   CallSite site = CallSite::current());
Tensor hamming_window(int64_t window_length, bool periodic = true, DType dtype = DType::float32,
                      CallSite site = CallSite::current());
}  // namespace signal

namespace nn {
// tf.nn.local_response_normalization of a floating `input` [batch, height,
// width, depth]: input / (bias + alpha * s)^beta, s the sum of the squares
// of the 2 * depth_radius + 1 entries along depth centred on each one (those
// inside the input). depth must be known while tracing. Differentiable.
Tensor local_response_normalization(const Tensor& input, int64_t depth_radius = 5,
                                    double bias = 1.0, double alpha = 1.0, double beta = 0.5,
                                    CallSite site = CallSite::current());
}  // namespace nn

namespace linalg {
// tf.linalg.det: the determinants of the square matrices [..., M, M] of a
// floating `input`, [...]: Gaussian elimination with partial pivoting (an LU
// factorisation, as TensorFlow's). M must be known while tracing.
// Differentiable: d det / d input = det * input^-T where input is invertible.
Tensor det(const Tensor& input, CallSite site = CallSite::current());
}  // namespace linalg

// ---- Operators --------------------------------------------------------------
// The operators take an Operand (ag/tensor.h), which carries the call site.
#define AG_DECLARE_OPERATOR(op, fn)                 \
  inline Tensor operator op(Operand a, Operand b) { \
    return fn(a.tensor(), b.tensor(), a.site());    \
  }                                                 \
  template <Arithmetic S>                           \
  Tensor operator op(Operand a, S b) {              \
    return fn(a.tensor(), Scalar(b), a.site());     \
  }                                                 \
  template <Arithmetic S>                           \
  Tensor operator op(S a, Operand b) {              \
    return fn(Scalar(a), b.tensor(), b.site());     \
  }
AG_DECLARE_OPERATOR(+, add)
AG_DECLARE_OPERATOR(-, sub)
AG_DECLARE_OPERATOR(*, mul)
AG_DECLARE_OPERATOR(/, div)
AG_DECLARE_OPERATOR(%, mod)
AG_DECLARE_OPERATOR(==, equal)
AG_DECLARE_OPERATOR(!=, not_equal)
AG_DECLARE_OPERATOR(<, less)
AG_DECLARE_OPERATOR(<=, less_equal)
AG_DECLARE_OPERATOR(>, greater)
AG_DECLARE_OPERATOR(>=, greater_equal)
AG_DECLARE_OPERATOR(&, api::operators::operator_and)
AG_DECLARE_OPERATOR(|, api::operators::operator_or)
AG_DECLARE_OPERATOR(^, api::operators::operator_xor)
// Shifts of integers (tf.bitwise.left_shift, right_shift). `std::cout << t`
// still prints: a stream is not an Operand.
AG_DECLARE_OPERATOR(<<, left_shift)
AG_DECLARE_OPERATOR(>>, right_shift)
// `&&` and `||` are C++'s own: they short-circuit on scalar bool tensors
// through `explicit operator bool`. Elementwise: logical_and, logical_or.
#undef AG_DECLARE_OPERATOR
inline Tensor operator-(Operand x) {
  return neg(x.tensor(), x.site());
}
inline Tensor operator!(const Tensor& x) {
  return logical_not(x);
}
inline Tensor operator~(Operand x) {
  return api::operators::operator_invert(x.tensor(), x.site());
}
// Prefix ++ and -- step t by 1 in its dtype, as `t += 1`; postfix returns
// the value before.
inline Tensor& operator++(Tensor& t) {
  t = api::operators::operator_step(t, 1, "++");
  return t;
}
inline Tensor& operator--(Tensor& t) {
  t = api::operators::operator_step(t, -1, "--");
  return t;
}
inline Tensor operator++(Tensor& t, int) {
  Tensor before = t;
  t = api::operators::operator_step(t, 1, "++");
  return before;
}
inline Tensor operator--(Tensor& t, int) {
  Tensor before = t;
  t = api::operators::operator_step(t, -1, "--");
  return before;
}

// A C++ number on the right of a compound assignment, with its call site.
struct ScalarOperand {
  template <Arithmetic S>
  ScalarOperand(S v, CallSite site = CallSite::current()) : value(v), site(site) {}
  Scalar value;
  CallSite site;
};

// clang-format off: versions 14 and 19 space `operator op(Tensor& a` differently.
#define AG_DECLARE_COMPOUND(op, fn)                        \
  inline Tensor& operator op(Tensor& a, Operand b) {       \
    a = fn(a, b.tensor(), b.site());                       \
    return a;                                              \
  }                                                        \
  inline Tensor& operator op(Tensor& a, ScalarOperand b) { \
    a = fn(a, b.value, b.site);                            \
    return a;                                              \
  }
// clang-format on
AG_DECLARE_COMPOUND(+=, add)
AG_DECLARE_COMPOUND(-=, sub)
AG_DECLARE_COMPOUND(*=, mul)
AG_DECLARE_COMPOUND(/=, div)
AG_DECLARE_COMPOUND(%=, mod)
AG_DECLARE_COMPOUND(&=, api::operators::operator_and)
AG_DECLARE_COMPOUND(|=, api::operators::operator_or)
AG_DECLARE_COMPOUND(^=, api::operators::operator_xor)
AG_DECLARE_COMPOUND(<<=, left_shift)
AG_DECLARE_COMPOUND(>>=, right_shift)
#undef AG_DECLARE_COMPOUND

}  // namespace ag
