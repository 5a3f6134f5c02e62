// Local response normalisation (tf.nn.local_response_normalization, ONNX's
// LRN): the squares padded with zeros along the axis and summed over the
// window's shifts, then x / (bias + alpha * sum)^beta; of pad, slice, add,
// mul and pow, so it differentiates and exports through those.
#include <string>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/composed.h"

namespace ag::ops {

Tensor local_response_norm(const Tensor& x, int64_t axis, int64_t before, int64_t after,
                           double bias, double alpha, double beta, CallSite site) {
  const int64_t length = x.shape()[int(axis)];
  if (length == kUnknownDim) {
    throw InvalidArgumentError("local_response_normalization: axis " + std::to_string(axis) +
                               " of the input (shape " + x.shape().to_list_string() +
                               ") must have a length known while tracing");
  }
  std::vector<std::pair<int64_t, int64_t>> paddings(size_t(x.rank()), {0, 0});
  paddings[size_t(axis)] = {before, after};
  const Tensor padded = api::pad(x * x, paddings, "CONSTANT", 0, site);
  std::vector<int64_t> begin(size_t(x.rank()), 0), size(size_t(x.rank()), -1);
  size[size_t(axis)] = length;
  Tensor sum = api::slice(padded, begin, size, site);
  for (int64_t k = 1; k <= before + after; ++k) {
    begin[size_t(axis)] = k;
    sum = api::add(sum, api::slice(padded, begin, size, site), site);
  }
  auto scalar = [&](double v) {
    return api::cast(api::fill({}, v, DType::float64), x.dtype(), site);
  };
  return api::div(x, api::pow(scalar(bias) + scalar(alpha) * sum, scalar(beta), site), site);
}

}  // namespace ag::ops

namespace ag::nn {

Tensor local_response_normalization(const Tensor& input, int64_t depth_radius, double bias,
                                    double alpha, double beta, CallSite site) {
  if (input.rank() != 4) {
    throw InvalidArgumentError(
        "local_response_normalization: input must be 4-D [batch, height, width, depth], got "
        "shape " +
        input.shape().to_list_string());
  }
  if (!is_floating(input.dtype())) {
    throw InvalidArgumentError("local_response_normalization: input must be floating, got " +
                               std::string(dtype_name(input.dtype())));
  }
  if (depth_radius < 0) {
    throw InvalidArgumentError(
        "local_response_normalization: depth_radius must not be "
        "negative, got " +
        std::to_string(depth_radius));
  }
  return ops::local_response_norm(input, 3, depth_radius, depth_radius, bias, alpha, beta, site);
}

}  // namespace ag::nn
