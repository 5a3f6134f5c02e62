// Losses (ag/losses.h), composed of ops.
#include "ag/losses.h"

#include <limits>
#include <string>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag {

namespace api {

Tensor negative_log_likelihood(const Tensor& log_probs, const Tensor& labels, int64_t axis,
                               CallSite site) {
  const int rank = log_probs.rank();
  if (axis < -rank || axis >= rank) {
    throw InvalidArgumentError("negative_log_likelihood: axis " + std::to_string(axis) +
                               " is out of range for log_probs of shape " +
                               log_probs.shape().to_list_string());
  }
  if (!is_integer(labels.dtype())) {
    throw InvalidArgumentError("negative_log_likelihood: labels must be int32 or int64, not " +
                               std::string(dtype_name(labels.dtype())));
  }
  if (axis < 0) axis += rank;
  const int64_t classes = log_probs.shape()[int(axis)];
  if (classes == kUnknownDim) {
    throw InvalidArgumentError(
        "negative_log_likelihood: the number of classes must be known when traced");
  }
  const Tensor at_label = one_hot(labels, classes, true, false, axis, DType::bool_, site);
  const Tensor picked = reduce_sum(where(at_label, log_probs, 0, site), {axis}, false, site);
  const Tensor valid =
      logical_and(greater_equal(labels, 0, site), less(labels, classes, site), site);
  return where(valid, neg(picked, site), std::numeric_limits<double>::quiet_NaN(), site);
}

Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                                CallSite site) {
  return negative_log_likelihood(log_softmax(logits, -1, site), labels, -1, site);
}

Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits, int64_t axis,
                                         CallSite site) {
  return neg(reduce_sum(mul(labels, log_softmax(logits, axis, site), site), {axis}, false, site),
             site);
}

Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                         CallSite site) {
  const Tensor positive_part = sub(relu(logits, site), mul(logits, labels, site), site);
  return add(positive_part, log1p(exp(neg(abs(logits, site), site), site), site), site);
}

}  // namespace api

namespace losses {

namespace {

Tensor clipped(const Tensor& p, CallSite site) {
  return clip_by_value(p, kEpsilon, 1 - kEpsilon, site);
}

}  // namespace

Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                                       int64_t axis, CallSite site) {
  const Tensor labels = is_integer(y_true.dtype()) ? y_true : cast(y_true, DType::int64, site);
  // log(p) as logits: log_softmax(log p) = log(p / sum(p)), Keras's normalisation.
  const Tensor logits = from_logits ? y_pred : log(clipped(y_pred, site), site);
  return negative_log_likelihood(log_softmax(logits, axis, site), labels, axis, site);
}

Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                                double label_smoothing, int64_t axis, CallSite site) {
  Tensor labels = y_true;
  if (label_smoothing != 0) {
    const int64_t classes = y_pred.shape()[int(axis < 0 ? axis + y_pred.rank() : axis)];
    labels = add(mul(labels, 1 - label_smoothing, site), label_smoothing / double(classes), site);
  }
  if (from_logits) return softmax_cross_entropy_with_logits(labels, y_pred, axis, site);
  const Tensor p = clipped(div(y_pred, reduce_sum(y_pred, {axis}, true, site), site), site);
  return neg(reduce_sum(mul(labels, log(p, site), site), {axis}, false, site), site);
}

Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits,
                           double label_smoothing, int64_t axis, CallSite site) {
  Tensor labels = y_true;
  if (label_smoothing != 0) {
    labels = add(mul(labels, 1 - label_smoothing, site), 0.5 * label_smoothing, site);
  }
  Tensor per_element;
  if (from_logits) {
    per_element = sigmoid_cross_entropy_with_logits(labels, y_pred, site);
  } else {
    const Tensor p = clipped(y_pred, site);
    const Tensor log_p = log(add(p, kEpsilon, site), site);
    const Tensor log_not_p = log(add(sub(1, p, site), kEpsilon, site), site);
    per_element =
        neg(add(mul(labels, log_p, site), mul(sub(1, labels, site), log_not_p, site), site), site);
  }
  return reduce_mean(per_element, {axis}, false, site);
}

Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred, CallSite site) {
  return reduce_mean(square(sub(y_pred, y_true, site), site), {-1}, false, site);
}

}  // namespace losses
}  // namespace ag
