// Importers of ONNX's DFT, STFT and MelWeightMatrix (a constant): the transform as products with
// constant matrices of cosines and sines (a DFT by definition, O(n^2), exact up to rounding), of
// real ([..., 1]) or complex ([..., 2]) signals; the frames of STFT gathered at constant positions.
// Lengths and steps must be known when the model is traced (a graph input specialises the model on
// its value).
#include <cmath>
#include <numbers>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

namespace {

// The DFT of signals along the last axis of xr (and xi, when complex) of
// `length`, its first `bins` frequencies: the real and imaginary parts.
std::pair<Tensor, Tensor> dft_last_axis(const Tensor& xr, const Tensor* xi, int64_t length,
                                        int64_t bins, bool inverse) {
  std::vector<double> c(size_t(length * bins)), s(size_t(length * bins));
  for (int64_t n = 0; n < length; ++n) {
    for (int64_t k = 0; k < bins; ++k) {
      // n * k reduced mod length keeps the angle small and exact.
      const double angle = 2 * std::numbers::pi * double((n * k) % length) / double(length);
      c[size_t(n * bins + k)] = std::cos(angle);
      s[size_t(n * bins + k)] = std::sin(angle);
    }
  }
  const Shape matrix{length, bins};
  const Tensor cosines = cast(constant(c, matrix), xr.dtype());
  const Tensor sines = cast(constant(s, matrix), xr.dtype());
  std::vector<int64_t> rows = {-1, length}, dims(xr.shape().begin(), xr.shape().end());
  dims.back() = bins;
  auto times = [&](const Tensor& x, const Tensor& m) {
    return reshape(matmul(reshape(x, rows), m), dims);
  };
  // e^(-i angle) forward, e^(+i angle) / length inverse.
  Tensor real = times(xr, cosines), imag = times(xr, sines);
  imag = inverse ? imag : -imag;
  if (xi) {
    const Tensor ic = times(*xi, cosines), is = times(*xi, sines);
    real = inverse ? real - is : real + is;
    imag = imag + ic;
  }
  if (inverse) {
    const Tensor scale = cast(Tensor(1.0 / double(length)), xr.dtype());
    real = real * scale;
    imag = imag * scale;
  }
  return {real, imag};
}

// x [..., 1 or 2]: its real and imaginary parts (null when real).
std::pair<Tensor, std::optional<Tensor>> parts(NodeContext& ctx, const Tensor& x) {
  const int64_t c = x.shape().dim(-1);
  if (c != 1 && c != 2)
    ctx.invalid("the last dim must be 1 (real) or 2 (complex), got " + std::to_string(c));
  const int64_t last = x.rank() - 1;
  const Tensor real = gather(x, Tensor(int64_t{0}), last);
  if (c == 1) return {real, std::nullopt};
  return {real, gather(x, Tensor(int64_t{1}), last)};
}

int64_t scalar_int(NodeContext& ctx, size_t k, std::string_view what) {
  const std::vector<int64_t> v = ctx.constant_ints(k, what);
  if (v.size() != 1) ctx.invalid(std::string(what) + " must hold one value");
  return v[0];
}

}  // namespace

// DFT along `axis` (of the signal's dims, default 1) to dft_length (input 1:
// the signal cut or padded with zeros), all frequencies or, onesided, the
// first length / 2 + 1.
std::vector<Tensor> import_dft(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "DFT");
  if (shape.rank() < 2) ctx.invalid("the input must have rank 2 or more");
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 1), shape.rank() - 1, "axis");
  const bool inverse = ctx.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.attr_int("onesided", 0) != 0;
  auto [real, imag] = parts(ctx, x);
  if (onesided && (imag || inverse)) ctx.unsupported("onesided with a complex input or inverse");
  const int64_t n = shape[int(axis)];
  const int64_t length = ctx.has_input(1) ? scalar_int(ctx, 1, "dft_length") : n;
  if (length < 1) ctx.invalid("dft_length must be 1 or more, got " + std::to_string(length));
  // The axis swapped last and back (a swap is its own inverse).
  std::vector<int64_t> perm(static_cast<size_t>(shape.rank() - 1));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(axis)], perm.back());
  auto fit = [&](Tensor t) {
    t = transpose(t, perm);
    std::vector<int64_t> begin(size_t(t.rank()), 0), size(size_t(t.rank()), -1);
    if (length < n) size.back() = length;
    if (length < n) return slice(t, begin, size);
    std::vector<std::pair<int64_t, int64_t>> paddings(size_t(t.rank()), {0, 0});
    paddings.back().second = length - n;
    return length > n ? pad(t, paddings) : t;
  };
  const Tensor xr = fit(real);
  const std::optional<Tensor> xi = imag ? std::optional<Tensor>(fit(*imag)) : std::nullopt;
  const int64_t bins = onesided ? length / 2 + 1 : length;
  auto [yr, yi] = dft_last_axis(xr, xi ? &*xi : nullptr, length, bins, inverse);
  return {stack({transpose(yr, perm), transpose(yi, perm)}, -1)};
}

