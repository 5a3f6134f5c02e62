// The ops that staged control flow needs: the length of an axis (to iterate
// over a tensor of unknown length) and the TensorArray write.
#include <algorithm>
#include <cstring>
#include <string>

#include "ag/error.h"
#include "ops/kernels.h"

namespace ag::ops {
namespace {

int64_t read_index(const KernelInput& in) {
  return in.dtype == DType::int64 ? *static_cast<const int64_t*>(in.data)
                                  : int64_t(*static_cast<const int32_t*>(in.data));
}

// A TensorArray write's attrs.axis for stacked values of rank `rank`,
// counted from the front.
int64_t write_axis(const Attrs& attrs, int rank) {
  return attrs.axis < 0 ? attrs.axis + rank : attrs.axis;
}

}  // namespace

ValueType infer_dim(const InferContext& ctx) {
  const Shape& s = ctx.inputs[0].shape;
  if (s.has_unknown_rank()) throw InvalidArgumentError("dim: needs an input of known rank");
  if (ctx.attrs.axis < 0 || ctx.attrs.axis >= s.rank()) {
    throw InvalidArgumentError("dim: axis " + std::to_string(ctx.attrs.axis) +
                               " is out of range for shape " + s.to_string());
  }
  return {DType::int64, Shape{}};
}

void kernel_dim(const KernelContext& ctx) {
  *static_cast<int64_t*>(ctx.out) = (*ctx.inputs[0].shape)[int(ctx.attrs->axis)];
}

// Inputs: the stacked values [n, element...], an integer scalar index, the
// element. With a dynamic size (attrs.keepdims) the first dim grows to hold
// the index. attrs.axis (0 unless passes/transposed_arrays.cpp laid the
// array out transposed) is the axis the rows lie along: the element is the
// stacked shape without that axis, written at index i of it.
ValueType infer_tensor_array_write(const InferContext& ctx) {
  const ValueType& buffer = ctx.inputs[0];
  const ValueType& index = ctx.inputs[1];
  const ValueType& value = ctx.inputs[2];
  if (buffer.shape.rank() < 1)
    throw InvalidArgumentError("TensorArray: the stacked values must have rank >= 1");
  const int64_t axis = write_axis(ctx.attrs, buffer.shape.rank());
  if (axis < 0 || axis >= buffer.shape.rank() || (axis != 0 && ctx.attrs.keepdims)) {
    throw InvalidArgumentError("TensorArray.write: rows along axis " +
                               std::to_string(ctx.attrs.axis) + " of stacked values of shape " +
                               buffer.shape.to_string() +
                               " (a dynamic-size array grows along axis 0 only)");
  }
  if (!is_integer(index.dtype) || index.shape.rank() != 0) {
    throw InvalidArgumentError("TensorArray.write: the index must be an integer scalar, got " +
                               std::string(dtype_name(index.dtype)) + " of shape " +
                               index.shape.to_string());
  }
  if (value.dtype != buffer.dtype) {
    throw InvalidArgumentError("TensorArray.write: the array holds " +
                               std::string(dtype_name(buffer.dtype)) + ", got a value of dtype " +
                               std::string(dtype_name(value.dtype)));
  }
  Shape element;
  for (int i = 0; i < buffer.shape.rank(); ++i) {
    if (i != axis) element.push_back(buffer.shape[i]);
  }
  // An empty array whose element shape was unknown (0 there) takes the
  // shape of its first element: a gradient's stacks start so.
  bool unshaped = axis == 0 && buffer.shape[0] == 0 && element.is_fully_defined() &&
                  element.num_elements() == 0 && value.shape.rank() == element.rank();
  if (unshaped) {
    element = value.shape;
  } else if (!value.shape.is_compatible_with(element)) {
    throw InvalidArgumentError("TensorArray.write: the array holds elements of shape " +
                               element.to_string() + ", got a value of shape " +
                               value.shape.to_string());
  }
  Shape out = buffer.shape;
  if (unshaped) {
    out = Shape{buffer.shape[0]};
    for (int64_t d : element) out.push_back(d);
  }
  if (ctx.attrs.keepdims) {
    // Only the index's value matters. (The buffer's data pointer must not be
    // tested: an empty array is a known value too.)
    if (ctx.values.size() < 2 || !ctx.values[1]) {
      out.set_dim(0, kUnknownDim);
    } else if (out[0] != kUnknownDim) {
      int64_t i = read_index({ctx.values[1], &index.shape, index.dtype});
      if (i < 0) {
        throw InvalidArgumentError("TensorArray.write: index " + std::to_string(i) +
                                   " is negative");
      }
      out.set_dim(0, std::max(out[0], i + 1));
    }
  }
  return {buffer.dtype, out};
}

void kernel_tensor_array_write(const KernelContext& ctx) {
  const KernelInput& buffer = ctx.inputs[0];
  const Shape& shape = *ctx.out_shape;
  const int axis = int(write_axis(*ctx.attrs, shape.rank()));
  int64_t index = read_index(ctx.inputs[1]);
  int64_t size = shape[axis];
  if (index < 0 || index >= size) {
    throw InvalidArgumentError("TensorArray.write: index " + std::to_string(index) +
                               " is out of range for size " + std::to_string(size));
  }
  // The element is `outer` runs of `row` bytes, which lie `size` rows apart
  // in the stacked values (one run when the rows lie along axis 0).
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  size_t row = dtype_size(ctx.out_dtype);
  for (int d = axis + 1; d < shape.rank(); ++d) row *= size_t(shape[d]);
  int64_t old_size = (*buffer.shape)[axis];
  char* out = static_cast<char*>(ctx.out);
  // The executor may hand the kernel the input's own memory (a loop variable
  // written in place), grown to the new size: the old rows are then already
  // there, and only the new ones need zeros. (Only axis 0 grows.)
  if (out != buffer.data)
    std::memcpy(out, buffer.data, size_t(outer * std::min(old_size, size)) * row);
  if (size > old_size) std::memset(out + size_t(old_size) * row, 0, size_t(size - old_size) * row);
  // The value's runs: back to back, or strided (a loop variable kept in a
  // row of this array, exec/plan_views.cpp: it is then this very row when
  // the step computing it wrote it here already).
  const KernelInput& value = ctx.inputs[2];
  const char* from = static_cast<const char*>(value.data);
  const size_t from_stride = value.run > 0 ? size_t(value.stride) * dtype_size(value.dtype) : row;
  char* to = out + size_t(index) * row;
  if (from == to) return;
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(to + size_t(o * size) * row, from + size_t(o) * from_stride, row);
}

}  // namespace ag::ops
