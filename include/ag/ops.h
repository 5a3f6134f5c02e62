// Tensor operations. Each one is declared once in runtime/ops/ops.def with its
// shape/dtype rule and its kernel; eager mode and the graph executor call the
// same kernel. Binary ops broadcast as NumPy does and promote dtypes as
// described in ag/dtype.h. C++ scalars are "weak" (`int32 tensor * 2` stays
// int32).
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
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
AG_DECLARE_BINARY(add)
AG_DECLARE_BINARY(sub)
AG_DECLARE_BINARY(mul)
// True division: integer operands are cast to float64, as TensorFlow's `/`.
AG_DECLARE_BINARY(div)
// Floor division and the matching modulo (the result takes the divisor's
// sign). Integer division by zero is an InvalidArgumentError.
AG_DECLARE_BINARY(floordiv)
AG_DECLARE_BINARY(mod)
AG_DECLARE_BINARY(pow)
AG_DECLARE_BINARY(maximum)
AG_DECLARE_BINARY(minimum)
AG_DECLARE_BINARY(equal)
AG_DECLARE_BINARY(not_equal)
AG_DECLARE_BINARY(less)
AG_DECLARE_BINARY(less_equal)
AG_DECLARE_BINARY(greater)
AG_DECLARE_BINARY(greater_equal)
AG_DECLARE_BINARY(logical_and)
AG_DECLARE_BINARY(logical_or)
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

Tensor neg(const Tensor& x, CallSite site = CallSite::current());
inline Tensor negative(const Tensor& x, CallSite site = CallSite::current()) {
  return neg(x, site);
}
Tensor abs(const Tensor& x, CallSite site = CallSite::current());
Tensor exp(const Tensor& x, CallSite site = CallSite::current());
Tensor log(const Tensor& x, CallSite site = CallSite::current());
Tensor sqrt(const Tensor& x, CallSite site = CallSite::current());
Tensor tanh(const Tensor& x, CallSite site = CallSite::current());
Tensor sigmoid(const Tensor& x, CallSite site = CallSite::current());
Tensor relu(const Tensor& x, CallSite site = CallSite::current());
Tensor square(const Tensor& x, CallSite site = CallSite::current());
Tensor logical_not(const Tensor& x, CallSite site = CallSite::current());
Tensor cast(const Tensor& x, DType dtype, CallSite site = CallSite::current());
Tensor identity(const Tensor& x, CallSite site = CallSite::current());
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
// [..., m, k] x [..., k, n] -> [..., m, n]; batch dims must match.
Tensor matmul(const Tensor& a, const Tensor& b, CallSite site = CallSite::current());
// `perm` empty reverses the axes.
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {},
                 CallSite site = CallSite::current());
// One dim may be -1 (inferred).
Tensor reshape(const Tensor& x, std::vector<int64_t> shape, CallSite site = CallSite::current());
// x repeated to `shape` along the dims where it has 1 or none (aligned from
// the last), as tf.broadcast_to; `shape` has no unknown dim.
Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape,
                    CallSite site = CallSite::current());
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
// Half to even (banker's rounding: 0.5 -> 0, 1.5 -> 2); integers pass through.
Tensor round(const Tensor& x, CallSite site = CallSite::current());
// float32 and float64 only, as tf.math.floor and tf.math.ceil.
Tensor floor(const Tensor& x, CallSite site = CallSite::current());
Tensor ceil(const Tensor& x, CallSite site = CallSite::current());
// -1, 0 or 1 in x's dtype; NaN stays NaN.
Tensor sign(const Tensor& x, CallSite site = CallSite::current());
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
}  // namespace api

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
// `&&` and `||` are C++'s own: they short-circuit on scalar bool tensors
// through `explicit operator bool`. Elementwise: logical_and, logical_or.
#undef AG_DECLARE_OPERATOR
inline Tensor operator-(Operand x) {
  return neg(x.tensor(), x.site());
}
inline Tensor operator!(const Tensor& x) {
  return logical_not(x);
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
#undef AG_DECLARE_COMPOUND

}  // namespace ag
