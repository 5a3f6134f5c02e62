// quantize_linear and dequantize_linear (ONNX's QuantizeLinear and
// DequantizeLinear; tf.quantization.quantize's SCALED mode with a zero
// point): a float tensor to uint8 or int8 and back through a scale and a zero
// point per tensor or per slice along an axis. Inputs x, scale, zero point;
// attrs.axis. Both take uint8 and int8 as they are (kStorageDtypes).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

bool is_quantized(DType d) {
  return d == DType::uint8 || d == DType::int8;
}

std::string name_of(DType d) {
  return std::string(dtype_name(d));
}

// The scale's and zero point's shape: one element (per tensor) or 1-D of
// x's dim at the axis. Returns whether it is per axis.
bool check_scale(const InferContext& ctx, const Shape& x, const Shape& scale,
                 const Shape& zero_point) {
  const std::string_view op = ctx.op_name;
  if (scale.has_unknown_rank() || zero_point.has_unknown_rank()) {
    select::fail(op, "scale and zero_point must have a rank known while tracing");
  }
  if (scale != zero_point) {
    select::fail(op, "scale and zero_point must have one shape; got " + scale.to_list_string() +
                         " and " + zero_point.to_list_string());
  }
  if (scale.rank() == 0 || (scale.rank() == 1 && scale[0] == 1)) return false;
  if (scale.rank() != 1) {
    select::fail(op, "scale must be a scalar or 1-D (one entry per slice along axis); got shape " +
                         scale.to_list_string());
  }
  if (x.has_unknown_rank()) return true;
  const int axis = select::normalize_axis(op, ctx.attrs.axis, x);
  if (x[axis] != kUnknownDim && scale[0] != kUnknownDim && scale[0] != x[axis]) {
    select::fail(op, "a per-axis scale has one entry per slice along axis " + std::to_string(axis) +
                         " (" + std::to_string(x[axis]) + "); got " + std::to_string(scale[0]));
  }
  return true;
}

void require_scale_dtype(const InferContext& ctx, DType scale) {
  if (scale != DType::float32) {
    select::fail(ctx.op_name, "scale must be float32 (ONNX's type); got " + name_of(scale) +
                                  "; cast it with ag::cast(scale, ag::float32)");
  }
}

// Element i's slice along the axis (0 per tensor): x viewed as [outer, n, inner].
struct Channels {
  int64_t n = 1, inner = 1;
  int64_t of(int64_t i) const { return n == 1 ? 0 : (i / inner) % n; }
};

Channels channels(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  Channels c;
  if (ctx.inputs[1].shape->num_elements() == 1) return c;
  const int axis = select::normalize_axis(ctx.op_name, ctx.attrs->axis, x);
  c.n = x[axis];
  c.inner = select::dims_product(x, axis + 1, x.rank());
  return c;
}

int32_t load_int(const void* p, DType d, int64_t i) {
  switch (d) {
    case DType::uint8:
      return static_cast<const uint8_t*>(p)[i];
    case DType::int8:
      return static_cast<const int8_t*>(p)[i];
    default:
      return static_cast<const int32_t*>(p)[i];
  }
}

}  // namespace

ValueType infer_quantize_linear(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (x.dtype != DType::float32 && x.dtype != DType::int32) {
    select::fail(ctx.op_name, "x must be float32 or int32 (ONNX's types); got " + name_of(x.dtype) +
                                  "; cast it with ag::cast(x, ag::float32)");
  }
  require_scale_dtype(ctx, ctx.inputs[1].dtype);
  if (!is_quantized(ctx.inputs[2].dtype)) {
    select::fail(ctx.op_name, "zero_point gives the output's dtype, uint8 or int8; got " +
                                  name_of(ctx.inputs[2].dtype));
  }
  check_scale(ctx, x.shape, ctx.inputs[1].shape, ctx.inputs[2].shape);
  return {ctx.inputs[2].dtype, x.shape};
}

ValueType infer_dequantize_linear(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (!is_quantized(x.dtype) && x.dtype != DType::int32) {
    select::fail(ctx.op_name, "x must be uint8, int8 or int32; got " + name_of(x.dtype));
  }
  require_scale_dtype(ctx, ctx.inputs[1].dtype);
  if (ctx.inputs[2].dtype != x.dtype) {
    select::fail(ctx.op_name, "zero_point must have x's dtype, " + name_of(x.dtype) + "; got " +
                                  name_of(ctx.inputs[2].dtype));
  }
  check_scale(ctx, x.shape, ctx.inputs[1].shape, ctx.inputs[2].shape);
  return {ctx.inputs[1].dtype, x.shape};
}

// The quotient in the scale's dtype, as ONNX's reference computes it, rounded
// half to even (the default rounding mode), then saturated.
void kernel_quantize_linear(const KernelContext& ctx) {
  const Channels c = channels(ctx);
  const int64_t n = ctx.out_shape->num_elements();
  const bool is_uint8 = ctx.out_dtype == DType::uint8;
  const double lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
  const void* zp = ctx.inputs[2].data;
  visit_dtype(ctx.inputs[1].dtype, [&](auto sv) {
    using S = decltype(sv);
    if constexpr (std::is_floating_point_v<S>) {
      const S* scale = static_cast<const S*>(ctx.inputs[1].data);
      visit_dtype(ctx.inputs[0].dtype, [&](auto xv) {
        using X = decltype(xv);
        const X* x = static_cast<const X*>(ctx.inputs[0].data);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t k = c.of(i);
          const double q = double(std::nearbyint(S(x[i]) / scale[k])) +
                           double(load_int(zp, ctx.inputs[2].dtype, k));
          const double v = std::isnan(q) ? 0.0 : std::clamp(q, lo, hi);
          if (is_uint8) {
            static_cast<uint8_t*>(ctx.out)[i] = uint8_t(v);
          } else {
            static_cast<int8_t*>(ctx.out)[i] = int8_t(v);
          }
        }
      });
    }
  });
}

void kernel_dequantize_linear(const KernelContext& ctx) {
  const Channels c = channels(ctx);
  const int64_t n = ctx.out_shape->num_elements();
  const DType x_dtype = ctx.inputs[0].dtype;
  visit_dtype(ctx.out_dtype, [&](auto sv) {
    using S = decltype(sv);
    if constexpr (std::is_floating_point_v<S>) {
      const S* scale = static_cast<const S*>(ctx.inputs[1].data);
      S* out = static_cast<S*>(ctx.out);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t k = c.of(i);
        out[i] = (S(load_int(ctx.inputs[0].data, x_dtype, i)) -
                  S(load_int(ctx.inputs[2].data, x_dtype, k))) *
                 scale[k];
      }
    }
  });
}

}  // namespace ag::ops

namespace ag::api {

namespace {
ops::Attrs axis_attrs(int64_t axis) {
  ops::Attrs attrs;
  attrs.axis = axis;
  return attrs;
}
}  // namespace

Tensor quantize_linear(const Tensor& x, const Tensor& scale, const Tensor& zero_point, int64_t axis,
                       CallSite site) {
  const Tensor zp = zero_point.defined() ? zero_point : cast(zeros_like(scale, site), uint8, site);
  return ops::apply(ops::OpId::QuantizeLinear, {x, scale, zp}, axis_attrs(axis), site);
}

Tensor dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor& zero_point,
                         int64_t axis, CallSite site) {
  const Tensor zp =
      zero_point.defined() ? zero_point : cast(zeros_like(scale, site), x.dtype(), site);
  return ops::apply(ops::OpId::DequantizeLinear, {x, scale, zp}, axis_attrs(axis), site);
}

}  // namespace ag::api
