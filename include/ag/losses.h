// Losses, as TensorFlow names them: tf.nn's cross-entropies from logits
// and tf.keras.losses's functions (per example: the mean or sum over the
// last axis, no reduction over the batch). Each is composed of ops, so its
// gradient, its graph and its ONNX export come from theirs.
#pragma once

#include <cstdint>

#include "ag/tensor.h"

namespace ag {
namespace api {

// -log_probs at `labels` along `axis`: log_probs has the classes on `axis`,
// labels (int32 or int64) log_probs's shape without it. A label outside
// [0, classes) gives NaN, so that a wrong label is not a silent 0 (as
// TensorFlow's GPU kernel does).
Tensor negative_log_likelihood(const Tensor& log_probs, const Tensor& labels, int64_t axis = -1,
                               CallSite site = CallSite::current());

// tf.nn.sparse_softmax_cross_entropy_with_logits: -log softmax(logits)[label]
// per example, the classes on logits's last axis.
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                                CallSite site = CallSite::current());
// tf.nn.softmax_cross_entropy_with_logits: -sum(labels * log_softmax(logits))
// along `axis`, labels a distribution over the classes.
Tensor softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                         int64_t axis = -1, CallSite site = CallSite::current());
// tf.nn.sigmoid_cross_entropy_with_logits, elementwise:
// max(x, 0) - x * z + log(1 + exp(-|x|)), which neither overflows nor loses
// the small values.
Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits,
                                         CallSite site = CallSite::current());

}  // namespace api

namespace losses {

// Keras clips probabilities to [kEpsilon, 1 - kEpsilon] before their log.
inline constexpr double kEpsilon = 1e-7;

// tf.keras.losses.sparse_categorical_crossentropy: integer class labels
// (a floating y_true is cast, as Keras does) and probabilities, or logits
// with from_logits, along `axis`.
Tensor sparse_categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred,
                                       bool from_logits = false, int64_t axis = -1,
                                       CallSite site = CallSite::current());
// tf.keras.losses.categorical_crossentropy: one-hot (or soft) labels;
// label_smoothing moves that share of each label's mass to a uniform
// distribution over the classes.
Tensor categorical_crossentropy(const Tensor& y_true, const Tensor& y_pred,
                                bool from_logits = false, double label_smoothing = 0,
                                int64_t axis = -1, CallSite site = CallSite::current());
// tf.keras.losses.binary_crossentropy: the mean over `axis` of each
// element's binary cross-entropy; label_smoothing moves labels towards 0.5.
Tensor binary_crossentropy(const Tensor& y_true, const Tensor& y_pred, bool from_logits = false,
                           double label_smoothing = 0, int64_t axis = -1,
                           CallSite site = CallSite::current());
// tf.keras.losses.mean_squared_error: the mean over the last axis of
// (y_pred - y_true)^2.
Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred,
                          CallSite site = CallSite::current());

}  // namespace losses
}  // namespace ag
