// linspace (tf.linspace): num evenly spaced values from start to stop, both
// included, as TensorFlow computes them: start + i * (stop - start) / (num - 1)
// for i < num - 1, then stop itself. A composition of range, mul, add and
// concat, so it is differentiable in start and stop and exports to ONNX as
// those ops; the range is a constant when traced.
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::api {

Tensor linspace(const Tensor& start, const Tensor& stop, int64_t num, int64_t axis, CallSite site) {
  if (!is_floating(start.dtype()) || start.dtype() != stop.dtype()) {
    throw InvalidArgumentError(
        "linspace: start and stop must be of one floating dtype (float32 or "
        "float64), got " +
        std::string(dtype_name(start.dtype())) + " and " + std::string(dtype_name(stop.dtype())));
  }
  if (num < 1) {
    throw InvalidArgumentError("linspace: num must be at least 1, got " + std::to_string(num));
  }
  // start and stop broadcast to one shape; the values run along `axis` of the result.
  Tensor first = start, last = stop;
  if (start.shape() != stop.shape()) {
    const Tensor zero = zeros_like(add(start, stop, site), site);
    first = add(start, zero, site);
    last = add(stop, zero, site);
  }
  const int64_t rank = first.rank() + 1;
  if (axis < -rank || axis >= rank) {
    throw InvalidArgumentError("linspace: axis " + std::to_string(axis) +
                               " is out of range for a result of rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  first = expand_dims(first, axis, site);
  last = expand_dims(last, axis, site);
  if (num == 1) return first;
  // The steps 0 .. num - 2 along `axis`, 1 along the other dims.
  std::vector<int64_t> steps_shape(size_t(rank), 1);
  steps_shape[size_t(axis)] = num - 1;
  const Tensor count = range(Tensor(int64_t{0}), Tensor(num - 1), Tensor(int64_t{1}), site);
  const Tensor steps = reshape(cast(count, start.dtype(), site), steps_shape, site);
  const Tensor delta = div(sub(last, first, site), double(num - 1), site);
  return concat({add(first, mul(steps, delta, site), site), last}, axis, site);
}

}  // namespace ag::api
