// Regression (gradient_conv_unknown_dims, fuzz.py --gradients, seed 2303 function 76): a
// convolution of a value whose spatial dims are unknown while tracing (an if's branches give x
// different shapes); its gradient by the input needed those dims when traced, an
// UnimplementedError. conv_backprop_input now reads them from the input when the graph runs.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// A `shape` tensor of x's dtype: a pattern in [-k, k] that `salt` varies, plus
// the sum of x when `tied` (a constant otherwise).
static ag::Tensor fz_sequence(ag::Tensor x, std::vector<int64_t> shape, int salt, int k,
                              bool tied) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  ag::Tensor iota = ag::reshape(ag::cast(ag::range(ag::Tensor(count)), x.dtype()), shape);
  ag::Tensor pattern = (iota * salt + salt / 2) % (2 * k + 1) - k;
  return tied ? pattern + ag::reduce_sum(x) : pattern;
}

// v's elements as a 16-channel image [1, n, 1, 16] (NHWC; channel c holds
// v + c) through a 3x1 convolution by weights in {-1, 0, 1}, a per-channel
// bias and the image itself as residual, then relu (variant 0), ReLU6 as
// ONNX's Clip imports (1) or nothing (2): the chain the graph fuses. Its
// largest channel, in v's shape and dtype: exact, the values are small integers.
static ag::Tensor fz_conv(ag::Tensor v, int variant) {
  const ag::DType dtype = v.dtype() == ag::float64 ? ag::float64 : ag::float32;
  ag::Tensor channel = ag::cast(ag::range(ag::Tensor(16)), dtype);
  ag::Tensor image = ag::reshape(ag::cast(v, dtype), {1, -1, 1, 1}) + channel;
  ag::Tensor taps = ag::cast(ag::range(ag::Tensor(3 * 16 * 16)), dtype);
  ag::Tensor w = ag::reshape(taps * 7 % 3 - 1, {3, 1, 16, 16});
  ag::Tensor y = ag::convolution(image, w, {1}, "SAME", "NHWC") + (channel % 5 - 2) + image;
  if (variant == 0) y = ag::relu(y);
  if (variant == 1) y = ag::minimum(ag::maximum(y, 0), 6);
  return ag::cast(ag::reshape(ag::reduce_max(y, {3}), ag::shape(v)), v.dtype());
}

// v's elements as a sequence [1, n, 1] (v / 8) through a recurrent layer of
// 4 units, its weights a pattern in [-0.5, 0.5], over the whole sequence (one
// op): a GRU (variant 0), a GRU without reset_after (1), a tanh RNN (2) or an
// LSTM (3). Each step's first unit times 4, rounded, in v's shape and dtype:
// small integers, the same in both builds because the op's values are.
static ag::Tensor fz_rnn(ag::Tensor v, int variant) {
  const ag::DType dtype = v.dtype() == ag::float64 ? ag::float64 : ag::float32;
  ag::Tensor x = ag::reshape(ag::cast(v, dtype), {1, -1, 1}) / 8;
  const int64_t width = 4 * (variant == 3 ? 4 : variant == 2 ? 1 : 3);
  auto pattern = [&](int64_t rows, int salt) {
    ag::Tensor iota = ag::cast(ag::range(ag::Tensor(rows * width)), dtype);
    return ag::reshape((iota * salt % 11 - 5) / 10, {rows, width});
  };
  const ag::Tensor kernel = pattern(1, 3), recurrent = pattern(4, 7);
  const ag::Tensor h0 = ag::rnn::zero_state(x, 4);
  ag::rnn::RNNOutput out;
  if (variant == 3) {
    out = ag::rnn::lstm(x, {h0, h0}, {kernel, recurrent, {}, {}});
  } else if (variant == 2) {
    out = ag::rnn::simple_rnn(x, {h0}, {kernel, recurrent, {}});
  } else {
    ag::rnn::GRUOptions options;
    options.reset_after = variant == 0;
    out = ag::rnn::gru(x, {h0}, {kernel, recurrent, {}}, options);
  }
  ag::Tensor first = ag::gather(out.outputs, ag::Tensor(int64_t{0}), 2);
  return ag::cast(ag::reshape(ag::round(first * 4), ag::shape(v)), v.dtype());
}

// A scalar that any element of t moved or changed changes: t weighted by
// 1..7 along its flat order, summed (exact: t holds small integers). Sizes
// from the graph: a dynamic-size array's stack has an unknown first dim.
static ag::Tensor fz_digest(ag::Tensor t) {
  ag::Tensor iota = ag::cast(ag::range(ag::size(t)), t.dtype());
  return ag::reduce_sum(ag::reshape(t, {-1}) * (iota % 7 + 1));
}

