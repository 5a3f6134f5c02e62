// The helpers of gradient_helpers.h, and the not_differentiable mark.
#include <algorithm>

#include "ops/gradient_helpers.h"

namespace ag::ops {

std::vector<Tensor> not_differentiable(const GradContext& ctx) {
  throw InternalError(std::string(ctx.op_name) + ": has no gradient; the tape drops it");
}

std::string site_string(CallSite site) {
  if (site.line() == 0) return "";
  return std::string(site.file_name()) + ":" + std::to_string(site.line());
}

void throw_gradient_error(const GradContext& ctx, const std::string& why) {
  std::string where = site_string(ctx.site);
  throw UnimplementedError("gradient of " + std::string(ctx.op_name) +
                           (where.empty() ? "" : " (defined at " + where + ")") + ": " + why);
}

Tensor unbroadcast(const GradContext& ctx, const Tensor& grad, size_t input) {
  const Tensor& x = ctx.inputs[input];
  const Shape& in = x.shape();
  const Shape& out = grad.shape();
  int lead = out.rank() - in.rank();
  std::vector<int64_t> axes;
  for (int d = 0; d < out.rank(); ++d) {
    int k = d - lead;
    if (k < 0) {
      axes.push_back(d);
    } else if (in[k] == 1) {
      if (out[d] != 1) axes.push_back(d);
    } else if (in[k] == kUnknownDim && out[d] != 1) {
      // Broadcast along d happened iff this dim is 1 when the graph runs
      // and the output's is not: only the run can tell.
      return api::reduce_sum_to(grad, x, ctx.site);
    }
  }
  if (axes.empty()) return grad;
  Tensor summed = api::reduce_sum(grad, axes, /*keepdims=*/true, ctx.site);
  if (lead == 0) return summed;
  std::vector<int64_t> leading(static_cast<size_t>(lead));
  for (int d = 0; d < lead; ++d) leading[size_t(d)] = d;
  return api::squeeze(summed, leading, ctx.site);
}

std::vector<int64_t> reduced_axes(int rank, const Attrs& attrs) {
  std::vector<int64_t> axes;
  if (attrs.ints.empty()) {
    for (int d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  for (int64_t a : attrs.ints) axes.push_back(a < 0 ? a + rank : a);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

Tensor with_reduced_axes(const Tensor& t, int rank, const Attrs& attrs, CallSite site) {
  if (attrs.keepdims) return t;
  Tensor out = t;
  for (int64_t axis : reduced_axes(rank, attrs)) out = api::expand_dims(out, axis, site);
  return out;
}

Tensor ones_of(const Tensor& x, CallSite site) {
  if (x.shape().is_fully_defined()) return api::ones(x.shape(), x.dtype());
  return api::ones_like(x, site);
}

}  // namespace ag::ops
