// Compositions of ops that a public function and an ONNX importer share,
// with parameters the public function fixes (ag/ops.h). Internal to the
// runtime and the ONNX importer.
#pragma once

#include <cstdint>

#include "ag/tensor.h"

namespace ag::ops {

// Local response normalisation along `axis`: x / (bias + alpha * s)^beta,
// s the sum of x^2 over the `before` elements before each one along the
// axis, itself and the `after` after it (zeros past the ends). The axis's
// length must be known while tracing. tf.nn.local_response_normalization
// (the last axis, before = after = depth_radius) and ONNX's LRN (axis 1,
// alpha / size) are this.
Tensor local_response_norm(const Tensor& x, int64_t axis, int64_t before, int64_t after,
                           double bias, double alpha, double beta, CallSite site);

// The int64 positions of the true elements of a 1-D bool tensor, in order:
// where the running count of trues first reaches 1, 2, ... (its length is
// known when the graph runs). boolean_mask and ONNX's NonZero.
Tensor true_positions(const Tensor& mask, CallSite site);

}  // namespace ag::ops
