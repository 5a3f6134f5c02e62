// Regression (gradient_dataset_loop, fuzz.py --gradients, seed 113011 function 269): a
// loop over a dataset (each iteration pulls an element through the iterator's effect) with
// the gradient flowing through its loop variables; the gradient's replay of the body ran the
// effect again, so it was an UnimplementedError. The body's effects now stay in the forward
// loop, once per iteration.
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// s repeated to like's shape: ag::broadcast_to where like's dims are known
// while tracing, else a where() that broadcasts s (the unknown_dims calls).
static ag::Tensor fz_spread(ag::Tensor s, ag::Tensor like) {
  const ag::Shape& shape = like.shape();
  if (!shape.is_fully_defined()) return ag::where(ag::zeros_like(like) == 0, s, like);
  return ag::broadcast_to(s, {shape.begin(), shape.end()});
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

// fz-begin f_113011_269
AG_FUNCTION ag::Tensor f_113011_269(ag::Tensor x, ag::Tensor n, int m) {
  const ag::Tensor x0 = x;
  ag::Tensor v0 = x;
  ag::Tensor v1 = fz_clip(x * 2 + 1);
  ag::Tensor v2 = fz_clip(x - n);
  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);
  ta = ta.write(0, x);
  v2 = fz_clip(x * (ag::reduce_max(v0) < 1 ? 0 : -2));
  v1 = fz_clip(ag::cast(~ag::cast((n - ta.read(ta.size() - 1)), ag::int32),
                        ((n - ta.read(ta.size() - 1))).dtype()));
  for (auto i1 : ag::data::range(2).map([](ag::Tensor v) { return ag::cast(v, ag::int32); })) {
    for (int k2 = 0; k2 < m + 1; ++k2) {
      v0 = fz_clip(
          -(fz_spread(ag::reduce_min(v2), x)) *
          ((ag::reduce_max((n + x0)) == 3) && (ag::reduce_all(fz_rnn(fz_clip(x), 0) > (x0 * n)))
               ? -1
               : 0));
      v1 = fz_clip((ag::where(fz_rnn(fz_clip(x), 0) >= fz_spread(ag::reduce_min(v2), x),
                              fz_spread(ag::reduce_max(v1), x), x0) *
                    i1));
    }
    [[maybe_unused]] auto [p3, p4] = std::pair{
        fz_clip(ag::cast(~ag::cast(ag::maximum(x, v0), ag::int32), (ag::maximum(x, v0)).dtype())),
        fz_clip(v1)};
  }
  return v0 + v1 * 3 - v2 * 5 + ag::reduce_sum(ta.stack()) + ta.size() * 7;
}
// fz-end f_113011_269

static const FzCase fz_cases[] = {
    {"f_113011_269",
     &f_113011_269,
     4,
     {{ag::float32, {}, {-2}, 4, 0},
      {ag::float64, {2, 3}, {3, -3, 1, 1, 0, 1}, 4, 2},
      {ag::int32,
       {24},
       {-2, 4, -4, -1, -3, -1, -1, -3, -3, -2, 3, 1, 0, -1, -1, 2, 3, -4, 0, -3, 4, 4, 1, -2},
       1,
       2},
      {ag::float32, {}, {-2}, 2, 1}},
     true},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
