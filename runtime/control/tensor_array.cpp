// ag::TensorArray: in-place eager writes, and the tensor_array_write op for
// everything else (growth, checks, tracing).
#include "ag/tensor_array.h"

#include <cstring>
#include <string>

#include "ag/control_flow.h"
#include "autodiff/tape.h"
#include "ops/dispatch.h"
#include "trace/tracer.h"

namespace ag {

namespace {

// Eagerly, a write within the current size changes the one element in place
// (the buffer is copied first only if another tensor shares it), so a loop
// of n writes costs O(n) elements, not O(n^2). Anything else (growth, bad
// index, mismatched shapes, tracing) goes through the TensorArrayWrite op and
// its checks; so does every write under a gradient tape, which must see it.
bool write_in_place(Tensor& buffer, const Tensor& index, const Tensor& value) {
  if (trace::is_tracing() || autodiff::tape_active() || !buffer.defined() || buffer.is_symbolic() ||
      index.is_symbolic() || value.is_symbolic() || !is_integer(index.dtype()) ||
      index.rank() != 0 || value.dtype() != buffer.dtype()) {
    return false;
  }
  const Shape& full = buffer.shape();
  if (full.rank() != value.rank() + 1) return false;
  for (int d = 0; d < value.rank(); ++d) {
    if (full[d + 1] != value.shape()[d]) return false;
  }
  int64_t i = index.item<int64_t>();
  if (i < 0 || i >= full[0]) return false;
  size_t row = size_t(value.num_elements()) * dtype_size(value.dtype());
  if (row == 0) return true;
  char* data = static_cast<char*>(buffer.raw_mutable_data());
  std::memcpy(data + size_t(i) * row, value.raw_data(), row);
  return true;
}

}  // namespace

TensorArray::TensorArray(DType dtype, int64_t size, bool dynamic_size,
                         std::optional<Shape> element_shape)
    : dtype_(dtype), size_(size), dynamic_size_(dynamic_size), element_shape_(element_shape) {
  if (size < 0)
    throw InvalidArgumentError("TensorArray: size must not be negative, got " +
                               std::to_string(size));
  if (element_shape && element_shape->is_fully_defined()) {
    Shape full{size};
    for (int64_t d : *element_shape) full.push_back(d);
    buffer_ = ops::zeros_op(full, dtype);
  }
}

TensorArray& TensorArray::write(const Tensor& index, const Tensor& value, CallSite site) {
  if (value.dtype() != dtype_) {
    throw InvalidArgumentError("TensorArray.write: the array holds " +
                               std::string(dtype_name(dtype_)) + ", got a value of dtype " +
                               std::string(dtype_name(value.dtype())));
  }
  if (!buffer_.defined()) {
    Shape full{size_};
    for (int64_t d : value.shape()) full.push_back(d == kUnknownDim ? 0 : d);
    buffer_ = ops::zeros_op(full, dtype_);
  }
  if (write_in_place(buffer_, index, value)) return *this;
  ops::Attrs attrs;
  attrs.keepdims = dynamic_size_;
  Tensor i = is_integer(index.dtype()) ? index : cast(index, DType::int64, site);
  buffer_ = ops::apply(ops::OpId::TensorArrayWrite, {buffer_, i, value}, attrs, site);
  return *this;
}

Tensor TensorArray::read(const Tensor& index, CallSite site) const {
  if (!buffer_.defined())
    throw FailedPreconditionError("TensorArray.read: nothing has been written yet");
  return gather(buffer_, index, 0, site);
}

Tensor TensorArray::stack() const {
  if (buffer_.defined()) return buffer_;
  Shape full{size_};
  if (element_shape_) {
    for (int64_t d : *element_shape_) full.push_back(d == kUnknownDim ? 0 : d);
  }
  return ops::zeros_op(full, dtype_);
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
  if (buffer_.defined()) return cast(detail::first_dim(buffer_), DType::int32, {});
  return Tensor(int32_t(size_));
}

}  // namespace ag
