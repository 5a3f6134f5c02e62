// Keras's Flatten.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

Flatten::Flatten(std::string data_format, std::string name)
    : Layer("flatten", std::move(name)), data_format_(std::move(data_format)) {
  if (data_format_ != "channels_last" && data_format_ != "channels_first")
    throw InvalidArgumentError("Flatten: data_format is '" + data_format_ +
                               "'; expected 'channels_last' or 'channels_first'");
}

Tensor Flatten::call(const Tensor& inputs, bool, CallSite site) {
  const Shape& shape = inputs.shape();
  if (shape.rank() == 1) return expand_dims(inputs, 1, site);
  Tensor x = inputs;
  if (data_format_ == "channels_first" && shape.rank() > 2) {
    // Keras flattens channels_first inputs in channels_last order.
    std::vector<int64_t> perm = {0};
    for (int64_t i = 2; i < shape.rank(); ++i) perm.push_back(i);
    perm.push_back(1);
    x = transpose(x, perm, site);
  }
  int64_t features = 1;
  for (int i = 1; i < shape.rank(); ++i) {
    if (shape[i] == kUnknownDim) {
      features = kUnknownDim;
      break;
    }
    features *= shape[i];
  }
  if (features != kUnknownDim) return reshape(x, {-1, features}, site);
  if (shape[0] != kUnknownDim) return reshape(x, {shape[0], -1}, site);
  throw ValueError(where(site) + ": the input's shape " + shape.to_string() +
                   " leaves both the batch and the flattened size unknown; give every dim "
                   "but the batch a known size (an input_signature with them)");
}

}  // namespace ag::layers
