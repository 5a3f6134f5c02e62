// tf.boolean_mask: the mask's dims of the tensor flattened into one axis
// (a reshape, by a shape read when the graph runs where a dim is unknown
// while tracing) and gathered at the positions of the mask's true elements.
// Those positions (true_positions) come from unique_first_indices of the
// running count of trues, so their number is known when the graph runs; the
// gather gives the gradient.
#include <algorithm>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/composed.h"

namespace ag::ops {

Tensor true_positions(const Tensor& mask, CallSite site) {
  const Tensor counts =
      api::concat({api::zeros(Shape{1}, DType::int64),
                   api::cumsum(api::cast(mask, DType::int64, site), 0, false, false, site)},
                  0, site);
  const Tensor firsts = api::unique_first_indices(counts, 0, true, site);
  return api::slice(firsts, {1}, {-1}, site) - int64_t{1};
}

}  // namespace ag::ops

namespace ag::api {
namespace {

// The shape of `tensor` with its dims axis .. axis + k - 1 as one:
// [before..., -1, after...], a tensor read when the graph runs where a
// dim besides those is unknown while tracing.
Tensor flat_shape(const Tensor& tensor, int64_t axis, int k, CallSite site) {
  std::vector<int64_t> dims;
  const Shape& shape = tensor.shape();
  for (int d = 0; d < shape.rank(); ++d) {
    if (d == axis) dims.push_back(-1);
    if (d < axis || d >= axis + k) dims.push_back(shape[d]);
  }
  if (std::count(dims.begin(), dims.end(), -1) == 1)
    return constant(dims, Shape{int64_t(dims.size())});
  const Tensor all = api::shape(tensor, DType::int64, site);
  return concat({slice(all, {0}, {axis}, site), constant(std::vector<int64_t>{-1}, Shape{1}),
                 slice(all, {axis + k}, {-1}, site)},
                0, site);
}

}  // namespace

Tensor boolean_mask(const Tensor& tensor, const Tensor& mask, int64_t axis, CallSite site) {
  const Shape& tensor_shape = tensor.shape();
  const Shape& dims = mask.shape();
  if (mask.dtype() != DType::bool_)
    throw InvalidArgumentError("boolean_mask: mask must be bool, got " +
                               std::string(dtype_name(mask.dtype())));
  if (dims.has_unknown_rank() || dims.rank() == 0)
    throw InvalidArgumentError(
        "boolean_mask: mask must have a rank of 1 or more known while "
        "tracing, got shape " +
        dims.to_list_string());
  const int k = dims.rank();
  if (tensor_shape.has_unknown_rank() || axis < 0 || axis + k > tensor_shape.rank()) {
    throw InvalidArgumentError("boolean_mask: a mask of shape " + dims.to_list_string() +
                               " at axis " + std::to_string(axis) +
                               " does not fit a tensor of shape " + tensor_shape.to_list_string());
  }
  for (int d = 0; d < k; ++d) {
    const int64_t t = tensor_shape[int(axis) + d], m = dims[d];
    if (t != kUnknownDim && m != kUnknownDim && t != m) {
      throw InvalidArgumentError("boolean_mask: the mask's shape " + dims.to_list_string() +
                                 " does not match the tensor's dims from axis " +
                                 std::to_string(axis) + " (tensor shape " +
                                 tensor_shape.to_list_string() + ")");
    }
  }
  const Tensor flat = reshape(tensor, flat_shape(tensor, axis, k, site), site);
  const Tensor positions = ops::true_positions(reshape(mask, {-1}, site), site);
  return gather(flat, positions, axis, site);
}

}  // namespace ag::api
