// Importers of ONNX's reductions. keepdims defaults to 1 in ONNX. The axes are
// an attribute, or (ReduceSum from opset 13) an optional input; no axes
// reduce over every axis unless noop_with_empty_axes asks for the identity.
// ReduceL1/L2/LogSum/LogSumExp/SumSquare are compositions of ours;
// ArgMax/ArgMin with select_last_index=1 run on the reversed axis.
#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

struct Reduction {
  std::vector<int64_t> axes;
  bool keepdims;
  bool identity;  // empty axes with noop_with_empty_axes
};

Reduction reduction_of(NodeContext& ctx) {
  Reduction r;
  if (ctx.has_input(1))
    r.axes = ctx.constant_ints(1, "axes");
  else if (ctx.has_attr("axes"))
    r.axes = ctx.attr_ints("axes");
  const int64_t rank = ctx.input(0).rank();
  for (int64_t& axis : r.axes) axis = ctx.normalize_axis(axis, rank, "axis");
  r.keepdims = ctx.attr_int("keepdims", 1) != 0;
  r.identity = r.axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  return r;
}

template <class Reduce, class Before, class After>
std::vector<Tensor> reduce(NodeContext& ctx, Reduce f, Before before, After after) {
  Reduction r = reduction_of(ctx);
  if (r.identity) return {ctx.input(0)};
  return {after(f(before(ctx.input(0)), r.axes, r.keepdims))};
}

auto same = [](const Tensor& x) { return x; };

template <class Reduce>
std::vector<Tensor> reduce(NodeContext& ctx, Reduce f) {
  return reduce(ctx, f, same, same);
}

#define AG_REDUCER(op)                                                   \
  [](const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) { \
    return op(x, axes, keepdims);                                        \
  }

// The index along the axis of the first (or, with select_last_index, the
// last) extreme element.
template <class Arg>
std::vector<Tensor> arg_reduce(NodeContext& ctx, Arg f) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), x.rank(), "axis");
  Tensor index;
  if (ctx.attr_int("select_last_index", 0) != 0) {
    const int64_t n = ctx.static_shape(0, "select_last_index")[int(axis)];
    Tensor reversed =
        gather(x, range(Tensor(n - 1), Tensor(int64_t{-1}), Tensor(int64_t{-1})), axis);
    index = (n - 1) - f(reversed, axis);
  } else {
    index = f(x, axis);
  }
  if (ctx.attr_int("keepdims", 1) != 0) index = expand_dims(index, axis);
  return {index};
}

}  // namespace

std::vector<Tensor> import_reduce_sum(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_sum));
}
std::vector<Tensor> import_reduce_mean(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_mean));
}
std::vector<Tensor> import_reduce_max(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_max));
}
std::vector<Tensor> import_reduce_min(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_min));
}
std::vector<Tensor> import_reduce_prod(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_prod));
}
std::vector<Tensor> import_reduce_l1(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_sum), [](const Tensor& x) { return abs(x); }, same);
}
std::vector<Tensor> import_reduce_l2(NodeContext& ctx) {
  return reduce(
      ctx, AG_REDUCER(reduce_sum), [](const Tensor& x) { return x * x; },
      [](const Tensor& s) {
        return is_floating(s.dtype()) ? sqrt(s) : cast(sqrt(cast(s, float64)), s.dtype());
      });
}
std::vector<Tensor> import_reduce_sum_square(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_sum), [](const Tensor& x) { return x * x; }, same);
}
std::vector<Tensor> import_reduce_log_sum(NodeContext& ctx) {
  return reduce(ctx, AG_REDUCER(reduce_sum), same, [](const Tensor& s) { return log(s); });
}
std::vector<Tensor> import_reduce_log_sum_exp(NodeContext& ctx) {
  return reduce(
      ctx, AG_REDUCER(reduce_sum), [](const Tensor& x) { return exp(x); },
      [](const Tensor& s) { return log(s); });
}

std::vector<Tensor> import_cumsum(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.constant_ints(1, "axis").at(0), x.rank(), "axis");
  return {cumsum(x, axis, ctx.attr_int("exclusive", 0) != 0, ctx.attr_int("reverse", 0) != 0)};
}

// 1 at the first largest element along the axis, 0 elsewhere; before opset
// 13 over the second dim of the input flattened to 2-D at `axis`.
std::vector<Tensor> import_hardmax(NodeContext& ctx) {
  ctx.static_shape(0, "Hardmax");  // the one-hot depth
  return along_axis(ctx, [](const Tensor& x, int64_t axis) {
    return one_hot(argmax(x, axis), x.shape()[int(axis)], 1, 0, axis, x.dtype());
  });
}

std::vector<Tensor> import_argmax(NodeContext& ctx) {
  return arg_reduce(ctx, [](const Tensor& x, int64_t axis) { return argmax(x, axis); });
}
std::vector<Tensor> import_argmin(NodeContext& ctx) {
  return arg_reduce(ctx, [](const Tensor& x, int64_t axis) { return argmin(x, axis); });
}

}  // namespace ag::onnx_io
