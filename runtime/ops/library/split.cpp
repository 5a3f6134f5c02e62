// split (tf.split): a tensor cut along one axis into consecutive parts, each
// a slice, so that tracing, gradients and ONNX export need nothing of their
// own.
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/select_helpers.h"

namespace ag::api {
namespace {

// The axis's length: static, as the parts' sizes depend on it.
int64_t split_axis_length(const Tensor& value, int axis, const char* needed_for) {
  const int64_t n = value.shape()[axis];
  if (n == kUnknownDim) {
    throw InvalidArgumentError("split: axis " + std::to_string(axis) + " of value (shape " +
                               value.shape().to_list_string() +
                               ") has a length unknown while tracing, which " + needed_for);
  }
  return n;
}

std::vector<Tensor> slices_along(const Tensor& value, int axis, const std::vector<int64_t>& sizes,
                                 CallSite site) {
  std::vector<int64_t> begin(size_t(value.rank()), 0), size(size_t(value.rank()), -1);
  std::vector<Tensor> parts;
  for (int64_t part : sizes) {
    size[size_t(axis)] = part;
    parts.push_back(slice(value, begin, size, site));
    begin[size_t(axis)] += part;
  }
  return parts;
}

int split_axis(const Tensor& value, int64_t axis) {
  if (value.shape().has_unknown_rank())
    throw InvalidArgumentError("split: value must have a rank known while tracing");
  if (value.rank() == 0) throw InvalidArgumentError("split: value must have rank 1 or more");
  return ops::select::normalize_axis("split", axis, value.shape());
}

}  // namespace

std::vector<Tensor> split(const Tensor& value, int64_t num_or_size_splits, int64_t axis,
                          CallSite site) {
  const int a = split_axis(value, axis);
  if (num_or_size_splits <= 0) {
    throw InvalidArgumentError("split: num_or_size_splits = " + std::to_string(num_or_size_splits) +
                               " must be positive");
  }
  const int64_t n = split_axis_length(value, a, "an even split into parts needs");
  if (n % num_or_size_splits != 0) {
    throw InvalidArgumentError("split: axis " + std::to_string(a) + " of length " +
                               std::to_string(n) + " does not split evenly into " +
                               std::to_string(num_or_size_splits) +
                               " parts; give the parts' sizes instead");
  }
  return slices_along(
      value, a, std::vector<int64_t>(size_t(num_or_size_splits), n / num_or_size_splits), site);
}

std::vector<Tensor> split(const Tensor& value, std::vector<int64_t> size_splits, int64_t axis,
                          CallSite site) {
  const int a = split_axis(value, axis);
  if (size_splits.empty()) throw InvalidArgumentError("split: size_splits must not be empty");
  int64_t known = 0;
  int inferred = -1;
  for (size_t i = 0; i < size_splits.size(); ++i) {
    const int64_t s = size_splits[i];
    if (s == -1 && inferred < 0) {
      inferred = int(i);
      continue;
    }
    if (s < 0) {
      throw InvalidArgumentError("split: size_splits[" + std::to_string(i) +
                                 "] = " + std::to_string(s) +
                                 " is negative; sizes are >= 0, and one of them may be -1");
    }
    known += s;
  }
  const int64_t n = split_axis_length(value, a, "the sizes must add up to");
  if (inferred >= 0) size_splits[size_t(inferred)] = n - known;
  if ((inferred >= 0 && known > n) || (inferred < 0 && known != n)) {
    throw InvalidArgumentError("split: size_splits add up to " + std::to_string(known) +
                               ", not to the length " + std::to_string(n) + " of axis " +
                               std::to_string(a));
  }
  return slices_along(value, a, size_splits, site);
}

}  // namespace ag::api
