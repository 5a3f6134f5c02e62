// The public op functions of ag/ops.h, and the parts of ag/tensor.h that are
// ops (indexing, zeros_like/ones_like): argument handling and dtype promotion
// (ag/dtype.h), then one call into the registry. No arithmetic lives here.
#include <algorithm>
#include <string>

#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/random.h"

namespace ag::api {

using ops::Attrs;
using ops::OpId;

Tensor scalar_like(Scalar s, DType like) {
  DType dtype = promote_with_scalar(like, s.kind);
  return Tensor(Tensor::scalar_impl(s.f, s.i, dtype));
}

namespace {

Tensor cast_to(const Tensor& t, DType dtype, CallSite site) {
  if (t.dtype() == dtype) return t;
  Attrs attrs;
  attrs.dtype = dtype;
  return ops::apply(OpId::Cast, {t}, attrs, site);
}

// The string op that `+`, `==` and `!=` are on two string tensors, as in
// TensorFlow; any other op stays (its shape rule rejects strings).
OpId on_strings(OpId op) {
  switch (op) {
    case OpId::Add:
      return OpId::StringJoin;
    case OpId::Equal:
      return OpId::StringEqual;
    case OpId::NotEqual:
      return OpId::StringNotEqual;
    default:
      return op;
  }
}

// Rule 1: both operands to their common type.
Tensor binary(OpId op, const Tensor& a, const Tensor& b, CallSite site) {
  DType common = promote_types(a.dtype(), b.dtype());
  if (common == DType::string) return ops::apply(on_strings(op), {a, b}, {}, site);
  return ops::apply(op, {cast_to(a, common, site), cast_to(b, common, site)}, {}, site);
}

// Rule 2: the weak scalar takes the tensor's dtype (or lifts it).
Tensor binary(OpId op, const Tensor& a, Scalar b, CallSite site) {
  DType common = promote_with_scalar(a.dtype(), b.kind);
  return ops::apply(op, {cast_to(a, common, site), scalar_like(b, common)}, {}, site);
}

Tensor binary(OpId op, Scalar a, const Tensor& b, CallSite site) {
  DType common = promote_with_scalar(b.dtype(), a.kind);
  return ops::apply(op, {scalar_like(a, common), cast_to(b, common, site)}, {}, site);
}

// True division computes in floating point: integer and bool operands go to
// float64, as in TensorFlow.
Tensor to_floating(const Tensor& t, CallSite site) {
  return is_floating(t.dtype()) ? t : cast_to(t, DType::float64, site);
}

Tensor as_bool(const Tensor& t, const char* op) {
  if (t.dtype() != DType::bool_) {
    throw InvalidArgumentError(std::string(op) + ": expected a bool tensor, got " +
                               std::string(dtype_name(t.dtype())));
  }
  return t;
}

Attrs axes_attrs(std::vector<int64_t> axes, bool keepdims) {
  Attrs attrs;
  attrs.ints = std::move(axes);
  attrs.keepdims = keepdims;
  return attrs;
}

Attrs axis_attrs(int64_t axis) {
  Attrs attrs;
  attrs.axis = axis;
  return attrs;
}

Attrs ints_attrs(std::vector<int64_t> ints) {
  Attrs attrs;
  attrs.ints = std::move(ints);
  return attrs;
}

// The dtype ag::constant gives a C++ scalar of this kind.
DType weak_scalar_dtype(ScalarKind kind) {
  return kind == ScalarKind::floating  ? DType::float32
         : kind == ScalarKind::integer ? DType::int32
                                       : DType::bool_;
}

// A C++ scalar as a tensor of an op's fixed dtype, as TensorFlow converts a
// Python number: an integer converts to any numeric dtype, a floating
// scalar only to a floating one, a bool only to bool.
Tensor scalar_of_dtype(Scalar s, DType dtype, const char* op, const char* what, const char* whose) {
  bool fits = s.kind == ScalarKind::boolean   ? dtype == DType::bool_
              : s.kind == ScalarKind::integer ? dtype != DType::bool_
                                              : is_floating(dtype);
  if (!fits) {
    const char* kind = s.kind == ScalarKind::boolean   ? "bool"
                       : s.kind == ScalarKind::integer ? "integer"
                                                       : "floating-point";
    throw InvalidArgumentError(std::string(op) + ": " + what + " is a " + kind +
                               " scalar, which does not convert to " +
                               std::string(dtype_name(dtype)) + " (" + whose + ")");
  }
  return Tensor(Tensor::scalar_impl(s.f, s.i, dtype));
}

}  // namespace

// The public functions of the elementwise ops whose ag/ops.def row names
// their form (the api column). A row's `unary(neg)` reads as `unary, neg`,
// so that the form's definition gets the row's id too.
#define AG_API_FORM_unary(fn) unary, fn
#define AG_API_FORM_bool_unary(fn) bool_unary, fn
#define AG_API_FORM_binary(fn) binary, fn
#define AG_API_FORM_bool_binary(fn) bool_binary, fn
#define AG_API_FORM_custom(fn) custom, fn
#define AG_DEFINE_ROW(id, ...) AG_DEFINE_FORM(id, __VA_ARGS__)
#define AG_DEFINE_FORM(id, form, fn) AG_DEFINE_##form(id, fn)

#define AG_DEFINE_unary(id, fn)                 \
  Tensor fn(const Tensor& x, CallSite site) {   \
    return ops::apply(OpId::id, {x}, {}, site); \
  }
#define AG_DEFINE_bool_unary(id, fn)                          \
  Tensor fn(const Tensor& x, CallSite site) {                 \
    return ops::apply(OpId::id, {as_bool(x, #fn)}, {}, site); \
  }
#define AG_DEFINE_binary(id, fn)                               \
  Tensor fn(const Tensor& a, const Tensor& b, CallSite site) { \
    return binary(OpId::id, a, b, site);                       \
  }                                                            \
  Tensor fn(const Tensor& a, Scalar b, CallSite site) {        \
    return binary(OpId::id, a, b, site);                       \
  }                                                            \
  Tensor fn(Scalar a, const Tensor& b, CallSite site) {        \
    return binary(OpId::id, a, b, site);                       \
  }
#define AG_DEFINE_bool_binary(id, fn)                                          \
  Tensor fn(const Tensor& a, const Tensor& b, CallSite site) {                 \
    return ops::apply(OpId::id, {as_bool(a, #fn), as_bool(b, #fn)}, {}, site); \
  }                                                                            \
  Tensor fn(const Tensor& a, Scalar b, CallSite site) {                        \
    return fn(a, scalar_like(b, DType::bool_), site);                          \
  }                                                                            \
  Tensor fn(Scalar a, const Tensor& b, CallSite site) {                        \
    return fn(scalar_like(a, DType::bool_), b, site);                          \
  }
#define AG_DEFINE_custom(id, fn)

#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx)
#define AG_ELEMENTWISE_OP(id, name, arity, infer, kernel, functor, gradient, onnx, api) \
  AG_DEFINE_ROW(id, AG_API_FORM_##api)
#include "ag/ops.def"
#undef AG_ELEMENTWISE_OP
#undef AG_OP

Tensor pow(const Tensor& a, const Tensor& b, CallSite site) {
  return binary(OpId::Pow, a, b, site);
}
Tensor pow(Scalar a, const Tensor& b, CallSite site) {
  return binary(OpId::Pow, a, b, site);
}
// x**2 is the common case (squared errors): one multiply instead of a pow
// call per element. Exact, so eager and graph still agree bit for bit.
Tensor pow(const Tensor& a, Scalar b, CallSite site) {
  if (b.kind != ScalarKind::boolean && b.f == 2.0) {
    Tensor x = cast_to(a, promote_with_scalar(a.dtype(), b.kind), site);
    return ops::apply(OpId::Mul, {x, x}, {}, site);
  }
  return binary(OpId::Pow, a, b, site);
}

Tensor div(const Tensor& a, const Tensor& b, CallSite site) {
  DType common = promote_types(a.dtype(), b.dtype());
  return ops::apply(
      OpId::Div,
      {to_floating(cast_to(a, common, site), site), to_floating(cast_to(b, common, site), site)},
      {}, site);
}
Tensor div(const Tensor& a, Scalar b, CallSite site) {
  Tensor fa = to_floating(cast_to(a, promote_with_scalar(a.dtype(), b.kind), site), site);
  return ops::apply(OpId::Div, {fa, scalar_like(b, fa.dtype())}, {}, site);
}
Tensor div(Scalar a, const Tensor& b, CallSite site) {
  Tensor fb = to_floating(cast_to(b, promote_with_scalar(b.dtype(), a.kind), site), site);
  return ops::apply(OpId::Div, {scalar_like(a, fb.dtype()), fb}, {}, site);
}

namespace operators {
namespace {
// The logical op for operands that promote to bool, else the bitwise one
// (whose rule rejects floating operands).
OpId logical_or_bitwise(DType common, OpId logical, OpId bitwise) {
  return common == DType::bool_ ? logical : bitwise;
}
}  // namespace

#define AG_DEFINE_BOOL_OR_BITS(fn, logical, bitwise)                                     \
  Tensor fn(const Tensor& a, const Tensor& b, CallSite site) {                           \
    DType common = promote_types(a.dtype(), b.dtype());                                  \
    return binary(logical_or_bitwise(common, OpId::logical, OpId::bitwise), a, b, site); \
  }                                                                                      \
  Tensor fn(const Tensor& a, Scalar b, CallSite site) {                                  \
    DType common = promote_with_scalar(a.dtype(), b.kind);                               \
    return binary(logical_or_bitwise(common, OpId::logical, OpId::bitwise), a, b, site); \
  }                                                                                      \
  Tensor fn(Scalar a, const Tensor& b, CallSite site) {                                  \
    DType common = promote_with_scalar(b.dtype(), a.kind);                               \
    return binary(logical_or_bitwise(common, OpId::logical, OpId::bitwise), a, b, site); \
  }
AG_DEFINE_BOOL_OR_BITS(operator_and, LogicalAnd, BitwiseAnd)
AG_DEFINE_BOOL_OR_BITS(operator_or, LogicalOr, BitwiseOr)
AG_DEFINE_BOOL_OR_BITS(operator_xor, LogicalXor, BitwiseXor)
#undef AG_DEFINE_BOOL_OR_BITS

Tensor operator_invert(const Tensor& x, CallSite site) {
  return ops::apply(logical_or_bitwise(x.dtype(), OpId::LogicalNot, OpId::Invert), {x}, {}, site);
}

Tensor operator_step(const Tensor& t, int step, const char* op) {
  if (t.dtype() == DType::bool_) {
    throw InvalidArgumentError(std::string(op) +
                               " of a bool tensor: C++ has no ++ or -- of bool; write "
                               "ag::logical_not(t) or ag::cast(t, ag::int32) + 1");
  }
  return binary(OpId::Add, t, Scalar(step), {});
}
}  // namespace operators

Tensor square(const Tensor& x, CallSite site) {
  return mul(x, x, site);
}

Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, const Tensor& clip_value_max,
                     CallSite site) {
  return ops::apply(OpId::ClipByValue, {t, clip_value_min, clip_value_max}, {}, site);
}
namespace {
Tensor clip_bound(Scalar s, const Tensor& t, const char* what) {
  return scalar_of_dtype(s, t.dtype(), "clip_by_value", what, "t's dtype");
}
}  // namespace
Tensor clip_by_value(const Tensor& t, Scalar clip_value_min, Scalar clip_value_max, CallSite site) {
  return clip_by_value(t, clip_bound(clip_value_min, t, "clip_value_min"),
                       clip_bound(clip_value_max, t, "clip_value_max"), site);
}
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, Scalar clip_value_max,
                     CallSite site) {
  return clip_by_value(t, clip_value_min, clip_bound(clip_value_max, t, "clip_value_max"), site);
}
Tensor clip_by_value(const Tensor& t, Scalar clip_value_min, const Tensor& clip_value_max,
                     CallSite site) {
  return clip_by_value(t, clip_bound(clip_value_min, t, "clip_value_min"), clip_value_max, site);
}

Tensor shape(const Tensor& x, DType out_type, CallSite site) {
  Attrs attrs;
  attrs.dtype = out_type;
  return ops::apply(OpId::Shape, {x}, attrs, site);
}
Tensor size(const Tensor& x, DType out_type, CallSite site) {
  Attrs attrs;
  attrs.dtype = out_type;
  return ops::apply(OpId::Size, {x}, attrs, site);
}
Tensor rank(const Tensor& x, CallSite site) {
  return ops::apply(OpId::Rank, {x}, {}, site);
}

Tensor cast(const Tensor& x, DType dtype, CallSite site) {
  return cast_to(x, dtype, site);
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y, CallSite site) {
  DType common = promote_types(x.dtype(), y.dtype());
  return ops::apply(OpId::Where,
                    {as_bool(cond, "where"), cast_to(x, common, site), cast_to(y, common, site)},
                    {}, site);
}
Tensor where(const Tensor& cond, Scalar x, const Tensor& y, CallSite site) {
  DType common = promote_with_scalar(y.dtype(), x.kind);
  return where(cond, scalar_like(x, common), y, site);
}
Tensor where(const Tensor& cond, const Tensor& x, Scalar y, CallSite site) {
  DType common = promote_with_scalar(x.dtype(), y.kind);
  return where(cond, x, scalar_like(y, common), site);
}
// Two weak scalars: the dtype constant() would give the larger kind.
Tensor where(const Tensor& cond, Scalar x, Scalar y, CallSite site) {
  DType dtype = weak_scalar_dtype(std::max(x.kind, y.kind));
  return where(cond, scalar_like(x, dtype), scalar_like(y, dtype), site);
}

Tensor reduce_sum(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceSum, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_mean(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceMean, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_max(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceMax, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_min(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceMin, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_prod(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceProd, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_any(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceAny, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor reduce_all(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  return ops::apply(OpId::ReduceAll, {x}, axes_attrs(std::move(axes), keepdims), site);
}
Tensor argmax(const Tensor& x, int64_t axis, CallSite site) {
  return ops::apply(OpId::ArgMax, {x}, axis_attrs(axis), site);
}
Tensor argmin(const Tensor& x, int64_t axis, CallSite site) {
  return ops::apply(OpId::ArgMin, {x}, axis_attrs(axis), site);
}

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse, CallSite site) {
  Attrs attrs = axis_attrs(axis);
  attrs.ints = {exclusive, reverse};
  return ops::apply(OpId::Cumsum, {x}, attrs, site);
}

Tensor reduce_sum_to(const Tensor& x, const Tensor& like, CallSite site) {
  return ops::apply(OpId::ReduceSumTo, {x, like}, {}, site);
}

Tensor matmul(const Tensor& a, const Tensor& b, CallSite site) {
  DType common = promote_types(a.dtype(), b.dtype());
  return ops::apply(OpId::MatMul, {cast_to(a, common, site), cast_to(b, common, site)}, {}, site);
}
Tensor transpose(const Tensor& x, std::vector<int64_t> perm, CallSite site) {
  return ops::apply(OpId::Transpose, {x}, ints_attrs(std::move(perm)), site);
}
Tensor reshape(const Tensor& x, std::vector<int64_t> shape, CallSite site) {
  return ops::apply(OpId::Reshape, {x}, ints_attrs(std::move(shape)), site);
}
Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape, CallSite site) {
  return ops::apply(OpId::BroadcastTo, {x}, ints_attrs(std::move(shape)), site);
}
Tensor expand_dims(const Tensor& x, int64_t axis, CallSite site) {
  return ops::apply(OpId::ExpandDims, {x}, axis_attrs(axis), site);
}
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes, CallSite site) {
  return ops::apply(OpId::Squeeze, {x}, ints_attrs(std::move(axes)), site);
}

namespace {
std::vector<Tensor> promote_all(const std::vector<Tensor>& xs, const char* op, CallSite site) {
  if (xs.empty()) throw InvalidArgumentError(std::string(op) + ": needs at least one tensor");
  DType common = xs[0].dtype();
  for (const Tensor& t : xs) common = promote_types(common, t.dtype());
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& t : xs) out.push_back(cast_to(t, common, site));
  return out;
}
}  // namespace

Tensor concat(const std::vector<Tensor>& xs, int64_t axis, CallSite site) {
  return ops::apply(OpId::Concat, promote_all(xs, "concat", site), axis_attrs(axis), site);
}
Tensor stack(const std::vector<Tensor>& xs, int64_t axis, CallSite site) {
  return ops::apply(OpId::Stack, promote_all(xs, "stack", site), axis_attrs(axis), site);
}
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, CallSite site) {
  return ops::apply(OpId::Gather, {params, indices}, axis_attrs(axis), site);
}
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids,
                            const Tensor& num_segments, CallSite site) {
  return ops::apply(OpId::UnsortedSegmentSum, {data, segment_ids, num_segments}, {}, site);
}
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size,
             CallSite site) {
  if (begin.size() != size.size()) {
    throw InvalidArgumentError("slice: begin has " + std::to_string(begin.size()) +
                               " entries but size has " + std::to_string(size.size()));
  }
  std::vector<int64_t> ints = std::move(begin);
  ints.insert(ints.end(), size.begin(), size.end());
  return ops::apply(OpId::Slice, {x}, ints_attrs(std::move(ints)), site);
}

Tensor one_hot(const Tensor& indices, int64_t depth, std::optional<Scalar> on_value,
               std::optional<Scalar> off_value, int64_t axis, std::optional<DType> dtype,
               CallSite site) {
  if (!dtype) {
    if (on_value && off_value && on_value->kind != off_value->kind) {
      throw InvalidArgumentError("one_hot: on_value and off_value must have the same dtype, got " +
                                 std::string(dtype_name(weak_scalar_dtype(on_value->kind))) +
                                 " and " +
                                 std::string(dtype_name(weak_scalar_dtype(off_value->kind))));
    }
    dtype = on_value    ? weak_scalar_dtype(on_value->kind)
            : off_value ? weak_scalar_dtype(off_value->kind)
                        : DType::float32;
  }
  auto value = [&](const std::optional<Scalar>& s, int64_t otherwise, const char* what) {
    if (s) return scalar_of_dtype(*s, *dtype, "one_hot", what, "the dtype of the result");
    return Tensor(Tensor::scalar_impl(double(otherwise), otherwise, *dtype));
  };
  Attrs attrs = axis_attrs(axis);
  attrs.ints = {depth};
  return ops::apply(OpId::OneHot,
                    {indices, value(on_value, 1, "on_value"), value(off_value, 0, "off_value")},
                    attrs, site);
}

}  // namespace ag::api

namespace ag {
// Indexing is a gather on the first axis.
Tensor Tensor::operator[](Index i) const {
  int64_t index = i.value;
  const Shape& s = shape();
  if (s.rank() == 0) throw InvalidArgumentError("cannot index a scalar tensor");
  if (s[0] != kUnknownDim) {
    if (index < -s[0] || index >= s[0]) {
      throw OutOfRangeError("index " + std::to_string(index) +
                            " is out of range for a first axis of size " + std::to_string(s[0]));
    }
    if (index < 0) index += s[0];
  }
  return gather(*this, Tensor(index), 0, i.site);
}

Tensor Tensor::operator[](Operand index) const {
  return gather(*this, index.tensor(), 0, index.site());
}
}  // namespace ag

namespace ag::api {

// A symbolic tensor's shape may be known only at run time, so its *_like
// values are staged: a bool mask of its shape (exact even for NaN), cast.
// Zeros of a static shape are the zeros op (a constant when small).
Tensor zeros_like(const Tensor& t, CallSite site) {
  if (t.is_symbolic() && t.shape().is_fully_defined())
    return ops::zeros_op(t.shape(), t.dtype(), site);
  if (t.is_symbolic())
    return cast(logical_and(cast(t, DType::bool_, site), false, site), t.dtype(), site);
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t, CallSite site) {
  // A one of t's dtype repeated: no read of t (a constant when small).
  if (t.is_symbolic() && t.shape().is_fully_defined())
    return broadcast_to(ones(Shape{}, t.dtype()), {t.shape().begin(), t.shape().end()}, site);
  if (t.is_symbolic())
    return cast(logical_or(cast(t, DType::bool_, site), true, site), t.dtype(), site);
  return ones(t.shape(), t.dtype());
}

Tensor range(const Tensor& start, const Tensor& limit, const Tensor& delta, CallSite site) {
  DType common = promote_types(promote_types(start.dtype(), limit.dtype()), delta.dtype());
  return ops::apply(
      OpId::Range,
      {cast_to(start, common, site), cast_to(limit, common, site), cast_to(delta, common, site)},
      {}, site);
}
Tensor range(const Tensor& limit, CallSite site) {
  return range(Tensor(Tensor::scalar_impl(0, 0, limit.dtype())), limit, Tensor(int32_t{1}), site);
}

namespace {
Tensor random(OpId op, Shape shape, double a, double b, DType dtype, std::optional<uint64_t> seed,
              CallSite site) {
  if (!shape.is_fully_defined()) {
    throw InvalidArgumentError(std::string(ops::op_def(op).name) + ": shape " + shape.to_string() +
                               " must be fully defined");
  }
  Attrs attrs;
  attrs.ints.assign(shape.begin(), shape.end());
  attrs.lo = a;
  attrs.hi = b;
  attrs.dtype = dtype;
  attrs.seed = seed ? *seed : ops::next_auto_seed();
  return ops::apply(op, {}, attrs, site);
}
}  // namespace

Tensor random_uniform(Shape shape, double minval, double maxval, DType dtype,
                      std::optional<uint64_t> seed, CallSite site) {
  return random(OpId::RandomUniform, shape, minval, maxval, dtype, seed, site);
}
Tensor random_normal(Shape shape, double mean, double stddev, DType dtype,
                     std::optional<uint64_t> seed, CallSite site) {
  return random(OpId::RandomNormal, shape, mean, stddev, dtype, seed, site);
}

}  // namespace ag::api
