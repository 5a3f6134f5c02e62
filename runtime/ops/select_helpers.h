// What the layout kernels (kernels_layout.cpp) and the layout and selection
// ops of runtime/ops/library (tile, reverse, gather_nd and the scatters,
// argsort, cumprod) share: their error spelling, axis checks and untyped
// element copies. Internal to the runtime.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ag/error.h"
#include "ag/shape.h"

namespace ag::ops::select {

// "op: what": the error every shape rule and kernel of these ops throws.
[[noreturn]] inline void fail(std::string_view op, const std::string& what) {
  throw InvalidArgumentError(std::string(op) + ": " + what);
}

inline void require_known_rank(std::string_view op, const Shape& shape, std::string_view input) {
  if (shape.has_unknown_rank())
    fail(op, std::string(input) + " must have a rank known while tracing");
}

// `axis` in [0, rank), counted from the end when negative.
inline int normalize_axis(std::string_view op, int64_t axis, const Shape& shape) {
  const int rank = shape.rank();
  if (axis < -rank || axis >= rank) {
    fail(op, "axis " + std::to_string(axis) + " is out of range for a tensor of shape " +
                 shape.to_list_string() + "; use an axis in [" + std::to_string(-rank) + ", " +
                 std::to_string(rank) + ")");
  }
  return int(axis < 0 ? axis + rank : axis);
}

// The product of dims [from, to) of a static shape.
inline int64_t dims_product(const Shape& shape, int from, int to) {
  int64_t n = 1;
  for (int d = from; d < to; ++d) n *= shape[d];
  return n;
}

// Row-major strides, in elements.
inline std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> strides(size_t(shape.rank()), 1);
  for (int d = shape.rank() - 2; d >= 0; --d)
    strides[size_t(d)] = strides[size_t(d) + 1] * shape[d + 1];
  return strides;
}

// "[1,0]": the position of flat element `flat` of `shape` ("" for a scalar).
inline std::string position_of(const Shape& shape, int64_t flat) {
  std::vector<int64_t> at(size_t(shape.rank()));
  for (int d = shape.rank() - 1; d >= 0; --d) {
    at[size_t(d)] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  std::string text;
  for (size_t d = 0; d < at.size(); ++d) text += (d ? "," : "[") + std::to_string(at[d]);
  return at.empty() ? text : text + "]";
}

// Calls f(E{}) with E an unsigned type of the dtype's element size: data
// movement that copies elements without reading them.
template <class F>
void visit_element_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1:
      return f(uint8_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
  }
  throw InternalError("unexpected element size " + std::to_string(dtype_size(dtype)));
}

}  // namespace ag::ops::select
