// tf.signal.hann_window and hamming_window: the raised cosines a - b *
// cos(2 pi n / N), n in [0, window_length), computed in the window's dtype as
// TensorFlow computes them. N is window_length - 1, or window_length for a
// periodic window of even length (TensorFlow's rule: a periodic window of
// odd length is the symmetric one); a window of length 1 is [1]. Of range,
// cast, mul, div and cos, so a traced window is a constant.
#include <numbers>
#include <string>

#include "ag/error.h"
#include "ag/ops.h"

namespace ag::signal {
namespace {

Tensor raised_cosine(std::string_view name, int64_t window_length, bool periodic, DType dtype,
                     double a, double b, CallSite site) {
  if (!is_floating(dtype)) {
    throw InvalidArgumentError(std::string(name) + ": dtype must be a floating type, got " +
                               std::string(dtype_name(dtype)));
  }
  if (window_length < 0) {
    throw InvalidArgumentError(std::string(name) + ": window_length must not be negative, got " +
                               std::to_string(window_length));
  }
  if (window_length == 1) return api::ones(Shape{1}, dtype);
  const bool even = window_length % 2 == 0;
  const int64_t n = window_length + (periodic && even ? 1 : 0) - 1;
  auto scalar = [&](double v) { return api::cast(api::fill({}, v, DType::float64), dtype, site); };
  const Tensor count = api::cast(
      api::range(Tensor(int64_t{0}), Tensor(window_length), Tensor(int64_t{1}), site), dtype, site);
  const Tensor angle = scalar(2 * std::numbers::pi) * count / scalar(double(n));
  return scalar(a) - scalar(b) * api::cos(angle, site);
}

}  // namespace

Tensor hann_window(int64_t window_length, bool periodic, DType dtype, CallSite site) {
  return raised_cosine("hann_window", window_length, periodic, dtype, 0.5, 0.5, site);
}

Tensor hamming_window(int64_t window_length, bool periodic, DType dtype, CallSite site) {
  return raised_cosine("hamming_window", window_length, periodic, dtype, 0.54, 0.46, site);
}

}  // namespace ag::signal