// STFT of signals [batch, length, 1 or 2]: frames of frame_length (input 3,
// else the window's length) every frame_step (input 1) samples, times the
// window (input 2), each transformed (onesided by default, for real signals).
std::vector<Tensor> import_stft(NodeContext& ctx) {
  const Tensor& signal = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "STFT");
  if (shape.rank() != 3) ctx.invalid("the signal must be [batch, length, 1 or 2]");
  const int64_t step = scalar_int(ctx, 1, "frame_step");
  int64_t frame = ctx.has_input(3) ? scalar_int(ctx, 3, "frame_length") : -1;
  if (ctx.has_input(2)) {
    const int64_t window = ctx.static_shape(2, "STFT's window").dim(0);
    if (frame >= 0 && frame != window)
      ctx.invalid("frame_length " + std::to_string(frame) + " differs from the window's length " +
                  std::to_string(window));
    frame = window;
  }
  if (frame < 1 || step < 1 || frame > shape[1])
    ctx.invalid(
        "frame_length and frame_step must be 1 or more, the frame no longer than the signal");
  const int64_t frames = (shape[1] - frame) / step + 1;
  std::vector<int64_t> at;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < frame; ++i) at.push_back(f * step + i);
  auto [real, imag] = parts(ctx, signal);
  const bool onesided = ctx.attr_int("onesided", 1) != 0 && !imag;
  auto framed = [&](const Tensor& t) {
    Tensor f = reshape(gather(t, constant(at, Shape{frames, frame}), 1), {shape[0], frames, frame});
    return ctx.has_input(2) ? f * cast(ctx.input(2), t.dtype()) : f;
  };
  const Tensor xr = framed(real);
  const std::optional<Tensor> xi = imag ? std::optional<Tensor>(framed(*imag)) : std::nullopt;
  auto [yr, yi] =
      dft_last_axis(xr, xi ? &*xi : nullptr, frame, onesided ? frame / 2 + 1 : frame, false);
  return {stack({yr, yi}, -1)};
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangles rising from
// each band's lower edge to its centre and falling to its upper edge, the
// edges num_mel_bins + 2 points from lower_edge_hertz in steps of 1 / (num_mel_bins
// + 2) of the mel range (so the last stays below upper_edge_hertz, as in ONNX's
// reference), each mapped to the spectrogram bin floor((dft_length + 1) *
// hertz / sample_rate).
std::vector<Tensor> import_mel_weight_matrix(NodeContext& ctx) {
  const int64_t mel_bins = scalar_int(ctx, 0, "num_mel_bins");
  const int64_t dft_length = scalar_int(ctx, 1, "dft_length");
  const int64_t sample_rate = scalar_int(ctx, 2, "sample_rate");
  auto scalar_double = [&](size_t k, std::string_view what) {
    const std::vector<double> v = ctx.constant_doubles(k, what);
    if (v.size() != 1) ctx.invalid(std::string(what) + " must hold one value");
    return v[0];
  };
  const double lower = scalar_double(3, "lower_edge_hertz");
  const double upper = scalar_double(4, "upper_edge_hertz");
  if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
    ctx.invalid("num_mel_bins, dft_length and sample_rate must be 1 or more");
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  auto mel = [](double hertz) { return 2595.0 * std::log10(1.0 + hertz / 700.0); };
  const double low_mel = mel(lower), step = (mel(upper) - low_mel) / double(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hertz = 700.0 * (std::pow(10.0, (double(i) * step + low_mel) / 2595.0) - 1.0);
    edge[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hertz / double(sample_rate)));
  }
  std::vector<double> weights(size_t(spectrogram_bins * mel_bins), 0.0);
  auto set = [&](int64_t row, int64_t band, double w) {
    if (row < 0 || row >= spectrogram_bins)
      ctx.invalid("the band edges reach past the spectrogram's " +
                  std::to_string(spectrogram_bins) +
                  " bins (upper_edge_hertz above half the sample rate?)");
    weights[size_t(row * mel_bins + band)] = w;
  };
  for (int64_t b = 0; b < mel_bins; ++b) {
    const int64_t left = edge[size_t(b)], centre = edge[size_t(b + 1)], right = edge[size_t(b + 2)];
    if (centre == left) {
      set(centre, b, 1.0);
    } else {
      for (int64_t j = left; j <= centre; ++j) set(j, b, double(j - left) / double(centre - left));
    }
    for (int64_t j = centre; j < right; ++j) set(j, b, double(right - j) / double(right - centre));
  }
  DType dtype = float32;
  if (ctx.has_attr("output_datatype"))
    dtype = dtype_from_onnx(int32_t(ctx.attr_int("output_datatype")),
                            ctx.where() + ": attribute 'output_datatype'");
  return {cast(constant(weights, Shape{spectrogram_bins, mel_bins}), dtype)};
}

}  // namespace ag::onnx_io
