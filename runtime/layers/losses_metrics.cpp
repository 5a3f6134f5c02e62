// Keras's loss classes (over the loss functions of ag/losses.h) and
// metrics.
#include "ag/error.h"
#include "ag/layers.h"
#include "ag/losses.h"
#include "ag/ops.h"

namespace ag::losses {

Tensor SparseCategoricalCrossentropy::operator()(const Tensor& y_true, const Tensor& y_pred,
                                                 CallSite site) const {
  Tensor labels = y_true;
  // Keras accepts labels of shape [batch, 1] as well as [batch].
  if (labels.shape().rank() == y_pred.shape().rank() && labels.shape().rank() > 0 &&
      labels.shape().dim(-1) == 1)
    labels = squeeze(labels, {-1}, site);
  return reduce_mean(sparse_categorical_crossentropy(labels, y_pred, from_logits_, -1, site), {},
                     false, site);
}

Tensor MeanSquaredError::operator()(const Tensor& y_true, const Tensor& y_pred,
                                    CallSite site) const {
  return reduce_mean(mean_squared_error(y_true, y_pred, site), {}, false, site);
}

}  // namespace ag::losses

namespace ag::metrics {

namespace {
constexpr bool kNotTrainable = false;
}

Metric::Metric(std::string name)
    : name_(std::move(name)),
      total_(zeros({}, DType::float32), name_ + "/total", kNotTrainable),
      count_(zeros({}, DType::float32), name_ + "/count", kNotTrainable) {}

Tensor Metric::result() const {
  // The total is 0 while the count is: the result is then 0, as Keras's.
  return total_.read() / maximum(count_.read(), ones({}, DType::float32));
}

void Metric::reset_state() {
  total_.assign(0.0f);
  count_.assign(0.0f);
}

void Metric::accumulate(const Tensor& matches, CallSite site) {
  Tensor m = cast(matches, DType::float32, site);
  total_.assign_add(reduce_sum(m, {}, false, site));
  count_.assign_add(cast(size(m, DType::int32, site), DType::float32, site));
}

void Accuracy::update_state(const Tensor& y_true, const Tensor& y_pred, CallSite site) {
  accumulate(equal(y_true, cast(y_pred, y_true.dtype(), site), site), site);
}

void SparseCategoricalAccuracy::update_state(const Tensor& y_true, const Tensor& y_pred,
                                             CallSite site) {
  Tensor labels = y_true;
  if (labels.shape().rank() == y_pred.shape().rank() && labels.shape().dim(-1) == 1)
    labels = squeeze(labels, {-1}, site);
  if (labels.shape().rank() + 1 != y_pred.shape().rank())
    throw InvalidArgumentError("SparseCategoricalAccuracy '" + name() + "': labels of shape " +
                               labels.shape().to_string() + " do not fit predictions of shape " +
                               y_pred.shape().to_string() +
                               "; give one integer label per row of y_pred");
  Tensor predicted = argmax(y_pred, int64_t(y_pred.shape().rank() - 1), site);
  accumulate(equal(cast(labels, DType::int64, site), cast(predicted, DType::int64, site), site),
             site);
}

}  // namespace ag::metrics
