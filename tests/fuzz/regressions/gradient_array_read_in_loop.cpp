// Regression (gradient_array_read_in_loop, fuzz.py --gradients, seed 21 function 170): a
// dynamic-size TensorArray grown and read in a loop; its gradient needs the array, whose size
// changes per iteration, so the array is saved flat (stacked, its rows would not fit: a
// TensorArray.write shape error).
#include <ag/ag.h>

#include "harness.h"

static ag::Tensor fz_clip(ag::Tensor v) {
  return ag::minimum(ag::maximum(v, -32), 32);
}

// fz-begin f_21_170
AG_FUNCTION ag::Tensor f_21_170(ag::Tensor x, ag::Tensor n, int m) {
  const ag::Tensor x0 = x;
  ag::Tensor v0 = x;
  ag::Tensor v1 = fz_clip(x * 2 + 1);
  ag::Tensor v2 = fz_clip(x - n);
  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);
  ta = ta.write(0, x);
  ta = ta.write(ta.size(), fz_clip(((n * v0) + n)));
  v0 = fz_clip(x);
  for (auto i1 : ag::range((n + 1))) {
    i1 = i1 + 1;
    for (int k2 = 0; k2 < m + 1; ++k2) {
      x = fz_clip(((ag::reduce_max(x0) < 5)
                       ? (ta.read(ta.size() - 1) - k2)
                       : (ag::where(ta.read(ta.size() - 1) >= x, v1, v1) % 2)));
    }
    v2 = fz_clip((v0 + m));
    ta = ta.write(ta.size(), fz_clip(v1));
  }
  return v0 + v1 * 3 - v2 * 5 + ag::reduce_sum(ta.stack()) + ta.size() * 7;
}
// fz-end f_21_170

static const FzCase fz_cases[] = {
    {"f_21_170",
     &f_21_170,
     4,
     {{ag::float32, {3}, {4, -3, -3}, 2, 0},
      {ag::float64, {3}, {-3, -3, -3}, 4, 0},
      {ag::int32, {}, {0}, 0, 1},
      {ag::float32, {3}, {1, -3, 1}, 1, 2}}},
};

int main(int argc, char** argv) {
  return fz_run(fz_cases, argc, argv);
}
