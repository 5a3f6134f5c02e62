// Keras's Dense.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

Dense::Dense(int64_t units, DenseOptions options)
    : Layer("dense", options.name), units_(units), options_(std::move(options)) {
  if (units <= 0)
    throw InvalidArgumentError("Dense: units must be positive, got " + std::to_string(units));
  check_activation(options_.activation);
}

void Dense::build_weights(const Shape& input_shape, DType dtype, CallSite) {
  add_weight("kernel", Shape{input_shape.dim(-1), units_}, options_.kernel_initializer, dtype);
  if (options_.use_bias) add_weight("bias", Shape{units_}, options_.bias_initializer, dtype);
}

Tensor Dense::call(const Tensor& inputs, bool, CallSite site) {
  // matmul broadcasts the kernel over any leading axes: [..., in] @ [in, units].
  Tensor y = matmul(inputs, weights_[0].second.read(), site);
  if (options_.use_bias) y = add(y, weights_[1].second.read(), site);
  return activate(y, options_.activation, site);
}

}  // namespace ag::layers
