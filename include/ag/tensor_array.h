// ag::TensorArray: the way to accumulate values in a staged loop (a
// std::vector's push_back would only run while tracing). Writes happen in
// place on the object, so a write is never lost, and the array is usable as
// control-flow state: its values are one stacked tensor [size, element...].
#pragma once

#include <cstdint>
#include <optional>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

class TensorArray {
 public:
  // `size` elements; with `dynamic_size`, writing past the end grows it.
  explicit TensorArray(DType dtype, int64_t size = 0, bool dynamic_size = false,
                       std::optional<Shape> element_shape = std::nullopt);

  // Sets element `index`; returns *this.
  TensorArray& write(const Tensor& index, const Tensor& value, CallSite site = CallSite::current());
  Tensor read(const Tensor& index, CallSite site = CallSite::current()) const;
  // All elements stacked along a new first axis.
  Tensor stack() const;
  // Sets the elements from the first axis of `value`.
  TensorArray& unstack(const Tensor& value);
  // The number of elements, as an int32 scalar.
  Tensor size() const;
  DType dtype() const { return dtype_; }
  // The size given at construction: the rows before the first write.
  int64_t initial_size() const { return size_; }

  // The stacked values; undefined until the first write (or unstack).
  Tensor& buffer() { return buffer_; }
  const Tensor& buffer() const { return buffer_; }

 private:
  DType dtype_;
  int64_t size_;
  bool dynamic_size_;
  std::optional<Shape> element_shape_;
  Tensor buffer_;
};

}  // namespace ag
