#include "ag/tensor_array.h"

#include <string>

#include "ag/control_flow.h"
#include "ops/dispatch.h"

namespace ag {

TensorArray::TensorArray(DType dtype, int64_t size, bool dynamic_size,
                         std::optional<Shape> element_shape)
    : dtype_(dtype), size_(size), dynamic_size_(dynamic_size), element_shape_(element_shape) {
  if (size < 0)
    throw InvalidArgumentError("TensorArray: size must not be negative, got " +
                               std::to_string(size));
  if (element_shape && element_shape->is_fully_defined()) {
    Shape full{size};
    for (int64_t d : *element_shape) full.push_back(d);
    buffer_ = zeros(full, dtype);
  }
}

TensorArray& TensorArray::write(const Tensor& index, const Tensor& value) {
  if (value.dtype() != dtype_) {
    throw InvalidArgumentError("TensorArray.write: the array holds " +
                               std::string(dtype_name(dtype_)) + ", got a value of dtype " +
                               std::string(dtype_name(value.dtype())));
  }
  if (!buffer_.defined()) {
    Shape full{size_};
    for (int64_t d : value.shape()) full.push_back(d == kUnknownDim ? 0 : d);
    buffer_ = zeros(full, dtype_);
  }
  ops::Attrs attrs;
  attrs.keepdims = dynamic_size_;
  Tensor i = is_integer(index.dtype()) ? index : cast(index, DType::int64);
  buffer_ = ops::apply(ops::OpId::TensorArrayWrite, {buffer_, i, value}, attrs);
  return *this;
}

Tensor TensorArray::read(const Tensor& index) const {
  if (!buffer_.defined())
    throw FailedPreconditionError("TensorArray.read: nothing has been written yet");
  return gather(buffer_, index);
}

Tensor TensorArray::stack() const {
  if (buffer_.defined()) return buffer_;
  Shape full{size_};
  if (element_shape_) {
    for (int64_t d : *element_shape_) full.push_back(d == kUnknownDim ? 0 : d);
  }
  return zeros(full, dtype_);
}

TensorArray& TensorArray::unstack(const Tensor& value) {
  if (value.dtype() != dtype_ || value.rank() < 1) {
    throw InvalidArgumentError("TensorArray.unstack: expected a " +
                               std::string(dtype_name(dtype_)) + " tensor of rank >= 1, got " +
                               value.spec().to_string());
  }
  buffer_ = value;
  if (value.shape()[0] != kUnknownDim) size_ = value.shape()[0];
  return *this;
}

Tensor TensorArray::size() const {
  if (buffer_.defined()) return cast(detail::first_dim(buffer_), DType::int32);
  return Tensor(int32_t(size_));
}

}  // namespace ag