// fz-begin f_2303_76
ag::Tensor f_2303_76_h0(ag::Tensor a, ag::Tensor n) {
  const ag::Tensor a0 = a;
  ag::Tensor u = fz_clip(a + n);
  std::tie(u) = std::tuple<ag::Tensor>{fz_clip(-(u * 3))};
  a = fz_clip(u);
  ag::Tensor t1 = fz_clip((u * 3));
  ag::Tensor t2 = fz_clip(a0);
  return fz_clip(a - u);
}

AG_FUNCTION ag::Tensor f_2303_76(ag::Tensor x, ag::Tensor n, int m) {
  const ag::Tensor x0 = x;
  ag::Tensor v0 = x;
  ag::Tensor v1 = fz_clip(x * 2 + 1);
  ag::Tensor v2 = fz_clip(x - n);
  const ag::Tensor ar1_seq = fz_sequence(x, {7, 9}, 9, 1, false);
  ag::Tensor ar1_s = fz_sequence(x, {2, 9}, 3, 2, true);
  ag::TensorArray ar1_a(x.dtype(), 5);
  for (auto ar1_i : ag::range(5)) {
    ar1_s = ar1_s * ar1_seq[ar1_i];
    ar1_a = ar1_a.write(ar1_i, ar1_s);
  }
  const ag::Tensor ar1_d = fz_digest(ag::transpose(ar1_a.stack(), {1, 2, 0}));
  const ag::Tensor ar2_seq = fz_sequence(x, {2, 3, 2, 5}, 4, 1, false);
  ag::Tensor ar2_s = fz_sequence(x, {2, 2, 5}, 2, 2, true);
  ag::TensorArray ar2_a(x.dtype(), 3);
  for (auto ar2_i : ag::range(ag::Tensor(int64_t{3}))) {
    ar2_s = ar2_s * ag::gather(ar2_seq, ar2_i, 1);
    ar2_a = ar2_a.write(ar2_i, ar2_s);
  }
  const ag::Tensor ar2_d = fz_digest(ag::transpose(ar2_a.stack(), {1, 0, 2, 3}));
  ag::Tensor c3 =
      fz_clip(ag::cast(~ag::cast(ag::cast((ag::cast(x, ag::int32) | 3), (x).dtype()), ag::int32),
                       (ag::cast((ag::cast(x, ag::int32) | 3), (x).dtype())).dtype()));
  if (n > 1) {
    c3 = fz_clip(v1);
    x = fz_clip(((n != 3) ? f_2303_76_h0(x0, n) : ((v0 * v0) - ag::maximum(x0, n))));
  } else if (!(ag::reduce_any((v1 * x0) != f_2303_76_h0(v0, n)))) {
    ag::Tensor t4 = fz_clip(f_2303_76_h0(v1, n));
  } else {
    v1 = fz_clip(v1 + c3);
    std::array<ag::Tensor, 2> arr7{fz_clip(v2), fz_clip(ag::minimum((x0 * n), m))};
    [[maybe_unused]] auto& [p5, p6] = arr7;
    x = fz_clip(fz_conv(fz_clip(p5), 2));
  }
  if (n % 2 == 1) {
    v2 = fz_clip(v2);
    v0++;
    x = fz_clip(f_2303_76_h0(x, n));
  } else if ((n == 2) | (ag::reduce_min((f_2303_76_h0(x, n) + v2)) != 5)) {
    std::tie(v1) = std::tuple<ag::Tensor>{
        fz_clip(ag::where(x >= (x0 - m), f_2303_76_h0(v2, n), fz_conv(fz_clip(x), 1)))};
    v2 = fz_clip(ag::abs(-(f_2303_76_h0(v2, n))) *
                 (ag::reduce_sum(fz_rnn(fz_clip(x0), 1)) < 0 ? -2 : 1));
    v0 = fz_clip(f_2303_76_h0(v1, n));
  } else {
    ag::Tensor t8 = fz_clip((ag::floordiv(v2, 3) - n));
  }
  return v0 + v1 * 3 - v2 * 5 + ar1_d + ar2_d;
}
// fz-end f_2303_76

static const FzCase fz_cases[] = {
    {"f_2303_76",
     &f_2303_76,
     5,
     {{ag::int32, {}, {1}, 2, 0},
      {ag::float32, {}, {0}, 0, 1},
      {ag::float32, {3}, {-1, -1, 0}, 1, 1},
      {ag::int32, {}, {-3}, 2, 1},
      {ag::int32,
       {2500},
       {4, 4,  -1, 4, 0,  0, -2, 0, 2,  -1, 3, -2, 1, 4,  -4, 0,  -3, 3, 4,
        4, -2, 1,  1, -1, 0, -3, 2, -4, -1, 1, -4, 0, -2, 2,  -4, -3, -1},
       1,
       1}},
     true},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
