// Keras's Dropout.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

Dropout::Dropout(double rate, std::optional<uint64_t> seed, std::string name)
    : Layer("dropout", std::move(name)), rate_(rate), seed_(seed) {
  if (!(rate >= 0 && rate < 1))
    throw InvalidArgumentError("Dropout: rate must be in [0, 1), got " + std::to_string(rate));
}

Tensor Dropout::call(const Tensor& inputs, bool training, CallSite site) {
  if (!training || rate_ == 0) return inputs;
  return dropout(inputs, rate_, seed_, true, site);
}

}  // namespace ag::layers
