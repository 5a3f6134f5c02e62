// Keras's BatchNormalization and LayerNormalization.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/ops.h"

namespace ag::layers {

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer("batch_normalization", options.name), options_(std::move(options)) {
  if (!(options_.momentum >= 0 && options_.momentum <= 1))
    throw InvalidArgumentError("BatchNormalization: momentum must be in [0, 1], got " +
                               std::to_string(options_.momentum));
  if (options_.axis == 0)
    throw InvalidArgumentError("BatchNormalization: axis 0 is the batch; give the features' axis");
}

void BatchNormalization::build_weights(const Shape& input_shape, DType dtype, CallSite site) {
  rank_ = input_shape.rank();
  axis_ = options_.axis < 0 ? options_.axis + rank_ : options_.axis;
  if (axis_ <= 0 || axis_ >= rank_)
    throw ValueError(where(site) + ": axis " + std::to_string(options_.axis) +
                     " is not a features' axis of an input of shape " + input_shape.to_string() +
                     "; give an axis in [1, rank)");
  Shape channels{input_shape[int(axis_)]};
  if (options_.scale) gamma_ = add_weight("gamma", channels, options_.gamma_initializer, dtype);
  if (options_.center) beta_ = add_weight("beta", channels, options_.beta_initializer, dtype);
  moving_mean_ = add_weight("moving_mean", channels, options_.moving_mean_initializer, dtype,
                            /*trainable=*/false);
  moving_variance_ = add_weight("moving_variance", channels, options_.moving_variance_initializer,
                                dtype, /*trainable=*/false);
}

Tensor BatchNormalization::call(const Tensor& inputs, bool training, CallSite site) {
  // The parameters broadcast as [channels] on the last axis, else as
  // [channels, 1, ...] up to the last.
  std::vector<int64_t> param_shape = {-1};
  for (int64_t i = axis_ + 1; i < rank_; ++i) param_shape.push_back(1);
  auto param = [&](const Tensor& t) {
    return param_shape.size() == 1 ? t : reshape(t, param_shape, site);
  };
  Tensor gamma = gamma_ ? param(gamma_->read()) : Tensor();
  Tensor beta = beta_ ? param(beta_->read()) : Tensor();
  if (!training)
    return batch_normalization(inputs, param(moving_mean_->read()), param(moving_variance_->read()),
                               beta, gamma, options_.epsilon, site);
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank_; ++i) {
    if (i != axis_) axes.push_back(i);
  }
  MomentsResult m = moments(inputs, axes, /*keepdims=*/false, site);
  const double momentum = options_.momentum;
  moving_mean_->assign(moving_mean_->read() * momentum + m.mean * (1 - momentum));
  moving_variance_->assign(moving_variance_->read() * momentum + m.variance * (1 - momentum));
  return batch_normalization(inputs, param(m.mean), param(m.variance), beta, gamma,
                             options_.epsilon, site);
}

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer("layer_normalization", options.name), options_(std::move(options)) {}

void LayerNormalization::build_weights(const Shape& input_shape, DType dtype, CallSite site) {
  if (options_.axis != -1 && options_.axis != input_shape.rank() - 1)
    throw UnimplementedError(where(site) + ": normalising over axis " +
                             std::to_string(options_.axis) +
                             " is not supported; only the last axis (-1) is");
  Shape features{input_shape.dim(-1)};
  if (options_.scale) add_weight("gamma", features, options_.gamma_initializer, dtype);
  if (options_.center) add_weight("beta", features, options_.beta_initializer, dtype);
}

Tensor LayerNormalization::call(const Tensor& inputs, bool, CallSite site) {
  Tensor gamma = options_.scale ? weights_[0].second.read() : Tensor();
  Tensor beta = options_.center ? weights_[options_.scale ? 1 : 0].second.read() : Tensor();
  return layer_normalization(inputs, gamma, beta, -1, options_.epsilon, site);
}

}  // namespace ag::layers
